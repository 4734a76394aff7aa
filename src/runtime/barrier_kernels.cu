// Protocol kernels over the device primitives (any sm_90 GPU).
#include <cuda_runtime.h>

#include <algorithm>

#include "kernel_launch.cuh"
#include "kernel_lists.hpp"
#include "symmoe/core/device_info.hpp"
#include "symmoe/core/error.hpp"
#include "symmoe/device/cross_rank_barrier.cuh"
#include "symmoe/device/grid_sync.cuh"
#include "symmoe/runtime/barrier_kernels.hpp"
#include "symmoe/symm/peer_validation.hpp"

namespace symmoe::runtime {
namespace {

constexpr int kBarrierThreads = 128;

struct CrossRankArgs {
  device::PeerTable peers;
  device::SignalPad* pad;
  device::StatusBlock* status;
  uint64_t timeout_ns;
  int count;
  uint32_t tag;
};

__global__ void __launch_bounds__(kBarrierThreads) cross_rank_barrier_loop_kernel(CrossRankArgs a) {
  const device::WaitContext ctx{a.status, a.timeout_ns, "cross_rank_barrier_loop"};
  for (int i = 0; i < a.count; ++i) {
    if (!device::cross_rank_barrier(a.peers, a.pad, ctx, a.tag)) return;
  }
}

struct GridArgs {
  device::GridSyncState* grid;
  device::StatusBlock* status;
  uint64_t timeout_ns;
  int iterations;
  int with_peers;
  device::PeerTable peers;
  device::SignalPad* pad;
};

__global__ void __launch_bounds__(kBarrierThreads) grid_barrier_loop_kernel(GridArgs a) {
  const device::WaitContext ctx{a.status, a.timeout_ns, "grid_barrier_loop"};
  for (int i = 0; i < a.iterations; ++i) {
    if (!device::grid_sync(a.grid, ctx, static_cast<uint32_t>(i), a.peers.rank)) return;
    if (a.with_peers && blockIdx.x == 0) {
      if (!device::cross_rank_barrier(a.peers, a.pad, ctx, static_cast<uint32_t>(i))) return;
    }
  }
  device::grid_sync(a.grid, ctx, static_cast<uint32_t>(a.iterations), a.peers.rank);
}

__global__ void sm_holder_kernel(uint64_t hold_ns) {
  if (threadIdx.x != 0) return;
  const uint64_t start = device::ptx::globaltimer_ns();
  while (device::ptx::globaltimer_ns() - start < hold_ns) __nanosleep(1000);
}

void check_pad(const device::PeerTable& peers, size_t buffer_bytes, size_t pad_offset, int device) {
  SYMMOE_CHECK(pad_offset % alignof(device::SignalPad) == 0, "signal pad offset ", pad_offset,
               " must be a multiple of ", alignof(device::SignalPad));
  SYMMOE_CHECK(pad_offset + device::kSignalPadBytes <= buffer_bytes, "signal pad at ", pad_offset,
               " (+", device::kSignalPadBytes, " bytes) does not fit the ", buffer_bytes,
               "-byte symmetric buffer");
  symm::validate_peer_table(peers, device);
}

void set_smem(const void* kernel, size_t smem) {
  if (smem > 48 * 1024) {
    SYMMOE_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           static_cast<int>(smem)),
                      "requesting ", smem, " bytes of shared memory per block");
  }
}

}  // namespace

void launch_cross_rank_barriers(DeviceRuntime& rt, const device::PeerTable& peers,
                                size_t buffer_bytes, size_t pad_offset, int count, uint32_t tag,
                                cudaStream_t stream, double timeout_s) {
  SYMMOE_CHECK(count >= 0, "barrier count ", count, " is negative");
  check_pad(peers, buffer_bytes, pad_offset, rt.device());
  CrossRankArgs a{peers,
                  reinterpret_cast<device::SignalPad*>(peers.base + pad_offset),
                  rt.status(),
                  wait_timeout_ns(timeout_s),
                  count,
                  tag};
  launch_kernel(cross_rank_barrier_loop_kernel, a, 1, kBarrierThreads, 0, false, stream,
         "cross_rank_barrier_loop_kernel");
}

GridLaunch launch_grid_barriers(DeviceRuntime& rt, SmBudget budget, int iterations,
                                size_t smem_per_block, cudaStream_t stream,
                                const device::PeerTable* peers, size_t buffer_bytes,
                                size_t pad_offset, double timeout_s) {
  SYMMOE_CHECK(iterations >= 0, "iterations ", iterations, " is negative");
  const DeviceInfo info = query_device(rt.device());
  SYMMOE_CHECK(smem_per_block <= static_cast<size_t>(info.smem_per_block_optin),
               "smem_per_block ", smem_per_block, " exceeds the device's ",
               info.smem_per_block_optin, " bytes per block");
  GridArgs a{};
  a.grid = rt.grid_state();
  a.status = rt.status();
  a.timeout_ns = wait_timeout_ns(timeout_s);
  a.iterations = iterations;
  if (peers != nullptr) {
    check_pad(*peers, buffer_bytes, pad_offset, rt.device());
    a.with_peers = 1;
    a.peers = *peers;
    a.pad = reinterpret_cast<device::SignalPad*>(peers->base + pad_offset);
  }
  const void* fn = reinterpret_cast<const void*>(&grid_barrier_loop_kernel);
  set_smem(fn, smem_per_block);
  int per_sm = 0;
  SYMMOE_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, grid_barrier_loop_kernel,
                                                                  kBarrierThreads, smem_per_block));
  SYMMOE_CHECK(per_sm >= 1, "grid_barrier_loop_kernel cannot be resident with ", smem_per_block,
               " bytes of shared memory");
  GridLaunch g;
  g.sms = plan_sms(info.num_sms, info.cc_major, budget);
  g.block = kBarrierThreads;
  g.smem = smem_per_block;
  g.grid = per_sm * g.sms.usable;
  launch_kernel(grid_barrier_loop_kernel, a, g.grid, g.block, g.smem, true, stream,
         "grid_barrier_loop_kernel");
  return g;
}

void launch_sm_holder(int num_blocks, size_t smem_per_block, double hold_s, cudaStream_t stream) {
  SYMMOE_CHECK(num_blocks >= 1 && hold_s >= 0, "sm holder needs >= 1 block and hold_s >= 0");
  set_smem(reinterpret_cast<const void*>(&sm_holder_kernel), smem_per_block);
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(static_cast<unsigned>(num_blocks));
  cfg.blockDim = dim3(32);
  cfg.dynamicSmemBytes = smem_per_block;
  cfg.stream = stream;
  SYMMOE_CUDA_CHECK(cudaLaunchKernelEx(&cfg, sm_holder_kernel, static_cast<uint64_t>(hold_s * 1e9)),
                    "sm_holder_kernel x ", num_blocks);
}

void reset_signal_pads(comm::Group& group, const symm::SymmetricBuffer& buffer, size_t pad_offset,
                       cudaStream_t stream) {
  SYMMOE_CHECK(pad_offset + device::kSignalPadBytes <= buffer.bytes_per_rank(),
               "signal pad at ", pad_offset, " does not fit the buffer");
  group.barrier();  // every rank's kernels ended before any pad is cleared
  SYMMOE_CUDA_CHECK(cudaMemsetAsync(static_cast<char*>(buffer.local()) + pad_offset, 0,
                                    device::kSignalPadBytes, stream));
  SYMMOE_CUDA_CHECK(cudaStreamSynchronize(stream));
  group.barrier();  // every pad cleared before anyone signals again
}

void append_barrier_kernels(std::vector<KernelEntry>& out) {
  out.push_back({"cross_rank_barrier_loop_kernel",
                 reinterpret_cast<const void*>(&cross_rank_barrier_loop_kernel)});
  out.push_back({"grid_barrier_loop_kernel", reinterpret_cast<const void*>(&grid_barrier_loop_kernel)});
  out.push_back({"sm_holder_kernel", reinterpret_cast<const void*>(&sm_holder_kernel)});
}

}  // namespace symmoe::runtime
