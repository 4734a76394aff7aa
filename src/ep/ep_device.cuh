// Device helpers shared by the dispatch and combine kernels (private).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "symmoe/device/ep_buffer_layout.cuh"
#include "symmoe/device/peer_table.cuh"

namespace symmoe::ep::detail {

// A region of rank `r`'s buffer, typed.
template <class T>
__device__ __forceinline__ T* region(const device::PeerTable& peers, int r, uint64_t offset) {
  return reinterpret_cast<T*>(peers.peer_base(r) + offset);
}

__device__ __forceinline__ device::EpControl* control(const device::PeerTable& peers,
                                                      const device::EpBufferLayout& l, int r) {
  return region<device::EpControl>(peers, r, l.control_offset);
}

__device__ __forceinline__ uint32_t lanemask_lt() {
  uint32_t m;
  asm("mov.u32 %0, %%lanemask_lt;" : "=r"(m));
  return m;
}

// Loads that bypass L1: the data was written by other ranks (or other kernels) through L2.
template <class T>
__device__ __forceinline__ T load_cg(const T* p) {
  return __ldcg(p);
}

__device__ __forceinline__ uint32_t warp_id() { return threadIdx.x / 32; }
__device__ __forceinline__ uint32_t lane_id() { return threadIdx.x % 32; }

}  // namespace symmoe::ep::detail
