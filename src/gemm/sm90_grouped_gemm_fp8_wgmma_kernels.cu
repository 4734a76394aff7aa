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

// The consumers' mainloops, each header on the K-block steps and the promotion:
//   sm90_wgmma_fp8_kblock.cuh      a K block's wait, descriptors, scales and wgmmas
//   sm90_wgmma_fp8_promotion.cuh   the per-scale-block promotion
//   sm90_wgmma_fp8_rolled.cuh      each batch promoted after it is done (free or ordered issue)
//   sm90_wgmma_fp8_overlapped.cuh  one batch in flight while the one before is promoted
//   sm90_wgmma_fp8_unrolled.cuh    single-batch tiles, the K loop unrolled (the default 128 x 192)
// and here the shapes, the consumer each shape runs, and the launch.
#include "sm90_grouped_gemm_wgmma_frame.cuh"
#include "sm90_wgmma_fp8_overlapped.cuh"
#include "sm90_wgmma_fp8_rolled.cuh"
#include "sm90_wgmma_fp8_unrolled.cuh"
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
