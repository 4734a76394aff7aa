// What every benchmark of the symmoe tool shares: model presets, the median, and the same-run
// copy ceiling.
#pragma once

#include <string>
#include <vector>

namespace symmoe::cli {

// The MoE model presets every benchmark shares (routed experts, top-k, hidden size, one
// expert's intermediate size).
struct ModelPreset {
  std::string name;
  int experts, top_k, hidden, intermediate;
};
const std::vector<ModelPreset>& model_presets();
// The preset called `name`; throws symmoe::Error naming the choices (for --model).
const ModelPreset& find_model(const std::string& name);

double median(std::vector<double> v);

// A 1 GiB cudaMemcpyAsync device-to-device copy on the current device, counted as bytes read
// + bytes written per second (GB/s), median of `reps` after two warm-ups.
double d2d_copy_gbps(int reps);

}  // namespace symmoe::cli
