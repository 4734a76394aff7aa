// The wgmma frame's producer warpgroup: the tensor copies and the scales of every stage, and the
// work units it takes and publishes to the consumers (NOTE [wgmma tile schedule]). Private to src/gemm.
#pragma once

#include "sm90_wgmma_frame_scales.cuh"
#include "symmoe/device/bounded_wait.cuh"

namespace symmoe::gemm::sm90::wgmma_frame {

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

}  // namespace symmoe::gemm::sm90::wgmma_frame
