// Grouped GEMM, fp8 with DeepSeek-V3 block scales, large M: our own warp-specialized,
// persistent wgmma/TMA kernel (no CUTLASS).
//
// NOTE [fp8 wgmma kernel]: a CTA of three warpgroups runs one 128 x kBN output tile at a time,
// over every expert's tiles in one persistent grid:
//  - tiles: expert e has ceil(counts[e] / 128) x (N / kBN) tiles; each CTA builds the prefix
//    of tiles per expert in shared memory from the device-resident row tables (no argument
//    builder, no host copy: graph-safe) and takes tiles blockIdx.x, + gridDim.x, ...; within an
//    expert, bands of kBand N-tiles are walked row of tiles by row of tiles, so CTAs running
//    together share weight tiles (down M) and activation tiles (across the band) in L2;
//  - operands: one 2-D tensor map over all activation rows ([rows, K], box 128 x 128) and one
//    over all weights ([E * N, K], box kBN x 128), 128-byte swizzle. A tile that runs past its
//    expert's rows reads the next expert's rows (or zeros past the tensor): those rows are
//    never stored, and their activation scales are not read (zero);
//  - warpgroup 0, one thread: the producer. kStages shared-memory stages of (128 x 128 act,
//    kBN x 128 weights); stage s is refilled once both consumer warpgroups released it;
//  - warpgroups 1 and 2: consumers, rows 0-63 and 64-127 of the tile. Per 128-wide K block:
//    four wgmma m64nkBNk32 into `part` (the first overwrites), wait, release the stage, then
//    acc += part * (activation scale of the row * weight scale of the block) in fp32 — the
//    recipe's promotion once per scale block. One warpgroup's promotion runs while the other's
//    wgmmas keep the tensor cores busy. Scales for block kb + 1 are loaded while block kb's
//    wgmmas run (L2-resident: [rows, K / 128] and [E, N / 128, K / 128] fp32);
//  - epilogue: bf16 straight from the accumulators to global memory, rows past counts[e]
//    not written.
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "grouped_gemm_rows.cuh"
#include "sm90_grouped_gemm_launch.hpp"
#include "sm90_tma_wgmma.cuh"
#include "sm90_wgmma_fp8_ops.cuh"
#include "symmoe/core/cuda_driver.hpp"
#include "symmoe/core/error.hpp"
#include "symmoe/runtime/device_runtime.hpp"

namespace symmoe::gemm::sm90 {

namespace {

constexpr int kBM = 128;       // tile rows: two consumer warpgroups of 64
constexpr int kBK = 128;       // = kFp8ScaleBlock: one promotion per K block; one 128-byte swizzled row
constexpr int kThreads = 384;  // producer warpgroup + 2 consumer warpgroups
constexpr int kMaxSmem = 232448;  // SM90 opt-in shared memory per block
constexpr int kProducerRegs = 40;
constexpr int kConsumerRegs = 232;

template <int kBN_, int kStages_>
struct WgmmaShape {
  static constexpr int kBN = kBN_;
  static constexpr int kStages = kStages_;
  static constexpr int kABytes = kBM * kBK;
  static constexpr int kBBytes = kBN * kBK;
  static constexpr int kBand = 8;  // N-tiles walked together (L2 reuse of activation tiles)
  // [kStages x A][kStages x B][kStages full bars][kStages empty bars][tile prefix: E + 1 ints]
  static constexpr int kFixedBytes = kStages * (kABytes + kBBytes) + 2 * 8 * kStages;
  static constexpr int smem_bytes(int groups) { return 1024 + kFixedBytes + 4 * (groups + 1); }
  static constexpr int max_groups() { return (kMaxSmem - 1024 - kFixedBytes) / 4 - 1; }
};

struct WgmmaParams {
  GroupSource src;
  device::StatusBlock* status;
  uint64_t timeout_ns;
};

// Where tile t of the CTA's sequence is: expert e (found by a forward scan of the prefix: a
// CTA's tiles only move forward), its row block and N block.
struct TilePos {
  int e, mb, nb;
};

template <class Shape>
SYMMOE_DEVICE TilePos locate_tile(const int* tile_start, int groups, int n_blocks, int t, int& e_hint) {
  int e = e_hint;
  while (e + 1 < groups && tile_start[e + 1] <= t) ++e;
  e_hint = e;
  const int local = t - tile_start[e];
  const int m_blocks = (tile_start[e + 1] - tile_start[e]) / n_blocks;
  const int band = local / (Shape::kBand * m_blocks);
  const int in_band = local - band * Shape::kBand * m_blocks;
  const int width = min(Shape::kBand, n_blocks - band * Shape::kBand);
  return TilePos{e, in_band / width, band * Shape::kBand + in_band % width};
}

template <class Shape>
__global__ void __launch_bounds__(kThreads, 1)
    sm90_grouped_gemm_fp8_wgmma_kernel(const __grid_constant__ CUtensorMap map_act,
                                       const __grid_constant__ CUtensorMap map_weights, const WgmmaParams p) {
  constexpr int kBN = Shape::kBN, kStages = Shape::kStages;
  static_assert(kBN % 64 == 0 && 128 % kBN == 0, "a tile's columns must lie in one 128-row weight scale block");
  const GroupSource& src = p.src;
  const int groups = src.groups;
  const int n_blocks = src.n / kBN;
  const int kblocks = src.k / kBK;

  extern __shared__ uint8_t smem_raw[];
  uint8_t* smem = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(smem_raw) + 1023) & ~uintptr_t{1023});
  uint8_t* smem_a = smem;
  uint8_t* smem_b = smem + kStages * Shape::kABytes;
  auto* full = reinterpret_cast<uint64_t*>(smem_b + kStages * Shape::kBBytes);
  uint64_t* empty = full + kStages;
  auto* tile_start = reinterpret_cast<int*>(empty + kStages);

  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  // Tiles per expert, then their prefix (warp 0). Invalid row tables count 0 rows; CTA 0
  // reports them.
  for (int e = tid; e < groups; e += kThreads) {
    const GroupRows rows = resolve_group_rows(src, e, p.status, blockIdx.x == 0, "grouped_gemm_fp8_wgmma");
    tile_start[e + 1] = (rows.count + kBM - 1) / kBM * n_blocks;
  }
  if (tid == 0) {
    tma::prefetch_map(&map_act);
    tma::prefetch_map(&map_weights);
    for (int s = 0; s < kStages; ++s) {
      device::bulk::mbarrier_init(&full[s], 1);
      device::bulk::mbarrier_init(&empty[s], 2 * 4);  // one arrival per consumer warp
    }
    device::bulk::fence_mbarrier_init();
  }
  __syncthreads();
  if (warp == 0) {
    int carry = 0;
    for (int base = 0; base < groups; base += 32) {
      const int e = base + lane;
      int v = e < groups ? tile_start[e + 1] : 0;
#pragma unroll
      for (int d = 1; d < 32; d *= 2) {
        const int u = __shfl_up_sync(0xffffffffu, v, d);
        if (lane >= d) v += u;
      }
      if (e < groups) tile_start[e + 1] = carry + v;
      carry += __shfl_sync(0xffffffffu, v, 31);
    }
    if (lane == 0) tile_start[0] = 0;
  }
  __syncthreads();
  const int total_tiles = tile_start[groups];
  const device::WaitContext ctx{p.status, p.timeout_ns, "grouped_gemm_fp8_wgmma"};

  if (warp < 4) {
    // Producer warpgroup: one thread issues every copy.
    tma::regs_dec<kProducerRegs>();
    if (tid != 0) return;
    int s = 0, e_hint = 0;
    uint32_t phase = 0;
    for (int t = blockIdx.x; t < total_tiles; t += gridDim.x) {
      const TilePos pos = locate_tile<Shape>(tile_start, groups, n_blocks, t, e_hint);
      const GroupRows rows = resolve_group_rows(src, pos.e, nullptr, false, "");
      const auto a_row = static_cast<int32_t>(rows.row0 + int64_t{pos.mb} * kBM);
      const auto b_row = static_cast<int32_t>(int64_t{pos.e} * src.n + int64_t{pos.nb} * kBN);
      for (int kb = 0; kb < kblocks; ++kb) {
        if (!tma::mbarrier_wait(&empty[s], phase ^ 1, ctx, "gemm_stage_free", s)) return;
        device::bulk::mbarrier_arrive_expect_tx(&full[s], Shape::kABytes + Shape::kBBytes);
        tma::load_2d(smem_a + s * Shape::kABytes, &map_act, kb * kBK, a_row, &full[s]);
        tma::load_2d(smem_b + s * Shape::kBBytes, &map_weights, kb * kBK, b_row, &full[s]);
        if (++s == kStages) {
          s = 0;
          phase ^= 1;
        }
      }
    }
    return;
  }

  // Consumers: warpgroup wg (0, 1) owns tile rows 64 wg .. 64 wg + 63; this thread rows
  // r and r + 8 with r = 64 wg + 16 (warp % 4) + lane / 4.
  tma::regs_inc<kConsumerRegs>();
  const int wg = warp / 4 - 1;
  const int r_in_tile = 64 * wg + 16 * (warp % 4) + lane / 4;
  const int col_in_tile = 2 * (lane % 4);
  float acc[kBN / 2], part[kBN / 2];
  int s = 0, e_hint = 0;
  uint32_t phase = 0;
  const int64_t scale_cols = kblocks;
  auto* out = static_cast<__nv_bfloat16*>(src.out);
  for (int t = blockIdx.x; t < total_tiles; t += gridDim.x) {
    const TilePos pos = locate_tile<Shape>(tile_start, groups, n_blocks, t, e_hint);
    const GroupRows rows = resolve_group_rows(src, pos.e, nullptr, false, "");
    const int r_lo = pos.mb * kBM + r_in_tile, r_hi = r_lo + 8;  // rows within the expert
    const float* sa_lo = r_lo < rows.count ? src.act_scales + (rows.row0 + r_lo) * scale_cols : nullptr;
    const float* sa_hi = r_hi < rows.count ? src.act_scales + (rows.row0 + r_hi) * scale_cols : nullptr;
    const float* sb = src.weight_scales +
                      (int64_t{pos.e} * (src.n / kBK) + int64_t{pos.nb} * kBN / kBK) * scale_cols;
#pragma unroll
    for (int i = 0; i < kBN / 2; ++i) acc[i] = 0.f;
    float a_lo = sa_lo != nullptr ? __ldg(sa_lo) : 0.f;
    float a_hi = sa_hi != nullptr ? __ldg(sa_hi) : 0.f;
    float b = __ldg(sb);
    for (int kb = 0; kb < kblocks; ++kb) {
      if (!tma::mbarrier_wait(&full[s], phase, ctx, "gemm_stage_full", s)) return;
      const uint64_t da = wgmma::desc_k_major_sw128(smem_a + s * Shape::kABytes + wg * 64 * kBK);
      const uint64_t db = wgmma::desc_k_major_sw128(smem_b + s * Shape::kBBytes);
      wgmma::fence();
#pragma unroll
      for (int k = 0; k < kBK / 32; ++k) {
        if constexpr (kBN == 128) wgmma::mma_m64n128k32_e4m3(part, da + 2 * k, db + 2 * k, k);
        else if constexpr (kBN == 192) wgmma::mma_m64n192k32_e4m3(part, da + 2 * k, db + 2 * k, k);
        else wgmma::mma_m64n64k32_e4m3(part, da + 2 * k, db + 2 * k, k);
      }
      wgmma::commit();
      // Next block's scales while the wgmmas run.
      const bool more = kb + 1 < kblocks;
      const float a_lo_next = more && sa_lo != nullptr ? __ldg(sa_lo + kb + 1) : 0.f;
      const float a_hi_next = more && sa_hi != nullptr ? __ldg(sa_hi + kb + 1) : 0.f;
      const float b_next = more ? __ldg(sb + kb + 1) : 0.f;
      wgmma::wait<0>();
      wgmma::fence_operands(part);
      if (lane == 0) tma::mbarrier_arrive(&empty[s]);
      const float lo = a_lo * b, hi = a_hi * b;
#pragma unroll
      for (int j = 0; j < kBN / 8; ++j) {
        acc[4 * j + 0] += part[4 * j + 0] * lo;
        acc[4 * j + 1] += part[4 * j + 1] * lo;
        acc[4 * j + 2] += part[4 * j + 2] * hi;
        acc[4 * j + 3] += part[4 * j + 3] * hi;
      }
      a_lo = a_lo_next;
      a_hi = a_hi_next;
      b = b_next;
      if (++s == kStages) {
        s = 0;
        phase ^= 1;
      }
    }
    // Epilogue: bf16 pairs, rows past the expert's count not written.
    const int64_t col0 = int64_t{pos.nb} * kBN + col_in_tile;
    if (r_lo < rows.count) {
      auto* o = reinterpret_cast<__nv_bfloat162*>(out + (rows.row0 + r_lo) * src.n + col0);
#pragma unroll
      for (int j = 0; j < kBN / 8; ++j) o[4 * j] = __floats2bfloat162_rn(acc[4 * j + 0], acc[4 * j + 1]);
    }
    if (r_hi < rows.count) {
      auto* o = reinterpret_cast<__nv_bfloat162*>(out + (rows.row0 + r_hi) * src.n + col0);
#pragma unroll
      for (int j = 0; j < kBN / 8; ++j) o[4 * j] = __floats2bfloat162_rn(acc[4 * j + 2], acc[4 * j + 3]);
    }
  }
}

// 2-D tensor map over a row-major [rows, k] e4m3 matrix, boxes of box_rows x 128 bytes,
// 128-byte swizzle (the layout desc_k_major_sw128 describes).
CUtensorMap make_operand_map(const void* base, int64_t rows, int64_t k, int box_rows, const char* what) {
  SYMMOE_CHECK(rows <= INT32_MAX, "grouped GEMM (fp8 wgmma): ", what, " has ", rows,
               " rows; tensor-map coordinates are 32-bit");
  const DriverApi& drv = driver();
  CUtensorMap map{};
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(k), static_cast<cuuint64_t>(rows)};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(k)};
  const cuuint32_t box[2] = {static_cast<cuuint32_t>(kBK), static_cast<cuuint32_t>(box_rows)};
  const cuuint32_t elem_strides[2] = {1, 1};
  const CUresult rc = drv.cuTensorMapEncodeTiled(
      &map, CU_TENSOR_MAP_DATA_TYPE_UINT8, 2, const_cast<void*>(base), dims, strides, box, elem_strides,
      CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
      CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  SYMMOE_CHECK(rc == CUDA_SUCCESS, "grouped GEMM (fp8 wgmma): cuTensorMapEncodeTiled for ", what, " failed (CUresult ",
               static_cast<int>(rc), "; ", rows, " x ", k, " bytes at ", base, ")");
  return map;
}

template <class Shape>
struct WgmmaConfig {
  static constexpr auto kernel = &sm90_grouped_gemm_fp8_wgmma_kernel<Shape>;
  static cudaError_t launch(const GroupSource& src, const LaunchSlots& slots, cudaStream_t stream) {
    SYMMOE_CHECK(src.n % Shape::kBN == 0, "grouped GEMM (fp8 wgmma ", Shape::kBN, "-column tiles): N = ", src.n,
                 " must be a multiple of ", Shape::kBN);
    SYMMOE_CHECK(src.groups <= Shape::max_groups(), "grouped GEMM (fp8 wgmma): ", src.groups,
                 " experts; the tile table in shared memory holds at most ", Shape::max_groups());
    const int64_t rows = src.offsets == nullptr ? int64_t{src.groups} * src.max_m : src.total_rows;
    const CUtensorMap map_act = make_operand_map(src.act, rows, src.k, kBM, "activations");
    const CUtensorMap map_w = make_operand_map(src.weights, int64_t{src.groups} * src.n, src.k, Shape::kBN, "weights");
    const WgmmaParams params{src, slots.status, runtime::wait_timeout_ns()};
    const int grid = std::max(slots.sm_count, 1);
    kernel<<<grid, kThreads, Shape::smem_bytes(src.groups), stream>>>(map_act, map_w, params);
    return cudaGetLastError();
  }
};

using Shape128 = WgmmaShape<128, 6>;

WorkspaceBytes wgmma_workspace(int, int) { return {}; }

cudaError_t wgmma_launch(const GroupSource& src, const LaunchSlots& slots, cudaStream_t stream) {
  return WgmmaConfig<Shape128>::launch(src, slots, stream);
}

void wgmma_append_kernels(std::vector<runtime::KernelEntry>& out) {
  out.push_back({"sm90_grouped_gemm_fp8_wgmma_128x128", reinterpret_cast<const void*>(WgmmaConfig<Shape128>::kernel),
                 kMaxSmem, -1});
}

}  // namespace

const ConfigOps& fp8_wgmma_ops() {
  static const ConfigOps ops{describe_tile(GemmDtype::kFP8E4M3, GemmTile::kWgmma), &wgmma_workspace, &wgmma_launch,
                             &wgmma_append_kernels};
  return ops;
}

}  // namespace symmoe::gemm::sm90
