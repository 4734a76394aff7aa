// The fp8 wgmma grouped GEMM's tile order (NOTE [grouped GEMM tile order]) on the host: every
// tile of every expert exactly once, in bands, whatever stride a CTA walks with.
#include <gtest/gtest.h>

#include <random>
#include <set>
#include <tuple>
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

// Walks tiles first, first + stride, ... as one CTA does (one e_hint across the walk).
std::vector<GemmTilePos> walk(const Tiles& t, int band, int first, int stride) {
  std::vector<GemmTilePos> out;
  int hint = 0;
  for (int i = first; i < t.total(); i += stride) {
    out.push_back(locate_gemm_tile(t.start.data(), static_cast<int>(t.m_blocks.size()), t.n_blocks, band, i, hint));
  }
  return out;
}

TEST(GroupedGemmTileOrder, EveryTileOnceForAnyCtaCount) {
  std::mt19937 rng(7);
  for (int round = 0; round < 200; ++round) {
    std::vector<int> m_blocks(1 + rng() % 40);
    for (auto& m : m_blocks) m = rng() % 4 == 0 ? 0 : static_cast<int>(1 + rng() % 9);  // empty experts too
    const Tiles t = make_tiles(m_blocks, static_cast<int>(1 + rng() % 40));
    const int band = 1 << (rng() % 4);
    const int ctas = static_cast<int>(1 + rng() % 150);
    std::set<std::tuple<int, int, int>> seen;
    for (int cta = 0; cta < ctas; ++cta) {
      for (const GemmTilePos& p : walk(t, band, cta, ctas)) {
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

}  // namespace
}  // namespace symmoe::device
