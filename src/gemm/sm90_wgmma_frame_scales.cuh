// The wgmma frame's fp8 block scales (NOTE [wgmma stage scales]): how the producer stages a K
// block's activation and weight scales, and how a consumer thread reads its own. Private to src/gemm.
#pragma once

#include "sm90_wgmma_frame_layout.cuh"

namespace symmoe::gemm::sm90::wgmma_frame {

// NOTE [wgmma stage scales]: the fp8 recipe's scales of a stage's K block kb, in the layout
// of TileShape::kScaleFloats, come one of two ways:
//  - tensor copies (SYMMOE_GEMM_WGMMA_SCALES=tma, the default; WgmmaParams::scale_maps), for
//    column-major activation scales (NOTE [activation scale layouts]) whose K-block stride is a
//    multiple of 4 floats (1.02-1.03x of cp.async on an H100, gemm_wgmma_scale_rows_ab*):
//    one box of kScaleRows rows x 1 K block of a 2-D map (rows inner; K blocks — and for the
//    masked layout experts x K blocks — outer), and one of 2 weight-scale rows x
//    kScaleCols K blocks of the weight scales [E * N / 128, K / 128] at (kb rounded down to a
//    multiple of 4, weight-scale row); the copier issues both with the operands' copies and
//    they complete on the same expect-tx (kScaleBytes). A box's innermost start must be 16-byte
//    aligned (measured on the H200: a box at K block 5 of a row-major map raised an illegal
//    instruction), so the activation box starts at the tile's first row rounded down to 4 rows
//    and the tile's row r lands at act_scale_shift + r; rows past the expert's count hold the
//    next expert's scales (or zeros past the map), weight-scale rows past N the next expert's:
//    they only meet rows and columns that are never stored. Needs K / 128 a multiple of 4 and
//    16-byte aligned scale tensors; launch decides (scale_maps_fit). No warp does per-row work
//    per K block (DeepGEMM loads its column-major scales the same way);
//  - cp.async (SYMMOE_GEMM_WGMMA_SCALES=cp_async, and wherever the maps do not fit, row-major
//    activation scales among them), one float per lane of producer warp 1 into the same
//    places (zeros for rows past the expert's count and blocks past N), arriving on the
//    stage's full barrier (32 more arrivals).
// Row-major scales by tensor copies (boxes of 128 rows x 4 K blocks, 4x the bytes) ran 0.98x
// (128 x 256) and 0.99x (128 x 192) of cp.async on the H200
// (bench/results/gemm_wgmma_scales_h200.log) and 0.96x on an H100, and are gone: their
// [row][4] stage layout cost the scaler's cp.async a 4-way bank conflict on every copy.

// The activation-scale box of a tile's K block 0 in the column-major map (scale_maps_fit):
// its first row (inner) and its K-block row (outer; kb adds to it).
struct ActScaleBox {
  int32_t row, kblock;
};

SYMMOE_DEVICE ActScaleBox act_scale_box(const GroupSource& src, const GroupRows& rows, int e, int64_t m0, int kblocks) {
  if (src.offsets == nullptr) return {static_cast<int32_t>(m0), e * kblocks};
  return {static_cast<int32_t>(rows.row0 + m0 - act_scale_shift(src, rows)), 0};
}

// What one lane of the scaler reads for a tile, set once per tile so that a K block costs its
// copies, one multiply-add and a running step (NOTE [scaler loop guard] holds the loop's length).
// The scaler's K-block loop is on the kernel's critical path: the full index per copy (three
// 64-bit multiply-adds each, 25 more instructions per K block, the consumers' SASS unchanged)
// ran the 128 x 192 kernel at 0.92x (0.88x per GHz) on an H100; sources set once per tile at
// 1.00x (1.01x) of the build before either (bench/RESULTS.md, "Column-major activation
// scales"). Held: the activation scale of the lane's first row (tile row `lane`) in K block 0 —
// row lane + 32 i lies 32 i row strides on —, the tile's rows inside the expert, and for lanes 0
// and 1 weight-scale block nb0 + lane's K block 0 and whether that block starts inside N, and
// the float of a stage where the lane's first row goes.
struct TileScaleSource {
  const float* act;
  const float* weight;
  int live_rows;
  int row_at;
  bool weight_live;
};

SYMMOE_DEVICE TileScaleSource tile_scale_source(const GroupSource& src, GroupRows rows, int64_t m0, int64_t n0, int e,
                                                int kblocks, int lane) {
  const int64_t nb = n0 / kFp8ScaleBlock + lane;
  TileScaleSource t;
  t.act = src.act_scales + src.act_scale.index(e, rows.row0 + m0 + lane, 0);
  t.weight = src.weight_scales + (int64_t{e} * (src.n / kFp8ScaleBlock) + nb) * kblocks;
  t.live_rows = static_cast<int>(rows.count - m0 < kBM ? rows.count - m0 : kBM);
  t.row_at = act_scale_shift(src, rows) + lane;
  t.weight_live = lane < 2 && nb * kFp8ScaleBlock < src.n;
  return t;
}

// K block kb's scales into the stage at dst (NOTE [wgmma stage scales]); rows past the expert's
// count and weight blocks past N are zero-filled: a copy of 0 bytes reads nothing (dead rows
// name the tensor's first float, a dead weight block the address past N it would have had).
template <class Shape>
SYMMOE_DEVICE void copy_block_scales(float* dst, const GroupSource& src, const TileScaleSource& t, int kb,
                                     uint64_t* full, int lane) {
  constexpr int kCols = Shape::kScaleCols;
  const float* a = t.act + kb * src.act_scale.kblock_stride;
#pragma unroll
  for (int i = 0; i < kBM / 32; ++i) {
    const int r = 32 * i + lane;
    const bool live = r < t.live_rows;
    tma::cp_async_4(dst + t.row_at + 32 * i, live ? a : src.act_scales, live);
    a += 32 * src.act_scale.row_stride;
  }
  if (lane < 2) tma::cp_async_4(dst + Shape::kWeightScaleAt + kCols * lane + kb % kCols, t.weight + kb, t.weight_live);
  tma::cp_async_arrive_noinc(full);
}

// One K block's scales for a consumer thread: the activation scales of its rows (sa_lo, sa_hi)
// and the tile's two weight scales (w0, w1).
struct BlockScales {
  float sa_lo, sa_hi, w0, w1;
};

// Those of stage s for the thread whose rows are tile rows r and r + 8, at floats scale_row =
// act_scale_shift + r and scale_row + 8; the weight scales in column col (the K block modulo
// kScaleCols) of NOTE [wgmma stage scales].
template <class Shape>
SYMMOE_DEVICE BlockScales stage_scales(const float* scales, int s, int col, int scale_row) {
  constexpr int kCols = Shape::kScaleCols;
  const float* sc = scales + s * Shape::kScaleFloats;
  return BlockScales{sc[scale_row], sc[scale_row + 8], sc[Shape::kWeightScaleAt + col],
                     sc[Shape::kWeightScaleAt + kCols + col]};
}

// The scale maps of NOTE [wgmma stage scales] (unused without kScaled or scale_maps).
struct ScaleMaps {
  const CUtensorMap* act;
  const CUtensorMap* weights;
  bool on;
};

}  // namespace symmoe::gemm::sm90::wgmma_frame
