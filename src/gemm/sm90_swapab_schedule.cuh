// The fp8 swap-AB kernel's schedule (NOTE [swap-AB schedule]): how a CTA takes its steps, the
// kernel's parameters, and the first steps the early launch fetches before the wait. Private to
// src/gemm.
#pragma once

#include <cstdint>

#include "sm90_swapab_layout.cuh"
#include "symmoe/device/status.cuh"

namespace symmoe::gemm::sm90::swapab {

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

}  // namespace symmoe::gemm::sm90::swapab
