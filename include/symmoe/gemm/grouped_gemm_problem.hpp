// An expert grouped GEMM, out[e] = act[e] · W[e]ᵀ, described once for validation, the CPU
// reference and (later) the SM90 kernels. Pointers are device pointers for launches and host
// pointers for the reference; the description and its checks are the same.
#pragma once

#include <cstdint>

namespace symmoe::gemm {

enum class GemmDtype { kBF16, kFP8E4M3 };

// NOTE [grouped layouts]: kContiguous — the activations of expert e are rows
// [offsets[e], offsets[e] + counts[e]) of one [total_rows, K] matrix (the expert-major layout
// EP dispatch produces; segments may be padded, rows past counts[e] are neither read nor
// written). kMasked — act is [E, max_m, K]; expert e uses its first counts[e] rows (decode,
// CUDA graphs: shapes never change).
enum class GroupedLayout { kContiguous, kMasked };

// NOTE [activation scale layouts]: where the fp8 activation scale of (expert e, row, K block kb)
// lives. kRowMajor — [rows, K / 128], DeepSeek-V3's: a row's scales are adjacent. kColumnMajor —
// K-block-major, act_scales_ld floats from one K block to the next: kContiguous [K / 128, ld] with
// ld >= total_rows, kMasked [E, K / 128, ld] with ld >= max_m (the layout quantizers write for
// DeepGEMM, e.g. SGLang's column_major_scales, ld = rows rounded up to 4). Column-major scales
// let the kernels read one K block's scales of consecutive rows in one coalesced access; with ld
// a multiple of 4 (and K / 128 a multiple of 4) the default fp8 kernel copies them by one tensor
// copy per K block, the fastest path (NOTE [wgmma stage scales]).
// Every fp8 kernel reads both through ScaleStrides; the CUTLASS tiles (kLargeM, kSmallM) read
// row-major only (GemmTile::kAuto takes our wgmma kernel instead).
enum class ScaleLayout { kRowMajor, kColumnMajor };

// Index of a scale in its array: row * row_stride + kb * kblock_stride + e * expert_stride, where
// row is the row in act (kMasked: e * max_m + the row within the expert).
struct ScaleStrides {
  int64_t row_stride = 0, kblock_stride = 0, expert_stride = 0;
  constexpr int64_t index(int e, int64_t row, int kb) const {
    return row * row_stride + kb * kblock_stride + e * expert_stride;
  }
};

// FP8 recipe (DeepSeek-V3): activations carry one fp32 scale per row and 128 columns
// ([rows, K / 128] or column-major: NOTE [activation scale layouts]), weights one per 128 x 128 block ([E, N / 128, K / 128]); products are
// accumulated in fp32 per 128-wide K block and promoted with a_scale * b_scale.
inline constexpr int kFp8ScaleBlock = 128;

struct GroupedGemmProblem {
  GemmDtype dtype = GemmDtype::kBF16;
  GroupedLayout layout = GroupedLayout::kContiguous;
  int num_experts = 0;
  int n = 0;  // output columns (weights are [E, N, K], row-major)
  int k = 0;  // reduction length
  // kContiguous: rows of act / out (offsets[e] + counts[e] <= total_rows). kMasked: max_m.
  int64_t total_rows = 0;
  int max_m = 0;

  const void* act = nullptr;            // bf16 or e4m3
  const float* act_scales = nullptr;    // fp8: act_scale_layout
  const void* weights = nullptr;        // [E, N, K] bf16 or e4m3
  const float* weight_scales = nullptr; // fp8: [E, N / 128, K / 128]
  const int32_t* offsets = nullptr;     // kContiguous: [E], first row of each expert
  const int32_t* counts = nullptr;      // [E]: rows of each expert (0 allowed)
  void* out = nullptr;                  // bf16, same rows as act, N columns
  ScaleLayout act_scale_layout = ScaleLayout::kRowMajor;  // NOTE [activation scale layouts]
  int64_t act_scales_ld = 0;  // kColumnMajor: floats per K block (0: total_rows / max_m); kRowMajor: 0

  // Rows of act and out: total_rows (kContiguous) or E * max_m (kMasked).
  int64_t rows() const;
  // Rows one K block of the column-major activation scales covers: total_rows (kContiguous) or
  // max_m (kMasked, per expert) — the least act_scales_ld and its default.
  int64_t scale_block_rows() const;
  // 2 * sum(counts) * N * K for the host's counts (FLOPs of the useful rows).
  double flops(const int32_t* host_counts) const;
  // The fp8 activation scales' strides (NOTE [activation scale layouts]).
  ScaleStrides act_scale_strides() const;
};

// Checks before any launch: dtype-specific alignment (K and N multiples of 128 for the fp8
// recipe, 8 for bf16 rows of 16 bytes), positive extents, present pointers and scales, pointer
// alignment (16 bytes for matrices, 4 for scales and row tables), the activation scales'
// leading dimension. Throws symmoe::Error naming the field, its value and the rule.
void validate_problem(const GroupedGemmProblem& p);

// With host-visible counts/offsets (e.g. the reference, or a caller that knows them):
// every counts[e] >= 0, kMasked counts[e] <= max_m, kContiguous segments inside total_rows and
// not overlapping. Throws naming the expert.
void validate_row_tables(const GroupedGemmProblem& p, const int32_t* host_offsets, const int32_t* host_counts);

}  // namespace symmoe::gemm
