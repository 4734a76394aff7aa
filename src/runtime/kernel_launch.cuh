// The thin launcher every library kernel goes through (private, CUDA translation units only):
// cudaLaunchKernelEx with the grid, block and shared memory, cooperative where the kernel
// synchronizes its whole grid, and an error that names the kernel and its configuration.
#pragma once

#include <cuda_runtime.h>

#include "symmoe/core/device_info.hpp"
#include "symmoe/core/error.hpp"
#include "symmoe/runtime/barrier_kernels.hpp"
#include "symmoe/runtime/sm_budget.hpp"

namespace symmoe::runtime {

// A persistent, grid-synchronized launch with one block per usable SM of the budget: the grid
// is co-resident whenever those SMs are free. Throws when one block of `block` threads and
// `smem` bytes does not fit on an SM.
template <class Args>
GridLaunch one_block_per_sm(void (*kernel)(Args), int device, SmBudget budget, int block, size_t smem,
                            const char* name) {
  const DeviceInfo info = query_device(device);
  SYMMOE_CHECK(smem <= static_cast<size_t>(info.smem_per_block_optin), name, " needs ", smem,
               " bytes of shared memory per block; device ", device, " offers ", info.smem_per_block_optin);
  int per_sm = 0;
  SYMMOE_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, block, smem), name);
  SYMMOE_CHECK(per_sm >= 1, name, " (", block, " threads, ", smem, " bytes of shared memory) does not fit on "
               "an SM of device ", device);
  GridLaunch c;
  c.sms = plan_sms(info.num_sms, info.cc_major, budget);
  c.block = block;
  c.smem = smem;
  c.grid = c.sms.usable;
  return c;
}

// `early` (programmatic dependent launch): the kernel may be scheduled before the previous
// kernel on the stream completes; it must execute griddepcontrol.wait before it touches
// anything that kernel (or earlier work) wrote, and may trigger its own dependents.
template <class Args>
void launch_kernel(void (*kernel)(Args), const Args& args, int grid, int block, size_t smem,
                   bool cooperative, cudaStream_t stream, const char* name, bool early = false) {
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(static_cast<unsigned>(grid));
  cfg.blockDim = dim3(static_cast<unsigned>(block));
  cfg.dynamicSmemBytes = smem;
  cfg.stream = stream;
  cudaLaunchAttribute attrs[2]{};
  unsigned n = 0;
  if (cooperative) {
    attrs[n].id = cudaLaunchAttributeCooperative;
    attrs[n++].val.cooperative = 1;
  }
  if (early) {
    attrs[n].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attrs[n++].val.programmaticStreamSerializationAllowed = 1;
  }
  cfg.attrs = attrs;
  cfg.numAttrs = n;
  SYMMOE_CUDA_CHECK(cudaLaunchKernelEx(&cfg, kernel, args), name, ": grid ", grid, " x ", block,
                    " threads, ", smem, " bytes of shared memory", cooperative ? ", cooperative" : "",
                    early ? ", early launch" : "");
}

}  // namespace symmoe::runtime
