// The wgmma frame (sm90_grouped_gemm_wgmma_frame.cuh), its shapes and state: the CTA's warp
// roles and register split, a kernel's TileShape, the launch parameters, where a work unit's
// tile lies, the stage ring's cursor, the shared-memory carve-up and the cluster's peers.
// Private to src/gemm.
#pragma once

#include <cuda.h>

#include <cstdint>

#include "grouped_gemm_rows.cuh"
#include "sm90_grouped_gemm_launch.hpp"
#include "sm90_tma_wgmma.cuh"
#include "symmoe/device/grouped_gemm_tile_order.cuh"
#include "symmoe/device/ptx.cuh"
#include "symmoe/gemm/grouped_gemm.hpp"

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
  // NOTE [wgmma stage scales]: a stage's scales are the activation scales of its K block, tile
  // row r at float act_scale_shift + r of kScaleRows (a tensor copy's box starts at the 16-byte
  // boundary at or below the tile's first row), then at kWeightScaleAt [2 weight-scale blocks]
  // [kScaleCols], column kb % kScaleCols holding the stage's K block kb, the others its
  // neighbours' (tensor copies move 16-byte rows; unused) or nothing (cp.async).
  static constexpr int kScaleCols = 4;
  static constexpr int kScaleRows = kBM + 4;
  static constexpr int kWeightScaleAt = kScaled ? (kScaleRows + 31) / 32 * 32 : 0;  // 128-byte aligned
  static constexpr int kScaleBytes = kScaled ? 4 * (kScaleRows + 2 * kScaleCols) : 0;  // one stage's tensor copies
  static constexpr int kScaleFloats = kScaled ? (kWeightScaleAt + 2 * kScaleCols + 31) / 32 * 32 : 0;
  static constexpr int kBand = 8;  // N-tiles walked together (L2 reuse of activation tiles)
  // NOTE [unrolled stage ring]: false here; a consumer that unrolls its K loop over the stages
  // sets it in its shape, and the ring then keeps a phase bit per stage; kTilesAtStage0 (only
  // with kUnrolled) starts every tile at stage 0.
  static constexpr bool kUnrolled = false;
  static constexpr bool kTilesAtStage0 = false;
  // NOTE [tiles located ahead]: the tiles the copier has located, kAheadSlots deep (kStages + 1
  // at least; a power of two, so a slot's offset is a mask the copier recomputes, not a
  // register it keeps across the tile).
  static constexpr int kAheadSlots = 8;
  // ints of the unit words: [kStages stage units][unit count, dynamic]
  // [kAheadSlots x (tag, unit, expert, row block, column block)], rounded to 8 bytes (the rows follow)
  static constexpr int kUnitInts = (kStages + 2 + 5 * kAheadSlots + 1) / 2 * 2;
  // [kStages x A][kStages x B][out tile][kStages x scales][kStages full bars][kStages empty bars]
  // [unit words][expert rows: E x (row0, count)][tile prefix: E + 1 ints]
  static constexpr int kFixedBytes =
      kStages * (kABytes + kBBytes + 4 * kScaleFloats) + kOutBytes + 2 * 8 * kStages + 4 * kUnitInts;
  static constexpr int smem_bytes(int groups) { return 1024 + kFixedBytes + 8 * groups + 4 * (groups + 1); }
  static constexpr int max_groups() { return (kMaxSmem - 1024 - kFixedBytes - 4) / 12; }
  static_assert(kAheadSlots >= kStages + 1 && (kAheadSlots & (kAheadSlots - 1)) == 0, "NOTE [tiles located ahead]");
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

// The float of a stage's activation scales that holds tile row 0 (NOTE [wgmma stage scales]):
// the tile's first row modulo 4 where a column-major box would start at it rounded down
// (contiguous layout: m0 is a multiple of 128, so row0 decides), 0 for the masked layout, whose
// boxes start at m0. Every mode and scale layout places the rows alike, so the consumers need
// not know which one ran.
SYMMOE_DEVICE int act_scale_shift(const GroupSource& src, const GroupRows& rows) {
  return src.offsets == nullptr ? 0 : static_cast<int>(rows.row0 & 3);
}

// NOTE [wgmma tile schedule]: how a CTA's producer takes its work units, and how the consumers
// learn them. The producer publishes each tile's unit in sm.units[s] for the stage s of the
// tile's first K block, written before its arrival on full[s] (release) and read by the
// consumers after their wait on full[s] (acquire); it overwrites the slot only once the
// consumers released stage s, after their read. After its last tile it publishes -1 at the
// next tile's first stage (an arrival without bytes), and the consumers leave. Each consumer
// warpgroup decides to go on as a whole (an and-vote over its first-stage wait: wgmma and the
// epilogue's named barriers stay warpgroup-uniform; both warpgroups together with ordered issue).
//  - kStatic: units blockIdx.x, + gridDim.x, ... (per cluster with kCtas > 1);
//  - kDynamic (clusters of one): units blockIdx.x first, then gridDim.x + the next value of a
//    device-wide counter (LaunchSlots::schedule {next, done}), drawn by the copier once a
//    tile's first copies are issued and used a K block later, so the round trip runs under the
//    tile's copies. The tiles in flight then stay a window of about one wave in tile order
//    however unevenly the SMs run (the static stride lets them drift apart). The kernel is
//    launched without programmatic overlap, so a launch touches the counter only after the
//    previous one on the stream completed; each copier
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
// Either way the copier (thread 0, the tensor copies) walks the units and locates each tile a
// tile ahead; the scaler (warp 1, the scales' cp.async) learns the tiles from it (NOTE [tiles
// located ahead]).
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

// NOTE [unrolled stage ring]: the stage ring runs on across tiles (stage s; K block kb of a
// tile whose first K block lies in stage s0 is in stage (s0 + kb) % kStages), so a tile's first
// copies go out as soon as the stage kStages K blocks before them is released, whatever the
// tile's K blocks modulo kStages. With Shape::kUnrolled the consumer unrolls its K loop over
// the stages and addresses each stage at compile-time offsets (descriptors and scales:
// uniform-register adds instead of per-block arithmetic), its first and last rounds partial
// when s0 != 0 or K ends inside a round; each stage keeps its own phase bit (bit s of `bits`,
// flipped per use), which the unrolled loop tests at a compile-time position. A shape with
// kTilesAtStage0 starts every tile at stage 0 instead (s0 = 0 at compile time: the fp8 shapes
// whose stages are a multiple of their scale columns, where K block kb's scale column is then
// the stage's own); that costs slack at tile starts only where K blocks are not a multiple of
// kStages — with K blocks = 1 mod kStages each tile's K block 0 waits for the stage of the
// previous tile's last one. Producer and consumers walk the same tiles and K blocks, so they
// agree on every bit.
template <class Shape>
struct StageCursor {
  int s = 0;
  uint32_t bits = 0;  // kUnrolled: parity bit per stage; otherwise bit 0 for the whole ring
  SYMMOE_DEVICE void start_tile() {
    if constexpr (Shape::kTilesAtStage0) s = 0;
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
    rows = reinterpret_cast<int2*>(units + Shape::kUnitInts);
    tile_start = reinterpret_cast<int*>(rows + groups);
  }
  // The CTA's work units (tile_start[groups]) at a fixed offset: read in the producer's loop
  // without a register for its address (kProducerRegs).
  SYMMOE_DEVICE int& unit_count() const { return units[Shape::kStages]; }
  // The schedule this launch runs, resolved once at set-up (1: kDynamic), read where needed.
  SYMMOE_DEVICE int& dynamic() const { return units[Shape::kStages + 1]; }
  // NOTE [tiles located ahead]: tile j's slot: its tag (j + 1 once published), then its unit,
  // expert, row block and column block (one offset for all: a second spills, kProducerRegs).
  SYMMOE_DEVICE int* ahead_slot(int j) const { return units + Shape::kStages + 2 + 5 * (j & (Shape::kAheadSlots - 1)); }
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

}  // namespace symmoe::gemm::sm90::wgmma_frame
