// The frame of our SM90 grouped-GEMM wgmma kernels (fp8 with block scales, bf16): persistent
// CTAs of one producer and two consumer warpgroups over every expert's 128 x kBN tiles, TMA
// stages, the tile walk, the epilogue and the launch. The consumers' mainloop is a parameter of
// the kernel (Consumer::run): the fp8 one promotes per scale block
// (sm90_grouped_gemm_fp8_wgmma_kernels.cu), the bf16 one accumulates in the tensor cores
// (sm90_grouped_gemm_bf16_wgmma_kernels.cu). NOTE [fp8 wgmma kernel] describes the whole.
// Private to src/gemm.
#pragma once

#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "grouped_gemm_rows.cuh"
#include "sm90_grouped_gemm_launch.hpp"
#include "sm90_tma_wgmma.cuh"
#include "symmoe/core/cuda_driver.hpp"
#include "symmoe/core/env.hpp"
#include "symmoe/core/error.hpp"
#include "symmoe/device/bounded_wait.cuh"
#include "symmoe/device/grouped_gemm_tile_order.cuh"
#include "symmoe/device/ptx.cuh"
#include "symmoe/gemm/grouped_gemm.hpp"
#include "symmoe/runtime/device_runtime.hpp"

namespace symmoe::gemm::sm90::wgmma_frame {

constexpr int kBM = 128;       // tile rows: two consumer warpgroups of 64
static_assert(kBM == kWgmmaTileRows, "the host-side tile estimate (wgmma_tiles_estimate) counts kBM-row tiles");
constexpr int kBK = 128;       // bytes of K per stage row: one 128-byte swizzled row (128 fp8 or 64 bf16)
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

// The frame's view of a kernel's tile: 128 x kBN outputs, held by the consumers as kBatches
// column batches of kBatchN (acc[kBatches][kBatchN / 2] per thread, wgmma's accumulator
// layout), operands of kElemBytes-byte elements, K blocks of kBK bytes (kKElems elements) in
// kStages shared-memory stages. kScaled: the producer also stages the K block's 128 activation
// scales and 2 weight scales (the fp8 recipe; NOTE [wgmma stage scales]). A cluster of kCluster x kClusterN CTAs (1-D,
// rank = rm + kCluster rn) runs the tiles of kCluster consecutive row blocks and kClusterN
// consecutive column blocks together: CTAs of one column block share its weight tile, CTAs of
// one row block its activation tile (NOTE [wgmma weight multicast]). kStageCols: output
// columns staged for the tensor stores at once (NOTE [wgmma tensor-store epilogue]): the
// whole tile, or 64 per round (a quarter of the staging bytes, room for another stage).
template <int kBN_, int kBatchN_, int kStages_, int kCluster_, bool kTmaStore_, int kElemBytes_, bool kScaled_,
          int kClusterN_ = 1, int kStageCols_ = kBN_>
struct TileShape {
  static constexpr int kBN = kBN_;
  static constexpr int kBatchN = kBatchN_;
  static constexpr int kBatches = kBN / kBatchN;
  static constexpr int kStages = kStages_;
  static constexpr int kCluster = kCluster_;    // CTAs along M (sharing weight tiles)
  static constexpr int kClusterN = kClusterN_;  // CTAs along N (sharing activation tiles)
  static constexpr int kCtas = kCluster * kClusterN;
  static constexpr int kWriters = kCluster + kClusterN - 1;  // CTAs whose copies land in a CTA's stages
  static constexpr bool kTmaStore = kTmaStore_;
  static constexpr int kElemBytes = kElemBytes_;
  static constexpr int kKElems = kBK / kElemBytes;  // K elements per K block
  static constexpr bool kScaled = kScaled_;
  static constexpr int kABytes = kBM * kBK;
  static constexpr int kBBytes = kBN * kBK;
  static constexpr int kBSliceRows = kBN / kCluster;   // weight rows each CTA of a column block loads
  static constexpr int kASliceRows = kBM / kClusterN;  // activation rows each CTA of a row block loads
  static constexpr int kStageCols = kStageCols_;
  static constexpr int kOutBytes = kTmaStore ? kBM * kStageCols * 2 : 0;  // bf16 columns staged for tensor stores
  // NOTE [wgmma stage scales]: a stage's scales are [kBM rows][kScaleCols] activation scales,
  // then [2 weight-scale blocks][kScaleCols]; column kb % kScaleCols holds the stage's K block
  // kb, the others its neighbours' (tensor copies move 16-byte aligned rows; unused) or
  // nothing (cp.async path).
  static constexpr int kScaleCols = 4;
  static constexpr int kWeightScaleAt = kScaled ? kBM * kScaleCols : 0;  // float offset of the weight scales
  static constexpr int kScaleBytes = kScaled ? 4 * (kWeightScaleAt + 2 * kScaleCols) : 0;  // one stage's, copied
  static constexpr int kScaleFloats = (kScaleBytes + 127) / 128 * 32;  // tensor-copy destinations: 128-byte aligned
  static constexpr int kBand = 8;  // N-tiles walked together (L2 reuse of activation tiles)
  // NOTE [unrolled stage ring]: false here; a consumer that unrolls its K loop over the stages
  // sets it in its shape, and the producer then starts every tile at stage 0.
  static constexpr bool kUnrolled = false;
  // [kStages x A][kStages x B][out tile][kStages x scales][kStages full bars][kStages empty bars]
  // [unit ring: kStages units, kStages tags][unit count, next unit (copier), dynamic, next unit (scaler)][expert rows: E x (row0, count)]
  // [tile prefix: E + 1 ints]
  static constexpr int kFixedBytes =
      kStages * (kABytes + kBBytes + 4 * kScaleFloats) + kOutBytes + 3 * 8 * kStages + 16;
  static constexpr int smem_bytes(int groups) { return 1024 + kFixedBytes + 8 * groups + 4 * (groups + 1); }
  static constexpr int max_groups() { return (kMaxSmem - 1024 - kFixedBytes - 4) / 12; }
  static_assert(kBN == 256 || kBN == 192 || kBN == 128, "128 x 256, 128 x 192 or 128 x 128 tiles");
  static_assert(kBN % kBatchN == 0, "whole column batches");
  static_assert(kStageCols == kBN || kStageCols == 64, "the whole tile or 64 columns staged at once");
  static_assert(kElemBytes == 1 || kElemBytes == 2, "fp8 or bf16 operands");
  static_assert(kCtas == 1 || kCtas == 2 || kCtas == 4, "cluster of 1, 2 or 4 CTAs");
  static_assert(kBSliceRows % 8 == 0 && (kBSliceRows * kBK) % 1024 == 0, "slices keep the swizzle period");
  static_assert(kASliceRows % 8 == 0 && (kASliceRows * kBK) % 1024 == 0, "slices keep the swizzle period");
  static_assert(max_groups() >= 256, "room for the tile prefix of 256 experts");
  static_assert(kWeightScaleAt % 32 == 0, "the weight scales start 128-byte aligned (tensor-copy destination)");
};

// NOTE [wgmma tile schedule]: how a CTA's producer takes its work units, and how the consumers
// learn them. The producer publishes each tile's unit in sm.units[s] for the stage s of the
// tile's first K block, written before its arrival on full[s] (release) and read by the
// consumers after their wait on full[s] (acquire); it overwrites the slot only once the
// consumers released stage s, after their read. After its last tile it publishes -1 at the
// next tile's first stage (an arrival without bytes), and the consumers leave. Each consumer
// warpgroup decides to go on as a whole (an and-vote over its first-stage wait: wgmma and the
// epilogue's named barriers stay warpgroup-uniform; both warpgroups together with ordered issue).
//  - kStatic: units blockIdx.x, + gridDim.x, ... (per cluster with kCtas > 1); the
//    copier (thread 0, the tensor copies) and the scaler (warp 1, the scales' cp.async) each
//    walk the units;
//  - kDynamic (clusters of one): units blockIdx.x first, then gridDim.x + the next value of a
//    device-wide counter (LaunchSlots::schedule {next, done}), taken by the copier as a tile
//    starts and read as it ends, so the round trip runs under the tile's copies; the scaler
//    learns each unit from the copier (publish_unit / await_unit). The tiles in flight then stay
//    a window of about one wave in tile order however unevenly the SMs run (the static stride
//    lets them drift apart). The kernel is launched without programmatic overlap, so a launch
//    touches the counter only after the previous one on the stream completed; each copier
//    counts its CTA out in `done` when it leaves (also after a failed wait), and the last resets
//    both words.
//  - kAuto (default): kDynamic where a CTA has kWgmmaDynamicMinUnits units or more on average
//    or the tiles walk row bands (fp8_wgmma_row_band_by_default: row bands with the static
//    stride read DRAM as the column bands do, twice DeepGEMM's bytes at gate/up 8 x 4096 on an
//    H100; with the counter about DeepGEMM's) (clusters of one; decided alike in every CTA from
//    the tile table and the launch's row band), else kStatic. Measured
//    on an H100 (gemm_wgmma_schedule_dynamic_h100_ab.log and
//    gemm_wgmma_schedule_auto_h100_ab*.log, 128 x 192 tiles): from 74 units per CTA
//    dynamic ran 0.98-1.21x of static (gate/up 32 x 4096, 171 units: 1.11-1.21x, where the
//    static stride's rate fell from 1039 to 870 TFLOPS with run length); at 3-42 units
//    forced dynamic ran 0.96-1.07x, within the spread between rounds. On an H200
//    (gemm_wgmma_c2_ab_h200.log) auto ran 1.02x of static at gate/up 32 x 4096, level elsewhere.
//    kDynamic in 1-D clusters (rank 0 publishing each unit into its peers' slots) was built and
//    measured there: 0.95x of this default (bench/RESULTS.md), reverted.
enum class WgmmaSchedule : int { kStatic = 0, kDynamic = 1, kAuto = 2 };
constexpr int kWgmmaDynamicMinUnits = 64;

struct WgmmaParams {
  GroupSource src;
  device::StatusBlock* status;
  uint64_t timeout_ns;
  bool scale_maps;  // kScaled: the scales come by tensor copies (map_act_scales, map_w_scales), else cp.async
  WgmmaSchedule schedule;
  int* schedule_words;  // kDynamic: {next, done}, zero between launches
};

using device::GemmTilePos;

// Column units of a tile walk: groups of kClusterN column blocks.
template <class Shape>
SYMMOE_HOST_DEVICE int column_units(int n_blocks) {
  return (n_blocks + Shape::kClusterN - 1) / Shape::kClusterN;
}

// The tile a CTA of the cluster runs for work unit `u`: units are numbered as tiles of
// kCluster row blocks x kClusterN column blocks (NOTE [grouped GEMM tile order] over units);
// cluster rank rm + kCluster rn takes row block kCluster * unit row + rm and column block
// kClusterN * unit column + rn, which may lie past the expert's rows or past N (then it loads
// and computes, stores nothing, and reads no scales: its copies feed its cluster peers).
template <class Shape>
SYMMOE_DEVICE GemmTilePos locate_tile(const int* tile_start, int groups, int n_blocks, int u, int rank, int& e_hint,
                                      int row_band) {
  const int units = column_units<Shape>(n_blocks);
  const GemmTilePos unit =
      row_band > 0 ? device::locate_gemm_tile_row_bands(tile_start, groups, units, row_band, u, e_hint)
                   : device::locate_gemm_tile(tile_start, groups, units, Shape::kBand, u, e_hint);
  return device::cluster_tile(unit, rank, Shape::kCluster, Shape::kClusterN);
}

SYMMOE_DEVICE void advance_stage(int& s, uint32_t& phase, int stages) {
  if (++s == stages) {
    s = 0;
    phase ^= 1;
  }
}

// NOTE [unrolled stage ring]: by default the stage ring runs on across tiles (stage s, one
// phase bit for the whole ring). With Shape::kUnrolled every tile starts at stage 0, so a
// consumer can unroll its K loop over the stages and address each stage at compile-time
// offsets (descriptors and scales: uniform-register adds instead of per-block arithmetic);
// a tile whose K blocks are not a multiple of kStages leaves the stages behind it at
// different uses, so each stage keeps its own phase bit (bit s of `bits`, flipped per use).
// Producer and consumers walk the same tiles and K blocks, so they agree on every bit.
template <class Shape>
struct StageCursor {
  int s = 0;
  uint32_t bits = 0;  // kUnrolled: parity bit per stage; otherwise bit 0 for the whole ring
  SYMMOE_DEVICE void start_tile() {
    if constexpr (Shape::kUnrolled) s = 0;
  }
  SYMMOE_DEVICE uint32_t parity() const { return Shape::kUnrolled ? (bits >> s) & 1u : bits; }
  SYMMOE_DEVICE void advance() {
    if constexpr (Shape::kUnrolled) {
      bits ^= 1u << s;
      s = s + 1 == Shape::kStages ? 0 : s + 1;
    } else {
      advance_stage(s, bits, Shape::kStages);
    }
  }
};

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
  int* units;  // NOTE [wgmma tile schedule]: the unit of the tile whose first K block is in stage s (-1: stop)
  int2* rows;  // per expert: first row in act / out, rows (0 for invalid tables)
  int* tile_start;
  SYMMOE_DEVICE Smem(uint8_t* base, int groups) {
    a = base;
    b = a + Shape::kStages * Shape::kABytes;
    out = b + Shape::kStages * Shape::kBBytes;
    scales = reinterpret_cast<float*>(out + Shape::kOutBytes);
    full = reinterpret_cast<uint64_t*>(scales + Shape::kStages * Shape::kScaleFloats);
    empty = full + Shape::kStages;
    units = reinterpret_cast<int*>(empty + Shape::kStages);
    rows = reinterpret_cast<int2*>(units + 2 * Shape::kStages + 4);
    tile_start = reinterpret_cast<int*>(rows + groups);
  }
  // The CTA's work units (tile_start[groups]) at a fixed offset: read in the producer's loop
  // without a register for its address (kProducerRegs).
  SYMMOE_DEVICE int& unit_count() const { return units[2 * Shape::kStages]; }
  // The producer thread's next unit (the copier's: warp 0, the scaler's: warp 1), noted as a tile
  // starts and taken as it ends: in shared memory, and the slot found from tid.x at each use,
  // as a register live across the tile spills at kProducerRegs.
  SYMMOE_DEVICE int& next_unit() const {
    return units[2 * Shape::kStages + 1 + static_cast<int>((device::ptx::tid_x() >> 4) & 2)];
  }
  // The schedule this launch runs, resolved once at set-up (1: kDynamic), read where needed.
  SYMMOE_DEVICE int& dynamic() const { return units[2 * Shape::kStages + 2]; }
  SYMMOE_DEVICE GroupRows expert_rows(int e) const {
    const int2 v = rows[e];
    return GroupRows{v.x, v.y};
  }
};

// This CTA's walk over the work units: cluster rank, first unit, stride (a CTA is a cluster of
// one when kCtas = 1). Every CTA of a cluster walks the same units.
template <class Shape>
struct UnitWalk {
  int rank, first, stride;
  SYMMOE_DEVICE UnitWalk()
      : rank(Shape::kCtas == 1 ? 0 : static_cast<int>(device::ptx::cluster_rank())),
        first(Shape::kCtas == 1 ? static_cast<int>(blockIdx.x) : static_cast<int>(device::ptx::cluster_id_x())),
        stride(Shape::kCtas == 1 ? static_cast<int>(gridDim.x) : static_cast<int>(device::ptx::cluster_count_x())) {}
};

// Cluster ranks as masks (NOTE [wgmma cluster ranks]): the CTAs of this CTA's row block (they
// share its activation tile) and of its column block (they share its weight tile).
template <class Shape>
SYMMOE_DEVICE uint16_t row_block_peers(int rank) {
  return static_cast<uint16_t>(device::row_block_peers(rank, Shape::kCluster, Shape::kClusterN));
}
template <class Shape>
SYMMOE_DEVICE uint16_t column_block_peers(int rank) {
  return static_cast<uint16_t>(device::column_block_peers(rank, Shape::kCluster));
}

// K blocks of a tile: the last may run past K (its columns past K arrive as zeros in both
// operands; fp8 K is a multiple of the block).
template <class Shape>
SYMMOE_DEVICE int kblocks_of(const GroupSource& src) {
  return static_cast<int>((src.k + Shape::kKElems - 1) / Shape::kKElems);
}

// NOTE [wgmma stage scales]: the fp8 recipe's scales of a stage's K block kb, in the layout
// of TileShape::kScaleFloats, come one of two ways:
//  - tensor copies (SYMMOE_GEMM_WGMMA_SCALES=tma, WgmmaParams::scale_maps): the activation
//    scales [rows, K / 128] and weight scales [E * N / 128, K / 128] as 2-D float maps, boxes
//    of 128 rows x 4 K blocks and 2 rows x 4 K blocks at (kb rounded down to a multiple of 4,
//    tile row / weight-scale row): the producer thread issues them with the operands' copies
//    and they complete on the same expect-tx (kScaleBytes). A box row must be 16 bytes and
//    start 16-byte aligned in memory (measured on the H200: a box at K block 5 raises an
//    illegal instruction), hence the 4 K blocks kb & ~3 .. kb | 3 per row, of which the
//    consumers read column kb % 4; the copies read 4x the scale bytes from L2 (2 KiB a stage
//    beside 40-48 KiB of operands). Rows past the expert's count hold the next expert's
//    scales (or zeros past the tensor), weight-scale rows past N the next expert's: they only
//    meet rows and columns that are never stored. Needs K / 128 a multiple of 4 (the maps' row pitch is a multiple
//    of 16 bytes) and 16-byte aligned scale tensors; launch decides;
//  - cp.async (default, and where the maps do not fit), one float per lane of producer warp 1
//    (zeros for rows past the expert's count and blocks past N), arriving on the stage's full
//    barrier (32 more arrivals).
// Measured on the H200 (bench/results/gemm_wgmma_scales_h200.log, same process, alternating
// twice): tensor copies 0.98x (128 x 256 overlapped) and 0.99x (128 x 192) of cp.async,
// geometric means over 12 cases each: the scale warp's 128 copies per K block are not what
// limits the kernel, so cp.async stays the default.
template <class Shape>
SYMMOE_DEVICE void copy_block_scales(float* dst, const GroupSource& src, GroupRows rows, int64_t m0, int64_t n0,
                                     int e, int kb, int kblocks, uint64_t* full, int lane) {
  constexpr int kCols = Shape::kScaleCols;
#pragma unroll
  for (int i = 0; i < kBM / 32; ++i) {
    const int r = 32 * i + lane;
    const bool live = m0 + r < rows.count;
    const float* p_src = src.act_scales + (live ? (rows.row0 + m0 + r) * kblocks + kb : 0);
    tma::cp_async_4(dst + kCols * r + kb % kCols, p_src, live);
  }
  const int64_t nb0 = n0 / kFp8ScaleBlock;  // first weight-scale block of the tile
  if (lane < 2) {
    const float* sb = src.weight_scales + (int64_t{e} * (src.n / kFp8ScaleBlock) + nb0 + lane) * kblocks + kb;
    tma::cp_async_4(dst + Shape::kWeightScaleAt + kCols * lane + kb % kCols, sb, (nb0 + lane) * kFp8ScaleBlock < src.n);
  }
  tma::cp_async_arrive_noinc(full);
}

// One K block's scales for a consumer thread: the activation scales of its rows (sa_lo, sa_hi)
// and the tile's two weight scales (w0, w1).
struct BlockScales {
  float sa_lo, sa_hi, w0, w1;
};

// Those of stage s, column col (the K block modulo kScaleCols) of NOTE [wgmma stage scales],
// for the thread whose rows are r_in_tile and r_in_tile + 8.
template <class Shape>
SYMMOE_DEVICE BlockScales stage_scales(const float* scales, int s, int col, int r_in_tile) {
  constexpr int kCols = Shape::kScaleCols;
  const float* sc = scales + s * Shape::kScaleFloats + col;
  return BlockScales{sc[kCols * r_in_tile], sc[kCols * (r_in_tile + 8)], sc[Shape::kWeightScaleAt],
                     sc[Shape::kWeightScaleAt + kCols]};
}

// The scale maps of NOTE [wgmma stage scales] (unused without kScaled or scale_maps).
struct ScaleMaps {
  const CUtensorMap* act;
  const CUtensorMap* weights;
  bool on;
};

// NOTE [wgmma tile schedule], kDynamic: the copier publishes tile j's unit (or -1, the stop) in
// stage s's slot and then j + 1 in the slot's tag (shared memory, volatile, a CTA fence between),
// before its arrival on full[s]; the scaler, after its own wait for stage s to be free, waits for
// the tag (bounded) and reads the unit. The copier rewrites the slot only once stage s is free
// again, which needs the scaler's arrivals for it, made after its read.
SYMMOE_DEVICE void publish_unit(int* units, int stages, int s, int u, int j) {
  volatile int* slot = units;  // shared memory: generic volatile accesses (not the .global ptx helpers)
  slot[s] = u;
  __threadfence_block();
  slot[stages + s] = j + 1;
}

SYMMOE_DEVICE bool await_unit(int* units, int stages, int s, int j, int& u, const device::WaitContext& ctx) {
  volatile int* slot = units;
  const bool ok = device::bounded_wait(
      ctx, device::WaitSite{"gemm_tile_unit", static_cast<uint32_t>(s), -1, -1}, static_cast<uint64_t>(j + 1),
      [slot, stages, s]() -> uint64_t { return static_cast<uint64_t>(slot[stages + s]); },
      [j](uint64_t v) { return v == static_cast<uint64_t>(j + 1); });
  __threadfence_block();
  u = slot[s];
  return ok;
}

// Producer warpgroup (NOTE [wgmma tile schedule]): thread 0, the copier, issues the tensor copies
// (the operands', and the scales' with scale maps), takes the units (kDynamic: from the
// counter) and publishes them; warp 1, the scaler, copies the scales by cp.async otherwise (with
// kDynamic it learns each unit from the copier); the other threads have nothing to do. Returns
// at the end of the work (the stop published) or on a failed wait.
template <class Shape>
SYMMOE_DEVICE void produce(const CUtensorMap& map_act, const CUtensorMap& map_weights, const ScaleMaps& scale_maps,
                           const GroupSource& src, const Smem<Shape>& sm, int n_blocks, int* words,
                           const device::WaitContext& ctx) {
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const bool scale_copies = Shape::kScaled && scale_maps.on;
  if (threadIdx.x != 0 && !(Shape::kScaled && !scale_copies && warp == 1)) return;
  const bool copier = warp == 0;
  const int kblocks = kblocks_of<Shape>(src);
  const UnitWalk<Shape> walk;
  StageCursor<Shape> ring;
  int e_hint = 0;
  int u = walk.first;
  for (int j = 0;; ++j) {
    ring.start_tile();
    const int s0 = ring.s;
    if (!tma::mbarrier_wait(&sm.empty[s0], ring.parity() ^ 1, ctx, "gemm_stage_free", s0)) break;
    // The unit count is read from shared memory at each test: a register for it spills (kProducerRegs).
    bool live = u < sm.unit_count();
    if (copier) {
      // The next unit, noted as this tile starts (kDynamic: asked for, its value first used at the end).
      if (live) sm.next_unit() = sm.dynamic() ? static_cast<int>(gridDim.x) + atomicAdd(words, 1) : u + walk.stride;
      if (sm.dynamic()) {
        publish_unit(sm.units, Shape::kStages, s0, live ? u : -1, j);
      } else {
        sm.units[s0] = live ? u : -1;  // published by the arrival below (release)
      }
    } else if (sm.dynamic()) {
      if (!await_unit(sm.units, Shape::kStages, s0, j, u, ctx)) break;
      live = u >= 0;
    } else {
      sm.next_unit() = u + walk.stride;
    }
    if (!live) {  // the stop: the arrivals of a K block, no bytes
      if (copier) {
        tma::mbarrier_arrive(&sm.full[s0]);
      } else {
        tma::cp_async_arrive_noinc(&sm.full[s0]);
      }
      break;
    }
    const GemmTilePos pos = locate_tile<Shape>(sm.tile_start, src.groups, n_blocks, u, walk.rank, e_hint, src.row_band);
    const GroupRows rows = sm.expert_rows(pos.e);
    const int64_t m0 = int64_t{pos.mb} * kBM;  // first row of the tile within the expert
    const int64_t n0 = int64_t{pos.nb} * Shape::kBN;  // first column (weight row) of the tile
    const int rm = walk.rank % Shape::kCluster, rn = walk.rank / Shape::kCluster;
    const auto a_row = static_cast<int32_t>(rows.row0 + m0 + rn * Shape::kASliceRows);
    const auto b_row = static_cast<int32_t>(int64_t{pos.e} * src.n + n0 + rm * Shape::kBSliceRows);
    const auto scale_row = static_cast<int32_t>(rows.row0 + m0);
    const auto w_scale_row = static_cast<int32_t>((int64_t{pos.e} * src.n + n0) / kFp8ScaleBlock);
    bool failed = false;
    for (int kb = 0; kb < kblocks; ++kb) {
      const int s = ring.s;
      if (kb > 0 && !tma::mbarrier_wait(&sm.empty[s], ring.parity() ^ 1, ctx, "gemm_stage_free", s)) {
        failed = true;
        break;
      }
      const auto k0 = static_cast<int32_t>(kb * Shape::kKElems);
      if (copier) {
        // The stage's bytes, derived here: a register for them spills (kProducerRegs).
        device::bulk::mbarrier_arrive_expect_tx(
            &sm.full[s], Shape::kABytes + Shape::kBBytes + (scale_copies ? Shape::kScaleBytes : 0));
        uint8_t* a_dst = sm.a + s * Shape::kABytes + rn * Shape::kASliceRows * kBK;
        if constexpr (Shape::kClusterN == 1) {
          tma::load_2d(a_dst, &map_act, k0, a_row, &sm.full[s]);
        } else {
          tma::load_2d_multicast(a_dst, &map_act, k0, a_row, &sm.full[s], row_block_peers<Shape>(walk.rank));
        }
        uint8_t* b_dst = sm.b + s * Shape::kBBytes + rm * Shape::kBSliceRows * kBK;
        if constexpr (Shape::kCluster == 1) {
          tma::load_2d(b_dst, &map_weights, k0, b_row, &sm.full[s]);
        } else {
          tma::load_2d_multicast(b_dst, &map_weights, k0, b_row, &sm.full[s], column_block_peers<Shape>(walk.rank));
        }
        if (scale_copies) {
          float* sc = sm.scales + s * Shape::kScaleFloats;
          const int kb4 = kb & ~(Shape::kScaleCols - 1);  // 16-byte aligned box rows
          tma::load_2d(sc, scale_maps.act, kb4, scale_row, &sm.full[s]);
          tma::load_2d(sc + Shape::kWeightScaleAt, scale_maps.weights, kb4, w_scale_row, &sm.full[s]);
        }
      } else if constexpr (Shape::kScaled) {
        copy_block_scales<Shape>(sm.scales + s * Shape::kScaleFloats, src, rows, m0, n0, pos.e, kb, kblocks,
                                 &sm.full[s], lane);
      }
      ring.advance();
    }
    if (failed) break;
    u = sm.next_unit();  // kDynamic: the scaler's is unused (it reads its next unit from the stage's slot)
  }
  // kDynamic: this CTA takes no more units; the last CTA out resets the words. The copier made
  // every counter access of the CTA.
  if (sm.dynamic() && copier) {
    __threadfence();
    if (atomicAdd(words + 1, 1) == static_cast<int>(gridDim.x) - 1) {
      __threadfence();
      words[0] = 0;
      words[1] = 0;
      __threadfence();
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

// The descriptor of batch b's weight rows (kBatchN b .. kBatchN (b + 1) - 1) in the stage.
template <class Shape>
SYMMOE_DEVICE uint64_t batch_desc_b(StageDesc sd, int b) {
  return wgmma::desc_from_lo(sd.b_lo + static_cast<uint32_t>(b * Shape::kBatchN * kBK / 16));
}

SYMMOE_DEVICE uint32_t pack_bf16x2(float lo, float hi) {
  const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);  // lo in the low half
  return *reinterpret_cast<const uint32_t*>(&v);
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
  const GemmTilePos pos = locate_tile<Shape>(sm.tile_start, src.groups, n_blocks, u, rank, e_hint, src.row_band);
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
  // 128-column batches are fp8 only, whose N is a multiple of 128: such a batch lies wholly
  // inside N (batches past N are skipped). Other widths (fp8 64 / 96 / 192, bf16 256 with N a
  // multiple of 8) are clipped at N in 8-column groups.
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
// the expert stages its 64 x kBN bf16 block in shared memory (its own half of the staging
// buffer: blocks of 64 rows x 64 columns, 128-byte rows, 128-byte swizzle, written with
// stmatrix: the accumulator layout is stmatrix's fragment layout) and one thread stores it
// with tensor copies, columns past N clipped by the tensor map; the warpgroup goes on to the
// next tile while the copies run. Before each staging the same thread waits until the
// copies have read the staging buffer (bulk_wait_read_all), and at the end until they have
// completed. With kStageCols = 64 the block goes out in kBN / 64 rounds of one 64-column
// block through a quarter of the buffer, each round waiting for the previous one's reads.
// A warpgroup with rows past the expert's count (the last row block of an expert)
// stores directly (store_batch): a tensor copy cannot stop at the count.
template <class Shape>
SYMMOE_DEVICE void store_tile_tma(const float (&acc)[Shape::kBatches][Shape::kBatchN / 2], const ConsumerTile& c,
                                  int wg, const CUtensorMap* map_out, uint8_t* out_stage, int src_n) {
  constexpr int kRounds = Shape::kBN / Shape::kStageCols, kBlocksPerRound = Shape::kStageCols / 64;
  const int warp_in_wg = (threadIdx.x / 32) % 4, lane = threadIdx.x % 32;
  const bool leader = warp_in_wg == 0 && lane == 0;
  uint8_t* base = out_stage + wg * (64 * Shape::kStageCols * 2);
  // stmatrix .x4 over 16 rows x 16 columns: matrices (rows +0, cols +0), (rows +8, cols +0),
  // (rows +0, cols +8), (rows +8, cols +8); lane 8 k + i addresses row i of matrix k.
  const int k = lane / 8, i = lane % 8;
  const int row = 16 * warp_in_wg + i + 8 * (k & 1);
  const auto row0 = static_cast<int32_t>(c.rows.row0 + c.m0 + 64 * wg);
#pragma unroll
  for (int r = 0; r < kRounds; ++r) {
    if (c.n0 + int64_t{Shape::kStageCols} * r >= src_n) break;  // wholly past N (warpgroup-uniform)
    if (leader) tma::bulk_wait_read_all();
    wg == 0 ? tma::named_sync<3>(128) : tma::named_sync<4>(128);
#pragma unroll
    for (int h = 0; h < Shape::kBatches; ++h) {
#pragma unroll
      for (int j = 0; j < Shape::kBatchN / 8; j += 2) {
        // The 16 columns 8 j .. 8 j + 15 of batch h lie in one 64-column block.
        if ((Shape::kBatchN * h + 8 * j) / Shape::kStageCols != r) continue;
        const int col = Shape::kBatchN * h + 8 * (j + (k >> 1));
        const int col_in_stage = col % Shape::kStageCols;
        uint8_t* addr = base + (col_in_stage / 64) * 8192 + row * 128 + ((((col % 64) / 8) ^ (row & 7)) * 16);
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
#pragma unroll
      for (int b = 0; b < kBlocksPerRound; ++b) {
        const int64_t col0 = c.n0 + int64_t{Shape::kStageCols} * r + 64 * b;
        if (col0 >= src_n) break;  // wholly past N
        tma::store_2d(map_out, static_cast<int32_t>(col0), row0, base + b * 8192);
      }
      tma::bulk_commit();
    }
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

// Stage s is free again for this warp: one arrival on its empty barrier in every CTA whose
// producer copies into this CTA's stage s — the CTAs of its row block and of its column block
// (kWriters of them, itself included).
template <class Shape>
SYMMOE_DEVICE void release_stage(uint64_t* empty) {
  if constexpr (Shape::kCtas == 1) {
    tma::mbarrier_arrive(empty);
  } else {
    const int rank = static_cast<int>(device::ptx::cluster_rank());
    const uint32_t writers = row_block_peers<Shape>(rank) | column_block_peers<Shape>(rank);
#pragma unroll
    for (int c = 0; c < Shape::kCtas; ++c) {
      if (writers & (1u << c)) tma::mbarrier_arrive_cluster(empty, c);
    }
  }
}

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

// Where a consumer's next K block lies: stage s, awaited with parity `parity`.
struct StageAt {
  int s;
  uint32_t parity;
};

// The consumer warpgroups' walk over this CTA's tiles (NOTE [wgmma tile schedule]): per tile,
// the unit published at its first stage (first_stage(): the consumer's ring position, a
// StageAt), mainloop(tile) accumulates the tile into acc, and store_tile stores it. A failed
// first-stage wait in any thread of the warpgroup (kBoth: of either warpgroup, which take turns
// through named barriers) ends the walk of all of them; a failed wait inside the mainloop
// clears `ok` and nothing more is stored. At the end the warpgroup's tensor stores are waited for.
template <class Shape, bool kBoth = false, class Acc, class FirstStage, class Mainloop>
SYMMOE_DEVICE void for_each_consumer_tile(const GroupSource& src, const Smem<Shape>& sm, int n_blocks,
                                          const ConsumerThread& me, const CUtensorMap* map_out, const Acc& acc,
                                          bool& ok, const device::WaitContext& ctx, FirstStage&& first_stage,
                                          Mainloop&& mainloop) {
  const int rank = UnitWalk<Shape>().rank;
  int e_hint = 0;
  for (;;) {
    const StageAt at = first_stage();
    if (ok) ok = tma::mbarrier_wait(&sm.full[at.s], at.parity, ctx, "gemm_stage_full", at.s);
    const bool go = kBoth ? tma::named_sync_and<5>(256, ok)
                          : (me.wg == 0 ? tma::named_sync_and<3>(128, ok) : tma::named_sync_and<4>(128, ok));
    if (!go) break;
    const int u = sm.units[at.s];  // the same in every thread: the slot is rewritten only after they release it
    if (u < 0) break;
    const ConsumerTile tile = enter_tile<Shape>(src, sm, n_blocks, u, rank, e_hint, me.r_in_tile);
    mainloop(tile);
    store_tile<Shape>(acc, tile, me.wg, ok, map_out, sm.out, src);
  }
  if (Shape::kTmaStore && me.store_leader) tma::bulk_wait_all();
}

template <int kRows, int kCols>
SYMMOE_DEVICE void zero(float (&a)[kRows][kCols]) {
#pragma unroll
  for (int h = 0; h < kRows; ++h) {
#pragma unroll
    for (int i = 0; i < kCols; ++i) a[h][i] = 0.f;
  }
}

// v[0 .. n - 1] := its inclusive prefix sums, by the 32 lanes of one warp (32 at a time).
template <class T>
SYMMOE_DEVICE void warp_inclusive_scan(T* v, int n, int lane) {
  T carry = 0;
  for (int base = 0; base < n; base += 32) {
    const int i = base + lane;
    T x = i < n ? v[i] : T{0};
#pragma unroll
    for (int d = 1; d < 32; d *= 2) {
      const T u = __shfl_up_sync(0xffffffffu, x, d);
      if (lane >= d) x += u;
    }
    if (i < n) v[i] = carry + x;
    carry += __shfl_sync(0xffffffffu, x, 31);
  }
}

// NOTE [wgmma weight multicast]: with kCluster > 1 the CTAs of a cluster run tiles of one
// expert, kCluster consecutive row blocks x kClusterN consecutive column blocks (one work
// unit, locate_tile); CTA rank rm + kCluster rn runs row block rm and column block rn of it.
// The CTAs of a column block need the same weight tile each K block: CTA (rm, rn) loads
// weight rows rm * kBSliceRows .. (rm + 1) * kBSliceRows - 1 of it and multicasts them into
// stage s of every CTA of that column block, at the same offset; likewise (kClusterN > 1)
// activation rows rn * kASliceRows .. of its row block's tile into every CTA of the row block.
// Hence:
//  - each CTA's full barrier expects the whole activation and weight tiles (slices from its
//    peers; a peer's bytes may land before this CTA's expect-tx, which only lowers the
//    transaction count of a phase that still lacks its arrivals);
//  - a producer may refill stage s only when the consumers of every CTA it copies into
//    released it: each consumer warp arrives on stage s's empty barrier in every CTA that
//    copies into its own (its row block's and column block's CTAs: kWriters x 8 arrivals; the
//    relation is symmetric, so that is also the set each producer waits for);
//  - the barriers are initialised before any CTA of the cluster runs (cluster_sync after
//    init), and no CTA exits while a peer may still arrive on its barriers or write its
//    stages (cluster_sync at the end, reached by every thread, producers included).
// Every CTA of a cluster walks the same units, so the stage sequence matches across the CTAs.
//
// The kernel: Consumer::run(src, sm, n_blocks, &map_out, ctx) is the consumer warpgroups'
// part (their mainloop and the store_tile calls), Consumer::name() names the kernel in reports.
template <class Shape, class Consumer>
__global__ void __launch_bounds__(kThreads, 1)
    sm90_grouped_gemm_wgmma_kernel(const __grid_constant__ CUtensorMap map_act,
                                   const __grid_constant__ CUtensorMap map_weights,
                                   const __grid_constant__ CUtensorMap map_out,
                                   const __grid_constant__ CUtensorMap map_act_scales,
                                   const __grid_constant__ CUtensorMap map_w_scales, const WgmmaParams p) {
  constexpr int kBN = Shape::kBN, kStages = Shape::kStages;
  const GroupSource& src = p.src;
  const int groups = src.groups;
  const int n_blocks = (src.n + kBN - 1) / kBN;

  extern __shared__ uint8_t smem_raw[];
  // 1024-byte aligned (the 128-byte swizzle's period) by an offset from smem_raw, so the
  // compiler still sees shared-memory pointers (shared loads, not generic ones).
  const Smem<Shape> sm(smem_raw + ((1024 - (tma::smem_addr(smem_raw) & 1023)) & 1023), groups);

  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  // Units per expert, then their prefix (warp 0). Invalid row tables count 0 rows; CTA 0
  // reports them.
  for (int e = tid; e < groups; e += kThreads) {
    const GroupRows rows = resolve_group_rows(src, e, p.status, blockIdx.x == 0, Consumer::name());
    sm.rows[e] = make_int2(static_cast<int>(rows.row0), rows.count);  // row0 < 2^31: checked at launch
    const int m_blocks = (rows.count + kBM - 1) / kBM;
    sm.tile_start[e + 1] = (m_blocks + Shape::kCluster - 1) / Shape::kCluster * column_units<Shape>(n_blocks);
  }
  if (tid == 0) {
    tma::prefetch_map(&map_act);
    tma::prefetch_map(&map_weights);
    if (Shape::kTmaStore) tma::prefetch_map(&map_out);
    if (Shape::kScaled && p.scale_maps) {
      tma::prefetch_map(&map_act_scales);
      tma::prefetch_map(&map_w_scales);
    }
    for (int s = 0; s < kStages; ++s) {
      // the expect-tx arrival (+ the scale warp's lanes: NOTE [wgmma stage scales])
      device::bulk::mbarrier_init(&sm.full[s], 1 + (Shape::kScaled && !p.scale_maps ? 32 : 0));
      device::bulk::mbarrier_init(&sm.empty[s], Shape::kWriters * kConsumerWarps);
      // NOTE [wgmma tile schedule]: the unit tags start at 0 (no tile); shared memory keeps the
      // previous kernel's values, whose tags could match a tile of this launch.
      sm.units[kStages + s] = 0;
    }
    device::bulk::fence_mbarrier_init();
  }
  __syncthreads();
  if (warp == 0) {
    warp_inclusive_scan(sm.tile_start + 1, groups, lane);
    __syncwarp();
    if (lane == 0) {
      sm.tile_start[0] = 0;
      sm.unit_count() = sm.tile_start[groups];
      // NOTE [wgmma tile schedule]: alike in every CTA (kDynamic with clusters of one only,
      // checked at launch; kAuto with clusters runs kStatic).
      const bool many = sm.unit_count() >= kWgmmaDynamicMinUnits * static_cast<int>(gridDim.x);
      sm.dynamic() = Shape::kCtas == 1 && (p.schedule == WgmmaSchedule::kDynamic ||
                                           (p.schedule == WgmmaSchedule::kAuto && (src.row_band > 0 || many)));
    }
  }
  __syncthreads();
  if constexpr (Shape::kCtas > 1) tma::cluster_sync();
  const device::WaitContext ctx{p.status, p.timeout_ns, Consumer::name()};

  if (warp < 4) {
    tma::regs_dec<kProducerRegs>();
    produce<Shape>(map_act, map_weights, ScaleMaps{&map_act_scales, &map_w_scales, p.scale_maps}, src, sm, n_blocks,
                   p.schedule_words, ctx);
  } else {
    tma::regs_inc<kConsumerRegs>();
    Consumer::run(src, sm, n_blocks, &map_out, ctx);
  }
  if constexpr (Shape::kCtas > 1) tma::cluster_sync();
}

// cuTensorMapEncodeTiled over `rank` (2 to 5) dimensions: no interleave, zeros past the
// tensor, unit element strides. dims[1] is the row coordinate the kernels address (32-bit)
// and strides[0] the row pitch in bytes. `family` (the kernel family) and `what` (the
// operand) name the map in errors.
inline CUtensorMap encode_map(const char* family, const char* what, const void* base, CUtensorMapDataType type,
                              cuuint32_t rank, const cuuint64_t* dims, const cuuint64_t* strides, const cuuint32_t* box,
                              CUtensorMapSwizzle swizzle, CUtensorMapL2promotion promotion) {
  SYMMOE_CHECK(dims[1] <= INT32_MAX, "grouped GEMM (", family, "): ", what, " has ", dims[1],
               " rows; tensor-map coordinates are 32-bit");
  const cuuint32_t elem_strides[5] = {1, 1, 1, 1, 1};
  CUtensorMap map{};
  const CUresult rc = driver().cuTensorMapEncodeTiled(&map, type, rank, const_cast<void*>(base), dims, strides, box,
                                                      elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle, promotion,
                                                      CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  SYMMOE_CHECK(rc == CUDA_SUCCESS, "grouped GEMM (", family, "): cuTensorMapEncodeTiled for ", what,
               " failed (CUresult ", static_cast<int>(rc), "; ", dims[1], " rows of ", strides[0], " bytes at ", base,
               ")");
  return map;
}

// encode_map with the 128-byte swizzle (operands and staged outputs).
inline CUtensorMap encode_map_sw128(const char* family, const char* what, const void* base, CUtensorMapDataType type,
                                    cuuint32_t rank, const cuuint64_t* dims, const cuuint64_t* strides,
                                    const cuuint32_t* box, CUtensorMapL2promotion promotion) {
  return encode_map(family, what, base, type, rank, dims, strides, box, CU_TENSOR_MAP_SWIZZLE_128B, promotion);
}

// 2-D tensor map over a row-major [rows, cols] matrix of `elem_bytes`-byte elements, boxes of
// box_rows x box_cols (box_cols x elem_bytes = 128 bytes), 128-byte swizzle: the layout
// desc_lo_k_major_sw128 / desc_from_lo describe for operands, and store_tile_tma stages.
// Elements past the matrix arrive as zeros.
inline CUtensorMap make_map_sw128(const void* base, CUtensorMapDataType type, int elem_bytes, int64_t rows,
                                  int64_t cols, int box_rows, CUtensorMapL2promotion promotion, const char* what) {
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(cols), static_cast<cuuint64_t>(rows)};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(cols * elem_bytes)};
  const cuuint32_t box[2] = {static_cast<cuuint32_t>(128 / elem_bytes), static_cast<cuuint32_t>(box_rows)};
  return encode_map_sw128("wgmma", what, base, type, 2, dims, strides, box, promotion);
}

// Operand [rows, k] of Shape's element type: boxes of box_rows x one K block.
template <class Shape>
CUtensorMap make_operand_map(const void* base, int64_t rows, int64_t k, int box_rows, const char* what) {
  const CUtensorMapDataType type =
      Shape::kElemBytes == 1 ? CU_TENSOR_MAP_DATA_TYPE_UINT8 : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
  return make_map_sw128(base, type, Shape::kElemBytes, rows, k, box_rows, CU_TENSOR_MAP_L2_PROMOTION_L2_256B, what);
}

// A launch of blocks of kThreads in 1-D clusters of `cluster` CTAs; `attr` holds the cluster
// attribute and must outlive the config.
inline cudaLaunchConfig_t cluster_launch_config(int grid, int cluster, size_t smem, cudaStream_t stream,
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
inline int persistent_ctas(const void* kernel, int cluster, int sm_budget, int device) {
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
      SYMMOE_CHECK(rc == cudaSuccess && n > 0, "grouped GEMM (wgmma): no cluster of ", cluster,
                   " CTAs fits on device ", device, " (cudaOccupancyMaxActiveClusters: ", cudaGetErrorString(rc),
                   ", ", n, ")");
      it = resident.emplace(std::make_pair(kernel, device), n).first;
    }
    clusters = it->second;
  }
  return std::max(std::min(clusters, sm_budget / cluster), 1) * cluster;
}

// bf16 output [rows, n]: boxes of 64 rows x 64 columns, what store_tile_tma stages.
inline CUtensorMap make_out_map(void* base, int64_t rows, int64_t n) {
  return make_map_sw128(base, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, rows, n, 64, CU_TENSOR_MAP_L2_PROMOTION_NONE,
                        "the output");
}

// NOTE [wgmma stage scales]: fp32 [rows, kblocks] scales in boxes of box_rows x kScaleCols K
// blocks, unswizzled.
template <class Shape>
CUtensorMap make_scale_map(const float* base, int64_t rows, int kblocks, int box_rows, const char* what) {
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(kblocks), static_cast<cuuint64_t>(rows)};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(kblocks) * 4};
  const cuuint32_t box[2] = {static_cast<cuuint32_t>(Shape::kScaleCols), static_cast<cuuint32_t>(box_rows)};
  return encode_map("wgmma", what, base, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, dims, strides, box,
                    CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE);
}

// Whether the scales of `src` come by tensor copies (NOTE [wgmma stage scales]): asked for
// (SYMMOE_GEMM_WGMMA_SCALES=tma), the maps' row pitch (K / 128 floats) a multiple of 16
// bytes and both tensors 16-byte aligned.
template <class Shape>
bool scale_maps_fit(const GroupSource& src) {
  if (!Shape::kScaled || env::get_string("SYMMOE_GEMM_WGMMA_SCALES") != "tma") return false;
  const int64_t kblocks = src.k / kFp8ScaleBlock;
  const auto aligned = [](const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; };
  return kblocks % Shape::kScaleCols == 0 && aligned(src.act_scales) && aligned(src.weight_scales);
}

// NOTE [wgmma tile schedule]: SYMMOE_GEMM_WGMMA_SCHEDULE.
inline WgmmaSchedule wgmma_schedule() {
  const std::string v = env::get_string("SYMMOE_GEMM_WGMMA_SCHEDULE");
  return v == "dynamic" ? WgmmaSchedule::kDynamic : v == "static" ? WgmmaSchedule::kStatic : WgmmaSchedule::kAuto;
}

// The wgmma kernels need no workspace (ConfigOps::workspace).
inline WorkspaceBytes no_workspace(int, int) { return {}; }

// Host side of one kernel instance: tensor maps over all experts' rows, persistent CTAs in the
// SM budget, launch; and its entry for eager loading.
template <class Shape, class Consumer>
struct WgmmaLaunch {
  static const void* kernel() { return reinterpret_cast<const void*>(&sm90_grouped_gemm_wgmma_kernel<Shape, Consumer>); }
  static cudaError_t launch(const GroupSource& src, const LaunchSlots& slots, cudaStream_t stream) {
    SYMMOE_CHECK(src.groups <= Shape::max_groups(), "grouped GEMM (", Consumer::name(), "): ", src.groups,
                 " experts; the tile table in shared memory holds at most ", Shape::max_groups());
    const int64_t rows = src.offsets == nullptr ? int64_t{src.groups} * src.max_m : src.total_rows;
    CUtensorMap map_act = make_operand_map<Shape>(src.act, rows, src.k, Shape::kASliceRows, "activations");
    CUtensorMap map_w =
        make_operand_map<Shape>(src.weights, int64_t{src.groups} * src.n, src.k, Shape::kBSliceRows, "weights");
    CUtensorMap map_out = Shape::kTmaStore ? make_out_map(src.out, rows, src.n) : CUtensorMap{};
    const bool scale_maps = scale_maps_fit<Shape>(src);
    CUtensorMap map_act_scales{}, map_w_scales{};
    if (scale_maps) {
      const int kblocks = src.k / kFp8ScaleBlock;
      map_act_scales = make_scale_map<Shape>(src.act_scales, rows, kblocks, kBM, "activation scales");
      map_w_scales = make_scale_map<Shape>(src.weight_scales, int64_t{src.groups} * (src.n / kFp8ScaleBlock), kblocks,
                                           2, "weight scales");
    }
    const WgmmaSchedule schedule = wgmma_schedule();
    SYMMOE_CHECK(schedule != WgmmaSchedule::kDynamic || Shape::kCtas == 1, "grouped GEMM (", Consumer::name(),
                 "): SYMMOE_GEMM_WGMMA_SCHEDULE=", env::get_string("SYMMOE_GEMM_WGMMA_SCHEDULE"),
                 " is built for clusters of one CTA only");
    SYMMOE_CHECK(schedule == WgmmaSchedule::kStatic || slots.schedule != nullptr, "grouped GEMM (",
                 Consumer::name(), "): no schedule words for the dynamic schedule");
    WgmmaParams params{src, slots.status, runtime::wait_timeout_ns(), scale_maps, schedule, slots.schedule};
    const void* fn = kernel();
    const int ctas = persistent_ctas(fn, Shape::kCtas, slots.sm_count, slots.device);
    const int row_band = static_cast<int>(env::get_int("SYMMOE_GEMM_WGMMA_ROW_BAND"));
    const long long tiles = wgmma_tiles_estimate(src.expected_m, src.groups, src.n, Shape::kBN);
    params.src.row_band =
        row_band >= 0 ? row_band : (Shape::kScaled ? fp8_wgmma_row_band_by_default(src.expected_m, tiles, ctas) : 0);
    cudaLaunchAttribute attr;
    const cudaLaunchConfig_t config =
        cluster_launch_config(ctas, Shape::kCtas, Shape::smem_bytes(src.groups), stream, attr);
    void* args[] = {&map_act, &map_w, &map_out, &map_act_scales, &map_w_scales, &params};
    return cudaLaunchKernelExC(&config, fn, args);
  }
  static void append(std::vector<runtime::KernelEntry>& out, const char* name) {
    out.push_back({name, kernel(), kMaxSmem, -1});
  }
};

}  // namespace symmoe::gemm::sm90::wgmma_frame
