// Cross-rank barriers at a kernel's entry and exit without grid-wide syncs (framework-free).
#pragma once

#include <cstdint>

#include "symmoe/device/cross_rank_barrier.cuh"
#include "symmoe/device/grid_sync.cuh"

namespace symmoe::device {

// NOTE [split-phase barrier]: a kernel that meets every rank when it starts and again when all
// of its blocks are done, as two cross_rank_barrier calls would, but without a grid_sync on
// either side. Every block reads base = pad->epoch at entry; only the exit phase of this launch
// writes the epoch, after every block has counted itself done, so all blocks see one base.
//   Entry (every block): block 0 announces base + 1 to every rank; every block then waits until
//     every rank announced >= base + 1 here (local polling), and goes on by itself.
//   Exit (every block, once its writes are complete — bulk stores waited with wait_group 0):
//     fence.proxy.async + fence.acq_rel.gpu, then an acq_rel add on the grid's `arrived` word.
//     The block that counts last resets the word to 0 (nothing left to reset between launches),
//     announces base + 2 — its acquire saw every block's release, so the announcement releases
//     all of the grid's writes — waits for base + 2 from every rank and stores epoch = base + 2.
//     The other blocks leave at once; the kernel completes when the last block does, so work
//     after it on the stream runs after every rank passed the exit barrier.
// Peers are at most one phase ahead (exit e + 2 needs this rank's e + 1), hence ">=". The
// epochs advance by 2 per launch, like two cross_rank_barrier calls, so both styles can share a
// pad. A block that failed still counts itself done (the word returns to 0); the last block then
// announces nothing, so the peers time out naming this rank. The `arrived` word is the one
// grid_sync uses; the kernel must not call grid_sync itself.

#if defined(__CUDACC__)
// The epoch the launch starts from; call before split_barrier_enter, in every block.
SYMMOE_DEVICE uint64_t split_barrier_base(const SignalPad* pad) { return ptx::ld_volatile(&pad->epoch); }

// Entry phase; every thread of every block. Returns the same verdict on every thread of a block.
SYMMOE_DEVICE bool split_barrier_enter(const PeerTable& peers, SignalPad* pad, uint64_t base,
                                       const WaitContext& ctx, uint32_t tag) {
  if (blockIdx.x == 0 && blockIdx.y == 0 && blockIdx.z == 0) {
    ptx::fence_proxy_async_global();
    __syncthreads();
    announce_epoch(peers, pad, base + 1);
  }
  return wait_epoch(peers, pad, base + 1, ctx, tag);
}

// Counts this block done; returns true on every thread of the block that counted last.
SYMMOE_DEVICE bool count_block_done(GridSyncState* grid) {
  ptx::fence_proxy_async_global();
  __syncthreads();
  int last = 0;
  if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {
    const uint32_t blocks = gridDim.x * gridDim.y * gridDim.z;
    ptx::fence_acq_rel_gpu();
    last = ptx::atom_add_acq_rel_gpu(&grid->arrived, 1u) + 1 == blocks;
    if (last) atomicExch(&grid->arrived, 0u);
  }
  return __syncthreads_or(last) != 0;
}

// Exit phase, run by the block count_block_done chose. Returns the same verdict on its threads.
SYMMOE_DEVICE bool split_barrier_exit(const PeerTable& peers, SignalPad* pad, uint64_t base,
                                      const WaitContext& ctx, uint32_t tag) {
  if (aborted(ctx.status)) return false;
  announce_epoch(peers, pad, base + 2);
  const bool ok = wait_epoch(peers, pad, base + 2, ctx, tag);
  if (ok && threadIdx.x == 0) pad->epoch = base + 2;
  return ok;
}
#endif

}  // namespace symmoe::device
