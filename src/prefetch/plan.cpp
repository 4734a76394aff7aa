#include "symmoe/prefetch/plan.hpp"

#include "symmoe/comm/agreement.hpp"
#include "symmoe/core/error.hpp"

namespace symmoe::prefetch {

const char* prefetch_mode_name(PrefetchMode mode) {
  return mode == PrefetchMode::kPull ? "pull" : "push";
}

void validate_plan(const PrefetchPlan& plan, const device::ExpertPoolLayout& layout) {
  SYMMOE_CHECK(plan.per_rank.size() == layout.num_ranks, "the prefetch plan lists ",
               plan.per_rank.size(), " ranks but the expert pool spans ", layout.num_ranks);
  for (size_t r = 0; r < plan.per_rank.size(); ++r) {
    std::vector<int64_t> slot_owner(layout.num_slots, -1);
    for (size_t i = 0; i < plan.per_rank[r].size(); ++i) {
      const SlotAssignment& a = plan.per_rank[r][i];
      if (a.expert >= layout.num_experts()) {
        SYMMOE_FAIL("prefetch plan for rank ", r, ", entry ", i, ": expert ", a.expert,
                    " is out of range (the pool holds ", layout.num_experts(), " experts: ",
                    layout.num_ranks, " ranks x ", layout.experts_per_rank, ")");
      }
      if (a.slot >= layout.num_slots) {
        SYMMOE_FAIL("prefetch plan for rank ", r, ", entry ", i, ": slot ", a.slot,
                    " is out of range (", layout.num_slots, " slots per rank)");
      }
      if (slot_owner[a.slot] >= 0) {
        SYMMOE_FAIL("prefetch plan for rank ", r, ": slot ", a.slot, " is assigned twice (experts ",
                    slot_owner[a.slot], " and ", a.expert, "); a slot holds one expert");
      }
      slot_owner[a.slot] = a.expert;
    }
  }
}

uint64_t plan_digest(const PrefetchPlan& plan) {
  uint64_t h = 0xcbf29ce484222325ull;
  auto mix = [&h](uint64_t v) {
    for (int i = 0; i < 8; ++i) {
      h ^= (v >> (8 * i)) & 0xFF;
      h *= 0x100000001b3ull;
    }
  };
  mix(plan.per_rank.size());
  for (const auto& rank : plan.per_rank) {
    mix(rank.size());
    for (const SlotAssignment& a : rank) mix((static_cast<uint64_t>(a.expert) << 32) | a.slot);
  }
  return h;
}

void agree_on_plan(comm::Group& group, const PrefetchPlan& plan,
                   const device::ExpertPoolLayout& layout, uint64_t variant, const char* what) {
  std::string local;
  try {
    validate_plan(plan, layout);
  } catch (const Error& e) {
    local = e.what();
  }
  comm::require_all_ok(group, local, what);
  const uint64_t mine = plan_digest(plan) ^ (variant * 0x9E3779B97F4A7C15ull);
  const auto all = group.all_gather_value(mine);
  for (int r = 0; r < group.size(); ++r) {
    SYMMOE_CHECK(all[r] == all[0], what, ": rank ", r, " holds a different plan or mode than rank 0 "
                 "(digest 0x", std::hex, all[r], " vs 0x", all[0], std::dec,
                 "); every rank must pass the same plan");
  }
}

std::vector<device::CopyTask> copy_tasks(const PrefetchPlan& plan,
                                         const device::ExpertPoolLayout& layout, int rank,
                                         PrefetchMode mode) {
  SYMMOE_CHECK(rank >= 0 && static_cast<uint32_t>(rank) < layout.num_ranks, "rank ", rank,
               " is outside the pool's ", layout.num_ranks, " ranks");
  std::vector<device::CopyTask> tasks;
  for (uint32_t consumer = 0; consumer < plan.per_rank.size(); ++consumer) {
    for (const SlotAssignment& a : plan.per_rank[consumer]) {
      const uint32_t owner = layout.owner(a.expert);
      const bool mine = mode == PrefetchMode::kPull ? consumer == static_cast<uint32_t>(rank)
                                                    : owner == static_cast<uint32_t>(rank);
      if (mine) tasks.push_back({owner, consumer, layout.owned_at(a.expert), layout.slot_at(a.slot)});
    }
  }
  return tasks;
}

CopyBytes count_bytes(std::span<const device::CopyTask> tasks, const device::ExpertPoolLayout& layout,
                      int rank) {
  CopyBytes b;
  for (const device::CopyTask& t : tasks) {
    b.read += layout.expert_bytes;
    b.written += layout.expert_bytes;
    if (t.src_rank != static_cast<uint32_t>(rank) || t.dst_rank != static_cast<uint32_t>(rank)) {
      b.remote += layout.expert_bytes;
    }
  }
  return b;
}

}  // namespace symmoe::prefetch
