// The thin launcher every library kernel goes through (private, CUDA translation units only):
// cudaLaunchKernelEx with the grid, block and shared memory, cooperative where the kernel
// synchronizes its whole grid, and an error that names the kernel and its configuration.
#pragma once

#include <cuda_runtime.h>

#include "symmoe/core/error.hpp"

namespace symmoe::runtime {

template <class Args>
void launch_kernel(void (*kernel)(Args), const Args& args, int grid, int block, size_t smem,
                   bool cooperative, cudaStream_t stream, const char* name) {
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(static_cast<unsigned>(grid));
  cfg.blockDim = dim3(static_cast<unsigned>(block));
  cfg.dynamicSmemBytes = smem;
  cfg.stream = stream;
  cudaLaunchAttribute attr{};
  attr.id = cudaLaunchAttributeCooperative;
  attr.val.cooperative = 1;
  if (cooperative) {
    cfg.attrs = &attr;
    cfg.numAttrs = 1;
  }
  SYMMOE_CUDA_CHECK(cudaLaunchKernelEx(&cfg, kernel, args), name, ": grid ", grid, " x ", block,
                    " threads, ", smem, " bytes of shared memory", cooperative ? ", cooperative" : "");
}

}  // namespace symmoe::runtime
