#include "symmoe/prefetch/expert_pool.hpp"

#include "symmoe/core/error.hpp"

namespace symmoe::prefetch {

device::ExpertPoolLayout expert_pool_layout(const ExpertSpec& spec, uint32_t num_ranks,
                                            uint32_t experts_per_rank, uint32_t num_slots) {
  SYMMOE_CHECK(num_ranks >= 1 && num_ranks <= device::kMaxRanks, "an expert pool spans 1..",
               device::kMaxRanks, " ranks, got ", num_ranks);
  SYMMOE_CHECK(experts_per_rank >= 1, "an expert pool needs at least one expert per rank");
  const uint64_t bytes = spec.bytes();
  SYMMOE_CHECK(bytes % device::kExpertAlignment == 0, "expert bytes ", bytes, " not aligned");
  return device::make_expert_pool_layout(bytes, num_ranks, experts_per_rank, num_slots);
}

std::unique_ptr<ExpertPool> ExpertPool::create(comm::Group& group, const ExpertSpec& spec,
                                               uint32_t experts_per_rank, uint32_t num_slots,
                                               symm::HandleType handle_type) {
  std::unique_ptr<ExpertPool> pool(new ExpertPool());
  pool->spec_ = spec;
  pool->layout_ = expert_pool_layout(spec, static_cast<uint32_t>(group.size()), experts_per_rank,
                                     num_slots);
  symm::SymmetricBufferOptions options;
  options.bytes_per_rank = pool->layout_.bytes_per_rank;
  options.handle_type = handle_type;
  options.layout_name = "expert_pool";
  options.layout_params = {pool->layout_.expert_bytes, experts_per_rank, num_slots,
                           static_cast<uint64_t>(spec.dtype), spec.elements()};
  pool->buffer_ = symm::SymmetricBuffer::create(group, options);
  return pool;
}

void* ExpertPool::owned(uint32_t local) const {
  SYMMOE_CHECK(local < layout_.experts_per_rank, "local expert ", local, " is outside this rank's ",
               layout_.experts_per_rank);
  return static_cast<char*>(buffer_->local()) + static_cast<uint64_t>(local) * layout_.expert_bytes;
}

void* ExpertPool::slot(uint32_t s) const {
  SYMMOE_CHECK(s < layout_.num_slots, "slot ", s, " is outside this rank's ", layout_.num_slots);
  return static_cast<char*>(buffer_->local()) + layout_.slot_at(s);
}

}  // namespace symmoe::prefetch
