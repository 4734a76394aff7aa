// The copy kernel's host triple: arguments, configuration, launcher (private).
#pragma once

#include <cuda_runtime_api.h>

#include "symmoe/device/expert_pool_layout.cuh"
#include "symmoe/device/peer_table.cuh"
#include "symmoe/prefetch/prefetcher.hpp"
#include "symmoe/runtime/barrier_kernels.hpp"
#include "symmoe/runtime/device_runtime.hpp"

namespace symmoe::prefetch {

// Shared memory a block may give the pipeline (stages x chunk bytes), and the most stages.
inline constexpr uint32_t kPrefetchPipelineBytes = 224 * 1024;
inline constexpr int kPrefetchMaxStages = 16;

struct PrefetchCopyArgs {
  device::PeerTable peers;
  device::ExpertPoolLayout layout;
  const device::CopyTask* tasks;
  uint32_t num_tasks;
  device::GridSyncState* grid;
  device::StatusBlock* status;
  uint64_t timeout_ns;
  PrefetchPipeline pipeline;
  int synchronize;        // 0: no start/end barriers (pull with static weights)
  PrefetchTrace* trace;   // null, or where the launch stamps its phases
};

// Grid: one block per usable SM (whole shared-memory pipeline), at most one per chunk of work.
runtime::GridLaunch prefetch_copy_config(int device, runtime::SmBudget budget,
                                         const PrefetchPipeline& pipeline, uint64_t num_chunks);

void launch_prefetch_copy(const PrefetchCopyArgs& args, const runtime::GridLaunch& config,
                          cudaStream_t stream);

// Reduction of fp32 slot gradients into owners (grad_reducer.cpp drives it).
struct GradSource {
  uint32_t rank;
  uint32_t pad;
  uint64_t offset;  // slot offset in that rank's gradient pool
};

struct GradReduceArgs {
  device::PeerTable peers;      // over the gradient pool
  uint64_t pad_offset;          // its signal pad
  const uint32_t* source_begin; // [experts_per_rank + 1], CSR into `sources`
  const GradSource* sources;
  float* owner_grads;           // [experts_per_rank, elements]
  uint64_t elements;            // per expert, multiple of 4
  uint32_t experts_per_rank;
  device::GridSyncState* grid;
  device::StatusBlock* status;
  uint64_t timeout_ns;
};

runtime::GridLaunch grad_reduce_config(int device, runtime::SmBudget budget);
void launch_grad_reduce(const GradReduceArgs& args, const runtime::GridLaunch& config,
                        cudaStream_t stream);

}  // namespace symmoe::prefetch
