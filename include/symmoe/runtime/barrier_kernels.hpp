// Launchers of the protocol kernels that exercise (and measure) the device primitives:
// back-to-back cross-rank barriers, persistent grids with grid_sync, and an SM holder that
// plays "another stream's kernel" in residency tests.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "symmoe/comm/group.hpp"
#include "symmoe/device/cross_rank_barrier.cuh"
#include "symmoe/device/peer_table.cuh"
#include "symmoe/runtime/device_runtime.hpp"
#include "symmoe/runtime/sm_budget.hpp"
#include "symmoe/symm/symmetric_buffer.hpp"

namespace symmoe::runtime {

// One block runs `count` cross-rank barriers back to back over the signal pads at byte offset
// `pad_offset` of every rank's buffer. Validates the peer table and the offset before launch.
// Failures land in rt.status(); read them with rt.check(stream).
void launch_cross_rank_barriers(DeviceRuntime& rt, const device::PeerTable& peers,
                                size_t buffer_bytes, size_t pad_offset, int count, uint32_t tag,
                                cudaStream_t stream, double timeout_s = 0);

struct GridLaunch {
  int grid = 0;
  int block = 0;
  size_t smem = 0;
  SmPlan sms;
};

// A persistent, cooperative grid sized from occupancy and the SM budget that runs
// `iterations` rounds of grid_sync; with `peers`, block 0 also runs a cross-rank barrier in
// every round (the pattern of the fused kernels). `smem_per_block` pads each block's shared
// memory (e.g. to one block per SM).
GridLaunch launch_grid_barriers(DeviceRuntime& rt, SmBudget budget, int iterations,
                                size_t smem_per_block, cudaStream_t stream,
                                const device::PeerTable* peers = nullptr, size_t buffer_bytes = 0,
                                size_t pad_offset = 0, double timeout_s = 0);

// `num_blocks` blocks that each take `smem_per_block` of shared memory and spin for `hold_s`
// seconds: with smem large enough, each holds one SM (stands in for another stream's kernel).
void launch_sm_holder(int num_blocks, size_t smem_per_block, double hold_s, cudaStream_t stream);

// Collective: zero this rank's signal pad after every rank's work ended (e.g. after a
// timeout left the epochs disagreeing), then a group barrier.
void reset_signal_pads(comm::Group& group, const symm::SymmetricBuffer& buffer, size_t pad_offset,
                       cudaStream_t stream);

}  // namespace symmoe::runtime
