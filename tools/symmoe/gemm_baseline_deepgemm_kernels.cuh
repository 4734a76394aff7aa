// One DeepGEMM config's kernels (gemm_baseline_deepgemm.hpp), included by a generated
// translation unit that defines SYMMOE_DEEPGEMM_INDEX (its row of SYMMOE_DEEPGEMM_CONFIGS):
// DeepGEMM's sm90_fp8_gemm_1d2d_impl for the m-grouped contiguous layout with N and K compiled
// in for the deepseek-v3 expert shapes (gate/up 4096 x 7168, down 7168 x 2048; DeepGEMM's JIT
// compiles every shape in) and once for any shape (0, 0).
#include <deep_gemm/impls/sm90_fp8_gemm_1d2d.cuh>

#include <vector>

#include "gemm_baseline_deepgemm.hpp"
#include "gemm_baseline_deepgemm_configs.hpp"

#ifndef SYMMOE_DEEPGEMM_INDEX
#error "define SYMMOE_DEEPGEMM_INDEX (the config's row in SYMMOE_DEEPGEMM_CONFIGS)"
#endif

namespace symmoe::cli::deepgemm_detail {

constexpr DeepGemmConfig kConfigs[] = {
#define SYMMOE_DG_ROW(bm, bn, st, mc) DeepGemmConfig{bm, bn, st, mc},
    SYMMOE_DEEPGEMM_CONFIGS(SYMMOE_DG_ROW)
#undef SYMMOE_DG_ROW
};
static_assert(sizeof(kConfigs) / sizeof(kConfigs[0]) == kDeepGemmConfigCount, "kDeepGemmConfigCount");

template <int kIndex, uint32_t kN, uint32_t kK>
const void* kernel() {
  constexpr DeepGemmConfig c = kConfigs[kIndex];
  return reinterpret_cast<const void*>(
      &deep_gemm::sm90_fp8_gemm_1d2d_impl<cute::UMMA::Major::K, 0, kN, kK, 1, c.block_m, c.block_n, 128, 128, 128,
                                          deepgemm_swizzle_d(c.block_n), c.stages, 0, 128, 256, c.multicast, false,
                                          kDeepGemmSms, deep_gemm::GemmType::MGroupedContiguous,
                                          deep_gemm::EpilogueIdentity, false>);
}

}  // namespace symmoe::cli::deepgemm_detail

#define SYMMOE_DG_CAT2(a, b) a##b
#define SYMMOE_DG_CAT(a, b) SYMMOE_DG_CAT2(a, b)

namespace symmoe::cli::deepgemm_detail {
void SYMMOE_DG_CAT(append_config_, SYMMOE_DEEPGEMM_INDEX)(std::vector<DeepGemmKernel>& out) {
  constexpr int i = SYMMOE_DEEPGEMM_INDEX;
  out.push_back({kConfigs[i], 4096, 7168, kernel<i, 4096, 7168>()});
  out.push_back({kConfigs[i], 7168, 2048, kernel<i, 7168, 2048>()});
  out.push_back({kConfigs[i], 0, 0, kernel<i, 0, 0>()});
}
}  // namespace symmoe::cli::deepgemm_detail
