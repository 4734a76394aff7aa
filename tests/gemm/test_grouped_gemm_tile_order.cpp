// The wgmma grouped GEMMs' tile order (NOTE [grouped GEMM tile order]) on the host: every tile
// of every expert exactly once, in bands, whatever stride a CTA walks with; with clusters (NOTE
// [wgmma cluster ranks]) every tile once across the units and ranks, and the multicast masks
// consistent with the stage releases.
#include <gtest/gtest.h>

#include <bit>
#include <random>
#include <set>
#include <tuple>
#include <utility>
#include <vector>

#include "symmoe/device/grouped_gemm_tile_order.cuh"

namespace symmoe::device {
namespace {

struct Tiles {
  std::vector<int> start;  // prefix, E + 1 entries
  std::vector<int> m_blocks;
  int n_blocks = 0;
  int total() const { return start.back(); }
};

Tiles make_tiles(const std::vector<int>& m_blocks, int n_blocks) {
  Tiles t{{0}, m_blocks, n_blocks};
  for (const int m : m_blocks) t.start.push_back(t.start.back() + m * n_blocks);
  return t;
}

// Walks tiles first, first + stride, ... as one CTA does (one e_hint across the walk), in column
// bands of `band` column blocks, or (rows) in row bands of `band` row blocks.
std::vector<GemmTilePos> walk(const Tiles& t, int band, int first, int stride, bool rows = false) {
  std::vector<GemmTilePos> out;
  int hint = 0;
  const int groups = static_cast<int>(t.m_blocks.size());
  for (int i = first; i < t.total(); i += stride) {
    out.push_back(rows ? locate_gemm_tile_row_bands(t.start.data(), groups, t.n_blocks, band, i, hint)
                       : locate_gemm_tile(t.start.data(), groups, t.n_blocks, band, i, hint));
  }
  return out;
}

TEST(GroupedGemmTileOrder, EveryTileOnceForAnyCtaCount) {
  std::mt19937 rng(7);
  for (int round = 0; round < 400; ++round) {
    const bool rows = round % 2 == 1;  // row bands on odd rounds
    std::vector<int> m_blocks(1 + rng() % 40);
    for (auto& m : m_blocks) m = rng() % 4 == 0 ? 0 : static_cast<int>(1 + rng() % 9);  // empty experts too
    const Tiles t = make_tiles(m_blocks, static_cast<int>(1 + rng() % 40));
    const int band = rows ? static_cast<int>(1 + rng() % 20) : 1 << (rng() % 4);
    const int ctas = static_cast<int>(1 + rng() % 150);
    std::set<std::tuple<int, int, int>> seen;
    for (int cta = 0; cta < ctas; ++cta) {
      for (const GemmTilePos& p : walk(t, band, cta, ctas, rows)) {
        ASSERT_GE(p.e, 0);
        ASSERT_LT(p.e, static_cast<int>(m_blocks.size()));
        ASSERT_GE(p.mb, 0);
        ASSERT_LT(p.mb, m_blocks[p.e]) << "expert " << p.e;
        ASSERT_GE(p.nb, 0);
        ASSERT_LT(p.nb, t.n_blocks);
        ASSERT_TRUE(seen.insert({p.e, p.mb, p.nb}).second) << "tile (" << p.e << ", " << p.mb << ", " << p.nb
                                                           << ") twice; round " << round;
      }
    }
    EXPECT_EQ(static_cast<int>(seen.size()), t.total()) << "round " << round;
  }
}

TEST(GroupedGemmTileOrder, BandsWalkRowBlocksAcrossBandColumns) {
  // One expert, 3 row blocks, 10 column blocks, bands of 4: columns 0-3 for rows 0, 1, 2, then
  // 4-7, then the last band of 2 columns.
  const Tiles t = make_tiles({3}, 10);
  const std::vector<GemmTilePos> all = walk(t, 4, 0, 1);
  ASSERT_EQ(all.size(), 30u);
  EXPECT_EQ(all[0].mb, 0);
  EXPECT_EQ(all[3].nb, 3);
  EXPECT_EQ(all[4].mb, 1);
  EXPECT_EQ(all[4].nb, 0);
  EXPECT_EQ(all[12].mb, 0);
  EXPECT_EQ(all[12].nb, 4);
  EXPECT_EQ(all[24].nb, 8);
  EXPECT_EQ(all[25].nb, 9);
  EXPECT_EQ(all[26].mb, 1);
  EXPECT_EQ(all[26].nb, 8);
  // Empty experts are skipped: expert 1 has no tiles.
  const Tiles gap = make_tiles({1, 0, 2}, 2);
  const std::vector<GemmTilePos> g = walk(gap, 8, 0, 1);
  ASSERT_EQ(g.size(), 6u);
  EXPECT_EQ(g[1].e, 0);
  EXPECT_EQ(g[2].e, 2);
  EXPECT_EQ(g[5].mb, 1);
}

TEST(GroupedGemmTileOrder, RowBandsWalkColumnBlocksDownBandRows) {
  // One expert, 5 row blocks, 3 column blocks, bands of 2 rows: rows 0-1 down column 0, then
  // column 1, column 2; rows 2-3 likewise; the last band is row 4 alone.
  const Tiles t = make_tiles({5}, 3);
  const std::vector<GemmTilePos> all = walk(t, 2, 0, 1, true);
  ASSERT_EQ(all.size(), 15u);
  const int want[15][2] = {{0, 0}, {1, 0}, {0, 1}, {1, 1}, {0, 2}, {1, 2}, {2, 0}, {3, 0},
                           {2, 1}, {3, 1}, {2, 2}, {3, 2}, {4, 0}, {4, 1}, {4, 2}};
  for (int i = 0; i < 15; ++i) {
    EXPECT_EQ(all[i].mb, want[i][0]) << "tile " << i;
    EXPECT_EQ(all[i].nb, want[i][1]) << "tile " << i;
  }
  // A band taller than the expert is the whole expert: column by column.
  const Tiles two = make_tiles({2, 0, 3}, 2);
  const std::vector<GemmTilePos> g = walk(two, 16, 0, 1, true);
  ASSERT_EQ(g.size(), 10u);
  EXPECT_EQ(g[1].mb, 1);
  EXPECT_EQ(g[1].nb, 0);
  EXPECT_EQ(g[4].e, 2);
  EXPECT_EQ(g[6].mb, 2);
  EXPECT_EQ(g[7].nb, 1);
}

// Clusters of cm x cn CTAs: units of cm row blocks x cn column blocks (as the kernels count
// them: ceil(m_blocks / cm) x ceil(n_blocks / cn) per expert); across all units and ranks every
// tile inside the experts appears exactly once, and the rest lie past an expert's rows or past
// the column blocks (computed, not stored).
TEST(GroupedGemmTileOrder, ClusterRanksCoverEveryTileOnce) {
  std::mt19937 rng(11);
  for (const auto& [cm, cn] : {std::pair{1, 1}, {2, 1}, {1, 2}, {2, 2}, {4, 1}, {1, 4}}) {
    for (int round = 0; round < 50; ++round) {
      std::vector<int> m_blocks(1 + rng() % 20);
      for (auto& m : m_blocks) m = rng() % 4 == 0 ? 0 : static_cast<int>(1 + rng() % 7);
      const int n_blocks = static_cast<int>(1 + rng() % 13);
      std::vector<int> units_m;
      for (const int m : m_blocks) units_m.push_back((m + cm - 1) / cm);
      const Tiles units = make_tiles(units_m, (n_blocks + cn - 1) / cn);
      std::set<std::tuple<int, int, int>> seen;
      int outside = 0;
      for (const GemmTilePos& u : walk(units, 8, 0, 1)) {
        for (int r = 0; r < cm * cn; ++r) {
          const GemmTilePos p = cluster_tile(u, r, cm, cn);
          ASSERT_EQ(p.e, u.e);
          if (p.mb >= m_blocks[p.e] || p.nb >= n_blocks) {
            ++outside;
            continue;
          }
          ASSERT_TRUE(seen.insert({p.e, p.mb, p.nb}).second) << cm << "x" << cn << " round " << round;
        }
      }
      int tiles = 0;
      for (const int m : m_blocks) tiles += m * n_blocks;
      EXPECT_EQ(static_cast<int>(seen.size()), tiles) << cm << "x" << cn << " round " << round;
      EXPECT_EQ(static_cast<int>(seen.size()) + outside, units.total() * cm * cn);
    }
  }
}

// The copies into a CTA's stage: its activation tile in cn slices from its row block's CTAs
// (slice = their column rank), its weight tile in cm slices from its column block's CTAs
// (slice = their row rank) — each slice exactly once; the CTAs a producer copies into are
// exactly those whose consumers release to it (the empty barrier's cm + cn - 1 arrivals per
// warp), so the relation the releases follow is symmetric.
TEST(GroupedGemmTileOrder, ClusterMulticastMasksMatchTheStageReleases) {
  for (const auto& [cm, cn] : {std::pair{1, 1}, {2, 1}, {1, 2}, {2, 2}, {4, 1}, {1, 4}, {2, 4}, {4, 2}}) {
    const int ctas = cm * cn;
    for (int x = 0; x < ctas; ++x) {
      const unsigned rows = row_block_peers(x, cm, cn), cols = column_block_peers(x, cm);
      EXPECT_EQ(std::popcount(rows), cn);
      EXPECT_EQ(std::popcount(cols), cm);
      EXPECT_EQ(rows & cols, 1u << x) << "only x itself is in both";
      std::set<int> a_slices, b_slices;
      for (int y = 0; y < ctas; ++y) {
        if (rows & (1u << y)) {
          EXPECT_EQ(y % cm, x % cm) << "same row block";
          a_slices.insert(y / cm);
          EXPECT_TRUE(row_block_peers(y, cm, cn) & (1u << x)) << "y multicasts its activation slice to x";
        }
        if (cols & (1u << y)) {
          EXPECT_EQ(y / cm, x / cm) << "same column block";
          b_slices.insert(y % cm);
          EXPECT_TRUE(column_block_peers(y, cm) & (1u << x)) << "y multicasts its weight slice to x";
        }
        // x releases to y exactly when y copies into x, and then y releases to x.
        const unsigned writers_of_x = rows | cols;
        const unsigned writers_of_y = row_block_peers(y, cm, cn) | column_block_peers(y, cm);
        EXPECT_EQ(static_cast<bool>(writers_of_x & (1u << y)), static_cast<bool>(writers_of_y & (1u << x)));
      }
      EXPECT_EQ(static_cast<int>(a_slices.size()), cn);
      EXPECT_EQ(static_cast<int>(b_slices.size()), cm);
      EXPECT_EQ(std::popcount(rows | cols), cm + cn - 1);
    }
  }
}

}  // namespace
}  // namespace symmoe::device
