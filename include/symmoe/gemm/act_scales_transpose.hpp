// Row-major fp8 activation scales -> the column-major layout (NOTE [activation scale layouts])
// whose K blocks the default fp8 kernel copies by one tensor copy each (NOTE [wgmma stage scales]).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "symmoe/gemm/grouped_gemm_problem.hpp"

namespace symmoe::gemm {

// NOTE [activation scale transpose]: a caller whose quantizer (or EpBuffer's dispatch) writes
// row-major scales [rows, K / 128] hands the GEMM a column-major copy: one pass over
// rows * K / 128 floats (4 bytes read and 4 written each) before the GEMM. Its leading
// dimension is the scales' rows per K block (total_rows; max_m for the masked layout) rounded
// up to 4 floats, so the tensor-copy path takes it. Every row of act is copied, counted or not
// (the row tables live on the device); the floats between the rows and ld are not written (no
// kernel reads them). Measured on an H100 (bench/RESULTS.md, "Row-major scales copied
// column-major"): the copy takes 2-3 us up to ~0.5 M scales (8 us at 1.8 M: 1.8 TB/s), so
// with the GEMM it runs 1.01-1.02x the row-major GEMM at >= 1024 rows per expert, about even
// at 256, 0.91-0.99x at 8-64.

// The leading dimension (floats per K block) and the floats transpose_act_scales writes for p:
// K / 128 * ld (kContiguous) or E * K / 128 * ld (kMasked).
int64_t column_major_act_scales_ld(const GroupedGemmProblem& p);
size_t column_major_act_scales_floats(const GroupedGemmProblem& p);

// Validates p (validate_problem; fp8 with row-major activation scales) and out (present,
// 16-byte aligned, capacity_floats >= column_major_act_scales_floats(p), not overlapping
// p.act_scales), enqueues the copy on `stream` and returns p reading its scales from out
// (ScaleLayout::kColumnMajor, act_scales_ld = column_major_act_scales_ld(p)). Graph-capturable.
GroupedGemmProblem transpose_act_scales(const GroupedGemmProblem& p, float* out, size_t capacity_floats,
                                        cudaStream_t stream);

}  // namespace symmoe::gemm
