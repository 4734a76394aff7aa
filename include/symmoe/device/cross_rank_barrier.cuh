// Barrier across the ranks of a symmetric buffer, run by one block (framework-free).
#pragma once

#include <cstddef>
#include <cstdint>

#include "symmoe/device/bounded_wait.cuh"
#include "symmoe/device/peer_table.cuh"

namespace symmoe::device {

// NOTE [cross-rank barrier]: each rank's symmetric buffer holds a SignalPad at the same
// offset. `epoch` counts the barriers this rank completed (only this rank writes it);
// arrived[r] holds the epoch rank r last announced here. Barrier e = epoch + 1:
//   1. every thread: fence.proxy.async.global (TMA writes it completed join the generic proxy),
//      then __syncthreads (the block's writes happen-before the signal);
//   2. thread t (for each peer r = t, t + blockDim, ...): fence.acq_rel.sys, then
//      st.release.sys arrived[my_rank] = e into rank r's pad (via the peer table);
//   3. the same thread waits (bounded) until its own arrived[r] >= e with ld.acquire.sys;
//   4. __syncthreads; thread 0 stores epoch = e; fence.proxy.async.global for TMA readers.
// Epochs grow monotonically (64-bit: no wrap), so nothing is reset between calls and any
// number of back-to-back barriers works. A peer can be at most one barrier ahead (it cannot
// finish e + 1 before this rank arrives at e + 1), hence ">=". Writes from other blocks of the
// same kernel must be ordered before the barrier by a grid_sync. After a timeout the epochs
// of the ranks disagree: zero the pads collectively before the next barrier.
struct alignas(128) SignalPad {
  uint64_t epoch;
  uint64_t reserved[15];
  uint64_t arrived[kMaxRanks];
};

inline constexpr std::size_t kSignalPadBytes = sizeof(SignalPad);

#if defined(__CUDACC__)
// Called by every thread of one block; returns the same verdict on every thread.
SYMMOE_DEVICE bool cross_rank_barrier(const PeerTable& peers, SignalPad* pad,
                                      const WaitContext& ctx, uint32_t tag) {
  ptx::fence_proxy_async_global();
  __syncthreads();
  const uint64_t next = ptx::ld_volatile(&pad->epoch) + 1;
  const int n = peers.num_ranks;
  const int me = peers.rank;
  const int tid = threadIdx.x;
  if (tid < n) ptx::fence_acq_rel_sys();
  for (int r = tid; r < n; r += blockDim.x) {
    ptx::st_release_sys(&peers.map(pad, r)->arrived[me], next);
  }
  int ok = 1;
  for (int r = tid; r < n && ok; r += blockDim.x) {
    ok = wait_geq_sys(&pad->arrived[r], next, ctx, WaitSite{"cross_rank_barrier", tag, me, r});
  }
  ok = __syncthreads_and(ok);
  if (ok && tid == 0) pad->epoch = next;
  ptx::fence_proxy_async_global();
  __syncthreads();
  return ok != 0;
}
#endif

}  // namespace symmoe::device
