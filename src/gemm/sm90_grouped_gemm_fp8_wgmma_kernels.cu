// Grouped GEMM, fp8 with DeepSeek-V3 block scales, large M: our own warp-specialized,
// persistent wgmma/TMA kernel (no CUTLASS). This file holds its consumer mainloops (promotion,
// overlap, issue order) and shapes; the frame they run in — stages, producer, tile walk,
// epilogue, launch — is sm90_grouped_gemm_wgmma_frame.cuh, shared with the bf16 kernel.
//
// NOTE [fp8 wgmma kernel]: a CTA of three warpgroups runs one 128 x 256 output tile at a time
// (or 128 x 192, the default since the measurements of NOTE [fp8 wgmma tile width]; or 128 x 128),
// over every expert's tiles in one persistent grid:
//  - tiles: expert e has ceil(counts[e] / 128) x ceil(N / 256) tiles; each CTA resolves every
//    expert's rows into shared memory once and builds the prefix of tiles per expert there
//    from the device-resident row tables (no argument builder, no host copy: graph-safe), then
//    takes tiles blockIdx.x, + gridDim.x, ... in the order of NOTE [grouped GEMM tile order]
//    (bands of kBand column blocks);
//  - operands: one 2-D tensor map over all activation rows ([rows, K], box 128 x 128) and one
//    over all weights ([E * N, K], box 256 x 128), 128-byte swizzle. A tile that runs past its
//    expert's rows (or columns: N = 128 mod 256) reads the next expert's rows (or zeros past
//    the tensor): those are never stored, and their scales are not read (zero);
//  - warpgroup 0: the producers. kStages shared-memory stages of (128 x 128 act, 256 x 128
//    weights, the block's 128 activation scales and 2 weight scales); stage s is refilled once
//    both consumer warpgroups released it. One thread issues the two tensor copies; one warp
//    copies the scales with cp.async (4 bytes each, zeros for rows past the expert's count),
//    and the stage's full barrier waits for both (one expect-tx arrival + 32 cp.async
//    arrivals); or the scales come by tensor copies too (NOTE [wgmma stage scales]: measured
//    no faster, on request only);
//  - warpgroups 1 and 2: consumers, rows 0-63 and 64-127 of the tile (single-batch tiles, the
//    default 128 x 192 among them: NOTE [unrolled fp8 mainloop]). 128 x 256 tiles by default
//    (SYMMOE_GEMM_WGMMA_OVERLAP=-1 = 2 there, NOTE [overlapped promotion]): per 128-wide K block four
//    column batches of 64, each four wgmma m64n64k32 into one of two partial buffers (the first
//    overwrites), and acc += part * (activation scale of the row * weight scale of the
//    column's 128-row block) in fp32 — the recipe's promotion once per scale block — for each
//    batch while the next one runs. SYMMOE_GEMM_WGMMA_OVERLAP=0: two 128-column batches, each
//    waited for and then promoted (the other warpgroup's wgmmas cover the promotion, if any).
//    Registers: 128 accumulators + 64 partial products per thread, which needs setmaxnreg
//    (producer 40, consumers 232);
//  - epilogue (default, SYMMOE_GEMM_WGMMA_EPILOGUE=tma): NOTE [wgmma tensor-store epilogue]
//    — staged in shared memory, stored by tensor copies while the next tile runs; 3 stages
//    leave room for the 64 KiB staging tile. `direct` keeps 4 stages and stores bf16 pairs
//    from the registers (rows past counts[e] and columns past N not written).
// Measured on the H200 (`symmoe bench gemm --tile wgmma|large`, same process, 10 GEMMs per
// graph; bench/results/gemm_wgmma_overlap_h200.log), against CUTLASS's 128 x 128 tile: gate/up
// 8 x 1024 1224 vs 1168 TFLOPS, 8 x 4096 1084 vs 1025, 32 x 4096 1049 vs 1029; down 8 x 1024
// 961 vs 790, 32 x 1024 1006 vs 928, 32 x 4096 1020 vs 927: 1.01-1.22x, the 8 cases 4.5 %
// faster in all (kAuto takes this kernel at large fp8 M); 0.82-0.93x of the dense cuBLASLt
// baseline (fp8 without block scales), which this kernel with the promotion removed matches
// (1073-1412 TFLOPS, bench/results/gemm_wgmma_nopromo_h200.log): what is left is promotion.
// Before the overlap (SYMMOE_GEMM_WGMMA_OVERLAP=0) the kernel was level with CUTLASS (0.92-1.07x
// over three runs; gemm_wgmma_tma_h200.log: gate/up 8 x 4096 1036 vs 1035, down 8 x 1024 844
// vs 789). The tensor-store epilogue gave +8 to +27 % over direct stores (whose 64 narrow
// stores per thread were 9.7 % of the stall samples, the tensor pipe idling meanwhile); Nsight Compute, 8 x 4096 gate/up: tensor pipe busy 69.5 %
// (CUTLASS 73 %), stall samples per K block and consumer warp: 274 instructions, of which 32
// R2UR and 35 IMAD build the wgmma descriptors (CUTLASS: 124 for half the columns). Tried
// without gain (bench/results/gemm_wgmma_variants_h200.log, direct epilogue): taking turns
// between the warpgroups (NOTE [ordered wgmma issue], also with the tensor-store epilogue:
// -1 to -4 %), a 2-CTA cluster sharing each weight tile (NOTE [wgmma weight multicast]: L2
// traffic is not the limit), 128 x 128 tiles (786-807 TFLOPS against 949: more operand bytes
// per flop), activation scales loaded by the consumers from global memory one block ahead
// (749: an L2 round trip per block is longer than the block's wgmmas), two partial
// accumulators with wgmma.wait_group 1 (ptxas serializes every wgmma: C7518 / C7514), and
// producer registers 48 with consumers 232 (setmaxnreg.inc waits forever: the increase must
// come from what the producer warpgroup gives back; a static_assert checks it now).
// 128 x 192 tiles (one m64n192k32 batch per K block, SYMMOE_GEMM_WGMMA_TILE_N=192) measured
// 0.97-1.09x of 128 x 256: the saved wait and A reads are eaten by the columns past N that 192
// does not divide. The descriptors' start addresses are broadcast from lane 0 (issue_block),
// so ptxas steps them in uniform registers: 231 instructions per K block and consumer warp (was
// 274); verified on the H200 (all wgmma variants pass), throughput unchanged within the run
// spread (bench/results/gemm_ffma_yield_h200.log, "symmoe" passes). What the consumer warps
// wait on now (Nsight Compute, 8 x 4096 gate/up): the wgmma batch (DEPBAR 33 % of samples) and
// the promotion's 128 FFMA per K block (19 %, half of it dispatch / misc stalls); per batch a
// warpgroup spends about twice the batch's tensor time outside the tensor pipe, and only the
// other warpgroup's batch can cover it. Rewriting the FFMA runs' scheduling flags in the built
// SASS (yield toggled, operand reuse dropped, scripts/analysis/sass_ffma_yield.py: first 9/16
// of each run, or every other instruction) passes the test and is 1-4 % slower
// (gemm_ffma_yield_h200.log). In-place rescaling of the wgmma accumulator (no separate partial
// products) would free the registers for two batches in flight, but it accumulates all of K in
// the tensor core: the reduced-precision accumulation the recipe's promotion exists to avoid.
#include <cuda.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "sm90_grouped_gemm_wgmma_frame.cuh"
#include "sm90_wgmma_fp8_ops.cuh"
#include "symmoe/core/env.hpp"
#include "symmoe/core/error.hpp"

namespace symmoe::gemm::sm90::wgmma_frame {

namespace {

// The fp8 kernels' shape (the frame's TileShape of one-byte operands with the recipe's scales):
// a tile is kBatches column batches of kBatchN (128 x 2 or 192 x 1 without overlap): the
// consumers run the wgmmas of one batch into `part` and promote it before the next, so
// registers hold kBN / 2 accumulators + kBatchN / 2 partial products per thread. A tile's
// columns meet two 128-wide weight-scale blocks (the 192-wide tiles start at 0 or 64 mod 128):
// batch b of a 256-wide tile is block b; the 192-wide batch switches block at column
// 128 - n0 % 128. kOverlap > 0: NOTE [overlapped promotion] — batches of 64 (256-wide tiles)
// or 96 columns (192) into two partial-product buffers, each promoted while the next batch's
// wgmmas run; the wgmmas drain every kOverlap K blocks. kAFrags: the activation fragments of a
// K block are loaded into registers once (ldmatrix) and the batches' wgmmas take A from there:
// kAFragsPerBlock, one fragment set per K block of a drain (every batch from registers);
// kAFragsShared, one set for all, so a later K block's first batch reads A from shared memory
// and the block's fragments are loaded once the previous block's last batch is done.
constexpr int fp8_batch_n(int bn, int overlap) { return overlap > 0 ? bn / (bn == 256 ? 4 : 2) : (bn == 256 ? 128 : bn); }
static_assert(fp8_batch_n(128, 0) == 128, "128-wide tiles: one batch");

enum AFrags : int { kAFragsNone = 0, kAFragsPerBlock = 1, kAFragsShared = 2 };

template <int kBN_, int kStages_, int kCluster_, bool kTmaStore_, int kOverlap_ = 0, int kAFrags_ = kAFragsNone,
          int kStageCols_ = kBN_, bool kUnrolled_ = false>
struct WgmmaShape
    : TileShape<kBN_, fp8_batch_n(kBN_, kOverlap_), kStages_, kCluster_, kTmaStore_, 1, true, 1, kStageCols_> {
  static constexpr bool kUnrolled = kUnrolled_;  // NOTE [unrolled fp8 mainloop]
  // NOTE [unrolled stage ring]: every tile at stage 0 where a stage's scale column is its own
  // (the default 128 x 192: 4 stages, 4 columns); the ring carried on across tiles otherwise.
  static constexpr bool kTilesAtStage0 = kUnrolled_ && kStages_ % WgmmaShape::kScaleCols == 0;
  static constexpr int kOverlap = kOverlap_;
  static constexpr int kAFrags = kAFrags_;
  static constexpr bool kARegs = kAFrags != kAFragsNone;
  static_assert(kBK == kFp8ScaleBlock, "one promotion per K block");
  static_assert(kOverlap == 0 || WgmmaShape::kBatches % 2 == 0, "overlapped batches alternate between two buffers");
  static_assert(!kUnrolled || (kOverlap == 0 && WgmmaShape::kBatches == 1 && kCluster_ == 1),
                "the unrolled mainloop runs single-batch tiles in clusters of one");
  static_assert(!kARegs || (kOverlap > 0 && WgmmaShape::kBatchN == 64),
                "activation fragments in registers: overlapped 64-column batches (each K block of a "
                "drain has its own fragments)");
};

// The start of K block kb in stage s for a consumer thread: waits for the stage unless a probe
// saw it full (NOTE [probed stage wait]; once a wait has failed, ok stays false and the thread
// goes on without waiting: NOTE [ordered wgmma issue]), then its descriptors and scales
// (column kb % kScaleCols: NOTE [wgmma stage scales]).
struct KBlock {
  StageDesc sd;
  BlockScales scales;
};

template <class Shape>
SYMMOE_DEVICE KBlock wait_kblock(const Smem<Shape>& sm, int s, uint32_t phase, bool& ok, const device::WaitContext& ctx,
                                 int wg, int r_in_tile, int kb, bool probed = false) {
  tma::wait_unless_probed(probed, &sm.full[s], phase, ok, ctx, "gemm_stage_full", s);
  return KBlock{stage_desc<Shape>(sm.a, sm.b, s, wg),
                stage_scales<Shape>(sm.scales, s, kb % Shape::kScaleCols, r_in_tile)};
}

// The four wgmmas of one 128-wide K block into d (overwritten): this warpgroup's 64 activation
// rows x weight rows kBatchN b .. kBatchN (b + 1) - 1 of the stage described by sd. kSplit
// commits the last wgmma as a group of its own, so wgmma::wait<1> returns when only that one
// is left.
// K slice k's descriptors: NOTE [wgmma descriptor steps].
template <class Shape, bool kSplit>
SYMMOE_DEVICE void issue_block(float (&d)[Shape::kBatchN / 2], StageDesc sd, int b) {
  const uint32_t a_lo = sd.a_lo;
  const uint32_t b_lo = batch_b_lo<Shape>(sd, b);
  wgmma::fence();
#pragma unroll
  for (int k = 0; k < kBK / 32; ++k) {
    if (kSplit && k == kBK / 32 - 1) wgmma::commit();
    const uint64_t da = wgmma::desc_k32_slice(a_lo, k), db = wgmma::desc_k32_slice(b_lo, k);
    if constexpr (Shape::kBatchN == 64) {
      wgmma::mma_m64n64k32_e4m3(d, da, db, k);
    } else if constexpr (Shape::kBatchN == 96) {
      wgmma::mma_m64n96k32_e4m3(d, da, db, k);
    } else if constexpr (Shape::kBatchN == 128) {
      wgmma::mma_m64n128k32_e4m3(d, da, db, k);
    } else {
      wgmma::mma_m64n192k32_e4m3(d, da, db, k);
    }
  }
  wgmma::commit();
}

// The activation fragments of this warpgroup's 64 rows in stage s, K block-wide: a[k] feeds
// the wgmmas of K slice k (bytes 32 k .. 32 k + 31), in the _rs layout (sm90_wgmma_fp8_ops.cuh):
// one ldmatrix.x4 per slice, matrices (rows +0, bytes +0), (rows +8, +0), (rows +0, +16),
// (rows +8, +16) of the warp's 16 rows, through the 128-byte swizzle.
template <class Shape>
SYMMOE_DEVICE void load_a_frags(uint32_t (&a)[kBK / 32][4], const uint8_t* smem_a, int s, int wg) {
  const int lane = threadIdx.x % 32, m = lane / 8, i = lane % 8;
  const int row = 64 * wg + 16 * static_cast<int>(threadIdx.x / 32 % 4) + i + 8 * (m % 2);
  const uint8_t* base = smem_a + s * Shape::kABytes + row * kBK;
#pragma unroll
  for (int k = 0; k < kBK / 32; ++k) {
    const int chunk = 2 * k + m / 2;
    tma::ldmatrix_x4(base + ((chunk ^ i) * 16), a[k]);
  }
}

// issue_block with the activation fragments from registers (kARegs).
template <class Shape>
SYMMOE_DEVICE void issue_block_rs(float (&d)[Shape::kBatchN / 2], const uint32_t (&a)[kBK / 32][4], StageDesc sd,
                                  int b) {
  const uint32_t b_lo = batch_b_lo<Shape>(sd, b);
  wgmma::fence();
#pragma unroll
  for (int k = 0; k < kBK / 32; ++k) wgmma::mma_m64n64k32_e4m3_rs(d, a[k], wgmma::desc_k32_slice(b_lo, k), k);
  wgmma::commit();
}

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

// f(std::integral_constant<int, b>) for b = 0 .. kN - 1, in order.
template <int kN, class F>
SYMMOE_DEVICE void for_each_batch(F&& f) {
  [&]<int... kB>(std::integer_sequence<int, kB...>) { (f(std::integral_constant<int, kB>{}), ...); }(
      std::make_integer_sequence<int, kN>{});
}


//
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
  const int lane = me.lane, wg = me.wg, r_in_tile = me.r_in_tile;
  const int kblocks = kblocks_of<Shape>(src);
  if (kHandoff != kFree && wg == 1) tma::named_arrive<1>(256);
  float acc[kBatches][Shape::kBatchN / 2], part[Shape::kBatchN / 2];
  int s = 0;
  uint32_t phase = 0;
  bool ok = true;
  for_each_consumer_tile<Shape, kHandoff != kFree>(
      src, sm, n_blocks, me, map_out, acc, ok, ctx, [&] { return StageAt{s, phase}; }, [&](const ConsumerTile& tile) {
    zero(acc);
    for (int kb = 0; kb < kblocks; ++kb) {
      const KBlock blk = wait_kblock<Shape>(sm, s, phase, ok, ctx, wg, r_in_tile, kb);
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
                                      int64_t n0, int kb0, const ConsumerThread& me) {
  constexpr int kBatches = Shape::kBatches;
  const int lane = me.lane, wg = me.wg, r_in_tile = me.r_in_tile;
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
      blk[kJ] = wait_kblock<Shape>(sm, s, phase, ok, ctx, wg, r_in_tile, kb0 + kJ, probed);
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
    int kb = 0;
    for (; kb + Shape::kOverlap <= kblocks; kb += Shape::kOverlap) {
      overlapped_kblocks<Shape, Shape::kOverlap>(acc, part, sm, s, phase, ok, probed, ctx, tile.n0, kb, me);
    }
    if constexpr (Shape::kOverlap > 1) {
      for (; kb < kblocks; ++kb) {
        overlapped_kblocks<Shape, 1>(acc, part, sm, s, phase, ok, probed, ctx, tile.n0, kb, me);
      }
    }
  });
}

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
                                    int kblocks, int s0, StageDesc base, int r_in_tile, int lane, bool mid_w1) {
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
      const BlockScales sc = stage_scales<Shape>(sm.scales, j, 0, r_in_tile);
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
      const BlockScales sc = stage_scales<Shape>(sm.scales, j, col, r_in_tile);
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
    unrolled_kblocks<Shape>(acc[0], part, sm, bits, ok, ctx, kblocks, s0, base, me.r_in_tile, me.lane,
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

// The fp8 consumers as the frame's Consumer: the overlapped mainloop, the unrolled one, or the
// one that promotes each batch after it is done (free or ordered issue).
template <class Shape, int kHandoff>
struct Fp8Consumer {
  __host__ __device__ static constexpr const char* name() { return "grouped_gemm_fp8_wgmma"; }
  static SYMMOE_DEVICE void run(const GroupSource& src, const Smem<Shape>& sm, int n_blocks, const CUtensorMap* map_out,
                                const device::WaitContext& ctx) {
    if constexpr (Shape::kOverlap > 0) {
      consume_overlapped<Shape>(src, sm, n_blocks, map_out, ctx);
    } else if constexpr (Shape::kUnrolled) {
      consume_unrolled<Shape>(src, sm, n_blocks, map_out, ctx);
    } else {
      consume<Shape, kHandoff>(src, sm, n_blocks, map_out, ctx);
    }
  }
};

// One fp8 shape's launch, free or ordered issue (SYMMOE_GEMM_WGMMA_ORDERED; overlapped
// shapes issue freely only), and its kernel entries.
template <class Shape>
struct WgmmaConfig {
  using Free = WgmmaLaunch<Shape, Fp8Consumer<Shape, kFree>>;
  using Ordered = WgmmaLaunch<Shape, Fp8Consumer<Shape, kBeforeLast>>;
  static cudaError_t launch(const GroupSource& src, const LaunchSlots& slots, cudaStream_t stream) {
    if constexpr (Shape::kOverlap == 0 && !Shape::kUnrolled) {
      if (env::get_bool("SYMMOE_GEMM_WGMMA_ORDERED")) return Ordered::launch(src, slots, stream);
    }
    return Free::launch(src, slots, stream);
  }
  static void append(std::vector<runtime::KernelEntry>& out, const char* name, const char* name_ordered = nullptr) {
    Free::append(out, name);
    if constexpr (Shape::kOverlap == 0 && !Shape::kUnrolled) {
      if (name_ordered != nullptr) Ordered::append(out, name_ordered);
    }
  }
};

// 128 x 256 tiles: 4 stages of 48 KiB with direct stores, or 3 stages and a 64 KiB staged
// output tile with tensor stores (NOTE [wgmma tensor-store epilogue]). Measured at 8 x 4096
// gate/up: 128 x 128 tiles (6 stages) 786 TFLOPS against 949 for 128 x 256 in the same
// process (more operand bytes per flop).
using Shape256 = WgmmaShape<256, 4, 1, false>;
using Shape256Tma = WgmmaShape<256, 3, 1, true>;
using Shape256Pair = WgmmaShape<256, 4, 2, false>;
using Shape256PairTma = WgmmaShape<256, 3, 2, true>;
// 128 x 192 tiles: one wgmma batch per K block (A read once, one wait); 4 stages of 40 KiB and
// the 48 KiB staged output tile fit together.
// NOTE [fp8 wgmma tile width]: SYMMOE_GEMM_WGMMA_TILE_N = 0 (default, fp8_wgmma_tile_n) takes
// 128 x 192 with the unrolled mainloop (NOTE [unrolled fp8 mainloop]) unless a setting exists
// for 256-wide tiles only. Same-call A/B over the 12 deepseek-v3 cases (gate/up and down, 8 and
// 32 experts, 256 / 1024 / 4096 rows), geometric mean of 128 x 192 over the overlapped
// 128 x 256 that was the default, in eight device calls: 0.99, 1.03, 1.045, 1.025, 1.013, 1.021,
// 1.001, 1.009 (bench/results/gemm_wgmma_rolled_names_ab.log, gemm_wgmma_wait_probe.log, ...,
// gemm_wgmma_widths_ab.log; RESULTS.md, "Tile width"). It loses 2-5 % at gate/up with 256 rows
// per expert and wins or ties elsewhere; down over 8 experts swings +-30 % between processes
// with either width. The 128 x 128 unrolled tile: 0.916x of it. Where the shape is known
// (fp8_wgmma_tile_n's hint), 256 is taken if its waves of persistent CTAs (ceil(tiles / CTAs)
// tiles each, a tile its width in columns) are more than 5 % shorter than 192's: of the 12
// cases only gate/up over 8 experts at 256 rows (352 tiles of 192: 3 waves of 132 CTAs, the last
// two-thirds full; 256 tiles of 256: 2 full waves), where 256 measured +3.5 to +4.8 % in all six
// calls. The 5 % covers 192's lead per column elsewhere (up to 5 % at 32 x 1024).
using Shape192Tma = WgmmaShape<192, 4, 1, true>;
// 128 x 128 tiles: one m64n128k32 batch per K block, waited for and promoted (the other
// warpgroup's wgmmas cover the promotion); 5 stages of 32.5 KiB next to the 32 KiB staged
// output tile.
using Shape128Tma = WgmmaShape<128, 5, 1, true>;
// The same two with the unrolled mainloop (NOTE [unrolled fp8 mainloop]; SYMMOE_GEMM_WGMMA_UNROLL).
using Shape192TmaUnrolled = WgmmaShape<192, 4, 1, true, 0, kAFragsNone, 192, true>;
using Shape128TmaUnrolled = WgmmaShape<128, 5, 1, true, 0, kAFragsNone, 128, true>;
// NOTE [overlapped promotion]: 128 x 256 in four 64-column batches, 128 x 192 in two of 96.
// Drains every K block, or every two.
using Shape256TmaOverlap = WgmmaShape<256, 3, 1, true, 1>;
using Shape192TmaOverlap = WgmmaShape<192, 4, 1, true, 1>;
using Shape256TmaOverlap2 = WgmmaShape<256, 3, 1, true, 2>;
// The same with 4 stages next to a 16 KiB staging buffer: the output in 64-column rounds
// (SYMMOE_GEMM_WGMMA_STAGES=4).
using Shape256TmaOverlap2S4 = WgmmaShape<256, 4, 1, true, 2, kAFragsNone, 64>;
using Shape192TmaOverlap2 = WgmmaShape<192, 4, 1, true, 2>;
// Activation fragments in registers (SYMMOE_GEMM_WGMMA_OVERLAP=3): 256-wide, drain every K block.
using Shape256TmaOverlapRegs = WgmmaShape<256, 3, 1, true, 1, kAFragsPerBlock>;
// The same, draining every 2 K blocks (two fragment sets: SYMMOE_GEMM_WGMMA_OVERLAP=4).
using Shape256TmaOverlap2Regs = WgmmaShape<256, 3, 1, true, 2, kAFragsPerBlock>;
// One fragment set, draining every 2 K blocks (SYMMOE_GEMM_WGMMA_OVERLAP=5): the second K
// block's first batch reads A from shared memory.
using Shape256TmaOverlap2Shared = WgmmaShape<256, 3, 1, true, 2, kAFragsShared>;

cudaError_t wgmma_launch(const GroupSource& src, const LaunchSlots& slots, cudaStream_t stream) {
  const bool tma_store = env::get_string("SYMMOE_GEMM_WGMMA_EPILOGUE") == "tma";
  const int width = src.wgmma_tile_n;  // decided once, by GroupedGemm::run (NOTE [fp8 wgmma tile width])
  SYMMOE_CHECK(width == 256 || width == 192 || width == 128, "grouped GEMM (fp8 wgmma): tile width ", width,
               ": 256, 192 or 128");
  if (width == 128) {  // one batch per K block: no overlap to choose
    SYMMOE_CHECK(tma_store && env::get_int("SYMMOE_GEMM_WGMMA_CLUSTER") == 1 &&
                     !env::get_bool("SYMMOE_GEMM_WGMMA_ORDERED"),
                 "grouped GEMM (fp8 wgmma): 128 x 128 tiles are built with the tma epilogue, clusters of 1 and free "
                 "issue only (SYMMOE_GEMM_WGMMA_EPILOGUE=tma, SYMMOE_GEMM_WGMMA_CLUSTER=1, "
                 "SYMMOE_GEMM_WGMMA_ORDERED=0)");
    return env::get_bool("SYMMOE_GEMM_WGMMA_UNROLL") ? WgmmaConfig<Shape128TmaUnrolled>::launch(src, slots, stream)
                                                      : WgmmaConfig<Shape128Tma>::launch(src, slots, stream);
  }
  if (const int overlap = fp8_wgmma_overlap(width); overlap > 0) {
    SYMMOE_CHECK(tma_store && env::get_int("SYMMOE_GEMM_WGMMA_CLUSTER") == 1 &&
                     !env::get_bool("SYMMOE_GEMM_WGMMA_ORDERED"),
                 "grouped GEMM (fp8 wgmma): overlapped promotion (SYMMOE_GEMM_WGMMA_OVERLAP=1|2|3) is built with the "
                 "tma epilogue, clusters of 1 and free issue only (SYMMOE_GEMM_WGMMA_EPILOGUE=tma, "
                 "SYMMOE_GEMM_WGMMA_CLUSTER=1, SYMMOE_GEMM_WGMMA_ORDERED=0)");
    if (overlap == 5) {
      SYMMOE_CHECK(width == 256, "grouped GEMM (fp8 wgmma): SYMMOE_GEMM_WGMMA_OVERLAP=5 (activation fragments in "
                   "registers) is built for 128 x 256 tiles only (SYMMOE_GEMM_WGMMA_TILE_N=256)");
      return WgmmaConfig<Shape256TmaOverlap2Shared>::launch(src, slots, stream);
    }
    if (overlap == 4) {
      SYMMOE_CHECK(width == 256, "grouped GEMM (fp8 wgmma): SYMMOE_GEMM_WGMMA_OVERLAP=4 (activation fragments in "
                   "registers) is built for 128 x 256 tiles only (SYMMOE_GEMM_WGMMA_TILE_N=256)");
      return WgmmaConfig<Shape256TmaOverlap2Regs>::launch(src, slots, stream);
    }
    if (overlap == 3) {
      SYMMOE_CHECK(width == 256, "grouped GEMM (fp8 wgmma): SYMMOE_GEMM_WGMMA_OVERLAP=3 (activation fragments in "
                   "registers) is built for 128 x 256 tiles only (SYMMOE_GEMM_WGMMA_TILE_N=256)");
      return WgmmaConfig<Shape256TmaOverlapRegs>::launch(src, slots, stream);
    }
    if (overlap == 2) {
      // 4 stages on request only: 0.97-1.01x of 3 (bench/results/gemm_wgmma_stages_h200.log).
      if (width == 256 && env::get_string("SYMMOE_GEMM_WGMMA_STAGES") == "4") {
        return WgmmaConfig<Shape256TmaOverlap2S4>::launch(src, slots, stream);
      }
      return width == 192 ? WgmmaConfig<Shape192TmaOverlap2>::launch(src, slots, stream)
                          : WgmmaConfig<Shape256TmaOverlap2>::launch(src, slots, stream);
    }
    return width == 192 ? WgmmaConfig<Shape192TmaOverlap>::launch(src, slots, stream)
                        : WgmmaConfig<Shape256TmaOverlap>::launch(src, slots, stream);
  }
  if (width == 192) {
    SYMMOE_CHECK(tma_store && env::get_int("SYMMOE_GEMM_WGMMA_CLUSTER") == 1,
                 "grouped GEMM (fp8 wgmma): 128 x 192 tiles are built with the tma epilogue and clusters of 1 "
                 "only (SYMMOE_GEMM_WGMMA_EPILOGUE=tma, SYMMOE_GEMM_WGMMA_CLUSTER=1)");
    if (env::get_bool("SYMMOE_GEMM_WGMMA_UNROLL") && !env::get_bool("SYMMOE_GEMM_WGMMA_ORDERED")) {
      return WgmmaConfig<Shape192TmaUnrolled>::launch(src, slots, stream);
    }
    return WgmmaConfig<Shape192Tma>::launch(src, slots, stream);
  }
  if (env::get_int("SYMMOE_GEMM_WGMMA_CLUSTER") == 2) {
    return tma_store ? WgmmaConfig<Shape256PairTma>::launch(src, slots, stream)
                     : WgmmaConfig<Shape256Pair>::launch(src, slots, stream);
  }
  return tma_store ? WgmmaConfig<Shape256Tma>::launch(src, slots, stream)
                   : WgmmaConfig<Shape256>::launch(src, slots, stream);
}

void wgmma_append_kernels(std::vector<runtime::KernelEntry>& out) {
  WgmmaConfig<Shape256>::append(out, "sm90_grouped_gemm_fp8_wgmma_128x256",
                                "sm90_grouped_gemm_fp8_wgmma_128x256_ordered");
  WgmmaConfig<Shape256Tma>::append(out, "sm90_grouped_gemm_fp8_wgmma_128x256_tma_store",
                                   "sm90_grouped_gemm_fp8_wgmma_128x256_tma_store_ordered");
  WgmmaConfig<Shape256Pair>::append(out, "sm90_grouped_gemm_fp8_wgmma_128x256_c2",
                                    "sm90_grouped_gemm_fp8_wgmma_128x256_c2_ordered");
  WgmmaConfig<Shape256PairTma>::append(out, "sm90_grouped_gemm_fp8_wgmma_128x256_c2_tma_store",
                                       "sm90_grouped_gemm_fp8_wgmma_128x256_c2_tma_store_ordered");
  WgmmaConfig<Shape192Tma>::append(out, "sm90_grouped_gemm_fp8_wgmma_128x192_tma_store",
                                   "sm90_grouped_gemm_fp8_wgmma_128x192_tma_store_ordered");
  WgmmaConfig<Shape128Tma>::append(out, "sm90_grouped_gemm_fp8_wgmma_128x128_tma_store");
  WgmmaConfig<Shape192TmaUnrolled>::append(out, "sm90_grouped_gemm_fp8_wgmma_128x192_tma_store_unrolled");
  WgmmaConfig<Shape128TmaUnrolled>::append(out, "sm90_grouped_gemm_fp8_wgmma_128x128_tma_store_unrolled");
  WgmmaConfig<Shape256TmaOverlap>::append(out, "sm90_grouped_gemm_fp8_wgmma_128x256_tma_store_overlap");
  WgmmaConfig<Shape192TmaOverlap>::append(out, "sm90_grouped_gemm_fp8_wgmma_128x192_tma_store_overlap");
  WgmmaConfig<Shape256TmaOverlap2>::append(out, "sm90_grouped_gemm_fp8_wgmma_128x256_tma_store_overlap2");
  WgmmaConfig<Shape256TmaOverlap2S4>::append(out, "sm90_grouped_gemm_fp8_wgmma_128x256_tma_store_overlap2_s4");
  WgmmaConfig<Shape192TmaOverlap2>::append(out, "sm90_grouped_gemm_fp8_wgmma_128x192_tma_store_overlap2");
  WgmmaConfig<Shape256TmaOverlapRegs>::append(out, "sm90_grouped_gemm_fp8_wgmma_128x256_tma_store_overlap_aregs");
  WgmmaConfig<Shape256TmaOverlap2Regs>::append(out, "sm90_grouped_gemm_fp8_wgmma_128x256_tma_store_overlap2_aregs");
  WgmmaConfig<Shape256TmaOverlap2Shared>::append(out,
                                                 "sm90_grouped_gemm_fp8_wgmma_128x256_tma_store_overlap2_aregs_shared");
}

}  // namespace

}  // namespace symmoe::gemm::sm90::wgmma_frame

namespace symmoe::gemm::sm90 {

const ConfigOps& fp8_wgmma_ops() {
  static const ConfigOps ops{describe_tile(GemmDtype::kFP8E4M3, GemmTile::kWgmma), &wgmma_frame::no_workspace,
                             &wgmma_frame::wgmma_launch, &wgmma_frame::wgmma_append_kernels};
  return ops;
}

}  // namespace symmoe::gemm::sm90
