// The wgmma frame's consumer side, what every mainloop shares: stage descriptors, the tile a
// unit names, the epilogue (direct or tensor stores), stage release and the walk over the
// CTA's tiles. The mainloops themselves are the kernels' (Consumer::run). Private to src/gemm.
#pragma once

#include <cuda_bf16.h>

#include <algorithm>

#include "sm90_wgmma_frame_layout.cuh"
#include "symmoe/device/bounded_wait.cuh"

namespace symmoe::gemm::sm90::wgmma_frame {

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

// Stage s's words from stage 0's (`base`, from stage_desc): a descriptor's start address counts
// 16-byte units, so s stages on are s stage sizes / 16 on (kept uniform, no shuffle).
template <class Shape>
SYMMOE_DEVICE StageDesc stage_desc_at(StageDesc base, int s) {
  return StageDesc{base.a_lo + static_cast<uint32_t>(s * Shape::kABytes / 16),
                   base.b_lo + static_cast<uint32_t>(s * Shape::kBBytes / 16)};
}

// The start-address word of batch b's weight rows (kBatchN b .. kBatchN (b + 1) - 1) in the
// stage (NOTE [wgmma descriptor steps]).
template <class Shape>
SYMMOE_DEVICE uint32_t batch_b_lo(StageDesc sd, int b) {
  return sd.b_lo + static_cast<uint32_t>(b * Shape::kBatchN * kBK / 16);
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
  int scale_row;   // fp8: the float of a stage's activation scales holding row r_lo (NOTE [wgmma stage scales])
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
  c.scale_row = act_scale_shift(src, c.rows) + r_in_tile;
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

// The start of a consumer's next tile: waits for its first stage `at` (while `ok`), agrees on
// the outcome across the warpgroup (kBoth: both warpgroups, which take turns through named
// barriers) and reads the unit published there. False at the stop or after a failed wait in any
// thread of the agreeing warpgroup(s); otherwise `tile` is the unit's tile.
template <class Shape, bool kBoth = false>
SYMMOE_DEVICE bool next_consumer_tile(const GroupSource& src, const Smem<Shape>& sm, int n_blocks,
                                      const ConsumerThread& me, StageAt at, int rank, int& e_hint, bool& ok,
                                      const device::WaitContext& ctx, ConsumerTile& tile) {
  if (ok) ok = tma::mbarrier_wait(&sm.full[at.s], at.parity, ctx, "gemm_stage_full", at.s);
  const bool go = kBoth ? tma::named_sync_and<5>(256, ok)
                        : (me.wg == 0 ? tma::named_sync_and<3>(128, ok) : tma::named_sync_and<4>(128, ok));
  if (!go) return false;
  const int u = sm.units[at.s];  // the same in every thread: the slot is rewritten only after they release it
  if (u < 0) return false;
  tile = enter_tile<Shape>(src, sm, n_blocks, u, rank, e_hint, me.r_in_tile);
  return true;
}

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
    ConsumerTile tile;
    if (!next_consumer_tile<Shape, kBoth>(src, sm, n_blocks, me, first_stage(), rank, e_hint, ok, ctx, tile)) break;
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

}  // namespace symmoe::gemm::sm90::wgmma_frame
