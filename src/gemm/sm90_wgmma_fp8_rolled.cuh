// The fp8 wgmma consumers' rolled mainloop: each batch promoted after it is done, free or
// ordered issue (NOTE [ordered wgmma issue]). Private to src/gemm.
#pragma once

#include "sm90_wgmma_fp8_kblock.cuh"
#include "sm90_wgmma_fp8_promotion.cuh"

namespace symmoe::gemm::sm90::wgmma_frame {

// NOTE [ordered wgmma issue]: with kHandoff = kBeforeLast the two consumer warpgroups take
// turns with their batches (one column batch of one K block), wg 0 first: named barrier
// 1 + wg is "my turn", and the other warpgroup arrives on it once all but the last wgmma of
// its own batch are done, so the tensor pipe always holds the next batch while a warpgroup
// promotes. wg 1 primes barrier 1 once and wg 0 consumes its last arrival after the loop, so
// every barrier completes exactly as often as it is waited on. Both warpgroups run the same
// tiles and batches, hence the same number of batches. A failed stage wait therefore does not
// leave the loop: the thread stops waiting (the failure is reported and has set the abort
// flag, so the other waiters stop too), keeps issuing (wgmma must stay warpgroup-uniform; the
// stale operands are only read) and releasing stages, and stores nothing. Measured (8 x 4096
// gate/up, same process): free issue 946 TFLOPS, turns passed after issue 927, before the last
// wgmma 924, after the batch is done 896 — the consumers' issue order is not the limit.
enum Handoff : int { kFree = 0, kBeforeLast = 1 };

SYMMOE_DEVICE void take_turn(int wg) { wg == 0 ? tma::named_sync<1>(256) : tma::named_sync<2>(256); }
SYMMOE_DEVICE void pass_turn(int wg) { wg == 0 ? tma::named_arrive<2>(256) : tma::named_arrive<1>(256); }


template <class Shape, int kHandoff>
SYMMOE_DEVICE void consume(const GroupSource& src, const Smem<Shape>& sm, int n_blocks,
                           const CUtensorMap* map_out, const device::WaitContext& ctx) {
  constexpr int kBatches = Shape::kBatches, kStages = Shape::kStages;
  const ConsumerThread me;
  const int lane = me.lane, wg = me.wg;
  const int kblocks = kblocks_of<Shape>(src);
  if (kHandoff != kFree && wg == 1) tma::named_arrive<1>(256);
  float acc[kBatches][Shape::kBatchN / 2], part[Shape::kBatchN / 2];
  int s = 0;
  uint32_t phase = 0;
  bool ok = true;
  for_each_consumer_tile<Shape, kHandoff != kFree>(
      src, sm, n_blocks, me, map_out, acc, ok, ctx, [&] { return StageAt{s, phase}; }, [&](const ConsumerTile& tile) {
    zero(acc);
    const int scale_row = tile.scale_row;
    for (int kb = 0; kb < kblocks; ++kb) {
      const KBlock blk = wait_kblock<Shape>(sm, s, phase, ok, ctx, wg, scale_row, kb);
#pragma unroll
      for (int h = 0; h < kBatches; ++h) {
        if (h > 0 && h >= tile.batches) break;
        if (kHandoff != kFree) take_turn(wg);
        issue_block<Shape, kHandoff == kBeforeLast>(part, blk.sd, h);
        if (kHandoff == kBeforeLast) {
          wgmma::wait<1>();
          pass_turn(wg);
        }
        wgmma::wait<0>();
        wgmma::fence_operands(part);
        if (lane == 0 && h + 1 == tile.batches) release_stage<Shape>(&sm.empty[s]);
        for_each_batch<kBatches>([&](auto b) {
          constexpr int kB = decltype(b)::value;
          if (kB == h) promote_batch<Shape, kB>(acc[kB], part, tile.n0, blk.scales);
        });
      }
      advance_stage(s, phase, kStages);
    }
  });
  if (kHandoff != kFree && wg == 0) tma::named_sync<1>(256);
}

}  // namespace symmoe::gemm::sm90::wgmma_frame
