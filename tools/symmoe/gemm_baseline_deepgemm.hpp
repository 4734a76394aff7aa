// Optional same-run baseline of `symmoe bench gemm`: DeepGEMM's SM90 fp8 grouped GEMM
// (sm90_fp8_gemm_1d2d_impl, m-grouped contiguous layout: 1x128 activation and 128x128 weight
// scales, fp32 promotion per K block, bf16 out — the same recipe as ours). Built in only when
// the tool is configured with -DSYMMOE_DEEPGEMM_INCLUDE=<dir holding deep_gemm/>
// (scripts/fetch-deepgemm.sh); without it deepgemm_kernels() is empty and the bench prints no
// DeepGEMM lines. DeepGEMM's own host code (tile heuristic, JIT) is not in its headers, so the
// bench runs every config compiled here (gemm_baseline_deepgemm_configs.hpp) and reports each
// and the best: the most generous reading of it.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>
#include <vector>

namespace symmoe::cli {

struct DeepGemmConfig {
  int block_m, block_n, stages, multicast;  // multicast: CTAs of a cluster sharing each weight tile
  std::string name() const;
  bool operator==(const DeepGemmConfig&) const = default;
};

// One compiled kernel: a config, and the N, K compiled into it (0, 0: any shape).
struct DeepGemmKernel {
  DeepGemmConfig config;
  uint32_t n, k;
  const void* fn;
};

// Every kernel built in (empty without DeepGEMM). Its kernels bake in kDeepGemmSms SMs (as
// DeepGEMM's JIT bakes in the device's count): other devices skip the baseline.
const std::vector<DeepGemmKernel>& deepgemm_kernels();
constexpr int kDeepGemmSms = 132;

// The configs that can run [E * M, K] x [E, N, K] (M per expert a multiple of block_m' 128-row
// alignment: DeepGEMM's contiguous layout pads every expert to 128 rows).
std::vector<DeepGemmConfig> deepgemm_configs(int experts, int m, int n, int k);

// out[e*M + r, :] = act[e*M + r, :] · w[e]ᵀ with the recipe's scales: act [E*M, K] fp8 with
// act_scales [E*M, K/128] (ours, row-major; transposed here to DeepGEMM's K-block-major layout
// once, at construction), w [E, N, K] fp8 with w_scales [E, N/128, K/128], out [E*M, N] bf16.
class DeepGemmGrouped {
 public:
  DeepGemmGrouped(const DeepGemmConfig& config, int experts, int m, int n, int k, const void* act,
                  const float* act_scales, const float* w_scales, void* out, cudaStream_t stream);
  ~DeepGemmGrouped();
  DeepGemmGrouped(const DeepGemmGrouped&) = delete;
  DeepGemmGrouped& operator=(const DeepGemmGrouped&) = delete;

  void run(const void* weights, cudaStream_t stream);

 private:
  struct State;
  State* s_;
};

// max |a - b| / max |b| over `count` bf16 values (the DeepGEMM output against ours).
double bf16_max_rel_diff(const void* a, const void* b, size_t count, cudaStream_t stream);

}  // namespace symmoe::cli
