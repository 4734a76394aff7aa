// Grouped GEMM, fp8, decode sizes: a weight-streaming kernel of our own (mma.sync, no shared
// memory, no CUTLASS).
//
// NOTE [fp8 decode kernel]: with a few to 64 rows per expert the grouped GEMM is a stream of the
// experts' weights: each weight byte is read once and meets at most 64 activation rows, so the
// time is the weight bytes over the HBM rate plus whatever does not overlap with that stream.
// The kernel keeps the stream going from the first cycle to the last:
//  - no argument builder, no tile scheduler: a unit is (expert, 16 * kWarps weight rows); CTAs
//    take units in turn (grid stride), units of one expert next to each other so its activation
//    rows stay in L2; an expert with 0 rows costs one read of its count; the grid is sized so
//    that every CTA gets the same number of units, give or take one;
//  - each warp's load cursor runs kDepth K blocks ahead of its compute cursor across pass and
//    unit boundaries, so a CTA's stream does not drain between units;
//  - each warp owns 16 weight rows and streams them from global memory straight into mma.sync
//    fragments, kDepth 128-wide K blocks ahead (ld.global.nc without L1 allocation); the
//    activation fragments come through L1, shared by the CTA's warps;
//  - K permutation: m16n8k32's fragments give thread (g = lane / 4, t = lane % 4) the k-slots
//    4t..4t+3 and 16+4t..16+4t+3 of rows g and g+8 of A and of column g of B. The dot product
//    does not depend on the order of k, so the i-th mma of a 128-wide K block maps k-slot
//    4t + j to k = 32t + 8i + j and 16 + 4t + j to k = 32t + 8i + 4 + j, for both operands:
//    thread (g, t) then needs bytes [32t, 32t + 32) of each of its rows — two 16-byte loads
//    per row and operand, no shuffles, no ldmatrix;
//  - fp32 promotion per 128-wide K block: the block's 4 mmas accumulate from zero, then
//    acc += part * (weight scale of the 128-row block * activation scale of the row);
//  - rows of an expert beyond 8 * kTokenTiles are done in further passes over its weights
//    (correct for any count; kTokenTiles follows the rows the caller expects, up to 4).
// No longer chosen by choose_tile: the swap-AB kernel (NOTE [fp8 swap-AB kernel]) streams the
// weights by TMA into the native fp8 wgmma and leads it at every measured size; it stays
// selectable (GemmTile::kDecode, --tile decode). Before, it was used up to 8 rows per expert
// where CUTLASS's 64x128 tiles would take fewer than 4 waves. On SM90, mma.sync with e4m3 operands is not a native
// tensor-core op — ptxas unpacks both operands to f16 (F2FP, a quarter-rate pipe) and issues
// HMMA.16816 — which caps this kernel near 130 TFLOPS and makes it sensitive to the SM clock:
// at 8 rows it leads where CUTLASS's fixed costs and wave quantization dominate (8 experts:
// 85 vs 78 % of the copy rate on gate/up, 73 vs 63 % on down), is level at 32 experts (cool
// GPU) and falls behind on a GPU hot from large GEMMs (80 vs 91 %); from 16 rows on the wgmma
// tiles win. Unpacking the operands ourselves (weights with integer ops, activations with
// cvt, then HMMA) measured 3-5 points slower; prefetching the activation rows into L1 with the
// weight loads (prefetch.global.L1) changed nothing measurable (down at 8 experts: 72.7 vs
// 72.8 %). Balancing the SMs' loads did not close the gap on down at 8 experts (448 units of
// 128 rows: two CTAs per SM get 4 units on 92 SMs and 2 on 40): one CTA per SM of 4 lanes of
// 64-row units (every SM 6 or 7 units) gave 71-72 % against 74 % in the same run, and every
// other case 1-4 points lower (activation rows shared by 4 warps instead of 8); with N = 8448
// (528 units: exactly 4 per SM) the present kernel reaches 78 %, so even a perfect balance
// leaves ~9 us of ramp and per-row access cost at this size
// (bench/results/gemm_decode_lanes_h200.log). Measured in `symmoe bench gemm --tile decode|small`.
#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "grouped_gemm_rows.cuh"
#include "sm90_grouped_gemm_launch.hpp"
#include "symmoe/device/ptx.cuh"

namespace symmoe::gemm::sm90 {

namespace {

constexpr int kKBlock = 128;  // = kFp8ScaleBlock: one promotion per K block

SYMMOE_DEVICE void mma_e4m3_16x8x32(float (&d)[4], uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3, uint32_t b0,
                                    uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

// One K block of a warp's 16 weight rows: q[0], q[1] = bytes [32t, 32t + 32) of row g;
// q[2], q[3] = the same bytes of row g + 8.
struct WeightFrag {
  uint4 q[4];
};

SYMMOE_DEVICE void load_weights(WeightFrag& f, const uint8_t* row_g, int64_t k, int kb) {
  const uint8_t* p = row_g + static_cast<int64_t>(kb) * kKBlock;
  f.q[0] = device::ptx::ld_nc_na_v4(p);
  f.q[1] = device::ptx::ld_nc_na_v4(p + 16);
  f.q[2] = device::ptx::ld_nc_na_v4(p + 8 * k);
  f.q[3] = device::ptx::ld_nc_na_v4(p + 8 * k + 16);
}

SYMMOE_DEVICE uint32_t word(const uint4& v, int i) { return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w; }

// Where a warp is in its sequence of K blocks: unit u (an expert; the warp's weight rows
// n0..n0+15), pass c0 (rows c0 .. c0 + 8 * kTokenTiles - 1 of the expert), K block s.
struct DecodePos {
  int64_t u;
  const uint8_t* wrow;  // weights of row n0 + g, bytes from 32t: K block kb at + kb * 128
  const float* wscale;  // weight scales of the 128-row block of n0: [K / 128]
  const float* ascale;  // the expert's activation scales: row r, K block kb at act_scale.index(0, r, kb)
  int64_t row0;
  int n0, count, c0, s;
};

template <int kTokenTiles, int kWarps, int kDepth>
__global__ void __launch_bounds__(kWarps * 32) sm90_grouped_gemm_fp8_decode_kernel(GroupSource src,
                                                                                   device::StatusBlock* status) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int g = lane >> 2, t = lane & 3;
  const int64_t k = src.k;
  const int kblocks = src.k / kKBlock;
  const int row_blocks = src.n / (16 * kWarps);
  const int64_t units = static_cast<int64_t>(row_blocks) * src.groups;
  const auto* act = static_cast<const uint8_t*>(src.act);
  const auto* weights = static_cast<const uint8_t*>(src.weights);
  auto* out = static_cast<__nv_bfloat16*>(src.out);

  // The CTA's units are blockIdx.x + i * gridDim.x; units of experts without rows are skipped.
  // Only the compute cursor reports invalid row tables (once per expert: its row block 0).
  auto enter_unit = [&](DecodePos& p, int64_t u, bool report) {
    for (; u < units; u += gridDim.x) {
      const int e = static_cast<int>(u / row_blocks), rb = static_cast<int>(u % row_blocks);
      const GroupRows rows =
          resolve_group_rows(src, e, status, report && rb == 0 && threadIdx.x == 0, "grouped_gemm_fp8_decode");
      if (rows.count == 0) continue;
      p.u = u;
      p.n0 = (rb * kWarps + warp) * 16;
      p.row0 = rows.row0;
      p.count = rows.count;
      p.c0 = 0;
      p.s = 0;
      p.wrow = weights + (static_cast<int64_t>(e) * src.n + p.n0 + g) * k + 32 * t;
      p.wscale = src.weight_scales + (static_cast<int64_t>(e) * (src.n / kKBlock) + p.n0 / kKBlock) * kblocks;
      p.ascale = src.act_scales + src.act_scale.index(e, 0, 0);
      return;
    }
    p.u = units;
  };
  auto advance = [&](DecodePos& p, bool report) {
    if (++p.s < kblocks) return;
    p.s = 0;
    p.c0 += 8 * kTokenTiles;
    if (p.c0 < p.count) return;
    enter_unit(p, p.u + gridDim.x, report);
  };

  DecodePos ld, cp;  // the load cursor runs kDepth K blocks ahead of the compute cursor
  enter_unit(ld, blockIdx.x, false);
  enter_unit(cp, blockIdx.x, true);
  WeightFrag wf[kDepth];
#pragma unroll
  for (int d = 0; d < kDepth; ++d) {
    if (ld.u < units) {
      load_weights(wf[d], ld.wrow, k, ld.s);
      advance(ld, false);
    }
  }
  float acc[kTokenTiles][4];
#pragma unroll
  for (int j = 0; j < kTokenTiles; ++j) acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.f;

  while (cp.u < units) {
#pragma unroll
    for (int d = 0; d < kDepth; ++d) {
      if (cp.u >= units) break;
      const int kb = cp.s;
      // Rows c0 + 8j + g (fragments) and c0 + 8j + 2t + h (scales); rows past the count are
      // not read (zero fragments and scales) and not stored.
      const int live = cp.count - cp.c0;
      const uint8_t* arow = act + (cp.row0 + cp.c0 + g) * k + 32 * t + static_cast<int64_t>(kb) * kKBlock;
      const int64_t s_row = src.act_scale.row_stride;
      const float* srow = cp.ascale + src.act_scale.index(0, cp.row0 + cp.c0 + 2 * t, kb);
      uint4 aq[kTokenTiles][2];
#pragma unroll
      for (int j = 0; j < kTokenTiles; ++j) {
        aq[j][0] = aq[j][1] = make_uint4(0, 0, 0, 0);
        if (8 * j + g < live) {
          const uint4* p = reinterpret_cast<const uint4*>(arow + 8 * j * k);
          aq[j][0] = __ldg(p);
          aq[j][1] = __ldg(p + 1);
        }
      }
      const float sw = __ldg(cp.wscale + kb);
      float scale[kTokenTiles][2];
#pragma unroll
      for (int j = 0; j < kTokenTiles; ++j) {
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          scale[j][h] = 8 * j + 2 * t + h < live ? sw * __ldg(srow + (8 * j + h) * s_row) : 0.f;
        }
      }
      float part[kTokenTiles][4];
#pragma unroll
      for (int j = 0; j < kTokenTiles; ++j) part[j][0] = part[j][1] = part[j][2] = part[j][3] = 0.f;
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        // mma i covers k = 32t + 8i .. 32t + 8i + 7: 16-byte half i / 2, words 2 (i % 2), +1.
        const int h = i >> 1, w0 = 2 * (i & 1);
        const uint32_t a0 = word(wf[d].q[h], w0), a2 = word(wf[d].q[h], w0 + 1);
        const uint32_t a1 = word(wf[d].q[2 + h], w0), a3 = word(wf[d].q[2 + h], w0 + 1);
#pragma unroll
        for (int j = 0; j < kTokenTiles; ++j) {
          mma_e4m3_16x8x32(part[j], a0, a1, a2, a3, word(aq[j][h], w0), word(aq[j][h], w0 + 1));
        }
      }
#pragma unroll
      for (int j = 0; j < kTokenTiles; ++j) {
        acc[j][0] += part[j][0] * scale[j][0];
        acc[j][1] += part[j][1] * scale[j][1];
        acc[j][2] += part[j][2] * scale[j][0];
        acc[j][3] += part[j][3] * scale[j][1];
      }
      if (ld.u < units) {  // refill the slot just consumed: the stream runs on across units
        load_weights(wf[d], ld.wrow, k, ld.s);
        advance(ld, false);
      }
      if (cp.s == kblocks - 1) {
        // End of a pass. acc[j]: rows n0 + g (0, 1) and n0 + g + 8 (2, 3) of W; rows c0 + 8j + 2t
        // (0, 2) and + 1 (1, 3) of the expert.
#pragma unroll
        for (int j = 0; j < kTokenTiles; ++j) {
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            const int tok = cp.c0 + 8 * j + 2 * t + h;
            if (tok >= cp.count) continue;
            __nv_bfloat16* o = out + (cp.row0 + tok) * src.n + cp.n0 + g;
            o[0] = __float2bfloat16_rn(acc[j][h]);
            o[8] = __float2bfloat16_rn(acc[j][2 + h]);
          }
          acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.f;
        }
      }
      advance(cp, true);
    }
  }
}

// kTokenTiles (8 rows each) for the rows per expert the caller expects; more rows take more
// passes. A unit is 16 * kWarps weight rows (the warps share the activation rows through L1);
// kDepth K blocks per warp in flight.
template <int kTokenTiles>
struct DecodeShape {
  // Measured on the H200 at M = 8 (node to node): 8 warps x 4 K blocks beat 4 x 4 (1-3 points),
  // 4 x 8 (registers: 10-20 points lower), units of 16 rows dealt to warps (1-5 points lower on
  // down) and K split across the warps of a CTA (reduced through shared memory: 6-8 lower).
  static constexpr int kWarps = 8;
  static constexpr int kDepth = 4;
  static constexpr auto kernel = &sm90_grouped_gemm_fp8_decode_kernel<kTokenTiles, kWarps, kDepth>;
  static int ctas_per_sm() {
    static const int n = [] {
      int blocks = 0;
      if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, kWarps * 32, 0) != cudaSuccess) {
        cudaGetLastError();
        blocks = 1;
      }
      return std::max(blocks, 1);
    }();
    return n;
  }
  // As many CTAs as fit in the SM budget, then as few as keep the most loaded CTA at the same
  // number of units (every CTA gets that number or one less: no CTA streams alone at the end).
  static cudaError_t launch(const GroupSource& src, const LaunchSlots& slots, cudaStream_t stream) {
    const int64_t units = static_cast<int64_t>(src.n / (16 * kWarps)) * src.groups;
    const int64_t fit = std::max<int64_t>(static_cast<int64_t>(slots.sm_count) * ctas_per_sm(), 1);
    const int64_t per_cta = (units + fit - 1) / fit;
    const int64_t grid = std::max<int64_t>((units + per_cta - 1) / per_cta, 1);
    kernel<<<static_cast<unsigned>(grid), kWarps * 32, 0, stream>>>(src, slots.status);
    return cudaGetLastError();
  }
};

WorkspaceBytes decode_workspace(int, int) { return {}; }

cudaError_t decode_launch(const GroupSource& src, const LaunchSlots& slots, cudaStream_t stream) {
  const int m = std::max(src.expected_m, 1);
  if (m <= 8) return DecodeShape<1>::launch(src, slots, stream);
  if (m <= 16) return DecodeShape<2>::launch(src, slots, stream);
  return DecodeShape<4>::launch(src, slots, stream);
}

template <int kTokenTiles>
void append_decode_kernel(std::vector<runtime::KernelEntry>& out) {
  static const std::string name = "sm90_grouped_gemm_fp8_decode_m" + std::to_string(8 * kTokenTiles);
  out.push_back({name.c_str(), reinterpret_cast<const void*>(DecodeShape<kTokenTiles>::kernel), 0, -1});
}

void decode_append_kernels(std::vector<runtime::KernelEntry>& out) {
  append_decode_kernel<1>(out);
  append_decode_kernel<2>(out);
  append_decode_kernel<4>(out);
}

}  // namespace

const ConfigOps& fp8_decode_ops() {
  static const ConfigOps ops{describe_tile(GemmDtype::kFP8E4M3, GemmTile::kDecode), &decode_workspace, &decode_launch,
                             &decode_append_kernels};
  return ops;
}

}  // namespace symmoe::gemm::sm90
