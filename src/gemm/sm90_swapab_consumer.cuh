// The fp8 swap-AB kernel's consumer warpgroups: the wgmmas of each stage, the promotion per
// 128-wide K block (NOTE [swap-AB overlapped promotion]) and the output stores. Private to src/gemm.
#pragma once

#include <cstdint>

#include "sm90_swapab_schedule.cuh"
#include "sm90_tma_wgmma.cuh"
#include "sm90_wgmma_fp8_ops.cuh"
#include "symmoe/device/ptx.cuh"

namespace symmoe::gemm::sm90::swapab {

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

}  // namespace symmoe::gemm::sm90::swapab
