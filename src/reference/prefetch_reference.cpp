#include "symmoe/reference/prefetch_reference.hpp"

#include <cstring>

#include "symmoe/core/error.hpp"

namespace symmoe::reference {

void prefetch_reference(std::vector<std::vector<uint8_t>>& pools, const prefetch::PrefetchPlan& plan,
                        const device::ExpertPoolLayout& layout) {
  prefetch::validate_plan(plan, layout);
  SYMMOE_CHECK(pools.size() == layout.num_ranks, "one pool image per rank");
  for (uint32_t consumer = 0; consumer < plan.per_rank.size(); ++consumer) {
    for (const prefetch::SlotAssignment& a : plan.per_rank[consumer]) {
      const auto& src = pools[layout.owner(a.expert)];
      auto& dst = pools[consumer];
      SYMMOE_CHECK(src.size() >= layout.bytes_per_rank && dst.size() >= layout.bytes_per_rank,
                   "pool images must hold bytes_per_rank");
      std::memmove(dst.data() + layout.slot_at(a.slot), src.data() + layout.owned_at(a.expert),
                   layout.expert_bytes);
    }
  }
}

void grad_reduce_reference(std::vector<std::vector<float>>& owner_grads,
                           std::vector<std::vector<float>>& slot_grads,
                           const prefetch::PrefetchPlan& plan,
                           const device::ExpertPoolLayout& grad_layout, uint32_t experts_per_rank,
                           uint64_t elements) {
  const uint32_t ranks = static_cast<uint32_t>(plan.per_rank.size());
  SYMMOE_CHECK(owner_grads.size() == ranks && slot_grads.size() == ranks, "one image per rank");
  for (uint32_t owner = 0; owner < ranks; ++owner) {
    for (uint32_t j = 0; j < experts_per_rank; ++j) {
      const uint32_t expert = owner * experts_per_rank + j;
      std::vector<const float*> sources;
      for (uint32_t q = 0; q < ranks; ++q) {
        for (const prefetch::SlotAssignment& a : plan.per_rank[q]) {
          if (a.expert == expert) sources.push_back(slot_grads[q].data() + grad_layout.slot_at(a.slot) / 4);
        }
      }
      float* out = owner_grads[owner].data() + j * elements;
      for (uint64_t i = 0; i < elements; ++i) {
        float acc = out[i];
        for (const float* s : sources) acc += s[i];
        out[i] = acc;
      }
    }
  }
  // Clear after every owner has read (a slot is read by exactly one owner).
  for (uint32_t q = 0; q < ranks; ++q) {
    for (const prefetch::SlotAssignment& a : plan.per_rank[q]) {
      std::memset(slot_grads[q].data() + grad_layout.slot_at(a.slot) / 4, 0, elements * sizeof(float));
    }
  }
}

}  // namespace symmoe::reference
