#include "symmoe/reference/grouped_gemm_reference.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <thread>

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

// One output row: bf16 out, and the fp64 sums (exact) and sums of |a_k b_k| (abs) where given.
void reference_row(const gemm::GroupedGemmProblem& p, int e, int64_t row, const std::vector<double>& wt,
                   std::vector<double>& a, double* exact, double* abs_products) {
  const int K = p.k, N = p.n;
  dequantize_act_row(p, e, row, a);
  auto* out = static_cast<uint16_t*>(p.out);
  for (int n = 0; n < N; ++n) {
    const double* wr = wt.data() + static_cast<size_t>(n) * K;
    double acc = 0, abs = 0;
    if (abs_products != nullptr) {
      for (int k = 0; k < K; ++k) {
        const double q = a[k] * wr[k];
        acc += q;
        abs += std::fabs(q);
      }
      abs_products[row * N + n] = abs;
    } else {
      for (int k = 0; k < K; ++k) acc += a[k] * wr[k];
    }
    out[row * N + n] = double_to_bf16_bits(acc);
    if (exact != nullptr) exact[row * N + n] = acc;
  }
}

}  // namespace

int reference_threads() {
  const unsigned hw = std::thread::hardware_concurrency();
  return static_cast<int>(std::clamp<unsigned>(hw, 1, 32));
}

void grouped_gemm_reference(const gemm::GroupedGemmProblem& p, std::vector<double>* exact,
                            std::vector<double>* abs_products, int threads) {
  SYMMOE_CHECK(threads >= 0, "grouped_gemm_reference: threads = ", threads, " (0: reference_threads())");
  gemm::validate_problem(p);
  gemm::validate_row_tables(p, p.offsets, p.counts);
  const int K = p.k, N = p.n;
  const size_t outputs = static_cast<size_t>(p.rows()) * N;
  if (exact != nullptr) exact->assign(outputs, 0.0);
  if (abs_products != nullptr) abs_products->assign(outputs, 0.0);
  double* ex = exact != nullptr ? exact->data() : nullptr;
  double* ab = abs_products != nullptr ? abs_products->data() : nullptr;
  // Weights of one expert, dequantized once: [N, K]. Each output is one thread's, summed in
  // ascending K, so the results do not depend on the thread count.
  std::vector<double> wt, w(K);
  if (threads == 0) threads = reference_threads();
  for (int e = 0; e < p.num_experts; ++e) {
    const int m = p.counts[e];
    if (m == 0) continue;
    const int64_t first = p.layout == GroupedLayout::kContiguous ? p.offsets[e] : static_cast<int64_t>(e) * p.max_m;
    wt.resize(static_cast<size_t>(N) * K);
    for (int n = 0; n < N; ++n) {
      dequantize_weight_row(p, e, n, w);
      std::memcpy(wt.data() + static_cast<size_t>(n) * K, w.data(), K * sizeof(double));
    }
    // Rows t, t + T, ... on thread t; a thread's share is worth starting from 2 rows.
    const int t_count = std::max(1, std::min(threads, m / 2));
    auto rows_of = [&](int t) {
      std::vector<double> a(K);
      for (int i = t; i < m; i += t_count) reference_row(p, e, first + i, wt, a, ex, ab);
    };
    if (t_count == 1) {
      rows_of(0);
      continue;
    }
    std::vector<std::thread> pool;
    pool.reserve(t_count - 1);
    for (int t = 1; t < t_count; ++t) pool.emplace_back(rows_of, t);
    rows_of(0);
    for (std::thread& th : pool) th.join();
  }
}

}  // namespace symmoe::reference
