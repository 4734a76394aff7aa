// The order in which the persistent fp8 wgmma grouped GEMM walks its output tiles
// (framework-free: the kernel and the host tests share it).
#pragma once

#include "symmoe/device/common.cuh"

namespace symmoe::device {

struct GemmTilePos {
  int e;   // expert
  int mb;  // row block of the expert
  int nb;  // column block
};

// NOTE [grouped GEMM tile order]: tile_start[e] .. tile_start[e + 1] - 1 are expert e's tiles
// (tile_start[0] = 0; m_blocks(e) * n_blocks each, 0 for an empty expert). Within an expert,
// bands of `band` column blocks are walked row block by row block: tiles running at the same
// time on neighbouring CTAs share weight tiles (the same column block, down the rows) and
// activation tiles (across the band) in L2. `e_hint` is the expert of the caller's previous
// tile (0 at first): a CTA's tiles only move forward, so the search is a forward scan.
SYMMOE_HOST_DEVICE GemmTilePos locate_gemm_tile(const int* tile_start, int groups, int n_blocks, int band, int t,
                                                int& e_hint) {
  int e = e_hint;
  while (e + 1 < groups && tile_start[e + 1] <= t) ++e;
  e_hint = e;
  const int local = t - tile_start[e];
  const int m_blocks = (tile_start[e + 1] - tile_start[e]) / n_blocks;
  const int b = local / (band * m_blocks);
  const int in_band = local - b * band * m_blocks;
  int width = n_blocks - b * band;
  if (width > band) width = band;
  return GemmTilePos{e, in_band / width, b * band + in_band % width};
}

}  // namespace symmoe::device
