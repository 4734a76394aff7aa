// The fp8 wgmma consumers' overlapped mainloop (NOTE [overlapped promotion]): one batch in
// flight while the one before is promoted. Private to src/gemm.
#pragma once

#include "sm90_wgmma_fp8_kblock.cuh"
#include "sm90_wgmma_fp8_promotion.cuh"

namespace symmoe::gemm::sm90::wgmma_frame {

// NOTE [overlapped promotion]: with kOverlap a warpgroup keeps one wgmma batch in flight while
// it promotes the one before: batch b of a K block goes into partial buffer b % 2 (kBatches
// even), and after issuing batch b > 0 the warpgroup waits until only that batch is
// outstanding (wgmma.wait_group 1) and promotes batch b - 1; a K block's stage is released once
// its last batch is done, before that batch's promotion. The batches of kOverlap K blocks (one
// loop iteration) run as one such sequence, and the last is waited for (wait_group 0) and
// promoted at the end of the iteration: ptxas serializes every wgmma of the kernel (C7514)
// once a batch is still in flight at the loop's back edge. With 1 K block per iteration, 3 of a
// 256-wide tile's four 64-column promotions run under the warpgroup's own next batch (the last
// under the other warpgroup's), 1 of a 192-wide tile's two; with 2, 7 of 8 and 3 of 4 (an odd
// last K block runs alone). Registers: kBN / 2 accumulators + 2 x kBatchN / 2 partial products
// = 192 for both widths. Every batch is computed, also one wholly past N (zero weights and
// scales; never stored), so the buffer sequence is the same in every tile.
// Measured (H200, same process, bench/results/gemm_wgmma_overlap_h200.log and
// gemm_wgmma_overlap_first_h200.log): 256-wide, drain every 2 K blocks, 1.02-1.15x the
// non-overlapped kernel (the 8 large-M cases 9.7 % faster in all); every K block 0.98-1.00x
// of every 2; 192-wide every 2, 0.90-1.04x of 256-wide. Nsight Compute before the descriptors
// were derived once per K block (stage_desc; 8 x 4096 gate/up, ncu_wgmma_overlap_shfl_stalls.txt):
// the wgmma waits fell from 33 % of the stall samples to 3 %, the tensor pipe rose to 71 %,
// and the consumers became issue-bound (514 instructions per K block and warp; short_sb 16 %:
// each batch's R2UR waiting for its descriptor shuffle — removed since: +3-11 % in 7 of the 8
// cases across the two runs). The 64-column batches cost by themselves: with the promotion
// removed (experiment, bench/results/gemm_wgmma_ceiling_n64_h200.log) 128-column batches reach
// 1123-1392 TFLOPS and 64-column ones 1038-1321 (gate/up 8 x 4096: 1392 vs 1164; down 32 x
// 1024, 819 and 861, is the run's outlier), and this kernel runs at 0.91-1.03x of the latter:
// it is near its own shape's ceiling. Each m64n64k32
// reads the warpgroup's 64 x 32 activation slice again from shared memory (4 times per K
// block: ~125 of the ~128 bytes per clock the tensor cores can be fed at full rate). Next: the
// activation fragments from registers (wgmma with A in registers: one ldmatrix pass per K
// block, 16 registers; 192 + 16 fit in 232), or 128-column batches with a register budget
// that leaves room for two partial buffers. The first is built, NOT YET RUN ON THE GPU:
// SYMMOE_GEMM_WGMMA_OVERLAP=3 (Shape256TmaOverlapRegs: load_a_frags, issue_block_rs; the K
// block's fragments loaded by 4 ldmatrix.x4 after its stage wait, so each K block drains
// before the next one's fragments overwrite them; no spill in the K loop, 36 bytes per tile
// outside it); the GPU test carries it as variant 13 against the reference.

// kN K blocks (kb0 .. kb0 + kN - 1) from stage s on, as one overlapped batch sequence (NOTE
// [overlapped promotion]).
// `probed`: on entry, whether K block kb0's stage was seen full; on return, whether the next
// K block's was (NOTE [probed stage wait]: probed before the promotion that precedes its wait).
template <class Shape, int kN>
SYMMOE_DEVICE void overlapped_kblocks(float (&acc)[Shape::kBatches][Shape::kBatchN / 2],
                                      float (&part)[2][Shape::kBatchN / 2], const Smem<Shape>& sm, int& s,
                                      uint32_t& phase, bool& ok, bool& probed, const device::WaitContext& ctx,
                                      int64_t n0, int kb0, int scale_row, const ConsumerThread& me) {
  constexpr int kBatches = Shape::kBatches;
  const int lane = me.lane, wg = me.wg;
  int stage[kN] = {};
  KBlock blk[kN];
  constexpr int kSets = Shape::kAFrags == kAFragsPerBlock ? kN : 1;
  uint32_t a_frag[kSets][kBK / 32][4];
  // Promote sequence slot kSlot (K block kSlot / kBatches, batch kSlot % kBatches) from its buffer.
  auto promote_slot = [&](auto slot) {
    constexpr int kSlot = decltype(slot)::value, kJ = kSlot / kBatches, kB = kSlot % kBatches;
    if constexpr (kB == kBatches - 1) {
      if (lane == 0) release_stage<Shape>(&sm.empty[stage[kJ]]);
    }
    promote_batch<Shape, kB>(acc[kB], part[kSlot % 2], n0, blk[kJ].scales);
  };
  for_each_batch<kN * kBatches>([&](auto slot) {
    constexpr int kSlot = decltype(slot)::value, kJ = kSlot / kBatches, kB = kSlot % kBatches;
    // kAFragsShared: K block kJ > 0 loads the one fragment set after its first batch (A from
    // shared memory), once the wait below has seen the previous block's last batch done.
    constexpr bool kLateFrags = Shape::kAFrags == kAFragsShared && kJ > 0;
    constexpr int kSet = kSets == 1 ? 0 : kJ;
    if constexpr (kB == 0) {
      stage[kJ] = s;
      blk[kJ] = wait_kblock<Shape>(sm, s, phase, ok, ctx, wg, scale_row, kb0 + kJ, probed);
      if constexpr (Shape::kARegs && !kLateFrags) load_a_frags<Shape>(a_frag[kSet], sm.a, s, wg);
    }
    if constexpr (Shape::kARegs && !(kLateFrags && kB == 0)) {
      issue_block_rs<Shape>(part[kSlot % 2], a_frag[kSet], blk[kJ].sd, kB);
    } else {
      issue_block<Shape, false>(part[kSlot % 2], blk[kJ].sd, kB);
    }
    if constexpr (kB == kBatches - 1) advance_stage(s, phase, Shape::kStages);
    if constexpr (kSlot > 0) {
      wgmma::wait<1>();
      wgmma::fence_operands(part[(kSlot + 1) % 2]);
      // The promotion below is the last one before K block kJ + 1's wait.
      if constexpr (kB == kBatches - 1 && kJ + 1 < kN) probed = tma::mbarrier_probe(&sm.full[s], phase);
      if constexpr (kLateFrags && kB == 0) load_a_frags<Shape>(a_frag[0], sm.a, stage[kJ], wg);
      promote_slot(std::integral_constant<int, kSlot - 1>{});
    }
  });
  constexpr int kLast = kN * kBatches - 1;
  wgmma::wait<0>();
  wgmma::fence_operands(part[kLast % 2]);
  probed = tma::mbarrier_probe(&sm.full[s], phase);  // the next K block, in this tile or the next
  promote_slot(std::integral_constant<int, kLast>{});
}

template <class Shape>
SYMMOE_DEVICE void consume_overlapped(const GroupSource& src, const Smem<Shape>& sm, int n_blocks,
                                      const CUtensorMap* map_out, const device::WaitContext& ctx) {
  constexpr int kBatches = Shape::kBatches, kPart = Shape::kBatchN / 2;
  const ConsumerThread me;
  const int kblocks = kblocks_of<Shape>(src);
  float acc[kBatches][kPart], part[2][kPart];
  int s = 0;
  uint32_t phase = 0;
  bool ok = true;
  // Carried across tiles: the ring runs on from tile to tile, and a phase seen complete stays
  // complete until this warpgroup releases the stage.
  bool probed = false;
  for_each_consumer_tile<Shape>(
      src, sm, n_blocks, me, map_out, acc, ok, ctx, [&] { return StageAt{s, phase}; }, [&](const ConsumerTile& tile) {
    zero(acc);
    const int scale_row = tile.scale_row;
    int kb = 0;
    for (; kb + Shape::kOverlap <= kblocks; kb += Shape::kOverlap) {
      overlapped_kblocks<Shape, Shape::kOverlap>(acc, part, sm, s, phase, ok, probed, ctx, tile.n0, kb, scale_row, me);
    }
    if constexpr (Shape::kOverlap > 1) {
      for (; kb < kblocks; ++kb) {
        overlapped_kblocks<Shape, 1>(acc, part, sm, s, phase, ok, probed, ctx, tile.n0, kb, scale_row, me);
      }
    }
  });
}

}  // namespace symmoe::gemm::sm90::wgmma_frame
