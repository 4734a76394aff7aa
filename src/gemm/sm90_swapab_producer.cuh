// The fp8 swap-AB kernel's producer warp: the steps it takes, their tensor copies and scales.
// Private to src/gemm.
#pragma once

#include <cstdint>

#include "sm90_swapab_schedule.cuh"
#include "sm90_tma_wgmma.cuh"
#include "symmoe/device/bounded_wait.cuh"

namespace symmoe::gemm::sm90::swapab {

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

}  // namespace symmoe::gemm::sm90::swapab
