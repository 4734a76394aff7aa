// PTX wrappers for the memory-model operations the protocols use (framework-free, sm_70+;
// the proxy fence needs sm_90).
#pragma once

#include <cstdint>

#include "symmoe/device/common.cuh"

#if defined(__CUDACC__)
namespace symmoe::device::ptx {

SYMMOE_DEVICE uint64_t ld_acquire_sys(const uint64_t* p) {
  uint64_t v;
  asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}

SYMMOE_DEVICE uint32_t ld_acquire_gpu(const uint32_t* p) {
  uint32_t v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}

SYMMOE_DEVICE uint32_t ld_volatile(const uint32_t* p) {
  uint32_t v;
  asm volatile("ld.volatile.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}

SYMMOE_DEVICE uint64_t ld_volatile(const uint64_t* p) {
  uint64_t v;
  asm volatile("ld.volatile.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}

SYMMOE_DEVICE void st_release_sys(uint64_t* p, uint64_t v) {
  asm volatile("st.release.sys.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

SYMMOE_DEVICE void st_release_gpu(uint32_t* p, uint32_t v) {
  asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

SYMMOE_DEVICE void st_volatile(uint32_t* p, uint32_t v) {
  asm volatile("st.volatile.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

// Release-acquire atomic add at GPU scope; returns the old value.
SYMMOE_DEVICE uint32_t atom_add_acq_rel_gpu(uint32_t* p, uint32_t v) {
  uint32_t old;
  asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], %2;" : "=r"(old) : "l"(p), "r"(v) : "memory");
  return old;
}

// 16-byte read through the non-coherent path without L1 allocation: for data no kernel
// writes while the reader runs (expert weights during a prefetch).
SYMMOE_DEVICE uint4 ld_nc_na_v4(const void* p) {
  uint4 v;
  asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p));
  return v;
}

SYMMOE_DEVICE void st_na_v4(void* p, uint4 v) {
  asm volatile("st.global.L1::no_allocate.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(v.x),
               "r"(v.y), "r"(v.z), "r"(v.w)
               : "memory");
}

SYMMOE_DEVICE void fence_acq_rel_sys() { asm volatile("fence.acq_rel.sys;" ::: "memory"); }
SYMMOE_DEVICE void fence_acq_rel_gpu() { asm volatile("fence.acq_rel.gpu;" ::: "memory"); }

// Orders this thread's async-proxy (TMA / bulk copy) global accesses with its generic ones.
SYMMOE_DEVICE void fence_proxy_async_global() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("fence.proxy.async.global;" ::: "memory");
#endif
}

// Programmatic dependent launch (sm_90): wait until the grids this one depends on completed
// and their writes are visible (a no-op for a launch without the attribute); let dependents
// be scheduled once every block of this grid triggered or exited.
SYMMOE_DEVICE void griddep_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

SYMMOE_DEVICE void griddep_launch_dependents() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

// Asks L2 for the 128-byte line holding p (a hint: no value is read, so it is no read of data
// another kernel may still write; L2 is the GPU's point of coherence).
SYMMOE_DEVICE void prefetch_l2(const void* p) {
  asm volatile("prefetch.global.L2 [%0];" ::"l"(p) : "memory");
}

// Nanoseconds of the global timer (shared by all SMs of the GPU).
SYMMOE_DEVICE uint64_t globaltimer_ns() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

SYMMOE_DEVICE uint32_t smid() {
  uint32_t id;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
  return id;
}

// threadIdx.x read where it is used (volatile: not kept in a register across loops, for code
// that runs at a low register budget).
SYMMOE_DEVICE uint32_t tid_x() {
  uint32_t x;
  asm volatile("mov.u32 %0, %%tid.x;" : "=r"(x));
  return x;
}

// The thread's linear index in its block, read where it is used (volatile: a failure report's
// value is not hoisted into a register kept live across a kernel's loops).
SYMMOE_DEVICE uint32_t linear_thread() {
  const uint32_t x = tid_x();
  uint32_t y, z, nx, ny;
  asm volatile("mov.u32 %0, %%tid.y;" : "=r"(y));
  asm volatile("mov.u32 %0, %%tid.z;" : "=r"(z));
  asm volatile("mov.u32 %0, %%ntid.x;" : "=r"(nx));
  asm volatile("mov.u32 %0, %%ntid.y;" : "=r"(ny));
  return x + nx * (y + ny * z);
}

// Cluster geometry along x (1-D clusters): this CTA's rank in its cluster, the cluster's index
// in the grid, the number of clusters.
SYMMOE_DEVICE uint32_t cluster_rank() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}
SYMMOE_DEVICE uint32_t cluster_id_x() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%clusterid.x;" : "=r"(r));
  return r;
}
SYMMOE_DEVICE uint32_t cluster_count_x() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%nclusterid.x;" : "=r"(r));
  return r;
}

}  // namespace symmoe::device::ptx
#endif
