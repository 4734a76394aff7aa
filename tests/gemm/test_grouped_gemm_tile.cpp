// The tile heuristic and tile descriptions (host only).
#include <gtest/gtest.h>

#include <string>

#include "support/env_guard.hpp"
#include "support/error_text.hpp"
#include "symmoe/gemm/grouped_gemm.hpp"

namespace symmoe::gemm {
namespace {

TEST(GroupedGemm, TheHeuristicPicksSwapAbForDecodeSmallTilesForFewTilesAndWgmmaForLargeFp8) {
  // fp8 up to 64 rows -> the swap-AB kernel, any number of experts; 65 rows over few tiles ->
  // CUTLASS's small tile.
  EXPECT_EQ(choose_tile(GemmDtype::kFP8E4M3, 8, 8, 4096, 132).tile, GemmTile::kSwapAB);
  EXPECT_EQ(choose_tile(GemmDtype::kFP8E4M3, 8, 32, 4096, 132).tile, GemmTile::kSwapAB);
  EXPECT_EQ(choose_tile(GemmDtype::kFP8E4M3, 32, 32, 4096, 132).tile, GemmTile::kSwapAB);
  EXPECT_EQ(choose_tile(GemmDtype::kFP8E4M3, 64, 8, 7168, 132).tile, GemmTile::kSwapAB);
  EXPECT_EQ(choose_tile(GemmDtype::kFP8E4M3, kSwapAbMaxM, 32, 4096, 132).tile, GemmTile::kSwapAB);
  EXPECT_EQ(choose_tile(GemmDtype::kFP8E4M3, kSwapAbMaxM + 1, 1, 256, 132).tile, GemmTile::kSmallM);
  EXPECT_EQ(choose_tile(GemmDtype::kBF16, 8, 8, 4096, 132).tile, GemmTile::kSmallM);
  EXPECT_EQ(choose_tile(GemmDtype::kFP8E4M3, 65, 32, 4096, 132).tile, GemmTile::kLargeM);
  EXPECT_EQ(choose_tile(GemmDtype::kBF16, 64, 32, 4096, 132).tile, GemmTile::kSmallM);
  EXPECT_EQ(choose_tile(GemmDtype::kFP8E4M3, kWgmmaMinM - 1, 8, 4096, 132).tile, GemmTile::kLargeM);
  EXPECT_EQ(choose_tile(GemmDtype::kFP8E4M3, kWgmmaMinM, 8, 4096, 132).tile, GemmTile::kWgmma);
  EXPECT_EQ(choose_tile(GemmDtype::kFP8E4M3, 1024, 8, 4096, 132).tile, GemmTile::kWgmma);
  EXPECT_EQ(choose_tile(GemmDtype::kBF16, 1024, 8, 4096, 132).tile, GemmTile::kWgmma);
  EXPECT_EQ(choose_tile(GemmDtype::kBF16, kBf16WgmmaMinM - 1, 8, 4096, 132).tile, GemmTile::kLargeM);
  EXPECT_EQ(choose_tile(GemmDtype::kBF16, kBf16WgmmaMinM, 8, 4096, 132).tile, GemmTile::kWgmma);
  // 1 expert x 1024 rows x N 256: 16 tiles of 128x128 for 132 SMs -> the small tile.
  EXPECT_EQ(choose_tile(GemmDtype::kFP8E4M3, 1024, 1, 256, 132).tile, GemmTile::kSmallM);
  EXPECT_EQ(choose_tile(GemmDtype::kBF16, 256, 32, 4096, 132).tile, GemmTile::kWgmma);
  // 2 experts x 1 x 2 large tiles = 4 tiles for 132 SMs: the small tile spreads further.
  EXPECT_EQ(choose_tile(GemmDtype::kBF16, 100, 2, 512, 132).tile, GemmTile::kSmallM);
}

TEST(GroupedGemm, ColumnMajorActivationScalesNeverTakeACutlassTile) {
  // NOTE [activation scale layouts]: where the shape alone takes kLargeM or kSmallM, column-major
  // scales take the wgmma kernel; elsewhere the layout changes nothing.
  constexpr ScaleLayout kCol = ScaleLayout::kColumnMajor;
  struct Shape {
    int m, experts, n;
    GemmTile row_major;
  };
  for (const Shape s : {Shape{65, 32, 4096, GemmTile::kLargeM}, Shape{kWgmmaMinM - 1, 8, 4096, GemmTile::kLargeM},
                        Shape{kSwapAbMaxM + 1, 1, 256, GemmTile::kSmallM}, Shape{1024, 1, 256, GemmTile::kSmallM}}) {
    SCOPED_TRACE(testing::Message() << s.m << " rows x " << s.experts << " experts, N " << s.n);
    ASSERT_EQ(choose_tile(GemmDtype::kFP8E4M3, s.m, s.experts, s.n, 132).tile, s.row_major);
    const TileChoice col = choose_tile(GemmDtype::kFP8E4M3, s.m, s.experts, s.n, 132, kCol);
    EXPECT_EQ(col.tile, GemmTile::kWgmma);
    EXPECT_EQ(col.tile_m, kWgmmaTileRows);
    EXPECT_TRUE(col.tile_n == 192 || col.tile_n == 256) << col.tile_n;
  }
  for (const int m : {8, 64, 1024, 4096}) {
    const TileChoice row = choose_tile(GemmDtype::kFP8E4M3, m, 8, 7168, 132);
    const TileChoice col = choose_tile(GemmDtype::kFP8E4M3, m, 8, 7168, 132, kCol);
    EXPECT_EQ(col.tile, row.tile) << m;
    EXPECT_EQ(col.tile_n, row.tile_n) << m;
  }
}

// Inside a family: the swap-AB split kernels up to 32 rows per expert, and at 33-64 rows where
// the pairs would walk static ranges (fewer than 12 items per SM: deepseek-v3's 8 experts, not
// 32; pairs there, where the activation tile fills half a split stage), the bf16 wgmma kernel's
// 4 stages up to 512 rows (3 from 1024, where they measured behind); both boundaries lie
// inside the families' ranges.
TEST(GroupedGemm, AutoSettingsInsideAFamilyFollowTheRowsPerExpert) {
  static_assert(swapab_split_by_default(1, 32, 7168, 132) && swapab_split_by_default(8, 256, 7168, 132) &&
                swapab_split_by_default(32, 32, 7168, 132));
  EXPECT_TRUE(swapab_split_by_default(kSwapAbSplitMaxM, 256, 7168, 132));
  // 64 rows: down (N 7168) and gate/up (N 4096) over 8 experts -> 896 / 512 items for 132 SMs.
  EXPECT_TRUE(swapab_split_by_default(kSwapAbMaxM, 8, 7168, 132));
  EXPECT_TRUE(swapab_split_by_default(kSwapAbSplitMaxM + 1, 8, 4096, 132));
  // Over 32 experts (3584 / 2048 items), or 8 on few SMs: the pairs.
  EXPECT_FALSE(swapab_split_by_default(kSwapAbMaxM, 32, 7168, 132));
  EXPECT_FALSE(swapab_split_by_default(kSwapAbSplitMaxM + 1, 32, 4096, 132));
  EXPECT_FALSE(swapab_split_by_default(kSwapAbMaxM, 8, 7168, 16));
  // The boundary: exactly kSwapAbDynamicMinItems items per SM runs the pairs (dynamic).
  EXPECT_FALSE(swapab_split_by_default(kSwapAbMaxM, 12, 64 * 11, 11));
  EXPECT_TRUE(swapab_split_by_default(kSwapAbMaxM, 12, 64 * 11 - 64, 11));
  // Past the family's range the question does not arise.
  EXPECT_FALSE(swapab_split_by_default(kSwapAbMaxM + 1, 1, 7168, 132));
  EXPECT_LT(kSwapAbSplitMaxM, kSwapAbMaxM);
  EXPECT_EQ(bf16_wgmma_stages_by_default(kBf16WgmmaMinM), 4);
  EXPECT_EQ(bf16_wgmma_stages_by_default(kBf16FourStageMaxM), 4);
  EXPECT_EQ(bf16_wgmma_stages_by_default(kBf16FourStageMaxM + 1), 3);
  EXPECT_EQ(bf16_wgmma_stages_by_default(4096), 3);
  EXPECT_GE(kBf16FourStageMaxM, kBf16WgmmaMinM);
  // The tile estimate: 128-row tiles per expert times column blocks (gate/up N = 4096 in 192-wide
  // tiles: 22 blocks; down N = 7168: 38); nothing for empty or invalid shapes.
  EXPECT_EQ(wgmma_tiles_estimate(1024, 32, 4096, 192), 32LL * 8 * 22);
  EXPECT_EQ(wgmma_tiles_estimate(129, 8, 7168, 256), 8LL * 2 * 28);
  EXPECT_EQ(wgmma_tiles_estimate(1, 1, 1, 192), 1);
  EXPECT_EQ(wgmma_tiles_estimate(0, 8, 4096, 192), 0);
  EXPECT_EQ(wgmma_tiles_estimate(128, 8, 4096, 0), 0);
  EXPECT_EQ(wgmma_tiles_estimate(1 << 20, 72 * 4, 1 << 16, 128), (1LL << 13) * 288 * 512);  // no int overflow
  // The general estimate behind choose_tile (64 x 128 small tiles: 3 row blocks at 129 rows).
  EXPECT_EQ(grid_tiles_estimate(129, 8, 4096, 64, 128), 8LL * 3 * 32);
  EXPECT_EQ(grid_tiles_estimate(129, 8, 4096, 0, 128), 0);
  EXPECT_EQ(grid_tiles_estimate(1000, 32, 7168, kWgmmaTileRows, 192), wgmma_tiles_estimate(1000, 32, 7168, 192));
  // The fp8 wgmma tile order: row bands from kWgmmaRowBandMinM rows per expert, or from
  // kWgmmaRowBandMinTilesPerCta 128 x 192 tiles per CTA (gate/up: 22 column blocks, down: 38).
  const auto row_band = [](int expected_m, int experts, int n_blocks, int ctas) {
    return fp8_wgmma_row_band_by_default(expected_m, wgmma_tiles_estimate(expected_m, experts, n_blocks * 192, 192),
                                         ctas);
  };
  static_assert(kWgmmaRowBandMinM == 512, "the cases below straddle 512 rows per expert");
  EXPECT_EQ(row_band(kWgmmaRowBandMinM, 1, 1, 132), kWgmmaRowBand);
  EXPECT_EQ(row_band(kWgmmaRowBandMinM - 1, 8, 22, 132), 0);  // 4 x 22 x 8 / 132 = 5.3 tiles per CTA
  EXPECT_EQ(row_band(512, 32, 22, 132), kWgmmaRowBand);       // by rows (21.3 tiles per CTA)
  EXPECT_EQ(row_band(1024, 8, 38, 132), kWgmmaRowBand);       // by rows (18.4)
  EXPECT_EQ(row_band(256, 32, 22, 132), 0);                   // 10.7
  EXPECT_EQ(row_band(256, 32, 38, 132), 0);                   // 18.4
  EXPECT_EQ(row_band(256, 64, 38, 132), kWgmmaRowBand);       // by tiles: 36.8 per CTA
  // The boundary: exactly kWgmmaRowBandMinTilesPerCta tiles per CTA takes row bands; fewer SMs
  // (an SM budget) reach it at fewer rows.
  EXPECT_EQ(row_band(128, kWgmmaRowBandMinTilesPerCta, 10, 10), kWgmmaRowBand);
  EXPECT_EQ(row_band(128, kWgmmaRowBandMinTilesPerCta - 1, 10, 10), 0);
  EXPECT_EQ(row_band(256, 32, 22, 16), kWgmmaRowBand);        // 88 tiles per CTA on 16 SMs
  EXPECT_EQ(row_band(0, 8, 22, 132), 0);
}

TEST(GroupedGemm, TileDescriptionsNameTheirShape) {
  EXPECT_EQ(std::string(describe_tile(GemmDtype::kFP8E4M3, GemmTile::kLargeM).name),
            "fp8 128x128x128 cooperative, cluster 1x2");
  EXPECT_EQ(describe_tile(GemmDtype::kBF16, GemmTile::kSmallM).tile_m, 64);
  EXPECT_NE(test::error_text([] { describe_tile(GemmDtype::kBF16, GemmTile::kAuto); }).find("concrete tile"),
            std::string::npos);
  EXPECT_EQ(describe_tile(GemmDtype::kFP8E4M3, GemmTile::kDecode).tile_m, kDecodeMaxM);
  EXPECT_NE(test::error_text([] { describe_tile(GemmDtype::kBF16, GemmTile::kDecode); }).find("fp8 only"),
            std::string::npos);
  EXPECT_EQ(describe_tile(GemmDtype::kFP8E4M3, GemmTile::kSwapAB).tile_n, 128);
  EXPECT_NE(test::error_text([] { describe_tile(GemmDtype::kBF16, GemmTile::kSwapAB); }).find("fp8 only"),
            std::string::npos);
  // fp8 wgmma: 192 wide by default (SYMMOE_GEMM_WGMMA_TILE_N=0), 256 where a setting is built
  // for 256-wide tiles only or the shape's waves of 256-wide tiles are > 5 % shorter (gate/up,
  // 8 experts x 256 rows on 132 SMs: 3 waves of 192-wide tiles against 2 of 256), or as asked;
  // other widths are named errors.
  EXPECT_EQ(choose_tile(GemmDtype::kFP8E4M3, 256, 8, 4096, 132).tile_n, 256);
  EXPECT_EQ(choose_tile(GemmDtype::kFP8E4M3, 256, 32, 4096, 132).tile_n, 192);
  EXPECT_EQ(choose_tile(GemmDtype::kFP8E4M3, 1024, 8, 4096, 132).tile_n, 192);
  EXPECT_EQ(choose_tile(GemmDtype::kFP8E4M3, 1024, 32, 4096, 132).tile_n, 192);
  EXPECT_EQ(choose_tile(GemmDtype::kFP8E4M3, 256, 8, 7168, 132).tile_n, 192);
  EXPECT_EQ(choose_tile(GemmDtype::kFP8E4M3, 4096, 8, 7168, 132).tile_n, 192);
  {
    const test::EnvGuard width("SYMMOE_GEMM_WGMMA_TILE_N", "192");
    EXPECT_EQ(choose_tile(GemmDtype::kFP8E4M3, 256, 8, 4096, 132).tile_n, 192);
  }
  const TileChoice w = describe_tile(GemmDtype::kFP8E4M3, GemmTile::kWgmma);
  EXPECT_EQ(w.tile_m, 128);
  EXPECT_EQ(w.tile_n, 192);
  {
    const test::EnvGuard cluster("SYMMOE_GEMM_WGMMA_CLUSTER", "2");
    EXPECT_EQ(describe_tile(GemmDtype::kFP8E4M3, GemmTile::kWgmma).tile_n, 256);
  }
  {
    const test::EnvGuard epilogue("SYMMOE_GEMM_WGMMA_EPILOGUE", "direct");
    EXPECT_EQ(describe_tile(GemmDtype::kFP8E4M3, GemmTile::kWgmma).tile_n, 256);
  }
  {
    const test::EnvGuard width("SYMMOE_GEMM_WGMMA_TILE_N", "128");
    EXPECT_EQ(describe_tile(GemmDtype::kFP8E4M3, GemmTile::kWgmma).tile_n, 128);
  }
  {
    const test::EnvGuard width("SYMMOE_GEMM_WGMMA_TILE_N", "200");
    EXPECT_NE(test::error_text([] { describe_tile(GemmDtype::kFP8E4M3, GemmTile::kWgmma); })
                  .find("SYMMOE_GEMM_WGMMA_TILE_N = 200"),
              std::string::npos);
  }
  const TileChoice wb = describe_tile(GemmDtype::kBF16, GemmTile::kWgmma);
  EXPECT_EQ(wb.tile_m, 128);
  EXPECT_EQ(wb.tile_n, 256);
  EXPECT_EQ(wb.tile_k, 64);
}

}  // namespace
}  // namespace symmoe::gemm
