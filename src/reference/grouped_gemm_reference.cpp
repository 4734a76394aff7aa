#include "symmoe/reference/grouped_gemm_reference.hpp"

#include <cstring>

#include "symmoe/core/bf16.hpp"
#include "symmoe/core/error.hpp"
#include "symmoe/device/fp8_block_quant.cuh"

namespace symmoe::reference {

namespace {

using gemm::GemmDtype;
using gemm::GroupedLayout;
using gemm::kFp8ScaleBlock;

// One dequantized operand row of K values (row of expert e), exact in fp64.
void dequantize_act_row(const gemm::GroupedGemmProblem& p, int e, int64_t row, std::vector<double>& out) {
  const int K = p.k;
  if (p.dtype == GemmDtype::kBF16) {
    const auto* a = static_cast<const uint16_t*>(p.act) + row * K;
    for (int k = 0; k < K; ++k) out[k] = bf16_bits_to_float(a[k]);
    return;
  }
  const auto* a = static_cast<const uint8_t*>(p.act) + row * K;
  const gemm::ScaleStrides s = p.act_scale_strides();
  for (int k = 0; k < K; ++k) {
    out[k] = static_cast<double>(device::fp8_e4m3_to_float(a[k])) * p.act_scales[s.index(e, row, k / kFp8ScaleBlock)];
  }
}

void dequantize_weight_row(const gemm::GroupedGemmProblem& p, int e, int n, std::vector<double>& out) {
  const int K = p.k;
  const int64_t at = (static_cast<int64_t>(e) * p.n + n) * K;
  if (p.dtype == GemmDtype::kBF16) {
    const auto* w = static_cast<const uint16_t*>(p.weights) + at;
    for (int k = 0; k < K; ++k) out[k] = bf16_bits_to_float(w[k]);
    return;
  }
  const auto* w = static_cast<const uint8_t*>(p.weights) + at;
  const int kb = K / kFp8ScaleBlock;
  const float* s = p.weight_scales + (static_cast<int64_t>(e) * (p.n / kFp8ScaleBlock) + n / kFp8ScaleBlock) * kb;
  for (int k = 0; k < K; ++k) {
    out[k] = static_cast<double>(device::fp8_e4m3_to_float(w[k])) * s[k / kFp8ScaleBlock];
  }
}

}  // namespace

void grouped_gemm_reference(const gemm::GroupedGemmProblem& p, std::vector<double>* exact) {
  gemm::validate_problem(p);
  gemm::validate_row_tables(p, p.offsets, p.counts);
  const int K = p.k, N = p.n;
  if (exact != nullptr) exact->assign(static_cast<size_t>(p.rows()) * N, 0.0);
  auto* out = static_cast<uint16_t*>(p.out);
  std::vector<double> a(K), w(K);
  // Weights of one expert, dequantized once: [N, K].
  std::vector<double> wt;
  for (int e = 0; e < p.num_experts; ++e) {
    const int m = p.counts[e];
    if (m == 0) continue;
    const int64_t first = p.layout == GroupedLayout::kContiguous ? p.offsets[e] : static_cast<int64_t>(e) * p.max_m;
    wt.resize(static_cast<size_t>(N) * K);
    for (int n = 0; n < N; ++n) {
      dequantize_weight_row(p, e, n, w);
      std::memcpy(wt.data() + static_cast<size_t>(n) * K, w.data(), K * sizeof(double));
    }
    for (int i = 0; i < m; ++i) {
      const int64_t row = first + i;
      dequantize_act_row(p, e, row, a);
      for (int n = 0; n < N; ++n) {
        const double* wr = wt.data() + static_cast<size_t>(n) * K;
        double acc = 0;
        for (int k = 0; k < K; ++k) acc += a[k] * wr[k];
        out[row * N + n] = double_to_bf16_bits(acc);
        if (exact != nullptr) (*exact)[static_cast<size_t>(row) * N + n] = acc;
      }
    }
  }
}

}  // namespace symmoe::reference
