// Training: fp32 gradients that ranks accumulated in their slots flow back to the experts'
// owners (owner pulls and sums in a fixed order), and the slots are cleared.
#pragma once

#include <cuda_runtime_api.h>

#include <memory>

#include "symmoe/comm/group.hpp"
#include "symmoe/device/expert_pool_layout.cuh"
#include "symmoe/prefetch/expert_spec.hpp"
#include "symmoe/prefetch/plan.hpp"
#include "symmoe/runtime/barrier_kernels.hpp"
#include "symmoe/runtime/device_runtime.hpp"
#include "symmoe/symm/symmetric_buffer.hpp"

namespace symmoe::prefetch {

// Symmetric [num_slots, elements] fp32 per rank (+ signal pad): slot s holds the gradient of
// whatever expert the plan put in weight slot s.
class GradPool {
 public:
  static std::unique_ptr<GradPool> create(comm::Group& group, const ExpertSpec& spec,
                                          uint32_t experts_per_rank, uint32_t num_slots,
                                          symm::HandleType handle_type = symm::HandleType::kAuto);
  uint64_t elements() const { return elements_; }
  uint32_t experts_per_rank() const { return experts_per_rank_; }
  const device::ExpertPoolLayout& layout() const { return layout_; }  // experts_per_rank = 0
  symm::SymmetricBuffer& buffer() const { return *buffer_; }
  float* slot(uint32_t s) const;

 private:
  GradPool() = default;
  uint64_t elements_ = 0;
  uint32_t experts_per_rank_ = 0;
  device::ExpertPoolLayout layout_;
  std::unique_ptr<symm::SymmetricBuffer> buffer_;
};

// NOTE [grad reduce]: start barrier (every rank finished writing slot gradients) -> the owner
// of each expert reads every slot holding it, in (rank, plan order) order, adds them to its
// own fp32 gradient (grads[j] = grads[j] + s_0 + s_1 + ...: bitwise reproducible), and zeroes
// those slots -> end barrier (no rank writes a slot before it was cleared).
class GradReducer {
 public:
  // Collective: validates the plan (as for the weights it mirrors) and uploads the sources.
  GradReducer(comm::Group& group, const GradPool& pool, runtime::DeviceRuntime& rt,
              const PrefetchPlan& plan);
  ~GradReducer();
  GradReducer(const GradReducer&) = delete;
  GradReducer& operator=(const GradReducer&) = delete;

  // owner_grads: this rank's [experts_per_rank, elements] fp32 gradients (device memory).
  runtime::GridLaunch launch(float* owner_grads, cudaStream_t stream,
                             runtime::SmBudget budget = runtime::current_sm_budget(),
                             double timeout_s = 0);

  int num_sources() const { return num_sources_; }
  // Bytes this rank moves: reads of slot grads + owner grads, writes of owner grads + zeros.
  CopyBytes bytes() const { return bytes_; }

 private:
  const GradPool& pool_;
  runtime::DeviceRuntime& rt_;
  int num_sources_ = 0;
  CopyBytes bytes_;
  uint32_t* source_begin_ = nullptr;
  void* sources_ = nullptr;
};

}  // namespace symmoe::prefetch
