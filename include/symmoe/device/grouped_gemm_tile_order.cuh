// The order in which the persistent wgmma grouped GEMMs walk their output tiles, and how a
// cluster's CTAs split a work unit (framework-free: the kernels and the host tests share it).
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
struct ExpertTile {
  int e, local, m_blocks;  // tile t is tile `local` of expert e, which has m_blocks row blocks
};
SYMMOE_HOST_DEVICE ExpertTile expert_of_tile(const int* tile_start, int groups, int n_blocks, int t, int& e_hint) {
  int e = e_hint;
  while (e + 1 < groups && tile_start[e + 1] <= t) ++e;
  e_hint = e;
  return ExpertTile{e, t - tile_start[e], (tile_start[e + 1] - tile_start[e]) / n_blocks};
}

SYMMOE_HOST_DEVICE GemmTilePos locate_gemm_tile(const int* tile_start, int groups, int n_blocks, int band, int t,
                                                int& e_hint) {
  const auto [e, local, m_blocks] = expert_of_tile(tile_start, groups, n_blocks, t, e_hint);
  const int b = local / (band * m_blocks);
  const int in_band = local - b * band * m_blocks;
  int width = n_blocks - b * band;
  if (width > band) width = band;
  return GemmTilePos{e, in_band / width, b * band + in_band % width};
}

// Row bands (GroupSource::row_band > 0): within an expert, bands of `band` row blocks walked
// column block by column block — tiles running at the same time on neighbouring CTAs share the
// band's activation tiles (across the columns) and each column block's weight tile (down the
// band), so an expert's weights are read once per band of rows and its activations once in all,
// where column bands read the activations once per band of columns.
SYMMOE_HOST_DEVICE GemmTilePos locate_gemm_tile_row_bands(const int* tile_start, int groups, int n_blocks, int band,
                                                          int t, int& e_hint) {
  const auto [e, local, m_blocks] = expert_of_tile(tile_start, groups, n_blocks, t, e_hint);
  const int b = local / (band * n_blocks);
  const int in_band = local - b * band * n_blocks;
  int height = m_blocks - b * band;
  if (height > band) height = band;
  return GemmTilePos{e, b * band + in_band % height, in_band / height};
}

// NOTE [wgmma cluster ranks]: a cluster of cm x cn CTAs (1-D ranks r = rm + cm rn) runs the
// tiles of one work unit of cm row blocks x cn column blocks: CTA r takes row block
// cm * unit row + rm and column block cn * unit column + rn. The CTAs of one row block share its
// activation tile (each copies 1 / cn of it into all of them), those of one column block its
// weight tile (1 / cm each). Masks of ranks:
SYMMOE_HOST_DEVICE GemmTilePos cluster_tile(GemmTilePos unit, int rank, int cm, int cn) {
  return GemmTilePos{unit.e, unit.mb * cm + rank % cm, unit.nb * cn + rank / cm};
}
// the CTAs sharing rank's row block (its activation tile's destinations and sources),
SYMMOE_HOST_DEVICE unsigned row_block_peers(int rank, int cm, int cn) {
  unsigned mask = 0;
  for (int j = 0; j < cn; ++j) mask |= 1u << (rank % cm + cm * j);
  return mask;
}
// the CTAs sharing rank's column block (its weight tile's destinations and sources).
SYMMOE_HOST_DEVICE unsigned column_block_peers(int rank, int cm) {
  unsigned mask = 0;
  for (int j = 0; j < cm; ++j) mask |= 1u << (j + cm * (rank / cm));
  return mask;
}

}  // namespace symmoe::device
