// The fp8 swap-AB kernel's layout (NOTE [fp8 swap-AB kernel], sm90_grouped_gemm_fp8_swapab_kernels.cu):
// its shapes (rows per pass, K blocks per stage, stages, pairs or K split), a stage's weights,
// activations and scales in shared memory, and the step codes that travel with the stages.
// Private to src/gemm.
#pragma once

#include <cstdint>

#include "sm90_grouped_gemm_launch.hpp"
#include "sm90_grouped_gemm_wgmma_frame.cuh"
#include "symmoe/gemm/grouped_gemm.hpp"

namespace symmoe::gemm::sm90::swapab {

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

}  // namespace symmoe::gemm::sm90::swapab
