// The symmetric expert-weight pool: every rank owns experts_per_rank experts and has num_slots
// slots that prefetches fill with copies of any rank's experts (device/expert_pool_layout.cuh).
#pragma once

#include <memory>

#include "symmoe/comm/group.hpp"
#include "symmoe/device/expert_pool_layout.cuh"
#include "symmoe/prefetch/expert_spec.hpp"
#include "symmoe/symm/symmetric_buffer.hpp"

namespace symmoe::prefetch {

class ExpertPool {
 public:
  // Collective. `handle_type` as for any symmetric buffer (auto: fabric where every rank can,
  // else fd). Ranks must agree on spec, experts_per_rank and num_slots (checked).
  static std::unique_ptr<ExpertPool> create(comm::Group& group, const ExpertSpec& spec,
                                            uint32_t experts_per_rank, uint32_t num_slots,
                                            symm::HandleType handle_type = symm::HandleType::kAuto);

  const ExpertSpec& spec() const { return spec_; }
  const device::ExpertPoolLayout& layout() const { return layout_; }
  symm::SymmetricBuffer& buffer() const { return *buffer_; }
  int rank() const { return buffer_->rank(); }
  uint32_t first_expert() const { return static_cast<uint32_t>(rank()) * layout_.experts_per_rank; }

  // This rank's copy of its `local`-th expert (global id first_expert() + local).
  void* owned(uint32_t local) const;
  void* slot(uint32_t s) const;

 private:
  ExpertPool() = default;
  ExpertSpec spec_;
  device::ExpertPoolLayout layout_;
  std::unique_ptr<symm::SymmetricBuffer> buffer_;
};

// Bytes of a pool with these dimensions, per rank (for budgeting before creation).
device::ExpertPoolLayout expert_pool_layout(const ExpertSpec& spec, uint32_t num_ranks,
                                            uint32_t experts_per_rank, uint32_t num_slots);

}  // namespace symmoe::prefetch
