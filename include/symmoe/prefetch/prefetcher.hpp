// Expert-weight prefetch: one persistent kernel copies every expert of a plan into its slots,
// between a start and an end cross-rank barrier (split-phase: NOTE in device/split_barrier.cuh).
#pragma once

#include <cuda_runtime_api.h>

#include <memory>

#include "symmoe/comm/group.hpp"
#include "symmoe/prefetch/expert_pool.hpp"
#include "symmoe/prefetch/plan.hpp"
#include "symmoe/prefetch/prefetch_trace.hpp"
#include "symmoe/runtime/barrier_kernels.hpp"
#include "symmoe/runtime/device_runtime.hpp"

namespace symmoe::prefetch {

// NOTE [slot contract]: a prefetch launch runs start barrier -> copies -> end barrier on every
// rank (split-phase: blocks start copying once every rank has arrived, and the kernel completes
// once every rank's copies are complete). The launch is a programmatic dependent of the kernel
// before it (SYMMOE_PREFETCH_EARLY_LAUNCH): it may become resident early but touches no memory
// before that kernel has completed, so stream order holds as for a plain launch.
// (1) Owned expert weights must not change from the start barrier until the end barrier
// (the optimizer step of an owner goes before the prefetch on its stream, or after it).
// (2) A slot is written only between the two barriers; once the prefetch kernel has completed
// on the consumer's stream, the slot holds its expert and stays valid until the consumer's next
// prefetch launch. (3) Work that reads a slot must be enqueued on the consumer's stream before
// that next prefetch: its start barrier is what tells pushing owners the slot is free again.
// Pull mode only writes local slots, but keeps both barriers so that (1) holds for owners —
// unless the weights are static (inference: nothing modifies owned experts while prefetches
// run), when a pull needs no cross-rank synchronization at all: PrefetchOptions::static_weights
// drops both barriers in pull mode (push mode keeps them: they guard the consumers' slots).
struct PrefetchOptions {
  bool static_weights = false;
};

// How the copy kernel moves bytes; read from the environment when a Prefetcher is built
// (SYMMOE_PREFETCH_COPY / _CHUNK_KB / _STAGES / _STORES_IN_FLIGHT / _EARLY_LAUNCH, named errors
// for shapes that do not fit). Plain data: it travels in the kernel's arguments.
struct PrefetchPipeline {
  uint32_t chunk_bytes;
  int stages;            // bulk copy: shared-memory stages
  int stores_in_flight;  // bulk copy: loads ahead = stages - stores_in_flight
  int vector;            // 1: 16-byte loads/stores by every thread; 0: TMA bulk copies
  int early_launch;      // 1: programmatic dependent launch (NOTE [early prefetch launch])
};
PrefetchPipeline prefetch_pipeline_from_env();

class Prefetcher {
 public:
  // Collective: validates the plan against the pool, checks that every rank holds the same
  // plan and mode, and uploads this rank's copy tasks to the device.
  Prefetcher(comm::Group& group, const ExpertPool& pool, runtime::DeviceRuntime& rt,
             PrefetchPlan plan, PrefetchMode mode, PrefetchOptions options = {});
  ~Prefetcher();
  Prefetcher(const Prefetcher&) = delete;
  Prefetcher& operator=(const Prefetcher&) = delete;

  // Enqueues the copy kernel on `stream` (capturable in a CUDA graph). Validates the peers
  // before launch. Failures (timeouts) land in the runtime's status block. `trace` (device
  // memory, optional) receives the launch's phase stamps.
  runtime::GridLaunch launch(cudaStream_t stream,
                             runtime::SmBudget budget = runtime::current_sm_budget(),
                             double timeout_s = 0, PrefetchTrace* trace = nullptr);

  int num_tasks() const { return num_tasks_; }
  CopyBytes bytes() const { return bytes_; }
  PrefetchMode mode() const { return mode_; }
  // Whether launches meet the other ranks (start and end barriers).
  bool synchronizes() const { return synchronize_; }
  const PrefetchPipeline& pipeline() const { return pipeline_; }

 private:
  const ExpertPool& pool_;
  runtime::DeviceRuntime& rt_;
  PrefetchMode mode_;
  bool synchronize_ = true;
  PrefetchPipeline pipeline_;
  int num_tasks_ = 0;
  CopyBytes bytes_;
  device::CopyTask* tasks_ = nullptr;  // device array
};

}  // namespace symmoe::prefetch
