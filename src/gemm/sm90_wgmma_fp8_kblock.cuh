// The fp8 wgmma consumers' K-block steps (NOTE [fp8 wgmma kernel], sm90_grouped_gemm_fp8_wgmma_kernels.cu):
// a K block's stage wait with its descriptors and scales, its wgmmas (A from shared memory or
// from registers) and the compile-time batch loop the mainloops unroll with. Private to src/gemm.
#pragma once

#include <cstdint>
#include <utility>

#include "sm90_grouped_gemm_wgmma_frame.cuh"
#include "sm90_wgmma_fp8_ops.cuh"

namespace symmoe::gemm::sm90::wgmma_frame {

// How a shape's wgmmas take A (WgmmaShape::kAFrags, NOTE [overlapped promotion]).
enum AFrags : int { kAFragsNone = 0, kAFragsPerBlock = 1, kAFragsShared = 2 };

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
                                 int wg, int scale_row, int kb, bool probed = false) {
  tma::wait_unless_probed(probed, &sm.full[s], phase, ok, ctx, "gemm_stage_full", s);
  return KBlock{stage_desc<Shape>(sm.a, sm.b, s, wg),
                stage_scales<Shape>(sm.scales, s, kb % Shape::kScaleCols, scale_row)};
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

// f(std::integral_constant<int, b>) for b = 0 .. kN - 1, in order.
template <int kN, class F>
SYMMOE_DEVICE void for_each_batch(F&& f) {
  [&]<int... kB>(std::integer_sequence<int, kB...>) { (f(std::integral_constant<int, kB>{}), ...); }(
      std::make_integer_sequence<int, kN>{});
}

}  // namespace symmoe::gemm::sm90::wgmma_frame
