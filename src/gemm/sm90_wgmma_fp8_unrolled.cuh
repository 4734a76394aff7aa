// The fp8 wgmma consumers' unrolled mainloop (NOTE [unrolled fp8 mainloop]): single-batch
// tiles, the K loop unrolled over the stage ring, the epilogue under the next tile's first K
// block. The default 128 x 192 kernel's. Private to src/gemm.
#pragma once

#include "sm90_wgmma_fp8_kblock.cuh"
#include "sm90_wgmma_fp8_promotion.cuh"

namespace symmoe::gemm::sm90::wgmma_frame {

// NOTE [unrolled fp8 mainloop]: single-batch tiles (128 x 192, 128 x 128) with the K loop
// unrolled over the kStages stages (NOTE [unrolled stage ring]: 128 x 192 tiles start at stage
// 0, 128 x 128 ones where the ring has come to): stage j's descriptors are this warpgroup's
// stage-0 descriptors + j stage sizes (computed once per kernel), its scales a fixed offset
// from this thread's (column j % 4 of NOTE [wgmma stage scales] when kStages is a multiple of
// 4), and the weight scale of the tile's middle 64 columns one select per K block (NOTE [one K
// loop for both scale boundaries]). Per K block: wait (unless probed), 4 wgmmas, wait for them,
// release the stage, probe the next stage (NOTE [probed stage wait]), promote. Full rounds of kStages K blocks
// carry no end-of-tile test; the partial last round is a second copy of the body with it
// (1.05x at 128 x 192, 1.007x at 128 x 128: gemm_wgmma_rounds_ab.log).
// Measured on the H200 (bench/results/gemm_wgmma_unroll_h200.log, same call, alternating
// twice): 1.011x (128 x 192) and 1.014x (128 x 128) of the rolled loop, geometric means over
// 12 cases; ~53 instructions per K block and consumer warp besides the FFMA (rolled: 79;
// DeepGEMM's loop ~43). What separated it from DeepGEMM's same tiles was latency between a
// K block's promotion and the next wgmma issue, not instruction count: the stage wait's
// try-wait and the end-of-tile test sat there (stall samples, bench/RESULTS.md); with the
// probe and the full rounds 128 x 192 went from 1.14-1.37x behind DeepGEMM's best config to
// 0.89-1.02x of it at gate/up (down over 8 experts still 0.65-0.91x). Not the bound either
// (timing-only probes, bench/RESULTS.md "Six timing-only probes"): the stage ring (stages
// released before their math: 1.000x), the activation-scale copies (none at all: 0.998x), a
// staggered start of the two warpgroups per tile (0.990-1.005x), the probe as test_wait (1.007x).
// A tile's K blocks (NOTE [unrolled fp8 mainloop]). K block kb lies in stage (s0 + kb) % kStages
// (NOTE [unrolled stage ring]); K block 0's wgmmas (stage s0) were issued by the caller (NOTE
// [epilogue under the next tile's first K block]); this waits for them, promotes them into acc
// (overwritten) and runs K blocks 1 .. kblocks - 1.
template <class Shape>
SYMMOE_DEVICE void unrolled_kblocks(float (&acc)[Shape::kBatchN / 2], float (&part)[Shape::kBatchN / 2],
                                    const Smem<Shape>& sm, uint32_t& bits, bool& ok, const device::WaitContext& ctx,
                                    int kblocks, int s0, StageDesc base, int scale_row, int lane, bool mid_w1) {
  constexpr int kStages = Shape::kStages, kCols = Shape::kScaleCols, kJ = Shape::kBatchN / 8;
  static_assert(Shape::kBatchN == 128 || Shape::kBatchN == 192, "scales by thirds of 64 columns");
  bool probed = false;  // stage j's full barrier seen complete (NOTE [probed stage wait])
  {
    // K block 0's stage at compile-time offsets (a run-time stage spills at 232 registers); the
    // wait outside the dispatch (inside it ptxas serializes every wgmma: C7518). The 128 x 192
    // default (s0 = 0 at compile time) compiles this way to 45 R2UR instead of 125 (its scales
    // loaded after the wait, the rounds' bounds as below) and ran 1.031-1.040x the previous form,
    // every case 1.015x or more (H100, bench/RESULTS.md "The stage ring carried across tiles").
    wgmma::wait<0>();
    wgmma::fence_operands(part);
    for_each_batch<kStages>([&](auto stage) {
      constexpr int j = decltype(stage)::value, kNext = (j + 1) % kStages;
      if (j != s0) return;
      bits ^= 1u << j;
      const BlockScales sc = stage_scales<Shape>(sm.scales, j, 0, scale_row);
      if (lane == 0) release_stage<Shape>(&sm.empty[j]);
      probed = tma::mbarrier_probe(&sm.full[kNext], (bits >> kNext) & 1u);
      promote_thirds<kJ, true>(acc, part, scale_products(sc, mid_w1));
    });
  }
  // One round: stage j holds K block kb0 + j; partial (std::true_type): the tile's first round
  // (kb0 = -s0: the K blocks before 1 skipped) or its last (those from kblocks on skipped), tested
  // at run time (warp-uniform); full rounds carry no such test. first: stages skipped at
  // compile time (1 in the first round of a kTilesAtStage0 tile).
  auto round = [&](int kb0, auto partial, auto first) {
    for_each_batch<kStages>([&](auto stage) {
      constexpr int j = decltype(stage)::value, kNext = (j + 1) % kStages;
      if constexpr (j < decltype(first)::value) return;
      if constexpr (decltype(partial)::value) {
        if (kb0 + j < 1 || kb0 + j >= kblocks) return;
      }
      tma::wait_unless_probed(probed, &sm.full[j], (bits >> j) & 1u, ok, ctx, "gemm_stage_full", j);
      bits ^= 1u << j;
      // K block kb's scales sit in column kb % kCols (kCols a power of two; kb0 may be negative;
      // j % kCols where tiles start at stage 0 and kStages is a multiple of kCols).
      const int col = Shape::kTilesAtStage0 ? j % kCols : (kb0 + j) & (kCols - 1);
      const BlockScales sc = stage_scales<Shape>(sm.scales, j, col, scale_row);
      issue_block<Shape, false>(part, stage_desc_at<Shape>(base, j), 0);
      wgmma::wait<0>();
      wgmma::fence_operands(part);
      if (lane == 0) release_stage<Shape>(&sm.empty[j]);
      // The next K block's stage (kNext, whose parity bit is current; past the tile's last K
      // block the result is dropped: every tile starts unprobed).
      probed = tma::mbarrier_probe(&sm.full[kNext], (bits >> kNext) & 1u);
      promote_thirds<kJ>(acc, part, scale_products(sc, mid_w1));
    });
  };
  using From0 = std::integral_constant<int, 0>;
  int kb0 = -s0;
  if (Shape::kTilesAtStage0 && kblocks >= kStages) {
    round(0, std::false_type{}, std::integral_constant<int, 1>{});  // K block 0 done above
  } else {
    round(kb0, std::true_type{}, From0{});
  }
  for (kb0 += kStages; kb0 + kStages <= kblocks; kb0 += kStages) round(kb0, std::false_type{}, From0{});
  if (kb0 < kblocks) round(kb0, std::true_type{}, From0{});
}

// NOTE [epilogue under the next tile's first K block]: the unrolled mainloop's wgmmas write the
// partial products (part), its promotions the accumulators (acc), so a warpgroup issues the
// next tile's K block 0 into part before it stores the finished tile from acc: the store
// (staging, barriers, tensor copies) runs while that batch is in the tensor pipe, and the
// batch's promotion overwrites acc after it. The batch is issued and waited for in the same
// iteration of the tile loop (nothing in flight at its back edge: NOTE [overlapped promotion]).
// Per tile: wait for its first stage s0 (the unit published there: NOTE [wgmma tile schedule];
// s0 moves on by kblocks per tile, NOTE [unrolled stage ring]), agree on it across the
// warpgroup, issue K block 0, store the previous tile, run the K loop; the last
// tile is stored after the loop. A failed wait in any thread of the warpgroup ends the walk, and
// the tile still held is stored only if no wait failed (store_tile). Why: without its stores the
// kernel ran 1.054x (down 1.07-1.11x), and the tile boundaries were ~700 cycles longer than
// DeepGEMM's (bench/RESULTS.md, K-block traces). Measured (H100, same call, 3 rounds of 30
// replays, bench/results/gemm_wgmma_epilogue_under_kb0_ab_h100.log): 1.015x over the 8 large-M
// cases (1.010x per GHz); down 1.02-1.04x except 8 x 1024 (0.98x), gate/up 0.99-1.04x.
template <class Shape>
SYMMOE_DEVICE void consume_unrolled(const GroupSource& src, const Smem<Shape>& sm, int n_blocks,
                                    const CUtensorMap* map_out, const device::WaitContext& ctx) {
  const ConsumerThread me;
  const int kblocks = kblocks_of<Shape>(src);
  const int rank = UnitWalk<Shape>().rank;
  const StageDesc base = stage_desc<Shape>(sm.a, sm.b, 0, me.wg);
  float acc[1][Shape::kBatchN / 2], part[Shape::kBatchN / 2];
  uint32_t bits = 0;
  bool ok = true, held = false;
  int e_hint = 0;
  ConsumerTile prev{};
  for (;;) {
    // The tile's first stage (NOTE [unrolled stage ring]) rides in bits 16.. of the phase bits (a
    // register of its own spills).
    const int s0 = Shape::kTilesAtStage0 ? 0 : static_cast<int>(bits >> 16);
    ConsumerTile tile;
    if (!next_consumer_tile<Shape>(src, sm, n_blocks, me, StageAt{s0, (bits >> s0) & 1u}, rank, e_hint, ok, ctx,
                                   tile)) {
      break;
    }
    issue_block<Shape, false>(part, stage_desc_at<Shape>(base, s0), 0);
    if (held) store_tile<Shape>(acc, prev, me.wg, ok, map_out, sm.out, src);
    // 192-wide tiles start at column 0 or 64 of a weight-scale block; 128-wide ones at 0.
    unrolled_kblocks<Shape>(acc[0], part, sm, bits, ok, ctx, kblocks, s0, base, tile.scale_row, me.lane,
                            tile.n0 % 128 != 0);
    if constexpr (!Shape::kTilesAtStage0) {
      bits = (bits & 0xffffu) | (static_cast<uint32_t>((s0 + kblocks) % Shape::kStages) << 16);
    }
    prev = tile;
    held = true;
  }
  if (held) store_tile<Shape>(acc, prev, me.wg, ok, map_out, sm.out, src);
  if (Shape::kTmaStore && me.store_leader) tma::bulk_wait_all();
}

}  // namespace symmoe::gemm::sm90::wgmma_frame
