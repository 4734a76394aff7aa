// CPU references of expert prefetch and gradient reduce, over host images of every rank's
// buffer (the oracle of the GPU tests).
#pragma once

#include <cstdint>
#include <vector>

#include "symmoe/device/expert_pool_layout.cuh"
#include "symmoe/prefetch/plan.hpp"

namespace symmoe::reference {

// pools[r] is rank r's whole buffer (layout.bytes_per_rank bytes). Copies every planned expert
// from its owner's owned region into the consumer's slot; nothing else changes.
void prefetch_reference(std::vector<std::vector<uint8_t>>& pools, const prefetch::PrefetchPlan& plan,
                        const device::ExpertPoolLayout& layout);

// owner_grads[r]: rank r's [experts_per_rank, elements] gradients; slot_grads[r]: rank r's
// gradient pool as floats (slot s starts at grad_layout.slot_at(s) / 4). Adds, for each owned
// expert, every slot holding it in (rank, plan order) order, then zeroes those slots.
void grad_reduce_reference(std::vector<std::vector<float>>& owner_grads,
                           std::vector<std::vector<float>>& slot_grads,
                           const prefetch::PrefetchPlan& plan,
                           const device::ExpertPoolLayout& grad_layout, uint32_t experts_per_rank,
                           uint64_t elements);

}  // namespace symmoe::reference
