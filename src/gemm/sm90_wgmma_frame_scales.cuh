// The wgmma frame's fp8 block scales (NOTE [wgmma stage scales]): how the producer stages a K
// block's activation and weight scales, and how a consumer thread reads its own. Private to src/gemm.
#pragma once

#include "sm90_wgmma_frame_layout.cuh"

namespace symmoe::gemm::sm90::wgmma_frame {

// NOTE [wgmma stage scales]: the fp8 recipe's scales of a stage's K block kb, in the layout
// of TileShape::kScaleFloats, come one of two ways:
//  - tensor copies (SYMMOE_GEMM_WGMMA_SCALES=tma, WgmmaParams::scale_maps): the activation
//    scales [rows, K / 128] and weight scales [E * N / 128, K / 128] as 2-D float maps, boxes
//    of 128 rows x 4 K blocks and 2 rows x 4 K blocks at (kb rounded down to a multiple of 4,
//    tile row / weight-scale row): the producer thread issues them with the operands' copies
//    and they complete on the same expect-tx (kScaleBytes). A box row must be 16 bytes and
//    start 16-byte aligned in memory (measured on the H200: a box at K block 5 raises an
//    illegal instruction), hence the 4 K blocks kb & ~3 .. kb | 3 per row, of which the
//    consumers read column kb % 4; the copies read 4x the scale bytes from L2 (2 KiB a stage
//    beside 40-48 KiB of operands). Rows past the expert's count hold the next expert's
//    scales (or zeros past the tensor), weight-scale rows past N the next expert's: they only
//    meet rows and columns that are never stored. Needs K / 128 a multiple of 4 (the maps' row pitch is a multiple
//    of 16 bytes) and 16-byte aligned scale tensors; launch decides;
//  - cp.async (default, and where the maps do not fit, column-major activation scales among
//    them: NOTE [activation scale layouts]), one float per lane of producer warp 1
//    (zeros for rows past the expert's count and blocks past N), arriving on the stage's full
//    barrier (32 more arrivals).
// Measured on the H200 (bench/results/gemm_wgmma_scales_h200.log, same process, alternating
// twice): tensor copies 0.98x (128 x 256 overlapped) and 0.99x (128 x 192) of cp.async,
// geometric means over 12 cases each: the scale warp's 128 copies per K block are not what
// limits the kernel, so cp.async stays the default.

// What one lane of the scaler reads for a tile, set once per tile so that a K block costs its
// copies, one multiply-add and a running step (NOTE [scaler loop guard] holds the loop's length).
// The scaler's K-block loop is on the kernel's critical path: the full index per copy (three
// 64-bit multiply-adds each, 25 more instructions per K block, the consumers' SASS unchanged)
// ran the 128 x 192 kernel at 0.92x (0.88x per GHz) on an H100; sources set once per tile at
// 1.00x (1.01x) of the build before either (bench/RESULTS.md, "Column-major activation
// scales"). Held: the activation scale of the lane's first row (tile row `lane`) in K block 0 —
// row lane + 32 i lies 32 i row strides on —, the tile's rows inside the expert, and for lanes 0
// and 1 weight-scale block nb0 + lane's K block 0 and whether that block starts inside N.
struct TileScaleSource {
  const float* act;
  const float* weight;
  int live_rows;
  bool weight_live;
};

SYMMOE_DEVICE TileScaleSource tile_scale_source(const GroupSource& src, GroupRows rows, int64_t m0, int64_t n0, int e,
                                                int kblocks, int lane) {
  const int64_t nb = n0 / kFp8ScaleBlock + lane;
  TileScaleSource t;
  t.act = src.act_scales + src.act_scale.index(e, rows.row0 + m0 + lane, 0);
  t.weight = src.weight_scales + (int64_t{e} * (src.n / kFp8ScaleBlock) + nb) * kblocks;
  t.live_rows = static_cast<int>(rows.count - m0 < kBM ? rows.count - m0 : kBM);
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
    tma::cp_async_4(dst + kCols * r + kb % kCols, live ? a : src.act_scales, live);
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

// Those of stage s, column col (the K block modulo kScaleCols) of NOTE [wgmma stage scales],
// for the thread whose rows are r_in_tile and r_in_tile + 8.
template <class Shape>
SYMMOE_DEVICE BlockScales stage_scales(const float* scales, int s, int col, int r_in_tile) {
  constexpr int kCols = Shape::kScaleCols;
  const float* sc = scales + s * Shape::kScaleFloats + col;
  return BlockScales{sc[kCols * r_in_tile], sc[kCols * (r_in_tile + 8)], sc[Shape::kWeightScaleAt],
                     sc[Shape::kWeightScaleAt + kCols]};
}

// The scale maps of NOTE [wgmma stage scales] (unused without kScaled or scale_maps).
struct ScaleMaps {
  const CUtensorMap* act;
  const CUtensorMap* weights;
  bool on;
};

}  // namespace symmoe::gemm::sm90::wgmma_frame
