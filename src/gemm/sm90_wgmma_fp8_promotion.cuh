// The fp8 recipe's promotion in the wgmma consumers: a K block's partial products, scaled by
// activation x weight scale per 128-wide scale block, added into the accumulators. Private to src/gemm.
#pragma once

#include <algorithm>
#include <cstdint>

#include "sm90_grouped_gemm_wgmma_frame.cuh"

namespace symmoe::gemm::sm90::wgmma_frame {

// The scales of one 8-column group's fragment: its row lo (elements 0, 1) and row hi (2, 3).
struct RowScales {
  float lo, hi;
};

// acc += part * scale over kJ 8-column groups of a wgmma fragment, group j's scales scale_of(j)
// (a compile-time choice once unrolled); kFirst: acc = part * scale (a tile's first K block).
template <int kJ, bool kFirst, class ScaleOf>
SYMMOE_DEVICE void promote_groups(float (&acc)[4 * kJ], const float (&part)[4 * kJ], ScaleOf scale_of) {
  auto add = [](float a, float q, float s) { return kFirst ? q * s : a + q * s; };
#pragma unroll
  for (int j = 0; j < kJ; ++j) {
    const RowScales s = scale_of(j);
    acc[4 * j + 0] = add(acc[4 * j + 0], part[4 * j + 0], s.lo);
    acc[4 * j + 1] = add(acc[4 * j + 1], part[4 * j + 1], s.lo);
    acc[4 * j + 2] = add(acc[4 * j + 2], part[4 * j + 2], s.hi);
    acc[4 * j + 3] = add(acc[4 * j + 3], part[4 * j + 3], s.hi);
  }
}

// Rows lo / hi take (lo0, hi0) below group kSplit and (lo1, hi1) from it on (the weight-scale
// block boundary): the rolled and overlapped mainloops (the unrolled one: promote_thirds below).
template <int kJ, int kSplit>
SYMMOE_DEVICE void promote(float (&acc)[4 * kJ], const float (&part)[4 * kJ], float lo0, float hi0, float lo1,
                           float hi1) {
  promote_groups<kJ, false>(acc, part, [&](int j) { return RowScales{j < kSplit ? lo0 : lo1, j < kSplit ? hi0 : hi1}; });
}

// Batch kB's promotion with the K block's scales. The tile's columns switch weight-scale block at 128 - n0 % 128 (128
// for 256-wide tiles; 128 or 64 for 192-wide ones), which falls at an 8-column group boundary
// of the batch or outside it.
template <int kJ, int kBatchN, int kB, int kBoundary>
constexpr int scale_split() {
  return std::clamp((kBoundary - kB * kBatchN) / 8, 0, kJ);
}

template <class Shape, int kB>
SYMMOE_DEVICE void promote_batch(float (&acc)[Shape::kBatchN / 2], const float (&part)[Shape::kBatchN / 2], int64_t n0,
                                 const BlockScales& sc) {
  constexpr int kJ = Shape::kBatchN / 8;
  const float lo0 = sc.sa_lo * sc.w0, hi0 = sc.sa_hi * sc.w0, lo1 = sc.sa_lo * sc.w1, hi1 = sc.sa_hi * sc.w1;
  if (Shape::kBN == 256 || n0 % 128 == 0) {
    promote<kJ, scale_split<kJ, Shape::kBatchN, kB, 128>()>(acc, part, lo0, hi0, lo1, hi1);
  } else {
    promote<kJ, scale_split<kJ, Shape::kBatchN, kB, 64>()>(acc, part, lo0, hi0, lo1, hi1);
  }
}

// NOTE [one K loop for both scale boundaries]: a single-batch tile's columns 0-63 lie in the
// weight-scale block of its first column (w0), columns 128 on in the next (w1), and columns
// 64-127 in w0 when the tile starts at column 0 mod 128 (every 128-wide tile; 192-wide tiles
// with an even column block) or in w1 when it starts at 64 (odd 192-wide column blocks). The
// middle third's scale is picked per K block (mid_w1), so the unrolled mainloop is compiled once
// for both kinds of tile instead of once per boundary (NOTE [unrolled fp8 mainloop]): the
// default 128 x 192 kernel is 10832 instructions instead of 16976. Why: Nsight Compute put 4.6 %
// of its stall samples on instruction fetch (no_inst; DeepGEMM's 0.4 %), on the K-block path.
// Measured (H100, same call, 2 rounds of 30 replays, bench/results/gemm_wgmma_one_kloop_ab_h100.log):
// 1.002x over the 8 large-M cases (0.998x per GHz), level — the smaller kernel is kept for itself.
struct ScaleProducts {
  float lo0, hi0, lom, him, lo1, hi1;  // activation scale of row lo / hi x w0, the middle's, w1
};

SYMMOE_DEVICE ScaleProducts scale_products(const BlockScales& sc, bool mid_w1) {
  const float wm = mid_w1 ? sc.w1 : sc.w0;
  return {sc.sa_lo * sc.w0, sc.sa_hi * sc.w0, sc.sa_lo * wm, sc.sa_hi * wm, sc.sa_lo * sc.w1, sc.sa_hi * sc.w1};
}

// A single-batch tile's promotion, the scale by thirds of 64 columns as above; kFirst: acc =
// part * scale (a tile's first K block). The products are captured by value: by reference,
// ptxas renamed the promotion's registers in the default 128 x 192 kernel (the hot path's
// operand banks move); by value every kernel of this file is the SASS of the loop written out.
template <int kJ, bool kFirst = false>
SYMMOE_DEVICE void promote_thirds(float (&acc)[4 * kJ], const float (&part)[4 * kJ], const ScaleProducts& p) {
  promote_groups<kJ, kFirst>(acc, part, [p](int j) {
    return RowScales{j < 8 ? p.lo0 : j < 16 ? p.lom : p.lo1, j < 8 ? p.hi0 : j < 16 ? p.him : p.hi1};
  });
}

}  // namespace symmoe::gemm::sm90::wgmma_frame
