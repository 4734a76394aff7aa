// The wgmma frame's kernel: set-up of the tile table and barriers in shared memory, then the
// producer warpgroup and the two consumer warpgroups (Consumer::run). Private to src/gemm.
#pragma once

#include "sm90_wgmma_frame_consumer.cuh"
#include "sm90_wgmma_frame_producer.cuh"

namespace symmoe::gemm::sm90::wgmma_frame {

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
    }
    // NOTE [tiles located ahead]: the tags start at 0 (no tile); shared memory keeps the
    // previous kernel's values, whose tags could match a tile of this launch.
    for (int i = 0; i < Shape::kAheadSlots; ++i) *sm.ahead_slot(i) = 0;
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

}  // namespace symmoe::gemm::sm90::wgmma_frame
