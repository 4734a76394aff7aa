// Grid-wide barrier for persistent kernels (framework-free), self-resetting and bounded.
#pragma once

#include <cstdint>

#include "symmoe/device/bounded_wait.cuh"

namespace symmoe::device {

// NOTE [grid sync]: two words in device memory, zeroed once by the host. `arrived` counts the
// blocks of the current round; `generation` counts rounds. Thread 0 of each block reads the
// generation g, releases the block's writes (fence.acq_rel.gpu) and adds 1 to `arrived`. The
// last arriver resets `arrived` to 0 and then publishes generation g + 1 with a release store;
// everyone else waits (bounded) until the generation differs from g, with acquire. Nothing is
// left to reset between rounds or launches, for any grid size. Every block of the grid must be
// resident (cooperative launch): a block that is never scheduled makes the others time out,
// naming how many blocks arrived. TMA writes must be complete in their issuing thread
// (cp.async.bulk.wait_group 0) before it enters; entry and exit fence the async proxy.
struct GridSyncState {
  uint32_t arrived;
  uint32_t generation;
};

#if defined(__CUDACC__)
// Called by every thread of every block. Returns true on every block, or false on every
// thread of a block that gave up (timeout or abort).
SYMMOE_DEVICE bool grid_sync(GridSyncState* state, const WaitContext& ctx, uint32_t tag,
                             int32_t rank) {
  ptx::fence_proxy_async_global();
  __syncthreads();
  int ok = 1;
  if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {
    const uint32_t blocks = gridDim.x * gridDim.y * gridDim.z;
    const uint32_t gen = ptx::ld_volatile(&state->generation);
    ptx::fence_acq_rel_gpu();
    const uint32_t before = ptx::atom_add_acq_rel_gpu(&state->arrived, 1u);
    if (before + 1 == blocks) {
      atomicExch(&state->arrived, 0u);
      ptx::st_release_gpu(&state->generation, gen + 1);
    } else {
      const WaitSite where{"grid_sync", tag, rank, -1};
      // A quarter longer than the bound: when a block is late because it waits for a peer,
      // that wait expires first and its report (naming the peer) wins the status record.
      WaitContext grace = ctx;
      grace.timeout_ns = ctx.timeout_ns + ctx.timeout_ns / 4;
      ok = bounded_wait(
          grace, where, blocks,
          [state, gen] {
            // Reports blocks arrived while waiting; 'blocks' once released.
            const uint32_t g = ptx::ld_acquire_gpu(&state->generation);
            return g != gen ? uint64_t{0xFFFFFFFFu} : uint64_t{ptx::ld_volatile(&state->arrived)};
          },
          [](uint64_t v) { return v == 0xFFFFFFFFu; });
    }
  }
  ok = __syncthreads_and(ok);
  ptx::fence_proxy_async_global();
  return ok != 0;
}
#endif

}  // namespace symmoe::device
