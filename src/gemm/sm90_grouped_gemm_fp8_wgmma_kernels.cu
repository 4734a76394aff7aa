// Grouped GEMM, fp8 with DeepSeek-V3 block scales, large M: our own warp-specialized,
// persistent wgmma/TMA kernel (no CUTLASS).
//
// NOTE [fp8 wgmma kernel]: a CTA of three warpgroups runs one 128 x 256 output tile at a time,
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
//    copies the scales with cp.async (4 bytes each, zeros for rows past the expert's count) —
//    the [rows, K / 128] scale layout is strided, so no tensor copy fits it — and the stage's
//    full barrier waits for both (one expect-tx arrival + 32 cp.async arrivals);
//  - warpgroups 1 and 2: consumers, rows 0-63 and 64-127 of the tile. Default
//    (SYMMOE_GEMM_WGMMA_OVERLAP=2, NOTE [overlapped promotion]): per 128-wide K block four
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
#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "grouped_gemm_rows.cuh"
#include "sm90_grouped_gemm_launch.hpp"
#include "sm90_tma_wgmma.cuh"
#include "sm90_wgmma_fp8_ops.cuh"
#include "symmoe/core/cuda_driver.hpp"
#include "symmoe/core/env.hpp"
#include "symmoe/core/error.hpp"
#include "symmoe/device/grouped_gemm_tile_order.cuh"
#include "symmoe/device/ptx.cuh"
#include "symmoe/runtime/device_runtime.hpp"

namespace symmoe::gemm::sm90 {

namespace {

constexpr int kBM = 128;       // tile rows: two consumer warpgroups of 64
constexpr int kBK = 128;       // = kFp8ScaleBlock: one promotion per K block; one 128-byte swizzled row
constexpr int kThreads = 384;  // producer warpgroup + 2 consumer warpgroups
constexpr int kConsumerWarps = 8;
constexpr int kMaxSmem = 232448;  // SM90 opt-in shared memory per block
// setmaxnreg: the CTA starts with 168 registers per thread (65536 / 384, in steps of 8); the
// consumers' increase must be covered by what the producer warpgroup gives back, or
// setmaxnreg.inc waits for registers that never come (measured: 48 / 232 hangs).
constexpr int kLaunchRegs = 168;
constexpr int kProducerRegs = 40;
constexpr int kConsumerRegs = 232;
static_assert((kConsumerRegs - kLaunchRegs) * 256 <= (kLaunchRegs - kProducerRegs) * 128,
              "consumer registers must come from the producer warpgroup");

// A tile is kBatches column batches of kBatchN (128 x 2 or 192 x 1): the consumers run the
// wgmmas of one batch into `part` and promote it before the next, so registers hold
// kBN / 2 accumulators + kBatchN / 2 partial products per thread. A tile's columns meet two
// 128-wide weight-scale blocks (the 192-wide tiles start at 0 or 64 mod 128): batch b of a
// 256-wide tile is block b; the 192-wide batch switches block at column 128 - n0 % 128.
// kCluster CTAs (a 1-D cluster) run the tiles of kCluster consecutive row blocks of one column block together and share
// its weight tile (NOTE [wgmma weight multicast]).
// kOverlap > 0: NOTE [overlapped promotion] — batches of 64 (256-wide tiles) or 96 columns
// (192) into two partial-product buffers, each promoted while the next batch's wgmmas run;
// the wgmmas drain every kOverlap K blocks. kARegs: the activation fragments of a K block are
// loaded into registers once (ldmatrix) and every batch's wgmma takes A from there.
template <int kBN_, int kStages_, int kCluster_, bool kTmaStore_, int kOverlap_ = 0, bool kARegs_ = false>
struct WgmmaShape {
  static constexpr int kBN = kBN_;
  static constexpr int kOverlap = kOverlap_;
  static constexpr bool kARegs = kARegs_;
  static constexpr int kBatchN = kOverlap > 0 ? kBN / (kBN == 256 ? 4 : 2) : (kBN == 256 ? 128 : kBN);
  static constexpr int kBatches = kBN / kBatchN;
  static constexpr int kScaleBlocks = 2;  // weight-scale blocks a tile's columns meet
  static constexpr int kStages = kStages_;
  static constexpr int kCluster = kCluster_;
  static constexpr bool kTmaStore = kTmaStore_;
  static constexpr int kABytes = kBM * kBK;
  static constexpr int kBBytes = kBN * kBK;
  static constexpr int kBSliceRows = kBN / kCluster;  // weight rows each CTA of the cluster loads
  static constexpr int kOutBytes = kTmaStore ? kBM * kBN * 2 : 0;  // bf16 tile staged for tensor stores
  static constexpr int kScaleFloats = kBM + 4;  // 128 activation scales, 2 weight scales, padding
  static constexpr int kBand = 8;  // N-tiles walked together (L2 reuse of activation tiles)
  // [kStages x A][kStages x B][out tile][kStages x scales][kStages full bars][kStages empty bars]
  // [expert rows: E x (row0, count)][tile prefix: E + 1 ints]
  static constexpr int kFixedBytes =
      kStages * (kABytes + kBBytes + 4 * kScaleFloats) + kOutBytes + 2 * 8 * kStages;
  static constexpr int smem_bytes(int groups) { return 1024 + kFixedBytes + 8 * groups + 4 * (groups + 1); }
  static constexpr int max_groups() { return (kMaxSmem - 1024 - kFixedBytes - 4) / 12; }
  static_assert(kBN == 256 || kBN == 192, "128 x 256 or 128 x 192 tiles");
  static_assert(kCluster == 1 || kCluster == 2 || kCluster == 4, "cluster of 1, 2 or 4 CTAs");
  static_assert(kBSliceRows % 8 == 0 && (kBSliceRows * kBK) % 1024 == 0, "slices keep the swizzle period");
  static_assert(max_groups() >= 256, "room for the tile prefix of 256 experts");
  static_assert(kOverlap == 0 || kBatches % 2 == 0, "overlapped batches alternate between two buffers");
  static_assert(!kARegs || (kOverlap > 0 && kBatchN == 64),
                "activation fragments in registers: overlapped 64-column batches (each K block of a "
                "drain has its own fragments)");
};

struct WgmmaParams {
  GroupSource src;
  device::StatusBlock* status;
  uint64_t timeout_ns;
};

using device::GemmTilePos;

// The tile a CTA of the cluster runs for work unit `u`: units are numbered as tiles of
// kCluster-row-block height (NOTE [grouped GEMM tile order] over units); cluster rank r takes
// row block kCluster * unit row + r, which may lie past the expert's rows (then it loads and
// computes, stores nothing, and reads no scales).
template <class Shape>
SYMMOE_DEVICE GemmTilePos locate_tile(const int* tile_start, int groups, int n_blocks, int u, int rank, int& e_hint) {
  GemmTilePos pos = device::locate_gemm_tile(tile_start, groups, n_blocks, Shape::kBand, u, e_hint);
  pos.mb = pos.mb * Shape::kCluster + rank;
  return pos;
}

SYMMOE_DEVICE void advance_stage(int& s, uint32_t& phase, int stages) {
  if (++s == stages) {
    s = 0;
    phase ^= 1;
  }
}

// Shared-memory carve-up (NOTE [fp8 wgmma kernel]); the same offsets in every CTA of a
// cluster, which the weight multicast and the remote stage releases rely on.
template <class Shape>
struct Smem {
  uint8_t* a;
  uint8_t* b;
  uint8_t* out;
  float* scales;
  uint64_t* full;
  uint64_t* empty;
  int2* rows;  // per expert: first row in act / out, rows (0 for invalid tables)
  int* tile_start;
  SYMMOE_DEVICE Smem(uint8_t* base, int groups) {
    a = base;
    b = a + Shape::kStages * Shape::kABytes;
    out = b + Shape::kStages * Shape::kBBytes;
    scales = reinterpret_cast<float*>(out + Shape::kOutBytes);
    full = reinterpret_cast<uint64_t*>(scales + Shape::kStages * Shape::kScaleFloats);
    empty = full + Shape::kStages;
    rows = reinterpret_cast<int2*>(empty + Shape::kStages);
    tile_start = reinterpret_cast<int*>(rows + groups);
  }
  SYMMOE_DEVICE GroupRows expert_rows(int e) const {
    const int2 v = rows[e];
    return GroupRows{v.x, v.y};
  }
};

// This CTA's walk over the work units: cluster rank, first unit, stride (a CTA is a cluster of
// one when kCluster = 1). Every CTA of a cluster walks the same units.
template <class Shape>
struct UnitWalk {
  int rank, first, stride;
  SYMMOE_DEVICE UnitWalk()
      : rank(Shape::kCluster == 1 ? 0 : static_cast<int>(device::ptx::cluster_rank())),
        first(Shape::kCluster == 1 ? static_cast<int>(blockIdx.x) : static_cast<int>(device::ptx::cluster_id_x())),
        stride(Shape::kCluster == 1 ? static_cast<int>(gridDim.x) : static_cast<int>(device::ptx::cluster_count_x())) {}
};

// Producer warpgroup: thread 0 issues the tensor copies, warp 1 the scale copies; the other
// threads have nothing to do. Returns at the end of the work or on a failed wait.
template <class Shape>
SYMMOE_DEVICE void produce(const CUtensorMap& map_act, const CUtensorMap& map_weights, const GroupSource& src,
                           const Smem<Shape>& sm, int n_blocks, const device::WaitContext& ctx) {
  constexpr int kStages = Shape::kStages;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (threadIdx.x != 0 && warp != 1) return;
  const int kblocks = src.k / kBK;
  const UnitWalk<Shape> walk;
  int s = 0, e_hint = 0;
  uint32_t phase = 0;
  const int units = sm.tile_start[src.groups];  // read here: nothing stays live across setmaxnreg
  for (int u = walk.first; u < units; u += walk.stride) {
    const GemmTilePos pos = locate_tile<Shape>(sm.tile_start, src.groups, n_blocks, u, walk.rank, e_hint);
    const GroupRows rows = sm.expert_rows(pos.e);
    const int64_t m0 = int64_t{pos.mb} * kBM;  // first row of the tile within the expert
    const int64_t n0 = int64_t{pos.nb} * Shape::kBN;  // first column (weight row) of the tile
    const auto a_row = static_cast<int32_t>(rows.row0 + m0);
    const auto b_row = static_cast<int32_t>(int64_t{pos.e} * src.n + n0 + walk.rank * Shape::kBSliceRows);
    const int64_t nb0 = n0 / kBK;  // first weight-scale block of the tile
    const float* sb = src.weight_scales + (int64_t{pos.e} * (src.n / kBK) + nb0) * kblocks;
    for (int kb = 0; kb < kblocks; ++kb) {
      if (!tma::mbarrier_wait(&sm.empty[s], phase ^ 1, ctx, "gemm_stage_free", s)) return;
      if (warp == 0) {
        device::bulk::mbarrier_arrive_expect_tx(&sm.full[s], Shape::kABytes + Shape::kBBytes);
        tma::load_2d(sm.a + s * Shape::kABytes, &map_act, kb * kBK, a_row, &sm.full[s]);
        uint8_t* b_dst = sm.b + s * Shape::kBBytes + walk.rank * Shape::kBSliceRows * kBK;
        if constexpr (Shape::kCluster == 1) {
          tma::load_2d(b_dst, &map_weights, kb * kBK, b_row, &sm.full[s]);
        } else {
          tma::load_2d_multicast(b_dst, &map_weights, kb * kBK, b_row, &sm.full[s], (1u << Shape::kCluster) - 1);
        }
      } else {
        float* dst = sm.scales + s * Shape::kScaleFloats;
#pragma unroll
        for (int i = 0; i < kBM / 32; ++i) {
          const int r = 32 * i + lane;
          const bool live = m0 + r < rows.count;
          const float* p_src = src.act_scales + (live ? (rows.row0 + m0 + r) * kblocks + kb : 0);
          tma::cp_async_4(dst + r, p_src, live);
        }
        if (lane < Shape::kScaleBlocks) {
          tma::cp_async_4(dst + kBM + lane, sb + lane * kblocks + kb, (nb0 + lane) * kBK < src.n);
        }
        tma::cp_async_arrive_noinc(&sm.full[s]);
      }
      advance_stage(s, phase, kStages);
    }
  }
}

// The low descriptor words of stage s's operands for this warpgroup: its 64 activation rows
// and the stage's first weight row. Broadcast from lane 0, so ptxas knows them warp-uniform,
// moves them to uniform registers once per K block and derives every batch's and every
// wgmma's descriptor there (UIADD3), where per-thread values cost two R2UR per descriptor (and
// a shuffle per batch stalled each wgmma issue: SASS and Nsight Compute checked).
struct StageDesc {
  uint32_t a_lo, b_lo;
};

template <class Shape>
SYMMOE_DEVICE StageDesc stage_desc(const uint8_t* smem_a, const uint8_t* smem_b, int s, int wg) {
  return StageDesc{
      __shfl_sync(0xffffffffu, wgmma::desc_lo_k_major_sw128(smem_a + s * Shape::kABytes + wg * 64 * kBK), 0),
      __shfl_sync(0xffffffffu, wgmma::desc_lo_k_major_sw128(smem_b + s * Shape::kBBytes), 0)};
}

// One K block's scales for this thread: the activation scales of its rows (sa_lo, sa_hi) and
// the tile's two weight scales (w0, w1).
struct BlockScales {
  float sa_lo, sa_hi, w0, w1;
};

// The start of a K block in stage s for a consumer thread: waits for the stage (once a wait
// has failed, ok stays false and the thread goes on without waiting: NOTE [ordered wgmma
// issue]), then its descriptors and scales.
struct KBlock {
  StageDesc sd;
  BlockScales scales;
};

template <class Shape>
SYMMOE_DEVICE KBlock wait_kblock(const Smem<Shape>& sm, int s, uint32_t phase, bool& ok, const device::WaitContext& ctx,
                                 int wg, int r_in_tile) {
  if (ok) ok = tma::mbarrier_wait(&sm.full[s], phase, ctx, "gemm_stage_full", s);
  __syncwarp();
  const float* sc = sm.scales + s * Shape::kScaleFloats;
  return KBlock{stage_desc<Shape>(sm.a, sm.b, s, wg), BlockScales{sc[r_in_tile], sc[r_in_tile + 8], sc[kBM], sc[kBM + 1]}};
}

// The four wgmmas of one 128-wide K block into d (overwritten): this warpgroup's 64 activation
// rows x weight rows kBatchN b .. kBatchN (b + 1) - 1 of the stage described by sd. kSplit
// commits the last wgmma as a group of its own, so wgmma::wait<1> returns when only that one
// is left.
// The descriptor of batch b's weight rows (kBatchN b .. kBatchN (b + 1) - 1) in the stage.
template <class Shape>
SYMMOE_DEVICE uint64_t batch_desc_b(StageDesc sd, int b) {
  return wgmma::desc_from_lo(sd.b_lo + static_cast<uint32_t>(b * Shape::kBatchN * kBK / 16));
}

template <class Shape, bool kSplit>
SYMMOE_DEVICE void issue_block(float (&d)[Shape::kBatchN / 2], StageDesc sd, int b) {
  const uint64_t da = wgmma::desc_from_lo(sd.a_lo);
  const uint64_t db = batch_desc_b<Shape>(sd, b);
  wgmma::fence();
#pragma unroll
  for (int k = 0; k < kBK / 32; ++k) {
    if (kSplit && k == kBK / 32 - 1) wgmma::commit();
    if constexpr (Shape::kBatchN == 64) {
      wgmma::mma_m64n64k32_e4m3(d, da + 2 * k, db + 2 * k, k);
    } else if constexpr (Shape::kBatchN == 96) {
      wgmma::mma_m64n96k32_e4m3(d, da + 2 * k, db + 2 * k, k);
    } else if constexpr (Shape::kBatchN == 128) {
      wgmma::mma_m64n128k32_e4m3(d, da + 2 * k, db + 2 * k, k);
    } else {
      wgmma::mma_m64n192k32_e4m3(d, da + 2 * k, db + 2 * k, k);
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
  const uint64_t db = batch_desc_b<Shape>(sd, b);
  wgmma::fence();
#pragma unroll
  for (int k = 0; k < kBK / 32; ++k) wgmma::mma_m64n64k32_e4m3_rs(d, a[k], db + 2 * k, k);
  wgmma::commit();
}

SYMMOE_DEVICE uint32_t pack_bf16x2(float lo, float hi) {
  const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);  // lo in the low half
  return *reinterpret_cast<const uint32_t*>(&v);
}

// acc += part * scale over kJ 8-column groups: rows lo / hi take (lo0, hi0) below group kSplit
// and (lo1, hi1) from it on (the weight-scale block boundary).
template <int kJ, int kSplit>
SYMMOE_DEVICE void promote(float (&acc)[4 * kJ], const float (&part)[4 * kJ], float lo0, float hi0, float lo1,
                           float hi1) {
#pragma unroll
  for (int j = 0; j < kJ; ++j) {
    const float lo = j < kSplit ? lo0 : lo1, hi = j < kSplit ? hi0 : hi1;
    acc[4 * j + 0] += part[4 * j + 0] * lo;
    acc[4 * j + 1] += part[4 * j + 1] * lo;
    acc[4 * j + 2] += part[4 * j + 2] * hi;
    acc[4 * j + 3] += part[4 * j + 3] * hi;
  }
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

// f(std::integral_constant<int, b>) for b = 0 .. kN - 1, in order.
template <int kN, class F>
SYMMOE_DEVICE void for_each_batch(F&& f) {
  [&]<int... kB>(std::integer_sequence<int, kB...>) { (f(std::integral_constant<int, kB>{}), ...); }(
      std::make_integer_sequence<int, kN>{});
}

// The consumer's view of one output tile.
struct ConsumerTile {
  GroupRows rows;
  int m0;          // first row of the tile within the expert
  int r_lo, r_hi;  // this thread's rows within the expert
  int64_t n0;      // first column
  int batches;     // column batches that start inside N
};

template <class Shape>
SYMMOE_DEVICE ConsumerTile enter_tile(const GroupSource& src, const Smem<Shape>& sm, int n_blocks, int u, int rank,
                                      int& e_hint, int r_in_tile) {
  const GemmTilePos pos = locate_tile<Shape>(sm.tile_start, src.groups, n_blocks, u, rank, e_hint);
  ConsumerTile c;
  c.rows = sm.expert_rows(pos.e);
  c.m0 = pos.mb * kBM;
  c.r_lo = c.m0 + r_in_tile;
  c.r_hi = c.r_lo + 8;
  c.n0 = int64_t{pos.nb} * Shape::kBN;
  c.batches = static_cast<int>(std::min<int64_t>(Shape::kBatches, (src.n - c.n0 + Shape::kBatchN - 1) / Shape::kBatchN));
  return c;
}

// bf16 pairs of one column batch; rows past the expert's count and columns past N not written.
template <class Shape>
SYMMOE_DEVICE void store_batch(const float (&acc)[Shape::kBatchN / 2], const ConsumerTile& c, int b, int col_in_tile,
                               const GroupSource& src) {
  auto* out = static_cast<__nv_bfloat16*>(src.out);
  const int64_t col0 = c.n0 + Shape::kBatchN * b;
  // N is a multiple of 128, so only 192-wide tiles reach past N inside a batch.
  const int groups = Shape::kBatchN == 128 ? 16 : static_cast<int>(min(int64_t{Shape::kBatchN}, src.n - col0) / 8);
  if (c.r_lo < c.rows.count) {
    auto* o = reinterpret_cast<__nv_bfloat162*>(out + (c.rows.row0 + c.r_lo) * src.n + col0 + col_in_tile);
#pragma unroll
    for (int j = 0; j < Shape::kBatchN / 8; ++j) {
      if (j < groups) o[4 * j] = __floats2bfloat162_rn(acc[4 * j + 0], acc[4 * j + 1]);
    }
  }
  if (c.r_hi < c.rows.count) {
    auto* o = reinterpret_cast<__nv_bfloat162*>(out + (c.rows.row0 + c.r_hi) * src.n + col0 + col_in_tile);
#pragma unroll
    for (int j = 0; j < Shape::kBatchN / 8; ++j) {
      if (j < groups) o[4 * j] = __floats2bfloat162_rn(acc[4 * j + 2], acc[4 * j + 3]);
    }
  }
}

// NOTE [wgmma tensor-store epilogue]: with kTmaStore a warpgroup whose 64 rows all lie inside
// the expert stages its 64 x kBN bf16 block in shared memory (its own half of the out tile:
// blocks of 64 rows x 64 columns, 128-byte rows, 128-byte swizzle, written with
// stmatrix: the accumulator layout is stmatrix's fragment layout) and one thread stores it
// with tensor copies, columns past N clipped by the tensor map; the warpgroup goes on to the
// next tile while the copies run. Before the next staging the same thread waits until the
// copies have read the staging buffer (bulk_wait_read_all), and at the end until they have
// completed. A warpgroup with rows past the expert's count (the last row block of an expert)
// stores directly (store_batch): a tensor copy cannot stop at the count.
template <class Shape>
SYMMOE_DEVICE void store_tile_tma(const float (&acc)[Shape::kBatches][Shape::kBatchN / 2], const ConsumerTile& c,
                                  int wg, const CUtensorMap* map_out, uint8_t* out_stage, int src_n) {
  const int warp_in_wg = (threadIdx.x / 32) % 4, lane = threadIdx.x % 32;
  const bool leader = warp_in_wg == 0 && lane == 0;
  uint8_t* base = out_stage + wg * (64 * Shape::kBN * 2);
  if (leader) tma::bulk_wait_read_all();
  wg == 0 ? tma::named_sync<3>(128) : tma::named_sync<4>(128);
  // stmatrix .x4 over 16 rows x 16 columns: matrices (rows +0, cols +0), (rows +8, cols +0),
  // (rows +0, cols +8), (rows +8, cols +8); lane 8 k + i addresses row i of matrix k.
  const int k = lane / 8, i = lane % 8;
  const int row = 16 * warp_in_wg + i + 8 * (k & 1);
#pragma unroll
  for (int h = 0; h < Shape::kBatches; ++h) {
#pragma unroll
    for (int j = 0; j < Shape::kBatchN / 8; j += 2) {
      const int col = Shape::kBatchN * h + 8 * (j + (k >> 1));
      uint8_t* addr = base + (col / 64) * 8192 + row * 128 + ((((col % 64) / 8) ^ (row & 7)) * 16);
      const float* a = acc[h];
      tma::stmatrix_x4(addr, pack_bf16x2(a[4 * j + 0], a[4 * j + 1]),
                       pack_bf16x2(a[4 * j + 2], a[4 * j + 3]),
                       pack_bf16x2(a[4 * j + 4], a[4 * j + 5]),
                       pack_bf16x2(a[4 * j + 6], a[4 * j + 7]));
    }
  }
  tma::fence_proxy_async();
  wg == 0 ? tma::named_sync<3>(128) : tma::named_sync<4>(128);
  if (leader) {
    const auto row0 = static_cast<int32_t>(c.rows.row0 + c.m0 + 64 * wg);
#pragma unroll
    for (int b = 0; b < Shape::kBN / 64; ++b) {
      if (c.n0 + 64 * b >= src_n) break;  // wholly past N
      tma::store_2d(map_out, static_cast<int32_t>(c.n0 + 64 * b), row0, base + b * 8192);
    }
    tma::bulk_commit();
  }
}

// The end of a tile: tensor stores when the warpgroup's 64 rows all lie inside the expert,
// direct stores otherwise; nothing after a failed stage wait (ok false in any thread of the
// warpgroup, with tensor stores, whose staging synchronizes the warpgroup).
template <class Shape>
SYMMOE_DEVICE void store_tile(const float (&acc)[Shape::kBatches][Shape::kBatchN / 2], const ConsumerTile& tile, int wg,
                              bool ok, const CUtensorMap* map_out, uint8_t* out_stage, const GroupSource& src) {
  if constexpr (Shape::kTmaStore) {
    // store_tile_tma synchronizes the warpgroup: whether to store must be its common decision.
    const bool all_ok = wg == 0 ? tma::named_sync_and<3>(128, ok) : tma::named_sync_and<4>(128, ok);
    if (!all_ok) return;
  }
  if (!ok) return;
  if (Shape::kTmaStore && tile.m0 + 64 * (wg + 1) <= tile.rows.count) {
    store_tile_tma<Shape>(acc, tile, wg, map_out, out_stage, src.n);
    return;
  }
  const int col_in_tile = 2 * (threadIdx.x % 4);
#pragma unroll
  for (int h = 0; h < Shape::kBatches; ++h) {
    if (h > 0 && h >= tile.batches) break;
    store_batch<Shape>(acc[h], tile, h, col_in_tile, src);
  }
}

// Stage s is free again for this warp: one arrival on its empty barrier in every CTA of the
// cluster (their producers multicast into this CTA's stage s).
template <class Shape>
SYMMOE_DEVICE void release_stage(uint64_t* empty) {
  if constexpr (Shape::kCluster == 1) {
    tma::mbarrier_arrive(empty);
  } else {
#pragma unroll
    for (int c = 0; c < Shape::kCluster; ++c) tma::mbarrier_arrive_cluster(empty, c);
  }
}

// Consumer warpgroups: wg (0, 1) owns tile rows 64 wg .. 64 wg + 63; this thread rows r and
// r + 8 with r = 64 wg + 16 (warp % 4) + lane / 4.
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

// A consumer thread: warpgroup wg (0, 1) owns tile rows 64 wg .. 64 wg + 63; this thread rows
// r_in_tile and r_in_tile + 8; the warpgroup's first thread issues its tensor stores.
struct ConsumerThread {
  int lane, wg, r_in_tile;
  bool store_leader;
  SYMMOE_DEVICE ConsumerThread()
      : lane(static_cast<int>(threadIdx.x % 32)),
        wg(static_cast<int>(threadIdx.x / 128) - 1),
        r_in_tile(64 * wg + 16 * static_cast<int>(threadIdx.x / 32 % 4) + lane / 4),
        store_leader(threadIdx.x % 128 == 0) {}
};

template <int kRows, int kCols>
SYMMOE_DEVICE void zero(float (&a)[kRows][kCols]) {
#pragma unroll
  for (int h = 0; h < kRows; ++h) {
#pragma unroll
    for (int i = 0; i < kCols; ++i) a[h][i] = 0.f;
  }
}

template <class Shape, int kHandoff>
SYMMOE_DEVICE void consume(const GroupSource& src, const Smem<Shape>& sm, int n_blocks,
                           const CUtensorMap* map_out, const device::WaitContext& ctx) {
  constexpr int kBatches = Shape::kBatches, kStages = Shape::kStages;
  const ConsumerThread me;
  const int lane = me.lane, wg = me.wg, r_in_tile = me.r_in_tile;
  const int kblocks = src.k / kBK;
  const UnitWalk<Shape> walk;
  if (kHandoff != kFree && wg == 1) tma::named_arrive<1>(256);
  float acc[kBatches][Shape::kBatchN / 2], part[Shape::kBatchN / 2];
  int s = 0, e_hint = 0;
  uint32_t phase = 0;
  bool ok = true;
  const int units = sm.tile_start[src.groups];  // read here: nothing stays live across setmaxnreg
  for (int u = walk.first; u < units; u += walk.stride) {
    const ConsumerTile tile = enter_tile<Shape>(src, sm, n_blocks, u, walk.rank, e_hint, r_in_tile);
    zero(acc);
    for (int kb = 0; kb < kblocks; ++kb) {
      const KBlock blk = wait_kblock<Shape>(sm, s, phase, ok, ctx, wg, r_in_tile);
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
    store_tile<Shape>(acc, tile, wg, ok, map_out, sm.out, src);
  }
  if (Shape::kTmaStore && me.store_leader) tma::bulk_wait_all();
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

// kN K blocks from stage s on, as one overlapped batch sequence (NOTE [overlapped promotion]).
template <class Shape, int kN>
SYMMOE_DEVICE void overlapped_kblocks(float (&acc)[Shape::kBatches][Shape::kBatchN / 2],
                                      float (&part)[2][Shape::kBatchN / 2], const Smem<Shape>& sm, int& s,
                                      uint32_t& phase, bool& ok, const device::WaitContext& ctx, int64_t n0,
                                      const ConsumerThread& me) {
  constexpr int kBatches = Shape::kBatches;
  const int lane = me.lane, wg = me.wg, r_in_tile = me.r_in_tile;
  int stage[kN] = {};
  KBlock blk[kN];
  uint32_t a_frag[Shape::kARegs ? kN : 1][kBK / 32][4];
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
    if constexpr (kB == 0) {
      stage[kJ] = s;
      blk[kJ] = wait_kblock<Shape>(sm, s, phase, ok, ctx, wg, r_in_tile);
      if constexpr (Shape::kARegs) load_a_frags<Shape>(a_frag[kJ], sm.a, s, wg);
    }
    if constexpr (Shape::kARegs) {
      issue_block_rs<Shape>(part[kSlot % 2], a_frag[kJ], blk[kJ].sd, kB);
    } else {
      issue_block<Shape, false>(part[kSlot % 2], blk[kJ].sd, kB);
    }
    if constexpr (kB == kBatches - 1) advance_stage(s, phase, Shape::kStages);
    if constexpr (kSlot > 0) {
      wgmma::wait<1>();
      wgmma::fence_operands(part[(kSlot + 1) % 2]);
      promote_slot(std::integral_constant<int, kSlot - 1>{});
    }
  });
  constexpr int kLast = kN * kBatches - 1;
  wgmma::wait<0>();
  wgmma::fence_operands(part[kLast % 2]);
  promote_slot(std::integral_constant<int, kLast>{});
}

template <class Shape>
SYMMOE_DEVICE void consume_overlapped(const GroupSource& src, const Smem<Shape>& sm, int n_blocks,
                                      const CUtensorMap* map_out, const device::WaitContext& ctx) {
  constexpr int kBatches = Shape::kBatches, kPart = Shape::kBatchN / 2;
  const ConsumerThread me;
  const int kblocks = src.k / kBK;
  const UnitWalk<Shape> walk;
  float acc[kBatches][kPart], part[2][kPart];
  int s = 0, e_hint = 0;
  uint32_t phase = 0;
  bool ok = true;
  const int units = sm.tile_start[src.groups];  // read here: nothing stays live across setmaxnreg
  for (int u = walk.first; u < units; u += walk.stride) {
    const ConsumerTile tile = enter_tile<Shape>(src, sm, n_blocks, u, walk.rank, e_hint, me.r_in_tile);
    zero(acc);
    int kb = 0;
    for (; kb + Shape::kOverlap <= kblocks; kb += Shape::kOverlap) {
      overlapped_kblocks<Shape, Shape::kOverlap>(acc, part, sm, s, phase, ok, ctx, tile.n0, me);
    }
    if constexpr (Shape::kOverlap > 1) {
      for (; kb < kblocks; ++kb) overlapped_kblocks<Shape, 1>(acc, part, sm, s, phase, ok, ctx, tile.n0, me);
    }
    store_tile<Shape>(acc, tile, me.wg, ok, map_out, sm.out, src);
  }
  if (Shape::kTmaStore && me.store_leader) tma::bulk_wait_all();
}

// NOTE [wgmma weight multicast]: with kCluster > 1 the CTAs of a cluster run tiles of the same
// expert and column block and consecutive row blocks (one work unit, locate_tile), so they
// need the same weight tile each K block: CTA r loads weight rows r * kBSliceRows ..
// (r + 1) * kBSliceRows - 1 of it and multicasts them into stage s of every CTA of the
// cluster, at the same offset. Hence:
//  - each CTA's full barrier expects its own activation bytes plus the whole weight tile
//    (slices from every CTA; a peer's bytes may land before this CTA's expect-tx, which only
//    lowers the transaction count of a phase that still lacks its arrivals);
//  - a producer may refill stage s only when the consumers of every CTA released it: each
//    consumer warp arrives on stage s's empty barrier in every CTA (kCluster x 8 arrivals);
//  - the barriers are initialised before any CTA of the cluster runs (cluster_sync after
//    init), and no CTA exits while a peer may still arrive on its barriers or write its
//    stages (cluster_sync at the end, reached by every thread, producers included).
// Every CTA of a cluster walks the same units, so the stage sequence matches across the CTAs.
template <class Shape, int kHandoff>
__global__ void __launch_bounds__(kThreads, 1)
    sm90_grouped_gemm_fp8_wgmma_kernel(const __grid_constant__ CUtensorMap map_act,
                                       const __grid_constant__ CUtensorMap map_weights,
                                       const __grid_constant__ CUtensorMap map_out, const WgmmaParams p) {
  constexpr int kBN = Shape::kBN, kStages = Shape::kStages;
  const GroupSource& src = p.src;
  const int groups = src.groups;
  const int n_blocks = (src.n + kBN - 1) / kBN;  // N is a multiple of 128: only the last half may be past N

  extern __shared__ uint8_t smem_raw[];
  // 1024-byte aligned (the 128-byte swizzle's period) by an offset from smem_raw, so the
  // compiler still sees shared-memory pointers (shared loads, not generic ones).
  const Smem<Shape> sm(smem_raw + ((1024 - (tma::smem_addr(smem_raw) & 1023)) & 1023), groups);

  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  // Units per expert, then their prefix (warp 0). Invalid row tables count 0 rows; CTA 0
  // reports them.
  for (int e = tid; e < groups; e += kThreads) {
    const GroupRows rows = resolve_group_rows(src, e, p.status, blockIdx.x == 0, "grouped_gemm_fp8_wgmma");
    sm.rows[e] = make_int2(static_cast<int>(rows.row0), rows.count);  // row0 < 2^31: checked at launch
    const int m_blocks = (rows.count + kBM - 1) / kBM;
    sm.tile_start[e + 1] = (m_blocks + Shape::kCluster - 1) / Shape::kCluster * n_blocks;
  }
  if (tid == 0) {
    tma::prefetch_map(&map_act);
    tma::prefetch_map(&map_weights);
    if (Shape::kTmaStore) tma::prefetch_map(&map_out);
    for (int s = 0; s < kStages; ++s) {
      device::bulk::mbarrier_init(&sm.full[s], 1 + 32);  // expect-tx arrival + the scale warp's lanes
      device::bulk::mbarrier_init(&sm.empty[s], Shape::kCluster * kConsumerWarps);
    }
    device::bulk::fence_mbarrier_init();
  }
  __syncthreads();
  if (warp == 0) {
    int carry = 0;
    for (int base = 0; base < groups; base += 32) {
      const int e = base + lane;
      int v = e < groups ? sm.tile_start[e + 1] : 0;
#pragma unroll
      for (int d = 1; d < 32; d *= 2) {
        const int u = __shfl_up_sync(0xffffffffu, v, d);
        if (lane >= d) v += u;
      }
      if (e < groups) sm.tile_start[e + 1] = carry + v;
      carry += __shfl_sync(0xffffffffu, v, 31);
    }
    if (lane == 0) sm.tile_start[0] = 0;
  }
  __syncthreads();
  if constexpr (Shape::kCluster > 1) tma::cluster_sync();
  const device::WaitContext ctx{p.status, p.timeout_ns, "grouped_gemm_fp8_wgmma"};

  if (warp < 4) {
    tma::regs_dec<kProducerRegs>();
    produce<Shape>(map_act, map_weights, src, sm, n_blocks, ctx);
  } else {
    tma::regs_inc<kConsumerRegs>();
    if constexpr (Shape::kOverlap > 0) {
      consume_overlapped<Shape>(src, sm, n_blocks, &map_out, ctx);
    } else {
      consume<Shape, kHandoff>(src, sm, n_blocks, &map_out, ctx);
    }
  }
  if constexpr (Shape::kCluster > 1) tma::cluster_sync();
}

// 2-D tensor map over a row-major [rows, cols] matrix of `elem_bytes`-byte elements, boxes of
// box_rows x box_cols (box_cols x elem_bytes = 128 bytes), 128-byte swizzle: the layout
// desc_lo_k_major_sw128 / desc_from_lo describe for operands, and store_tile_tma stages.
CUtensorMap make_map_sw128(const void* base, CUtensorMapDataType type, int elem_bytes, int64_t rows, int64_t cols,
                           int box_rows, CUtensorMapL2promotion promotion, const char* what) {
  SYMMOE_CHECK(rows <= INT32_MAX, "grouped GEMM (fp8 wgmma): ", what, " has ", rows,
               " rows; tensor-map coordinates are 32-bit");
  const DriverApi& drv = driver();
  CUtensorMap map{};
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(cols), static_cast<cuuint64_t>(rows)};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(cols * elem_bytes)};
  const cuuint32_t box[2] = {static_cast<cuuint32_t>(128 / elem_bytes), static_cast<cuuint32_t>(box_rows)};
  const cuuint32_t elem_strides[2] = {1, 1};
  const CUresult rc = drv.cuTensorMapEncodeTiled(&map, type, 2, const_cast<void*>(base), dims, strides, box,
                                                 elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                                 CU_TENSOR_MAP_SWIZZLE_128B, promotion, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  SYMMOE_CHECK(rc == CUDA_SUCCESS, "grouped GEMM (fp8 wgmma): cuTensorMapEncodeTiled for ", what, " failed (CUresult ",
               static_cast<int>(rc), "; ", rows, " x ", cols, " elements of ", elem_bytes, " bytes at ", base, ")");
  return map;
}

// e4m3 operand [rows, k]: boxes of box_rows x 128.
CUtensorMap make_operand_map(const void* base, int64_t rows, int64_t k, int box_rows, const char* what) {
  return make_map_sw128(base, CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, rows, k, box_rows, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                        what);
}

// A launch of blocks of kThreads in 1-D clusters of `cluster` CTAs; `attr` holds the cluster
// attribute and must outlive the config.
cudaLaunchConfig_t cluster_launch_config(int grid, int cluster, size_t smem, cudaStream_t stream,
                                         cudaLaunchAttribute& attr) {
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(grid, 1, 1);
  config.blockDim = dim3(kThreads, 1, 1);
  config.dynamicSmemBytes = smem;
  config.stream = stream;
  attr.id = cudaLaunchAttributeClusterDimension;
  attr.val.clusterDim.x = cluster;
  attr.val.clusterDim.y = 1;
  attr.val.clusterDim.z = 1;
  config.attrs = &attr;
  config.numAttrs = 1;
  return config;
}

// Persistent CTAs for a launch of `kernel` in clusters of `cluster`: the SM budget, in whole
// clusters, and no more clusters than can be resident at once (GPCs hold whole clusters, so
// that can be fewer than budget / cluster). Queried once per device and kernel.
int persistent_ctas(const void* kernel, int cluster, int sm_budget, int device) {
  if (cluster == 1) return std::max(sm_budget, 1);
  static std::mutex mu;
  static std::map<std::pair<const void*, int>, int> resident;
  int clusters = 0;
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = resident.find({kernel, device});
    if (it == resident.end()) {
      cudaLaunchAttribute attr;
      const cudaLaunchConfig_t config = cluster_launch_config(cluster, cluster, kMaxSmem, nullptr, attr);
      int n = 0;
      const cudaError_t rc = cudaOccupancyMaxActiveClusters(&n, kernel, &config);
      SYMMOE_CHECK(rc == cudaSuccess && n > 0, "grouped GEMM (fp8 wgmma): no cluster of ", cluster,
                   " CTAs fits on device ", device, " (cudaOccupancyMaxActiveClusters: ", cudaGetErrorString(rc),
                   ", ", n, ")");
      it = resident.emplace(std::make_pair(kernel, device), n).first;
    }
    clusters = it->second;
  }
  return std::max(std::min(clusters, sm_budget / cluster), 1) * cluster;
}

// bf16 output [rows, n]: boxes of 64 rows x 64 columns, what store_tile_tma stages.
CUtensorMap make_out_map(void* base, int64_t rows, int64_t n) {
  return make_map_sw128(base, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, rows, n, 64, CU_TENSOR_MAP_L2_PROMOTION_NONE,
                        "the output");
}

template <class Shape>
struct WgmmaConfig {
  static const void* kernel(bool ordered) {
    if constexpr (Shape::kOverlap == 0) {
      if (ordered) return reinterpret_cast<const void*>(&sm90_grouped_gemm_fp8_wgmma_kernel<Shape, kBeforeLast>);
    }
    return reinterpret_cast<const void*>(&sm90_grouped_gemm_fp8_wgmma_kernel<Shape, kFree>);
  }
  static cudaError_t launch(const GroupSource& src, const LaunchSlots& slots, cudaStream_t stream) {
    SYMMOE_CHECK(src.groups <= Shape::max_groups(), "grouped GEMM (fp8 wgmma): ", src.groups,
                 " experts; the tile table in shared memory holds at most ", Shape::max_groups());
    const int64_t rows = src.offsets == nullptr ? int64_t{src.groups} * src.max_m : src.total_rows;
    CUtensorMap map_act = make_operand_map(src.act, rows, src.k, kBM, "activations");
    CUtensorMap map_w =
        make_operand_map(src.weights, int64_t{src.groups} * src.n, src.k, Shape::kBSliceRows, "weights");
    CUtensorMap map_out = Shape::kTmaStore ? make_out_map(src.out, rows, src.n) : CUtensorMap{};
    WgmmaParams params{src, slots.status, runtime::wait_timeout_ns()};
    const void* fn = kernel(env::get_bool("SYMMOE_GEMM_WGMMA_ORDERED"));
    cudaLaunchAttribute attr;
    const cudaLaunchConfig_t config =
        cluster_launch_config(persistent_ctas(fn, Shape::kCluster, slots.sm_count, slots.device), Shape::kCluster,
                              Shape::smem_bytes(src.groups), stream, attr);
    void* args[] = {&map_act, &map_w, &map_out, &params};
    return cudaLaunchKernelExC(&config, fn, args);
  }
  static void append(std::vector<runtime::KernelEntry>& out, const char* name, const char* name_ordered = nullptr) {
    out.push_back({name, kernel(false), kMaxSmem, -1});
    if (name_ordered != nullptr) out.push_back({name_ordered, kernel(true), kMaxSmem, -1});
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
using Shape192Tma = WgmmaShape<192, 4, 1, true>;
// NOTE [overlapped promotion]: 128 x 256 in four 64-column batches, 128 x 192 in two of 96.
// Drains every K block, or every two.
using Shape256TmaOverlap = WgmmaShape<256, 3, 1, true, 1>;
using Shape192TmaOverlap = WgmmaShape<192, 4, 1, true, 1>;
using Shape256TmaOverlap2 = WgmmaShape<256, 3, 1, true, 2>;
using Shape192TmaOverlap2 = WgmmaShape<192, 4, 1, true, 2>;
// Activation fragments in registers (SYMMOE_GEMM_WGMMA_OVERLAP=3): 256-wide, drain every K block.
using Shape256TmaOverlapRegs = WgmmaShape<256, 3, 1, true, 1, true>;
// The same, draining every 2 K blocks (two fragment sets: SYMMOE_GEMM_WGMMA_OVERLAP=4).
using Shape256TmaOverlap2Regs = WgmmaShape<256, 3, 1, true, 2, true>;

WorkspaceBytes wgmma_workspace(int, int) { return {}; }

cudaError_t wgmma_launch(const GroupSource& src, const LaunchSlots& slots, cudaStream_t stream) {
  const bool tma_store = env::get_string("SYMMOE_GEMM_WGMMA_EPILOGUE") == "tma";
  const int64_t width = env::get_int("SYMMOE_GEMM_WGMMA_TILE_N");
  SYMMOE_CHECK(width == 256 || width == 192, "SYMMOE_GEMM_WGMMA_TILE_N = ", width, ": 256 or 192");
  if (const int64_t overlap = env::get_int("SYMMOE_GEMM_WGMMA_OVERLAP"); overlap > 0) {
    SYMMOE_CHECK(tma_store && env::get_int("SYMMOE_GEMM_WGMMA_CLUSTER") == 1 &&
                     !env::get_bool("SYMMOE_GEMM_WGMMA_ORDERED"),
                 "grouped GEMM (fp8 wgmma): overlapped promotion (SYMMOE_GEMM_WGMMA_OVERLAP=1|2|3) is built with the "
                 "tma epilogue, clusters of 1 and free issue only (SYMMOE_GEMM_WGMMA_EPILOGUE=tma, "
                 "SYMMOE_GEMM_WGMMA_CLUSTER=1, SYMMOE_GEMM_WGMMA_ORDERED=0)");
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
  WgmmaConfig<Shape256TmaOverlap>::append(out, "sm90_grouped_gemm_fp8_wgmma_128x256_tma_store_overlap");
  WgmmaConfig<Shape192TmaOverlap>::append(out, "sm90_grouped_gemm_fp8_wgmma_128x192_tma_store_overlap");
  WgmmaConfig<Shape256TmaOverlap2>::append(out, "sm90_grouped_gemm_fp8_wgmma_128x256_tma_store_overlap2");
  WgmmaConfig<Shape192TmaOverlap2>::append(out, "sm90_grouped_gemm_fp8_wgmma_128x192_tma_store_overlap2");
  WgmmaConfig<Shape256TmaOverlapRegs>::append(out, "sm90_grouped_gemm_fp8_wgmma_128x256_tma_store_overlap_aregs");
  WgmmaConfig<Shape256TmaOverlap2Regs>::append(out, "sm90_grouped_gemm_fp8_wgmma_128x256_tma_store_overlap2_aregs");
}

}  // namespace

const ConfigOps& fp8_wgmma_ops() {
  static const ConfigOps ops{describe_tile(GemmDtype::kFP8E4M3, GemmTile::kWgmma), &wgmma_workspace, &wgmma_launch,
                             &wgmma_append_kernels};
  return ops;
}

}  // namespace symmoe::gemm::sm90
