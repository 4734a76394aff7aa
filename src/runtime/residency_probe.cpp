#include "symmoe/runtime/residency_probe.hpp"

#include <chrono>
#include <thread>

#include "symmoe/core/cuda_handles.hpp"
#include "symmoe/core/device_info.hpp"
#include "symmoe/core/error.hpp"
#include "symmoe/runtime/barrier_kernels.hpp"

namespace symmoe::runtime {

ResidencyReport probe_residency(DeviceRuntime& rt, SmBudget budget, int held_sms, double hold_s,
                                double timeout_s, int iterations) {
  const DeviceInfo info = query_device(rt.device());
  // The whole opt-in shared memory: one block per SM, for the holder and the grid alike.
  const size_t smem = static_cast<size_t>(info.smem_per_block_optin);
  Stream side, main;
  Event side_done, start, stop;
  ResidencyReport report;
  launch_sm_holder(held_sms, smem, hold_s, side);
  side_done.record(side);
  // Let the holder's blocks take their SMs before the grid arrives.
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  start.record(main);
  const GridLaunch g =
      launch_grid_barriers(rt, budget, iterations, smem, main, nullptr, 0, 0, timeout_s);
  stop.record(main);
  SYMMOE_CUDA_CHECK(cudaEventSynchronize(stop));
  report.side_still_running = cudaEventQuery(side_done) == cudaErrorNotReady;
  cudaGetLastError();  // the not-ready answer is not an error
  report.grid_ms = stop.since(start);
  report.grid = g.grid;
  report.usable_sms = g.sms.usable;
  if (auto failure = rt.take_failure(main)) report.failure = *failure;
  return report;  // the streams wait for the holder on destruction
}

}  // namespace symmoe::runtime
