// The wgmma frame's producer warpgroup: the tensor copies and the scales of every stage, and the
// work units it takes and publishes to the consumers (NOTE [wgmma tile schedule]). Private to src/gemm.
#pragma once

#include "sm90_wgmma_frame_scales.cuh"
#include "symmoe/device/bounded_wait.cuh"

namespace symmoe::gemm::sm90::wgmma_frame {

// NOTE [tiles located ahead]: locating a unit's tile (the expert search, two divisions, the
// rows and offsets of the copies) is ~250 dependent instructions, ~2000 cycles on the copier's
// one thread beside the consumers' warps (K-block trace at 9bb29c6 on an H100: 2100 cycles from
// a tile's unit to its first copies, as long again on the scaler). Done as a tile starts, it
// sat between the consumers' release of stage 0 and the next tile's first copies: the
// consumers waited ~1700 (down) to ~2700 (gate/up) cycles at every tile start. So the copier
// locates tile j + 1 during tile j, once its K block min(1, kblocks - 1) is issued (kDynamic:
// the counter drawn after K block 0, its round trip under K block 1's wait), and publishes
// (unit, expert, row block, column block) in slot (j + 1) % kAheadSlots, then j + 2 in the
// slot's tag (shared memory, volatile, a CTA fence between); -1 as the unit is the stop. Tile
// 0 is located before the walk. The scaler waits for tile j's tag (bounded) before its own
// wait for the tile's first stage, and neither thread computes anything but a few offsets as a
// tile starts. The slot of tile j + 1 last held tile j + 1 - kAheadSlots <= j - kStages, whose
// unit the scaler read before its first arrival for it; the copier's wait for the stage of
// K block min(1, kblocks - 1) of tile j needed the release of that stage's previous use, kStages
// uses back at most (the same stage of tile j - 1 with the unrolled ring), i.e. of a K block of
// tile j - kStages or later (kblocks >= 1), and so that arrival.
// Measured on an H100 against 9bb29c6, same call, 3 rounds x 30 replays
// (bench/results/gemm_wgmma_tiles_ahead_ab_h100.log): down 1.055-1.070x at 8 / 32 experts x
// 1024 / 4096 rows, gate/up 0.98-1.01x, geometric mean 1.029x (1.043x per GHz); K-block trace
// (gemm_wgmma_tiles_ahead_trace_h100.log): a tile's first copies 230-250 cycles after its
// first stage comes free (was 2100), its first scales 400-470 (was 1900-2000), the tile
// boundary at down 8 x 4096 1900 cycles (was 3450). The rest of the consumers' first-stage
// wait is the copies' latency (~4000 cycles from issue to the consumers' pass).
struct AheadTile {
  int u;  // the unit, -1: the stop
  GemmTilePos pos;
};

template <class Shape>
SYMMOE_DEVICE void publish_ahead(const Smem<Shape>& sm, const GroupSource& src, int n_blocks, int u, int rank,
                                 int& e_hint, int j) {
  volatile int* slot = sm.ahead_slot(j);
  if (u < sm.unit_count()) {
    const GemmTilePos pos = locate_tile<Shape>(sm.tile_start, src.groups, n_blocks, u, rank, e_hint, src.row_band);
    slot[1] = u;
    slot[2] = pos.e;
    slot[3] = pos.mb;
    slot[4] = pos.nb;
  } else {
    slot[1] = -1;
  }
  __threadfence_block();
  slot[0] = j + 1;
}

template <class Shape>
SYMMOE_DEVICE AheadTile read_ahead(const Smem<Shape>& sm, int j) {
  const volatile int* slot = sm.ahead_slot(j);
  return AheadTile{slot[1], GemmTilePos{slot[2], slot[3], slot[4]}};
}

template <class Shape>
SYMMOE_DEVICE bool await_ahead(const Smem<Shape>& sm, int j, AheadTile& t, const device::WaitContext& ctx) {
  const volatile int* tag = sm.ahead_slot(j);
  const bool ok = device::bounded_wait(
      ctx, device::WaitSite{"gemm_tile_unit", static_cast<uint32_t>(j & (Shape::kAheadSlots - 1)), -1, -1},
      static_cast<uint64_t>(j + 1), [tag]() -> uint64_t { return static_cast<uint64_t>(*tag); },
      [j](uint64_t v) { return v == static_cast<uint64_t>(j + 1); });
  __threadfence_block();
  t = read_ahead(sm, j);
  return ok;
}

// A producer role's bounded wait for the stage at its ring position to be free (the consumers'
// release of its previous use).
template <class Shape>
SYMMOE_DEVICE bool wait_stage_free(const Smem<Shape>& sm, const StageCursor<Shape>& ring,
                                   const device::WaitContext& ctx) {
  return tma::mbarrier_wait(&sm.empty[ring.s], ring.parity() ^ 1, ctx, "gemm_stage_free", ring.s);
}

// The copier (thread 0 of the producer warpgroup): walks the units (kDynamic: from the
// counter), locates each tile a tile ahead (NOTE [tiles located ahead]), publishes each unit to
// the consumers (NOTE [wgmma tile schedule]) and issues the tensor copies, the scales' too with
// scale maps. Each role runs its own loop: with one loop for both, the scaler's per-row
// addresses were hoisted out of the K loop into code the copier ran too, ~1300 cycles after
// every tile's first stage came free (K-block trace, bench/RESULTS.md). The first stage's wait
// is the K loop's first, so a tile's offsets are computed before it.
template <class Shape>
SYMMOE_DEVICE void copy_operands(const CUtensorMap& map_act, const CUtensorMap& map_weights,
                                 const ScaleMaps& scale_maps, const GroupSource& src, const Smem<Shape>& sm,
                                 int n_blocks, int* words, const device::WaitContext& ctx) {
  const bool scale_copies = Shape::kScaled && scale_maps.on;
  const int kblocks = kblocks_of<Shape>(src);
  const int kb_ahead = kblocks > 1 ? 1 : 0;  // the K block after whose copies the next tile is located
  const UnitWalk<Shape> walk;
  StageCursor<Shape> ring;
  int e_hint = 0;
  publish_ahead<Shape>(sm, src, n_blocks, walk.first, walk.rank, e_hint, 0);
  for (int j = 0;; ++j) {
    const AheadTile t = read_ahead(sm, j);
    ring.start_tile();
    if (t.u < 0) {  // the stop: published at the next tile's first stage, an arrival without bytes
      const int s0 = ring.s;
      if (wait_stage_free(sm, ring, ctx)) {
        sm.units[s0] = -1;
        tma::mbarrier_arrive(&sm.full[s0]);
      }
      break;
    }
    const GroupRows rows = sm.expert_rows(t.pos.e);
    const int64_t m0 = int64_t{t.pos.mb} * kBM;  // first row of the tile within the expert
    const int64_t n0 = int64_t{t.pos.nb} * Shape::kBN;  // first column (weight row) of the tile
    const int rm = walk.rank % Shape::kCluster, rn = walk.rank / Shape::kCluster;
    const auto a_row = static_cast<int32_t>(rows.row0 + m0 + rn * Shape::kASliceRows);
    const auto b_row = static_cast<int32_t>(int64_t{t.pos.e} * src.n + n0 + rm * Shape::kBSliceRows);
    const ActScaleBox scale_box = act_scale_box(src, rows, t.pos.e, m0, kblocks);
    const auto w_scale_row = static_cast<int32_t>((int64_t{t.pos.e} * src.n + n0) / kFp8ScaleBlock);
    bool failed = false;
    for (int kb = 0; kb < kblocks; ++kb) {
      const int s = ring.s;
      if (!wait_stage_free(sm, ring, ctx)) {
        failed = true;
        break;
      }
      if (kb == 0) sm.units[s] = t.u;  // published to the consumers by the arrival below (release)
      const auto k0 = static_cast<int32_t>(kb * Shape::kKElems);
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
        tma::load_2d(sc, scale_maps.act, scale_box.row, scale_box.kblock + kb, &sm.full[s]);
        tma::load_2d(sc + Shape::kWeightScaleAt, scale_maps.weights, kb4, w_scale_row, &sm.full[s]);
      }
      // NOTE [tiles located ahead]: kDynamic's draw waits in the next tile's slot (its tag still
      // the old one), and the static walk's unit is read back from this tile's: a register
      // live across the K loop for either spills at kProducerRegs.
      if (kb == 0 && sm.dynamic()) {
        static_cast<volatile int*>(sm.ahead_slot(j + 1))[1] = static_cast<int>(gridDim.x) + atomicAdd(words, 1);
      }
      if (kb == kb_ahead) {
        const int next = sm.dynamic() ? static_cast<volatile int*>(sm.ahead_slot(j + 1))[1]
                                      : static_cast<volatile int*>(sm.ahead_slot(j))[1] + walk.stride;
        publish_ahead<Shape>(sm, src, n_blocks, next, walk.rank, e_hint, j + 1);
      }
      ring.advance();
    }
    if (failed) break;
  }
  // kDynamic: this CTA takes no more units; the last CTA out resets the words. The copier made
  // every counter access of the CTA.
  if (sm.dynamic()) {
    __threadfence();
    if (atomicAdd(words + 1, 1) == static_cast<int>(gridDim.x) - 1) {
      __threadfence();
      words[0] = 0;
      words[1] = 0;
      __threadfence();
    }
  }
}

// The scaler (warp 1 of the producer warpgroup, kScaled without scale maps): each stage's scales
// by cp.async (NOTE [wgmma stage scales]), the tiles learnt from the copier (NOTE [tiles located
// ahead]); its arrivals on full[s] are counted by the barrier (one per lane).
template <class Shape>
SYMMOE_DEVICE void copy_scales(const GroupSource& src, const Smem<Shape>& sm, const device::WaitContext& ctx) {
  const int lane = threadIdx.x % 32;
  const int kblocks = kblocks_of<Shape>(src);
  StageCursor<Shape> ring;
  for (int j = 0;; ++j) {
    AheadTile t;
    if (!await_ahead(sm, j, t, ctx)) break;
    ring.start_tile();
    if (t.u < 0) {  // the stop: this warp's arrivals of a K block, no bytes
      const int s0 = ring.s;
      if (wait_stage_free(sm, ring, ctx)) {
        tma::cp_async_arrive_noinc(&sm.full[s0]);
      }
      break;
    }
    const TileScaleSource from = tile_scale_source(src, sm.expert_rows(t.pos.e), int64_t{t.pos.mb} * kBM,
                                                   int64_t{t.pos.nb} * Shape::kBN, t.pos.e, kblocks, lane);
    bool failed = false;
    for (int kb = 0; kb < kblocks; ++kb) {
      const int s = ring.s;
      if (!wait_stage_free(sm, ring, ctx)) {
        failed = true;
        break;
      }
      copy_block_scales<Shape>(sm.scales + s * Shape::kScaleFloats, src, from, kb, &sm.full[s], lane);
      ring.advance();
    }
    if (failed) break;
  }
}

// Producer warpgroup (NOTE [wgmma tile schedule]): thread 0 copies the operands (copy_operands),
// warp 1 the scales by cp.async (copy_scales: kScaled without scale maps); the other threads
// have nothing to do. Returns at the end of the work (the stop published) or on a failed wait.
template <class Shape>
SYMMOE_DEVICE void produce(const CUtensorMap& map_act, const CUtensorMap& map_weights, const ScaleMaps& scale_maps,
                           const GroupSource& src, const Smem<Shape>& sm, int n_blocks, int* words,
                           const device::WaitContext& ctx) {
  if (threadIdx.x == 0) {
    copy_operands<Shape>(map_act, map_weights, scale_maps, src, sm, n_blocks, words, ctx);
  } else if constexpr (Shape::kScaled) {
    if (!scale_maps.on && threadIdx.x / 32 == 1) copy_scales<Shape>(src, sm, ctx);
  }
}

}  // namespace symmoe::gemm::sm90::wgmma_frame
