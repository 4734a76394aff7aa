// A prefetch plan: which global experts each rank needs, and in which of its slots.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "symmoe/comm/group.hpp"
#include "symmoe/device/expert_pool_layout.cuh"

namespace symmoe::prefetch {

struct SlotAssignment {
  uint32_t expert;  // global expert id
  uint32_t slot;    // slot of the consuming rank
};

struct PrefetchPlan {
  // per_rank[r]: what rank r receives. The same expert may appear on many ranks and in several
  // slots of one rank; a slot may receive at most one expert; a rank may receive nothing.
  std::vector<std::vector<SlotAssignment>> per_rank;
};

enum class PrefetchMode {
  kPull,  // each rank copies into its own slots from the owners' buffers
  kPush,  // each owner copies its experts into the consumers' slots
};

const char* prefetch_mode_name(PrefetchMode mode);

// Throws a symmoe::Error naming the rank, the entry and the rule for: a plan with a different
// number of ranks than the pool, an expert or slot out of range, or a slot assigned twice.
void validate_plan(const PrefetchPlan& plan, const device::ExpertPoolLayout& layout);

// FNV-1a over the whole plan: every rank must hold the same one.
uint64_t plan_digest(const PrefetchPlan& plan);

// Collective: validates the plan on every rank (all fail together, each failing rank named,
// prefixed by `what`), then checks that every rank holds the same plan and `variant` (a mode
// or option code the caller folds in), naming the first rank that differs from rank 0.
void agree_on_plan(comm::Group& group, const PrefetchPlan& plan,
                   const device::ExpertPoolLayout& layout, uint64_t variant, const char* what);

// The copies this rank's kernel performs: pull = every assignment of this rank (from the
// owner); push = every assignment of any rank whose expert this rank owns. Ordered by
// consumer rank, then plan order.
std::vector<device::CopyTask> copy_tasks(const PrefetchPlan& plan,
                                         const device::ExpertPoolLayout& layout, int rank,
                                         PrefetchMode mode);

struct CopyBytes {
  uint64_t read = 0;     // bytes this rank's kernel reads
  uint64_t written = 0;  // bytes it writes
  uint64_t remote = 0;   // bytes that cross to or from another rank
};
CopyBytes count_bytes(std::span<const device::CopyTask> tasks, const device::ExpertPoolLayout& layout,
                      int rank);

}  // namespace symmoe::prefetch
