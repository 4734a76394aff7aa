// Grouped GEMM, fp8, decode sizes: weights on the wgmma's M side ("swap AB"), streamed by TMA
// (our own kernel, no CUTLASS).
//
// NOTE [fp8 swap-AB kernel]: with up to 64 rows per expert the GEMM is a stream of the experts'
// weights. This kernel computes outᵀ = W · actᵀ so that the weights fill wgmma's 64-row M side
// and the expert's few rows its N side (8, 16, 32 or 64: kT), with the native fp8 wgmma
// (m64nkTk32; no unpacking, unlike mma.sync on e4m3):
//  - work items are (expert, pass, 64 weight rows); a pass is kT rows of the expert (more rows:
//    more passes over its weights); experts without rows have no items (items_start in shared
//    memory: a prefix over the experts, built by every CTA from the row tables). One CTA per SM
//    of the budget; the CTAs take steps of up to two consecutive items of one expert and pass
//    (NOTE [swap-AB schedule]: from a device-wide counter or in equal contiguous ranges), so
//    the SMs stream equal shares of the weight bytes and an expert's items, which share its
//    activation rows, run on neighbouring SMs at the same time;
//  - consumer warpgroup w takes the step's item w, both read the same activation tile (the
//    pair kernels), or both take the step's one item, each half of every stage's K blocks
//    (the split kernels, NOTE [swap-AB K split]; the default up to 32 rows per expert);
//  - the producer warp's lane 0 issues the tensor copies of a stage — kD (default 4) 128-wide K blocks
//    of the step's 64-row weight items and of the kT-row activation tile, 128-byte swizzle,
//    kD * 128 contiguous bytes per row (NOTE [swap-AB K run]); activation rows past the
//    expert's rows are other experts' rows or zeros past the tensor, in output columns never
//    stored — and its lanes copy the stage's activation and weight scales (cp.async,
//    zeros for rows past the count and K blocks past K), kStages stages ahead of the consumers
//    and across step, pass and expert boundaries: the stream does not drain until the CTA's
//    last item;
//  - per K block a consumer warpgroup issues the four k32 wgmmas into one of two partial
//    buffers and promotes the K block before it while they run (acc += part * weight scale *
//    activation scale of the column: the fp8 recipe's per-block fp32 promotion, exact per
//    128-wide K block); it releases the stage once the stage's last K block is done, before
//    that block's promotion (NOTE [swap-AB overlapped promotion]);
//  - at the end of a pass each thread stores its outputs (rows = output columns n, columns =
//    the expert's rows) as bf16, the expert's rows past its count skipped;
//  - early launch (NOTE [swap-AB early launch]): the CTAs set up and pull their first weights
//    into L2 while the previous kernel drains.
// Correct for any count; chosen (choose_tile) at decode sizes, where a pass covers the rows.
// With the split kernels up to 32 rows (bench/results/gemm_swapab_split2_h200.log): gate/up
// E = 8 88-89 %, E = 32 97.5-99.8 %, down E = 8 77-79 %, E = 32 93-95 %; at 64 rows (pairs)
// 83 / 94 / 68 / 87 %. With the row-table prefetch and two fixed units per CTA (NOTE [swap-AB
// early launch], kFixedUnits; gemm_swapab_tables_h200.log, three rounds in one call against the
// build before): down E = 8 80.3-83.3 % (was 78.5-79.6) up to 32 rows, 71.5-71.7 % (69.3-69.8)
// at 64; gate/up E = 8 90.0-91.5 % (89.0-90.0). Before the split kernels, pairs only:
// Measured on the H200 (bench/results/gemm_swapab_h200.log; deepseek-v3 shapes, Wt% = weight
// bytes / time against the same run's d2d copy rate, 10 GEMMs per graph node to node, the
// auto schedule): gate/up E = 8 82-87 %, E = 32 92-97 %; down E = 8 67-74 %, E = 32 86-95 %
// at 8-64 rows per expert; CUTLASS's 64 x 128 tile 76-84 / 89-95 / 64-70 / 84-88 % in runs
// of the same day (gemm_swapab_schedule_h200.log), our mma.sync decode kernel 84-88 % / 72-74 %
// (E = 8, 8 rows only; beyond, its math caps it). The E = 8 numbers move by 2-4 points from run
// to run. Stage shape: 1 / 2 / 4 K blocks per stage gave 71-72 / 75-77 / 79-80 % on down E = 8
// up to 32 rows (gemm_swapab_kblocks_h200.log, no early launch), so 4 is the default
// (SYMMOE_GEMM_SWAPAB_KBLOCKS); the early launch adds 2-6 points at E = 8 (down 74.5-78.3 vs
// 70.2-72.6 %). Two items per warpgroup (steps of 4 items sharing each activation tile, a
// quarter less L2 traffic at 64 rows) measured 3-16 points lower at 32 and 64 rows: with 4
// items only 1 or 2 K blocks fit in a stage (short row runs) or 2-3 stages in shared memory;
// not kept. Schedules: NOTE [swap-AB schedule]. Timed right after compute-bound GEMMs the same
// sizes run 5-10 points lower (gemm_bench_h200.log: down E = 8 at 8 rows 66 % there): the board's
// power-cap average still holds the clock down (bench/RESULTS.md, "What a section inherits").
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "grouped_gemm_rows.cuh"
#include "sm90_grouped_gemm_launch.hpp"
#include "sm90_grouped_gemm_wgmma_frame.cuh"
#include "sm90_tma_wgmma.cuh"
#include "sm90_wgmma_fp8_ops.cuh"
#include "symmoe/core/env.hpp"
#include "symmoe/core/error.hpp"
#include "symmoe/device/ptx.cuh"
#include "symmoe/runtime/device_runtime.hpp"

namespace symmoe::gemm::sm90::swapab {

namespace {

using wgmma_frame::advance_stage;

constexpr int kItemRows = kSwapAbItemRows;  // weight rows of a work item: one consumer warpgroup's wgmma M
constexpr int kKBlock = 128;    // bytes (fp8 elements) of K per stage = kFp8ScaleBlock
constexpr int kThreads = 384;   // warp 1: producer (warps 0, 2, 3 idle: warpgroup alignment), warps 4-11: consumers
constexpr int kConsumerWarps = 8;
constexpr int kWeightBoxBytes = kItemRows * kKBlock;  // 8 KiB
constexpr int kMaxSmem = wgmma_frame::kMaxSmem;

// kT activation rows per pass (the wgmma's N), kD K blocks per stage and consumer warpgroup,
// kStages stages. kSplit = false (pairs): a stage holds kD K blocks of the step's two items,
// one per warpgroup, and the kD K blocks of activations they share. kSplit = true (NOTE
// [swap-AB K split]): a stage holds 2 kD K blocks of the step's one item and of its
// activations, the first kD for warpgroup 0, the next for warpgroup 1. A stage:
// [2 kD x 64 weight rows x 128 bytes][kStageBlocks x kT x 128 activation bytes]
// [kStageBlocks x (kT + 4) floats: kT activation scales, 2 weight scales (1 when split),
// padding]. Its copies read kStageBlocks * 128 contiguous bytes of each weight and activation
// row (NOTE [swap-AB K run]).
template <int kT_, int kD_, int kStages_, bool kSplit_ = false>
struct Shape {
  static constexpr int kT = kT_;
  static constexpr int kD = kD_;
  static constexpr int kStages = kStages_;
  static constexpr bool kSplit = kSplit_;
  static constexpr int kStageBlocks = kSplit ? 2 * kD : kD;    // K blocks of an item in a stage
  static constexpr int kUnitItems = kSplit ? 1 : 2;            // items of a dynamic step
  static constexpr int kItemBytes = kStageBlocks * kWeightBoxBytes;  // one item's share of a stage
  static constexpr int kWBytes = 2 * kD * kWeightBoxBytes;
  static constexpr int kABlockBytes = kT * kKBlock;
  static constexpr int kABytes = kStageBlocks * kABlockBytes;
  static constexpr int kScaleRow = kT + 4;
  static constexpr int kScaleFloats = kStageBlocks * kScaleRow;
  // Where consumer warpgroup 1's operands start in a stage: its item (pairs) or its K blocks.
  static constexpr int kWgWeightBytes = kD * kWeightBoxBytes;
  static constexpr int kWgActBytes = kSplit ? kD * kABlockBytes : 0;
  static constexpr int kWgScaleRows = kSplit ? kD : 0;
  static constexpr int kRedFloats = kSplit ? kItemRows * kT : 0;  // warpgroup 1's partial sums of an item
  // [kStages x weights][kStages x activations][kStages x scales][partial sums][full bars]
  // [empty bars][step codes: kStages int64][items_start: E + 1 int64][expert rows: E x (row0, count)]
  static constexpr int kFixedBytes =
      kStages * (kWBytes + kABytes + 4 * kScaleFloats) + 4 * kRedFloats + 3 * 8 * kStages;
  static constexpr int smem_bytes(int groups) { return 1024 + kFixedBytes + 8 * groups + 8 * (groups + 1); }
  static constexpr int max_groups() { return (kMaxSmem - 1024 - kFixedBytes - 8) / 16; }
  // Stages one step (item) takes for K = k: its K blocks in stage-sized groups, the last
  // group possibly running past K.
  static constexpr SYMMOE_DEVICE int stages_per_step(int64_t k) {
    return static_cast<int>((k / kKBlock + kStageBlocks - 1) / kStageBlocks);
  }
  static_assert(kT == 8 || kT == 16 || kT == 32 || kT == 64, "wgmma N of 8, 16, 32 or 64");
  static_assert(kABlockBytes % 1024 == 0, "activation tiles keep the 1024-byte swizzle period");
  static_assert(kD == 1 || kD == 2 || kD == 4, "1, 2 or 4 K blocks per stage");
  static_assert(max_groups() >= 256, "room for the tables of 256 experts");
};

template <class S>
struct Smem {
  uint8_t* w;
  uint8_t* a;
  float* scales;
  float* red;
  uint64_t* full;
  uint64_t* empty;
  int64_t* step_code;  // per stage: the step its copies belong to (encode_step), or kStop
  int2* rows;
  int64_t* items_start;
  SYMMOE_DEVICE Smem(uint8_t* base, int groups) {
    w = base;
    a = w + S::kStages * S::kWBytes;
    scales = reinterpret_cast<float*>(a + S::kStages * S::kABytes);
    red = scales + S::kStages * S::kScaleFloats;
    full = reinterpret_cast<uint64_t*>(red + S::kRedFloats);
    empty = full + S::kStages;
    step_code = reinterpret_cast<int64_t*>(empty + S::kStages);
    items_start = step_code + S::kStages;
    rows = reinterpret_cast<int2*>(items_start + groups + 1);
  }
};

// A step: items `first` .. first + items - 1 (1 or 2) of one expert and pass, items numbered
// as in items_start. Its code travels with each of its stages (Smem::step_code), so the
// consumers follow whatever order the producer took the steps in.
constexpr int64_t kStop = -1;
SYMMOE_DEVICE int64_t encode_step(int64_t first, int items) { return 2 * first + (items - 1); }

struct Step {
  int e;
  int c0;   // first row of the pass within the expert
  int blk;  // first 64-row weight block
  int items;
};

// The expert of item `item`: the last e with items_start[e] <= item (binary search; experts
// without items have items_start[e] = items_start[e + 1] and are passed over).
SYMMOE_DEVICE Step decode_step(int64_t code, const int64_t* items_start, int groups, int blocks_per_pass, int kT) {
  const int64_t first = code / 2;
  int lo = 0, hi = groups - 1;
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (items_start[mid] <= first) lo = mid; else hi = mid - 1;
  }
  const int64_t local = first - items_start[lo];
  return Step{lo, static_cast<int>(local / blocks_per_pass) * kT, static_cast<int>(local % blocks_per_pass),
              static_cast<int>(code % 2) + 1};
}

// NOTE [swap-AB schedule]: how the producers take steps.
//  - dynamic: every step is a pair of items (an expert's passes have N / 64 items,
//    an even count); CTA b starts with pairs b and gridDim.x + b (kFixedUnits: known before the
//    wait, so the early launch can fetch both) and then takes pair 2 gridDim.x + (the next value
//    of a device-wide counter: GroupedGemm's schedule words {next, done}), one step ahead, so SMs
//    that HBM serves faster take more pairs and all finish together, give or take a pair. The
//    counter is read and advanced only after griddepcontrol.wait (NOTE [swap-AB early launch]),
//    i.e. after the previous launch on the stream completed; every CTA's producer leaves its
//    loop (failed waits are bounded), counts the CTA in `done`, and the last one resets both
//    words for the next launch. Launches sharing one GroupedGemm must be
//    ordered on one stream (as its argument arrays already require).
//  - static: each CTA takes a contiguous range of items, equal in length give or take one
//    (steps of two, one at the end of a range or pass).
//  - split (the split kernels, NOTE [swap-AB K split]): dynamic with single items as the unit.
// auto (SYMMOE_GEMM_SWAPAB_SCHEDULE, default) runs the split kernels up to 32 rows per expert,
// and up to 64 where the expected items would leave the pairs static (swapab_split_by_default),
// else the pair kernels, whose device side takes dynamic from kSwapAbDynamicMinItems items per
// CTA (every CTA decides alike from the row tables): with fewer, a pair is too coarse a unit — at
// 8 experts (4-7 items per CTA) static ranges measured 1-8 points ahead, at 32 (15-27 items
// per CTA) dynamic 0-13 points ahead (gemm_swapab_schedule_h200.log). Handing out the last
// 2 x grid items singly instead of in pairs measured lower at both sizes (a single-item step
// idles one consumer warpgroup and halves the bytes in flight;
// gemm_swapab_schedule_singles_h200.log).
constexpr int kFixedUnits = 2;  // dynamic: units b, gridDim.x + b, ... taken without the counter
enum class ScheduleKind : int { kAuto, kDynamic, kStatic };
struct Schedule {
  int* next;  // device words: [0] next pair, [1] CTAs done
  ScheduleKind kind;
  SYMMOE_DEVICE bool dynamic(int64_t total_items) const {
    return kind == ScheduleKind::kDynamic ||
           (kind == ScheduleKind::kAuto && total_items >= int64_t{kSwapAbDynamicMinItems} * gridDim.x);
  }
};

// A CTA's contiguous range of items [next, end) (static schedule).
struct ItemRange {
  int64_t next, end;
  SYMMOE_DEVICE ItemRange(int64_t total) : next(total * blockIdx.x / gridDim.x), end(total * (blockIdx.x + 1) / gridDim.x) {}
  // Items of the step that starts at item `first` (weight block `blk` of its pass) for a kernel
  // whose steps hold up to unit_items (S::kUnitItems): two, unless the unit is one item or the
  // pass or the range ends after one.
  SYMMOE_DEVICE int step_items(int64_t first, int blk, int blocks_per_pass, int unit_items) const {
    return unit_items == 2 && blk + 1 < blocks_per_pass && first + 1 < end ? 2 : 1;
  }
};

struct Params {
  GroupSource src;
  device::StatusBlock* status;
  uint64_t timeout_ns;
  Schedule schedule;
  uint64_t* trace;  // NOTE [swap-AB trace]; null: off
};

// The first steps a CTA takes if every expert has between 1 and kT rows (one pass each): the
// unit of its index and, dynamic, its second fixed unit (kFixedUnits; the first units go out in
// CTA order), or the start of its range (static), as the producer would take them. NOTE
// [swap-AB early launch].
struct FirstGuess {
  int64_t w_row = 0;       // the first step's first weight row
  int items = 0;           // 0: no step
  int64_t next_w_row = 0;  // dynamic: the CTA's second fixed unit, guessed alike
  int next_items = 0;      // 0: none (static schedule, or past the items)
};

template <class S>
SYMMOE_DEVICE FirstGuess guess_first_steps(const GroupSource& src, const Schedule& sched) {
  const int blocks_per_pass = src.n / kItemRows;
  const int64_t total = int64_t{src.groups} * blocks_per_pass;
  const bool dynamic = sched.dynamic(total);
  const ItemRange range(total);
  const int64_t first = dynamic ? S::kUnitItems * int64_t{blockIdx.x} : range.next;
  FirstGuess g;
  if (first >= (dynamic ? total : range.end)) return g;
  // A dynamic step is a unit (a pair: total is even; or one item); a static one as the producer
  // takes it.
  g.items = dynamic ? S::kUnitItems
                    : range.step_items(first, static_cast<int>(first % blocks_per_pass), blocks_per_pass, S::kUnitItems);
  // With one pass per expert, item i is weight block i % blocks_per_pass of expert i / blocks_per_pass.
  auto w_row_of = [&](int64_t item) { return item / blocks_per_pass * src.n + item % blocks_per_pass * kItemRows; };
  g.w_row = w_row_of(first);
  const int64_t next = S::kUnitItems * (int64_t{gridDim.x} + blockIdx.x);
  if (dynamic && kFixedUnits > 1 && next < total) {
    g.next_items = S::kUnitItems;
    g.next_w_row = w_row_of(next);
  }
  return g;
}

SYMMOE_DEVICE const char* kernel_name() { return "grouped_gemm_fp8_swapab"; }

// Warp 1: lane 0 takes the steps (NOTE [swap-AB schedule]) and issues the tensor copies, every
// lane copies scales; after the last step a stage with code kStop ends the consumers. Returns
// at the end or on a failed wait, with the number of items whose copies it issued.
template <class S>
SYMMOE_DEVICE int produce(const CUtensorMap& map_act, const CUtensorMap& map_w, const GroupSource& src,
                           const Smem<S>& sm, const Schedule& sched, const device::WaitContext& ctx) {
  const int lane = threadIdx.x % 32;
  const int kblocks = src.k / kKBlock, blocks_per_pass = src.n / kItemRows;
  const int kstages = S::stages_per_step(src.k);
  const int64_t total = sm.items_start[src.groups];
  const bool dynamic = sched.dynamic(total);
  ItemRange range(total);
  // Dynamic: units blockIdx.x and gridDim.x + blockIdx.x first (kFixedUnits: no counter round
  // trip before the first copies; the units the early launch fetched), then 2 gridDim.x + the
  // counter, each taken one step ahead: the counter is advanced as a step starts and its value
  // read once the step's copies are issued, so the round trip runs under them. A unit is a pair
  // of items, or one item when split (S::kUnitItems).
  static_assert(kFixedUnits == 1 || kFixedUnits == 2, "one or two units before the counter");
  constexpr int kUnit = S::kUnitItems;
  int64_t unit = blockIdx.x, upcoming = 0;
  bool fixed_next = kFixedUnits == 2;  // the unit after this one is the CTA's second fixed one
  int s = 0, taken = 0;
  uint32_t phase = 0;
  for (;;) {
    int64_t code = kStop;
    Step st{0, 0, 0, 0};
    if (dynamic) {
      if (lane == 0 && kUnit * unit < total) {
        upcoming = fixed_next ? int64_t{gridDim.x} + blockIdx.x
                              : int64_t{kFixedUnits} * gridDim.x + atomicAdd(sched.next, 1);
      }
      fixed_next = false;
      if (kUnit * unit < total) {
        code = encode_step(kUnit * unit, kUnit);
        st = decode_step(code, sm.items_start, src.groups, blocks_per_pass, S::kT);
      }
    } else if (range.next < range.end) {
      st = decode_step(encode_step(range.next, 1), sm.items_start, src.groups, blocks_per_pass, S::kT);
      st.items = range.step_items(range.next, st.blk, blocks_per_pass, S::kUnitItems);
      code = encode_step(range.next, st.items);
      range.next += st.items;
    }
    const int2 rows = code == kStop ? make_int2(0, 0) : sm.rows[st.e];
    const auto a_row = static_cast<int32_t>(rows.x + st.c0);
    const int64_t w_row = int64_t{st.e} * src.n + int64_t{st.blk} * kItemRows;
    for (int ks = 0; ks < (code == kStop ? 1 : kstages); ++ks) {
      if (!tma::mbarrier_wait(&sm.empty[s], phase ^ 1, ctx, "gemm_stage_free", s)) return taken;
      const int kb0 = ks * S::kStageBlocks;
      if (lane == 0) {
        sm.step_code[s] = code;  // published by the arrival below (release), read after the full wait
        device::bulk::mbarrier_arrive_expect_tx(&sm.full[s], st.items * S::kItemBytes + (code == kStop ? 0 : S::kABytes));
        uint8_t* w_dst = sm.w + s * S::kWBytes;
        for (int i = 0; i < st.items; ++i) {
          tma::load_3d(w_dst + i * S::kItemBytes, &map_w, 0, static_cast<int32_t>(w_row + i * kItemRows), kb0,
                       &sm.full[s]);
        }
        if (code != kStop) tma::load_3d(sm.a + s * S::kABytes, &map_act, 0, a_row, kb0, &sm.full[s]);
      }
      if (code != kStop) {
        float* dst = sm.scales + s * S::kScaleFloats;
#pragma unroll
        for (int d = 0; d < S::kStageBlocks; ++d) {
          const int kb = kb0 + d;
          for (int i = lane; i < S::kT + 2; i += 32) {
            if (i < S::kT) {
              const bool live = st.c0 + i < rows.y && kb < kblocks;
              const float* p = src.act_scales + (live ? src.act_scale.index(st.e, int64_t{rows.x} + st.c0 + i, kb) : 0);
              tma::cp_async_4(dst + d * S::kScaleRow + i, p, live);
            } else {
              const int item = i - S::kT;
              const int64_t nb = (int64_t{st.blk + item} * kItemRows) / kFp8ScaleBlock;
              const bool live = item < st.items && kb < kblocks;
              const float* p =
                  src.weight_scales + (live ? (int64_t{st.e} * (src.n / kFp8ScaleBlock) + nb) * kblocks + kb : 0);
              tma::cp_async_4(dst + d * S::kScaleRow + i, p, live);
            }
          }
        }
      }
      tma::cp_async_arrive_noinc(&sm.full[s]);
      advance_stage(s, phase, S::kStages);
    }
    if (code == kStop) return taken;
    taken += st.items;
    if (dynamic) unit = __shfl_sync(0xffffffffu, upcoming, 0);
  }
}

// The four k32 wgmmas of one 128-wide K block: part = weights (64 rows from start-address
// word a_lo) x activations (kT rows from b_lo). The slices step the 32-bit words, not the 64-bit
// descriptors (NOTE [wgmma descriptor steps]).
template <int kT>
SYMMOE_DEVICE void issue_block(float (&part)[kT / 2], uint32_t a_lo, uint32_t b_lo) {
  wgmma::fence();
#pragma unroll
  for (int k = 0; k < kKBlock / 32; ++k) {
    const uint64_t da = wgmma::desc_k32_slice(a_lo, k), db = wgmma::desc_k32_slice(b_lo, k);
    if constexpr (kT == 8) {
      wgmma::mma_m64n8k32_e4m3(part, da, db, k);
    } else if constexpr (kT == 16) {
      wgmma::mma_m64n16k32_e4m3(part, da, db, k);
    } else if constexpr (kT == 32) {
      wgmma::mma_m64n32k32_e4m3(part, da, db, k);
    } else {
      wgmma::mma_m64n64k32_e4m3(part, da, db, k);
    }
  }
  wgmma::commit();
}

// Consumer warpgroup wg (0, 1) takes item wg of each step (pairs) or K blocks wg kD ..
// (wg + 1) kD - 1 of each stage of the step's one item (split); this thread holds weight rows r
// and r + 8 of the item (r = 16 (warp % 4) + lane / 4) and columns (the pass's rows)
// 8j + 2 (lane % 4) + {0, 1}. Steps come as the stages' codes (NOTE [swap-AB schedule]); the
// first stage of a step names it, kStop ends the loop. A failed stage wait (reported; the abort
// flag stops the other waiters) ends the warpgroup's loop as a whole (wgmma must stay
// warpgroup-uniform): the wait's outcome is and-reduced over the warpgroup — over both when
// split, so that both leave at the same stage and the item-end barrier always completes.
// trace: this CTA's trace entry (NOTE [swap-AB trace]) or null.
//
// NOTE [swap-AB overlapped promotion]: within a stage, K block d's wgmmas go into part[d % 2]
// and are issued before K block d - 1 is waited for (wgmma.wait_group 1) and promoted, so the
// tensor pipe holds the next block while the FFMAs run; the stage drains at its end (wait 0),
// its last block's scales are read into registers, the stage is released, and only then is
// that block promoted: the producer refills the stage one promotion sooner. The two buffers
// stay in registers (64-row pairs: 138 registers, no spill). Measured on the H200
// (bench/results/gemm_swapab_overlap_ab.log, three rounds in one call): down 8 x 64 1.014x, the
// other 15 decode cases of deepseek-v3 level (0.996-1.008x). The stage hold itself is not the
// bound: a timing-only probe that releases every stage right after its full wait, before any
// math, gained nothing (1.000x over the 16 cases, down 8 x 64 1.012x;
// bench/results/gemm_probe_release_ab.log), nor did 4-5 weight stages at 64 rows (<= 1.02x,
// gemm_swapab_probe_stages_ab.log) or no activation copies (1.03x, gemm_swapab_probe_noact_ab.log).
// What bounds 64 rows (same call, timing-only builds): with no wgmma at all down 8 x 64 runs
// 1.10-1.13x faster and every CTA's stream ends ~3.8 us sooner (median and maximum alike: the
// rate, not the tail; bench/results/gemm_swapab_trace64.log), so the math in the ring is the
// cost, partly through power (the board at its 700 W cap with the wgmmas, SM clock down to
// 1.4 GHz; 612 W and 1.98 GHz without: gemm_swapab_power_down_8x64.log); no activation copies
// at all: 0.97-1.04x (activation bytes in L2 are not the limit); asking
// L2 for the next step's weights (cp.async.bulk.prefetch, one step or two stages ahead):
// 0.70x and 0.85x; 2 K blocks per stage (4 stages of 48 KiB): 0.99x, 1: 0.81x.
template <class S>
SYMMOE_DEVICE void consume(const GroupSource& src, const Smem<S>& sm, const device::WaitContext& ctx,
                           uint64_t* trace) {
  constexpr int kT = S::kT, kJ = kT / 8;
  const int wg = static_cast<int>(threadIdx.x / 128) - 1, warp_in_wg = static_cast<int>(threadIdx.x / 32 % 4);
  const int lane = static_cast<int>(threadIdx.x % 32), g = lane / 4, t = lane % 4;
  const int blocks_per_pass = src.n / kItemRows;
  const int kstages = S::stages_per_step(src.k);
  auto* out = static_cast<__nv_bfloat16*>(src.out);
  float acc[kT / 2], part[2][kT / 2];
  // acc += p * (weight scale x activation scale of the column): the recipe's promotion.
  auto promote = [&](const float (&p)[kT / 2], const float (&sc)[kJ][2]) {
#pragma unroll
    for (int j = 0; j < kJ; ++j) {
      acc[4 * j + 0] += p[4 * j + 0] * sc[j][0];
      acc[4 * j + 1] += p[4 * j + 1] * sc[j][1];
      acc[4 * j + 2] += p[4 * j + 2] * sc[j][0];
      acc[4 * j + 3] += p[4 * j + 3] * sc[j][1];
    }
  };
  int s = 0;
  uint32_t phase = 0;
  auto wait_full = [&] {
    const bool ok = tma::mbarrier_wait(&sm.full[s], phase, ctx, "gemm_stage_full", s);
    if constexpr (S::kSplit) return tma::named_sync_and<1>(256, ok);
    return wg == 0 ? tma::named_sync_and<1>(128, ok) : tma::named_sync_and<2>(128, ok);
  };
  for (bool first = true;; first = false) {
    if (!wait_full()) return;
    if (first && trace != nullptr && threadIdx.x == 128) trace[kTraceFirstStage] = device::ptx::globaltimer_ns();
    const int64_t code = sm.step_code[s];
    if (code == kStop) return;
    const Step st = decode_step(code, sm.items_start, src.groups, blocks_per_pass, kT);
    const bool mine = S::kSplit || wg < st.items;  // warpgroup-uniform
#pragma unroll
    for (int i = 0; i < kT / 2; ++i) acc[i] = 0.f;
    for (int ks = 0; ks < kstages; ++ks) {
      if (ks > 0 && !wait_full()) return;
      // NOTE [swap-AB overlapped promotion]
      float last[kJ][2];  // the stage's last K block's scale products, read before the release
      if (mine) {
        const uint32_t a_lo = wgmma::desc_lo_k_major_sw128(sm.w + s * S::kWBytes + wg * S::kWgWeightBytes);
        const uint32_t b_lo = wgmma::desc_lo_k_major_sw128(sm.a + s * S::kABytes + wg * S::kWgActBytes);
        const float* sc0 = sm.scales + s * S::kScaleFloats + wg * S::kWgScaleRows * S::kScaleRow;
        // K blocks past K arrive as zeros with zero scales: they add nothing.
        auto issue = [&](int d) {
          wgmma::fence_operands(part[d % 2]);
          issue_block<kT>(part[d % 2], a_lo + d * (kWeightBoxBytes >> 4), b_lo + d * (S::kABlockBytes >> 4));
        };
        auto scales_of = [&](int d, float (&out)[kJ][2]) {
          const float* sc = sc0 + d * S::kScaleRow;
          const float sw = sc[kT + (S::kSplit ? 0 : wg)];
#pragma unroll
          for (int j = 0; j < kJ; ++j) {
            out[j][0] = sw * sc[8 * j + 2 * t];
            out[j][1] = sw * sc[8 * j + 2 * t + 1];
          }
        };
        issue(0);
#pragma unroll
        for (int d = 1; d < S::kD; ++d) {
          issue(d);
          wgmma::wait<1>();
          wgmma::fence_operands(part[(d - 1) % 2]);
          float sd[kJ][2];
          scales_of(d - 1, sd);
          promote(part[(d - 1) % 2], sd);
        }
        wgmma::wait<0>();
        wgmma::fence_operands(part[(S::kD - 1) % 2]);
        scales_of(S::kD - 1, last);
      }
      __syncwarp();
      if (lane == 0) tma::mbarrier_arrive(&sm.empty[s]);
      if (mine) promote(part[(S::kD - 1) % 2], last);
      advance_stage(s, phase, S::kStages);
    }
    if constexpr (S::kSplit) {
      // NOTE [swap-AB K split]: warpgroup 1 hands its sums to warpgroup 0, which stores.
      float* red = sm.red + (threadIdx.x % 128);
      if (wg == 1) {
#pragma unroll
        for (int i = 0; i < kT / 2; ++i) red[128 * i] = acc[i];
      }
      tma::named_sync<3>(256);
      if (wg == 1) continue;
#pragma unroll
      for (int i = 0; i < kT / 2; ++i) acc[i] += red[128 * i];
    }
    if (!mine) continue;
    const int2 rows = sm.rows[st.e];
    const int64_t n = int64_t{st.blk + (S::kSplit ? 0 : wg)} * kItemRows + 16 * warp_in_wg + g;
#pragma unroll
    for (int j = 0; j < kJ; ++j) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int c = st.c0 + 8 * j + 2 * t + h;
        if (c < rows.y) {
          __nv_bfloat16* o = out + (int64_t{rows.x} + c) * src.n + n;
          o[0] = __float2bfloat16_rn(acc[4 * j + h]);
          o[8] = __float2bfloat16_rn(acc[4 * j + 2 + h]);
        }
      }
    }
  }
}

// NOTE [swap-AB early launch]: launched with programmatic dependent launch (LaunchSlots::early),
// a CTA may start while the previous kernel on the stream still runs, on an SM that kernel has
// left. Before griddepcontrol.wait it touches only its own shared memory and L2: it asks L2 for
// the lines of the row tables (read right after the wait: the first thing on the launch's path,
// so asked for first), sets up its barriers and asks L2 for the first kStages stages of weights
// of the steps it would take first (guess_first_steps: right when every expert has 1 to kT
// rows; along the first unit and on into the second, kFixedUnits, when the first ends sooner);
// a wrong guess costs only those bytes. The weights and tables may be written by the previous
// kernel (an expert prefetch, a dispatch): an L2 prefetch is no read of them — L2 is the GPU's
// point of coherence, so the reads after the wait see that kernel's writes. Row tables,
// activations, scales and outputs are read only after the wait. Every CTA then triggers its
// dependents, whose CTAs start in turn on the SMs this grid leaves (a GEMM after this one
// streams its first weights while this one drains). Measured (bench/results/
// gemm_swapab_early_copies_h200.log, gemm_swapab_fixed_units_h200.log): copying the first
// stages' weights into shared memory before the wait instead (they are model weights that no
// kernel writes) ran 1-4 points lower on down over 8 experts: at the launch boundary HBM is
// the queue, and the early copies only delayed the row-table reads behind them (NOTE [swap-AB
// trace]: row tables built 3-4.5 us after the previous launch's end instead of 1.4-2.5).
template <class S>
SYMMOE_DEVICE void prefetch_first_stages(const CUtensorMap& map_w, const GroupSource& src, const FirstGuess& g) {
  const int kstages = S::stages_per_step(src.k);
  for (int q = 0; q < S::kStages; ++q) {
    const bool second = q >= kstages;
    const int ks = second ? q - kstages : q;
    const int items = second ? g.next_items : g.items;
    if (ks >= kstages || items == 0) break;
    const int64_t w_row = second ? g.next_w_row : g.w_row;
    for (int i = 0; i < items; ++i) {
      tma::prefetch_l2_3d(&map_w, 0, static_cast<int32_t>(w_row + i * kItemRows), ks * S::kStageBlocks);
    }
  }
}

template <class S>
__global__ void __launch_bounds__(kThreads, 1)
    sm90_grouped_gemm_fp8_swapab_kernel(const __grid_constant__ CUtensorMap map_act,
                                        const __grid_constant__ CUtensorMap map_w, const Params p) {
  const GroupSource& src = p.src;
  const int groups = src.groups;
  extern __shared__ uint8_t smem_raw[];
  const Smem<S> sm(smem_raw + ((1024 - (tma::smem_addr(smem_raw) & 1023)) & 1023), groups);
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int blocks_per_pass = src.n / kItemRows;
  uint64_t* const trace = p.trace == nullptr ? nullptr : p.trace + int64_t{blockIdx.x} * kSwapAbTraceWords;
  // Trace milestones are read by the thread that stores them (tid 0, NOTE [swap-AB trace]).
  const uint64_t t_start = trace != nullptr && tid == 0 ? device::ptx::globaltimer_ns() : 0;
  // NOTE [swap-AB early launch]: the row tables' lines (32 entries each) first, then the weights.
  for (int e = 32 * tid; e < groups; e += 32 * kThreads) {
    device::ptx::prefetch_l2(src.counts + e);
    if (src.offsets != nullptr) device::ptx::prefetch_l2(src.offsets + e);
  }
  if (tid == 0) {
    tma::prefetch_map(&map_act);
    tma::prefetch_map(&map_w);
    for (int s = 0; s < S::kStages; ++s) {
      device::bulk::mbarrier_init(&sm.full[s], 1 + 32);  // the expect-tx arrival + the scale warp's lanes
      device::bulk::mbarrier_init(&sm.empty[s], kConsumerWarps);
    }
    device::bulk::fence_mbarrier_init();
    prefetch_first_stages<S>(map_w, src, guess_first_steps<S>(src, p.schedule));
  }
  device::ptx::griddep_wait();  // NOTE [swap-AB early launch]
  const uint64_t t_wait = trace != nullptr && tid == 0 ? device::ptx::globaltimer_ns() : 0;
  // Items per expert, then their prefix (warp 0). Invalid row tables count 0 rows; CTA 0
  // reports them.
  for (int e = tid; e < groups; e += kThreads) {
    const GroupRows rows = resolve_group_rows(src, e, p.status, blockIdx.x == 0, kernel_name());
    sm.rows[e] = make_int2(static_cast<int>(rows.row0), rows.count);  // row0 < 2^31: checked at launch
    sm.items_start[e + 1] = int64_t{(rows.count + S::kT - 1) / S::kT} * blocks_per_pass;
  }
  __syncthreads();
  if (warp == 0) {
    wgmma_frame::warp_inclusive_scan(sm.items_start + 1, groups, lane);
    if (lane == 0) sm.items_start[0] = 0;
  }
  __syncthreads();
  device::ptx::griddep_launch_dependents();
  if (trace != nullptr && tid == 0) {
    trace[kTraceStart] = t_start;
    trace[kTraceWaitDone] = t_wait;
    trace[kTraceTablesDone] = device::ptx::globaltimer_ns();
    trace[kTraceSm] = device::ptx::smid();
  }
  const device::WaitContext ctx{p.status, p.timeout_ns, kernel_name()};
  if (warp == 1) {
    const int taken = produce<S>(map_act, map_w, src, sm, p.schedule, ctx);
    if (trace != nullptr && lane == 0) {
      trace[kTraceProducerDone] = device::ptx::globaltimer_ns();
      trace[kTraceItems] = static_cast<uint64_t>(taken);
    }
    // This CTA takes no more work (produce also returns after a failed wait): the last CTA to
    // get here resets the schedule words for the next launch (NOTE [swap-AB schedule]). Lane 0
    // made every counter access of the CTA; it counts the CTA out as the producer leaves, while
    // the consumers still run the last stages, so the count is not on the CTA's way out.
    if (lane == 0 && p.schedule.kind != ScheduleKind::kStatic) {
      __threadfence();
      if (atomicAdd(p.schedule.next + 1, 1) == static_cast<int>(gridDim.x) - 1) {
        __threadfence();
        p.schedule.next[0] = 0;
        p.schedule.next[1] = 0;
        __threadfence();
      }
    }
  } else if (warp >= 4) {
    consume<S>(src, sm, ctx, trace);
    if (trace != nullptr && tid == 128) trace[kTraceConsumerEnd] = device::ptx::globaltimer_ns();
  }
}

// NOTE [swap-AB K run]: an fp8 operand [rows, K] seen as a 3-D tensor (128 bytes of a K
// block, row, K block) with strides (1, K, 128): a box of (128, box_rows, kD) is kD K blocks of
// box_rows rows, written to shared memory K block after K block, each a box_rows x 128 tile in
// the 128-byte swizzle (a 1024-byte multiple apart: each its own wgmma operand), and read from
// memory as kD * 128 contiguous bytes per row. K blocks past K arrive as zeros.
inline CUtensorMap make_kblock_map(const void* base, int64_t rows, int64_t k, int box_rows, int kd, const char* what) {
  const cuuint64_t dims[3] = {128, static_cast<cuuint64_t>(rows), static_cast<cuuint64_t>(k / kKBlock)};
  const cuuint64_t strides[2] = {static_cast<cuuint64_t>(k), 128};
  const cuuint32_t box[3] = {128, static_cast<cuuint32_t>(box_rows), static_cast<cuuint32_t>(kd)};
  return wgmma_frame::encode_map_sw128("fp8 swap-AB", what, base, CU_TENSOR_MAP_DATA_TYPE_UINT8, 3, dims, strides, box,
                                       CU_TENSOR_MAP_L2_PROMOTION_L2_256B);
}

template <class S>
struct Launch {
  static const void* kernel() { return reinterpret_cast<const void*>(&sm90_grouped_gemm_fp8_swapab_kernel<S>); }
  // schedule: NOTE [swap-AB schedule]; the split kernels run dynamic.
  static cudaError_t launch(const GroupSource& src, const LaunchSlots& slots, cudaStream_t stream,
                            ScheduleKind schedule) {
    SYMMOE_CHECK(src.groups <= S::max_groups(), "grouped GEMM (fp8 swap-AB): ", src.groups,
                 " experts; the tables in shared memory hold at most ", S::max_groups());
    const int64_t rows = src.offsets == nullptr ? int64_t{src.groups} * src.max_m : src.total_rows;
    const CUtensorMap map_act = make_kblock_map(src.act, rows, src.k, S::kT, S::kStageBlocks, "activations");
    const CUtensorMap map_w =
        make_kblock_map(src.weights, int64_t{src.groups} * src.n, src.k, kItemRows, S::kStageBlocks, "weights");
    SYMMOE_CHECK(schedule == ScheduleKind::kStatic || slots.schedule != nullptr,
                 "grouped GEMM (fp8 swap-AB): no schedule words");
    Params params{src, slots.status, runtime::wait_timeout_ns(), Schedule{slots.schedule, schedule}, slots.trace};
    cudaLaunchConfig_t config{};
    config.gridDim = dim3(std::max(slots.sm_count, 1), 1, 1);
    config.blockDim = dim3(kThreads, 1, 1);
    config.dynamicSmemBytes = S::smem_bytes(src.groups);
    config.stream = stream;
    cudaLaunchAttribute attr{};
    if (slots.early) {  // NOTE [swap-AB early launch]
      attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
      attr.val.programmaticStreamSerializationAllowed = 1;
      config.attrs = &attr;
      config.numAttrs = 1;
    }
    void* args[] = {const_cast<CUtensorMap*>(&map_act), const_cast<CUtensorMap*>(&map_w), &params};
    return cudaLaunchKernelExC(&config, kernel(), args);
  }
  static void append(std::vector<runtime::KernelEntry>& out, const char* name) {
    out.push_back({name, kernel(), kMaxSmem, -1});
  }
};

// One kernel per pass width (8, 16, 32, 64 rows: the shapes S8 .. S64), picked from
// expected_m; entries named prefix + "m<width>" + suffix.
template <class S8, class S16, class S32, class S64>
struct PassWidths {
  static cudaError_t launch(const GroupSource& src, const LaunchSlots& slots, cudaStream_t stream,
                            ScheduleKind schedule) {
    const int m = std::max(src.expected_m, 1);
    if (m <= 8) return Launch<S8>::launch(src, slots, stream, schedule);
    if (m <= 16) return Launch<S16>::launch(src, slots, stream, schedule);
    if (m <= 32) return Launch<S32>::launch(src, slots, stream, schedule);
    return Launch<S64>::launch(src, slots, stream, schedule);
  }
  static void append(std::vector<runtime::KernelEntry>& out, const std::string& prefix, const std::string& suffix) {
    // The entries keep the names' pointers: one set per instantiation, built on the first call.
    static const std::string names[4] = {prefix + "m8" + suffix, prefix + "m16" + suffix, prefix + "m32" + suffix,
                                         prefix + "m64" + suffix};
    Launch<S8>::append(out, names[0].c_str());
    Launch<S16>::append(out, names[1].c_str());
    Launch<S32>::append(out, names[2].c_str());
    Launch<S64>::append(out, names[3].c_str());
  }
};

// The pair kernels with kD K blocks per stage. Stages: as many as fit next to the tables of
// 256 experts (Shape::max_groups), at most 12.
template <int kD>
using Family = PassWidths<Shape<8, kD, 12 / kD>, Shape<16, kD, 12 / kD>, Shape<32, kD, kD == 1 ? 10 : kD == 2 ? 5 : 2>,
                          Shape<64, kD, kD == 1 ? 9 : kD == 2 ? 4 : 2>>;

// NOTE [swap-AB K split]: one item per step, its K blocks split between the consumer
// warpgroups (per stage: the first kD to warpgroup 0, the next kD to warpgroup 1), warpgroup 1's
// sums added by warpgroup 0 through shared memory at the item's end (named barrier 3, both
// warpgroups; the stage waits are and-reduced over both, so they leave together), steps from
// the device-wide counter one item at a time. A step streams half the bytes of a pair, so the
// SMs finish within about half the time of a pair of each other; each stage carries the
// activations of 2 kD K blocks (twice the pairs' share per weight byte). Stages: as many as fit
// next to the tables of 256 experts; 2 K blocks per warpgroup from 16 rows, where the
// activations take more of a stage.
using SplitFamily = PassWidths<Shape<8, 4, 3, true>, Shape<16, 2, 5, true>, Shape<32, 2, 4, true>, Shape<64, 2, 3, true>>;

// The auto schedule's kernels (swapab_split_by_default, symmoe/gemm/grouped_gemm.hpp): split
// up to kSwapAbSplitMaxM rows per expert, pairs above. Measured
// (H200, deepseek-v3 shapes, 10 GEMMs per graph; bench/results/gemm_swapab_split_h200.log,
// gemm_swapab_split2_h200.log) against the pairs' best schedule, up to 32 rows: gate/up +0-2
// points at 8 experts and +2-3 at 32 (97.5-99.8 %), down 8 experts -1 to +2 (77-79 %), 32
// experts level (93-95 %); a shape whose items leave some SMs one more (N 4352, 8 experts)
// +4-9. At 64 rows the activation tile is as large as the weights' share of a stage and
// split fell behind (down over 32 experts 81 against 87 %) where the pairs run dynamic, but
// leads where they would run static (few items per SM: 8 experts), the tail of static ranges
// costing more than the doubled activation bytes: down 8 x 64 1.027x, gate/up 1.032x, and down
// 32 x 64 0.91x, gate/up 0.98x (bench/results/gemm_swapab_overlap_ab.log, three rounds in one
// call; NOTE [swap-AB overlapped promotion] in both). Auto with that rule against the build
// before both changes (gemm_swapab_auto64_ab.log, 8, 16 and 32 experts, three rounds): down
// 8 x 64 1.042x (70.0-70.3 % of the d2d rate), gate/up 8 x 64 1.030x, 16 x 64 1.060x; down
// 16 x 64 (pairs, dynamic) 0.987x; the other 20 cases 0.992-1.006x.

// SYMMOE_GEMM_SWAPAB_SCHEDULE=split, or auto where swapab_split_by_default: the split kernels.
// Otherwise the pair kernels with SYMMOE_GEMM_SWAPAB_KBLOCKS K blocks per stage (1, 2 or 4;
// default 4). The variables are read once per launch.
cudaError_t launch(const GroupSource& src, const LaunchSlots& slots, cudaStream_t stream) {
  const std::string kind = env::get_string("SYMMOE_GEMM_SWAPAB_SCHEDULE");
  if (kind == "split" || (kind == "auto" && swapab_split_by_default(src.expected_m, src.groups, src.n, slots.sm_count))) {
    return SplitFamily::launch(src, slots, stream, ScheduleKind::kDynamic);
  }
  const ScheduleKind schedule = kind == "dynamic" ? ScheduleKind::kDynamic
                                : kind == "static" ? ScheduleKind::kStatic
                                                   : ScheduleKind::kAuto;
  const int64_t kd = env::get_int("SYMMOE_GEMM_SWAPAB_KBLOCKS");
  SYMMOE_CHECK(kd == 1 || kd == 2 || kd == 4, "SYMMOE_GEMM_SWAPAB_KBLOCKS = ", kd, ": 1, 2 or 4");
  if (kd == 4) return Family<4>::launch(src, slots, stream, schedule);
  if (kd == 2) return Family<2>::launch(src, slots, stream, schedule);
  return Family<1>::launch(src, slots, stream, schedule);
}

void append_kernels(std::vector<runtime::KernelEntry>& out) {
  const std::string prefix = "sm90_grouped_gemm_fp8_swapab_";
  Family<1>::append(out, prefix, "_k1");
  Family<2>::append(out, prefix, "_k2");
  Family<4>::append(out, prefix, "_k4");
  SplitFamily::append(out, prefix + "split_", "");
}

}  // namespace

}  // namespace symmoe::gemm::sm90::swapab

namespace symmoe::gemm::sm90 {

const ConfigOps& fp8_swapab_ops() {
  static const ConfigOps ops{describe_tile(GemmDtype::kFP8E4M3, GemmTile::kSwapAB), &wgmma_frame::no_workspace,
                             &swapab::launch, &swapab::append_kernels};
  return ops;
}

}  // namespace symmoe::gemm::sm90
