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
//   2. thread t (for each peer r = t, t + blockDim, ...): st.release.sys arrived[my_rank] = e
//      into rank r's pad (via the peer table). The release store is a release pattern by
//      itself, cumulative over what the thread observed — the block's writes through
//      __syncthreads — so no separate fence.acq_rel.sys precedes it;
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
// The two halves of a barrier, for kernels that split it across blocks (NOTE [split-phase
// barrier] in split_barrier.cuh). Both are called by every thread of one block; thread t serves
// the peers r = t, t + blockDim, ...
//
// Announces epoch e to every rank (step 2). The caller has made the writes to be released
// visible to this block's threads first (step 1, or a grid-wide release chain).
SYMMOE_DEVICE void announce_epoch(const PeerTable& peers, SignalPad* pad, uint64_t e) {
  const int n = peers.num_ranks;
  for (int r = threadIdx.x; r < n; r += blockDim.x) {
    ptx::st_release_sys(&peers.map(pad, r)->arrived[peers.rank], e);
  }
}

// Waits (bounded) until every rank announced an epoch >= e here (step 3); returns the same
// verdict on every thread of the block, after fencing the async proxy for TMA readers.
SYMMOE_DEVICE bool wait_epoch(const PeerTable& peers, const SignalPad* pad, uint64_t e,
                              const WaitContext& ctx, uint32_t tag) {
  int ok = 1;
  for (int r = threadIdx.x; r < peers.num_ranks && ok; r += blockDim.x) {
    ok = wait_geq_sys(&pad->arrived[r], e, ctx, WaitSite{"cross_rank_barrier", tag, peers.rank, r});
  }
  ok = __syncthreads_and(ok);
  ptx::fence_proxy_async_global();
  return ok != 0;
}

// Called by every thread of one block; returns the same verdict on every thread.
SYMMOE_DEVICE bool cross_rank_barrier(const PeerTable& peers, SignalPad* pad,
                                      const WaitContext& ctx, uint32_t tag) {
  ptx::fence_proxy_async_global();
  __syncthreads();
  const uint64_t next = ptx::ld_volatile(&pad->epoch) + 1;
  announce_epoch(peers, pad, next);
  const bool ok = wait_epoch(peers, pad, next, ctx, tag);
  if (ok && threadIdx.x == 0) pad->epoch = next;
  __syncthreads();
  return ok;
}
#endif

}  // namespace symmoe::device
