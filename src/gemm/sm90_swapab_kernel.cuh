// The fp8 swap-AB kernel itself: set-up, the early launch's prefetch (NOTE [swap-AB early
// launch]), the row tables, then the producer warp and the consumer warpgroups. Private to src/gemm.
#pragma once

#include "grouped_gemm_rows.cuh"
#include "sm90_swapab_consumer.cuh"
#include "sm90_swapab_producer.cuh"
#include "symmoe/device/ptx.cuh"

namespace symmoe::gemm::sm90::swapab {

// NOTE [swap-AB early launch]: launched with programmatic dependent launch (LaunchSlots::early),
// a CTA may start while the previous kernel on the stream still runs, on an SM that kernel has
// left. Before griddepcontrol.wait it touches only its own shared memory and L2: it asks L2 for
// the lines of the row tables (read right after the wait: the first thing on the launch's path,
// so asked for first), sets up its barriers and asks L2 for the first kStages stages of weights
// of the steps it would take first (guess_first_steps: right when every expert has 1 to kT
// rows; along the first unit and on into the second, kFixedUnits, when the first ends sooner);
// a wrong guess costs only those bytes. The weights and tables may be written by the previous
// kernel (an expert prefetch, a dispatch): an L2 prefetch is no read of them — L2 is the GPU's
// point of coherence, so the reads after the wait see that kernel's writes. Row tables,
// activations, scales and outputs are read only after the wait. Every CTA then triggers its
// dependents, whose CTAs start in turn on the SMs this grid leaves (a GEMM after this one
// streams its first weights while this one drains). Measured (bench/results/
// gemm_swapab_early_copies_h200.log, gemm_swapab_fixed_units_h200.log): copying the first
// stages' weights into shared memory before the wait instead (they are model weights that no
// kernel writes) ran 1-4 points lower on down over 8 experts: at the launch boundary HBM is
// the queue, and the early copies only delayed the row-table reads behind them (NOTE [swap-AB
// trace]: row tables built 3-4.5 us after the previous launch's end instead of 1.4-2.5).
template <class S>
SYMMOE_DEVICE void prefetch_first_stages(const CUtensorMap& map_w, const GroupSource& src, const FirstGuess& g) {
  const int kstages = S::stages_per_step(src.k);
  for (int q = 0; q < S::kStages; ++q) {
    const bool second = q >= kstages;
    const int ks = second ? q - kstages : q;
    const int items = second ? g.next_items : g.items;
    if (ks >= kstages || items == 0) break;
    const int64_t w_row = second ? g.next_w_row : g.w_row;
    for (int i = 0; i < items; ++i) {
      tma::prefetch_l2_3d(&map_w, 0, static_cast<int32_t>(w_row + i * kItemRows), ks * S::kStageBlocks);
    }
  }
}

template <class S>
__global__ void __launch_bounds__(kThreads, 1)
    sm90_grouped_gemm_fp8_swapab_kernel(const __grid_constant__ CUtensorMap map_act,
                                        const __grid_constant__ CUtensorMap map_w, const Params p) {
  const GroupSource& src = p.src;
  const int groups = src.groups;
  extern __shared__ uint8_t smem_raw[];
  const Smem<S> sm(smem_raw + ((1024 - (tma::smem_addr(smem_raw) & 1023)) & 1023), groups);
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int blocks_per_pass = src.n / kItemRows;
  uint64_t* const trace = p.trace == nullptr ? nullptr : p.trace + int64_t{blockIdx.x} * kSwapAbTraceWords;
  // Trace milestones are read by the thread that stores them (tid 0, NOTE [swap-AB trace]).
  const uint64_t t_start = trace != nullptr && tid == 0 ? device::ptx::globaltimer_ns() : 0;
  // NOTE [swap-AB early launch]: the row tables' lines (32 entries each) first, then the weights.
  for (int e = 32 * tid; e < groups; e += 32 * kThreads) {
    device::ptx::prefetch_l2(src.counts + e);
    if (src.offsets != nullptr) device::ptx::prefetch_l2(src.offsets + e);
  }
  if (tid == 0) {
    tma::prefetch_map(&map_act);
    tma::prefetch_map(&map_w);
    for (int s = 0; s < S::kStages; ++s) {
      device::bulk::mbarrier_init(&sm.full[s], 1 + 32);  // the expect-tx arrival + the scale warp's lanes
      device::bulk::mbarrier_init(&sm.empty[s], kConsumerWarps);
    }
    device::bulk::fence_mbarrier_init();
    prefetch_first_stages<S>(map_w, src, guess_first_steps<S>(src, p.schedule));
  }
  device::ptx::griddep_wait();  // NOTE [swap-AB early launch]
  const uint64_t t_wait = trace != nullptr && tid == 0 ? device::ptx::globaltimer_ns() : 0;
  // Items per expert, then their prefix (warp 0). Invalid row tables count 0 rows; CTA 0
  // reports them.
  for (int e = tid; e < groups; e += kThreads) {
    const GroupRows rows = resolve_group_rows(src, e, p.status, blockIdx.x == 0, kernel_name());
    sm.rows[e] = make_int2(static_cast<int>(rows.row0), rows.count);  // row0 < 2^31: checked at launch
    sm.items_start[e + 1] = int64_t{(rows.count + S::kT - 1) / S::kT} * blocks_per_pass;
  }
  __syncthreads();
  if (warp == 0) {
    wgmma_frame::warp_inclusive_scan(sm.items_start + 1, groups, lane);
    if (lane == 0) sm.items_start[0] = 0;
  }
  __syncthreads();
  device::ptx::griddep_launch_dependents();
  if (trace != nullptr && tid == 0) {
    trace[kTraceStart] = t_start;
    trace[kTraceWaitDone] = t_wait;
    trace[kTraceTablesDone] = device::ptx::globaltimer_ns();
    trace[kTraceSm] = device::ptx::smid();
  }
  const device::WaitContext ctx{p.status, p.timeout_ns, kernel_name()};
  if (warp == 1) {
    const int taken = produce<S>(map_act, map_w, src, sm, p.schedule, ctx);
    if (trace != nullptr && lane == 0) {
      trace[kTraceProducerDone] = device::ptx::globaltimer_ns();
      trace[kTraceItems] = static_cast<uint64_t>(taken);
    }
    // This CTA takes no more work (produce also returns after a failed wait): the last CTA to
    // get here resets the schedule words for the next launch (NOTE [swap-AB schedule]). Lane 0
    // made every counter access of the CTA; it counts the CTA out as the producer leaves, while
    // the consumers still run the last stages, so the count is not on the CTA's way out.
    if (lane == 0 && p.schedule.kind != ScheduleKind::kStatic) {
      __threadfence();
      if (atomicAdd(p.schedule.next + 1, 1) == static_cast<int>(gridDim.x) - 1) {
        __threadfence();
        p.schedule.next[0] = 0;
        p.schedule.next[1] = 0;
        __threadfence();
      }
    }
  } else if (warp >= 4) {
    consume<S>(src, sm, ctx, trace);
    if (trace != nullptr && tid == 128) trace[kTraceConsumerEnd] = device::ptx::globaltimer_ns();
  }
}

}  // namespace symmoe::gemm::sm90::swapab
