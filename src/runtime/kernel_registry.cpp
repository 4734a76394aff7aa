#include "symmoe/runtime/kernel_registry.hpp"

#include <cuda_runtime_api.h>

#include <mutex>
#include <set>

#include "kernel_lists.hpp"
#include "symmoe/core/error.hpp"

namespace symmoe::runtime {

std::vector<KernelEntry> all_kernels() {
  std::vector<KernelEntry> out;
  append_smoke_kernels(out);
  append_barrier_kernels(out);
  append_prefetch_kernels(out);
  append_ep_dispatch_kernels(out);
  append_ep_combine_kernels(out);
  append_grouped_gemm_kernels(out);
  append_act_scales_transpose_kernels(out);
  return out;
}

int load_all_kernels(int device) {
  static std::mutex mutex;
  static std::set<int> loaded;
  const auto kernels = all_kernels();
  std::lock_guard lock(mutex);
  if (loaded.count(device) != 0) return static_cast<int>(kernels.size());
  int previous = -1;
  SYMMOE_CUDA_CHECK(cudaGetDevice(&previous));
  SYMMOE_CUDA_CHECK(cudaSetDevice(device), "device ", device);
  for (const KernelEntry& k : kernels) {
    cudaFuncAttributes attr{};
    cudaError_t rc = cudaFuncGetAttributes(&attr, k.function);
    if (rc == cudaSuccess && k.max_dynamic_smem > 0) {
      rc = cudaFuncSetAttribute(k.function, cudaFuncAttributeMaxDynamicSharedMemorySize, k.max_dynamic_smem);
    }
    if (rc == cudaSuccess && k.smem_carveout_percent >= 0) {
      rc = cudaFuncSetAttribute(k.function, cudaFuncAttributePreferredSharedMemoryCarveout,
                                k.smem_carveout_percent);
    }
    if (rc != cudaSuccess) {
      cudaSetDevice(previous);
      SYMMOE_CUDA_CHECK(rc, "loading kernel ", k.name, " on device ", device,
                        " (is the binary built for this GPU's architecture?)");
    }
  }
  SYMMOE_CUDA_CHECK(cudaSetDevice(previous));
  loaded.insert(device);
  return static_cast<int>(kernels.size());
}

}  // namespace symmoe::runtime
