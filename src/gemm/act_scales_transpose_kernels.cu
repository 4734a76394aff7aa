// NOTE [activation scale transpose] (symmoe/gemm/act_scales_transpose.hpp): the validation, the
// copy kernel and its launch.
#include <algorithm>
#include <cstdint>

#include "symmoe/core/device_info.hpp"
#include "symmoe/core/error.hpp"
#include "symmoe/gemm/act_scales_transpose.hpp"
#include "../runtime/kernel_launch.cuh"
#include "../runtime/kernel_lists.hpp"

namespace symmoe::gemm {
namespace {

constexpr int kTile = 32;    // a tile is 32 rows x 32 K blocks
constexpr int kThreads = 256;  // 8 warps, each 4 of a tile's 32 lines

// `batches` matrices [rows, kblocks] (src, batch stride rows * kblocks) into [kblocks, ld]
// (dst, batch stride kblocks * ld): one batch for the contiguous layout, one per expert for the
// masked one.
struct TransposeArgs {
  const float* src;
  float* dst;
  int64_t rows, ld, row_tiles;
  int kblocks, kb_tiles, batches;
};

// Tiles in batch-major, then row-tile, then K-block-tile order, a grid-stride walk: reads of a
// tile are 32 consecutive K blocks of one row (coalesced), writes 32 consecutive rows of one K
// block (coalesced); the padded shared tile keeps both bank-conflict free.
__global__ void __launch_bounds__(kThreads) act_scales_transpose_kernel(TransposeArgs a) {
  __shared__ float tile[kTile][kTile + 1];
  const int lane = static_cast<int>(threadIdx.x) % kTile, warp = static_cast<int>(threadIdx.x) / kTile;
  const int64_t per_batch = a.row_tiles * a.kb_tiles;
  const int64_t tiles = per_batch * a.batches;
  for (int64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
    const int64_t b = t / per_batch, in_batch = t % per_batch;
    const int64_t r0 = in_batch / a.kb_tiles * kTile;
    const int kb0 = static_cast<int>(in_batch % a.kb_tiles) * kTile;
    const float* src = a.src + b * a.rows * a.kblocks;
    float* dst = a.dst + b * a.kblocks * a.ld;
    for (int i = warp; i < kTile; i += kThreads / kTile) {
      const int64_t r = r0 + i;
      const int kb = kb0 + lane;
      if (r < a.rows && kb < a.kblocks) tile[i][lane] = src[r * a.kblocks + kb];
    }
    __syncthreads();
    for (int i = warp; i < kTile; i += kThreads / kTile) {
      const int kb = kb0 + i;
      const int64_t r = r0 + lane;
      if (r < a.rows && kb < a.kblocks) dst[kb * a.ld + r] = tile[lane][i];
    }
    __syncthreads();
  }
}

int scale_batches(const GroupedGemmProblem& p) { return p.layout == GroupedLayout::kMasked ? p.num_experts : 1; }

}  // namespace

int64_t column_major_act_scales_ld(const GroupedGemmProblem& p) { return (p.scale_block_rows() + 3) / 4 * 4; }

size_t column_major_act_scales_floats(const GroupedGemmProblem& p) {
  return static_cast<size_t>(scale_batches(p)) * static_cast<size_t>(p.k / kFp8ScaleBlock) *
         static_cast<size_t>(column_major_act_scales_ld(p));
}

GroupedGemmProblem transpose_act_scales(const GroupedGemmProblem& p, float* out, size_t capacity_floats,
                                        cudaStream_t stream) {
  validate_problem(p);
  SYMMOE_CHECK(p.dtype == GemmDtype::kFP8E4M3, "transpose_act_scales: the problem is bf16 (no activation scales)");
  SYMMOE_CHECK(p.act_scale_layout == ScaleLayout::kRowMajor,
               "transpose_act_scales: the activation scales are column-major already (act_scale_layout)");
  SYMMOE_CHECK(out != nullptr, "transpose_act_scales: out is null");
  SYMMOE_CHECK(reinterpret_cast<uintptr_t>(out) % 16 == 0, "transpose_act_scales: out (", static_cast<void*>(out),
               ") must be 16-byte aligned (the GEMM's tensor copies read it)");
  const size_t need = column_major_act_scales_floats(p);
  SYMMOE_CHECK(capacity_floats >= need, "transpose_act_scales: out holds ", capacity_floats, " floats; ", need,
               " needed (column_major_act_scales_floats)");
  const int kblocks = p.k / kFp8ScaleBlock;
  const int64_t rows = p.scale_block_rows();
  const size_t src_floats = static_cast<size_t>(p.rows()) * kblocks;  // row-major [rows(), K / 128]
  const auto lo = reinterpret_cast<uintptr_t>(out), hi = lo + need * sizeof(float);
  const auto s_lo = reinterpret_cast<uintptr_t>(p.act_scales), s_hi = s_lo + src_floats * sizeof(float);
  SYMMOE_CHECK(hi <= s_lo || s_hi <= lo, "transpose_act_scales: out overlaps the activation scales it copies");

  TransposeArgs a{p.act_scales, out, rows, column_major_act_scales_ld(p), (rows + kTile - 1) / kTile,
                  kblocks, (kblocks + kTile - 1) / kTile, scale_batches(p)};
  const int64_t tiles = a.row_tiles * a.kb_tiles * a.batches;
  int device = 0;
  SYMMOE_CUDA_CHECK(cudaGetDevice(&device));
  const int64_t grid = std::min<int64_t>(tiles, int64_t{query_device(device).num_sms} * 8);
  if (grid > 0) {
    runtime::launch_kernel(act_scales_transpose_kernel, a, static_cast<int>(grid), kThreads, 0, false, stream,
                           "act_scales_transpose_kernel");
  }
  GroupedGemmProblem q = p;
  q.act_scales = out;
  q.act_scale_layout = ScaleLayout::kColumnMajor;
  q.act_scales_ld = a.ld;
  return q;
}

}  // namespace symmoe::gemm

namespace symmoe::runtime {

void append_act_scales_transpose_kernels(std::vector<KernelEntry>& out) {
  out.push_back({"act_scales_transpose_kernel", reinterpret_cast<const void*>(&gemm::act_scales_transpose_kernel)});
}

}  // namespace symmoe::runtime
