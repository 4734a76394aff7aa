#include "bench_common.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>

#include "symmoe/core/cuda_handles.hpp"
#include "symmoe/core/error.hpp"

namespace symmoe::cli {

const std::vector<ModelPreset>& model_presets() {
  static const std::vector<ModelPreset> all = {{"deepseek-v3", 256, 8, 7168, 2048},
                                               {"qwen3-moe", 128, 8, 4096, 1536},
                                               {"kimi-k2", 384, 8, 7168, 2048}};
  return all;
}

const ModelPreset& find_model(const std::string& name) {
  const auto& all = model_presets();
  auto it = std::find_if(all.begin(), all.end(), [&](const ModelPreset& m) { return m.name == name; });
  SYMMOE_CHECK(it != all.end(), "--model '", name, "': one of deepseek-v3, qwen3-moe, kimi-k2");
  return *it;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

double d2d_copy_gbps(int reps) {
  const size_t bytes = size_t{1} << 30;
  void *a = nullptr, *b = nullptr;
  SYMMOE_CUDA_CHECK(cudaMalloc(&a, bytes));
  SYMMOE_CUDA_CHECK(cudaMalloc(&b, bytes));
  SYMMOE_CUDA_CHECK(cudaMemset(a, 1, bytes));
  Stream s;
  std::vector<double> ms;
  for (int i = 0; i < reps + 2; ++i) {
    Event start, stop;
    start.record(s);
    SYMMOE_CUDA_CHECK(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, s));
    stop.record(s);
    SYMMOE_CUDA_CHECK(cudaEventSynchronize(stop));
    if (i >= 2) ms.push_back(stop.since(start));
  }
  cudaFree(a);
  cudaFree(b);
  return 2.0 * bytes / (median(ms) * 1e-3) / 1e9;
}

}  // namespace symmoe::cli
