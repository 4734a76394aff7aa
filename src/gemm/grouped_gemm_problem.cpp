#include "symmoe/gemm/grouped_gemm_problem.hpp"

#include <algorithm>
#include <vector>

#include "symmoe/core/alignment.hpp"
#include "symmoe/core/error.hpp"

namespace symmoe::gemm {

namespace {

const char* dtype_name(GemmDtype d) { return d == GemmDtype::kFP8E4M3 ? "fp8 e4m3" : "bf16"; }

}  // namespace

int64_t GroupedGemmProblem::rows() const {
  return layout == GroupedLayout::kContiguous ? total_rows : static_cast<int64_t>(num_experts) * max_m;
}

int64_t GroupedGemmProblem::scale_block_rows() const {
  return layout == GroupedLayout::kContiguous ? total_rows : int64_t{max_m};
}

double GroupedGemmProblem::flops(const int32_t* host_counts) const {
  double rows_used = 0;
  for (int e = 0; e < num_experts; ++e) rows_used += host_counts[e];
  return 2.0 * rows_used * n * k;
}

ScaleStrides GroupedGemmProblem::act_scale_strides() const {
  const int64_t kblocks = k / kFp8ScaleBlock;
  if (act_scale_layout == ScaleLayout::kRowMajor) return {kblocks, 1, 0};
  const int64_t ld = act_scales_ld > 0 ? act_scales_ld : scale_block_rows();
  if (layout == GroupedLayout::kContiguous) return {1, ld, 0};
  return {1, ld, kblocks * ld - max_m};  // expert e's K block kb starts at (e * K/128 + kb) * ld
}

void validate_problem(const GroupedGemmProblem& p) {
  SYMMOE_CHECK(p.num_experts >= 1, "grouped GEMM with ", p.num_experts, " experts: need at least one");
  SYMMOE_CHECK(p.n >= 1 && p.k >= 1, "grouped GEMM extents N = ", p.n, ", K = ", p.k, " must be positive");
  if (p.dtype == GemmDtype::kFP8E4M3) {
    SYMMOE_CHECK(p.k % kFp8ScaleBlock == 0, "fp8 grouped GEMM: K = ", p.k, " must be a multiple of ",
                 kFp8ScaleBlock, " (one activation scale per 1x128 block, one weight scale per 128x128)");
    SYMMOE_CHECK(p.n % kFp8ScaleBlock == 0, "fp8 grouped GEMM: N = ", p.n, " must be a multiple of ",
                 kFp8ScaleBlock, " (weight scales cover 128x128 blocks)");
    SYMMOE_CHECK(p.act_scales != nullptr && p.weight_scales != nullptr,
                 "fp8 grouped GEMM needs act_scales [rows, K/128] and weight_scales [E, N/128, K/128]");
    SYMMOE_CHECK(is_aligned(p.act_scales, 4) && is_aligned(p.weight_scales, 4), "fp8 scales must be 4-byte aligned");
    if (p.act_scale_layout == ScaleLayout::kRowMajor) {
      SYMMOE_CHECK(p.act_scales_ld == 0, "fp8 grouped GEMM: act_scales_ld = ", p.act_scales_ld,
                   " is for column-major activation scales (act_scale_layout = kRowMajor is [rows, K/128])");
    } else {
      const bool masked = p.layout == GroupedLayout::kMasked;
      const int64_t least = p.scale_block_rows();
      SYMMOE_CHECK(p.act_scales_ld == 0 || p.act_scales_ld >= least, "fp8 grouped GEMM: column-major act_scales_ld = ",
                   p.act_scales_ld, " is less than ", masked ? "max_m = " : "total_rows = ", least,
                   masked ? " (scales are [E, K/128, ld])" : " (scales are [K/128, ld])");
    }
  } else {
    SYMMOE_CHECK(p.k % 8 == 0 && p.n % 8 == 0, "bf16 grouped GEMM: N = ", p.n, " and K = ", p.k,
                 " must be multiples of 8 (16-byte rows)");
    SYMMOE_CHECK(p.act_scales == nullptr && p.weight_scales == nullptr,
                 "bf16 grouped GEMM takes no scales (got act_scales or weight_scales): is the dtype ",
                 dtype_name(p.dtype), " intended?");
    SYMMOE_CHECK(p.act_scale_layout == ScaleLayout::kRowMajor && p.act_scales_ld == 0,
                 "bf16 grouped GEMM takes no scales (act_scale_layout / act_scales_ld were set)");
  }
  if (p.layout == GroupedLayout::kContiguous) {
    SYMMOE_CHECK(p.total_rows >= 0, "contiguous grouped GEMM: total_rows ", p.total_rows, " is negative");
    SYMMOE_CHECK(p.offsets != nullptr, "contiguous grouped GEMM needs offsets [E] (first row of each expert)");
  } else {
    SYMMOE_CHECK(p.max_m >= 1, "masked grouped GEMM: max_m ", p.max_m, " must be positive");
    SYMMOE_CHECK(p.offsets == nullptr, "masked grouped GEMM takes no offsets (expert e starts at row e * max_m)");
  }
  SYMMOE_CHECK(p.counts != nullptr, "grouped GEMM needs counts [E] (rows of each expert)");
  SYMMOE_CHECK(is_aligned(p.counts, 4) && is_aligned(p.offsets, 4), "counts and offsets must be 4-byte aligned");
  if (p.rows() > 0) {
    SYMMOE_CHECK(p.act != nullptr && p.out != nullptr, "grouped GEMM over ", p.rows(),
                 " rows needs act and out (a null pointer was given)");
  }
  SYMMOE_CHECK(p.weights != nullptr, "grouped GEMM needs weights [E, N, K]");
  SYMMOE_CHECK(is_aligned(p.act, 16) && is_aligned(p.weights, 16) && is_aligned(p.out, 16),
               "act, weights and out must be 16-byte aligned");
}

void validate_row_tables(const GroupedGemmProblem& p, const int32_t* host_offsets, const int32_t* host_counts) {
  std::vector<std::pair<int64_t, int>> starts;
  for (int e = 0; e < p.num_experts; ++e) {
    const int64_t c = host_counts[e];
    SYMMOE_CHECK(c >= 0, "counts[", e, "] = ", c, " is negative");
    if (p.layout == GroupedLayout::kMasked) {
      SYMMOE_CHECK(c <= p.max_m, "counts[", e, "] = ", c, " exceeds max_m = ", p.max_m);
      continue;
    }
    const int64_t o = host_offsets[e];
    SYMMOE_CHECK(o >= 0 && o + c <= p.total_rows, "expert ", e, ": rows [", o, ", ", o + c,
                 ") leave the ", p.total_rows, " rows of the activations");
    if (c > 0) starts.emplace_back(o, e);
  }
  std::sort(starts.begin(), starts.end());
  for (size_t i = 1; i < starts.size(); ++i) {
    const auto [prev_start, prev_e] = starts[i - 1];
    SYMMOE_CHECK(prev_start + host_counts[prev_e] <= starts[i].first, "experts ", prev_e, " and ",
                 starts[i].second, " overlap: rows [", prev_start, ", ", prev_start + host_counts[prev_e],
                 ") and [", starts[i].first, ", ", starts[i].first + host_counts[starts[i].second], ")");
  }
}

}  // namespace symmoe::gemm
