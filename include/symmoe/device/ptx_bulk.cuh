// PTX wrappers for mbarriers and 1-D bulk (TMA) copies between global and shared memory
// (framework-free, sm_90). Sizes are multiples of 16 bytes; addresses 16-byte aligned.
#pragma once

#include <cstdint>

#include "symmoe/device/common.cuh"

#if defined(__CUDACC__)
namespace symmoe::device::bulk {

SYMMOE_DEVICE uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

SYMMOE_DEVICE void mbarrier_init(uint64_t* bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_addr(bar)), "r"(count) : "memory");
}

// Makes initialized mbarriers visible to the async proxy (the copy engine).
SYMMOE_DEVICE void fence_mbarrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}

SYMMOE_DEVICE void mbarrier_arrive_expect_tx(uint64_t* bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_addr(bar)),
               "r"(bytes)
               : "memory");
}

// True once the phase with parity `parity` has completed.
SYMMOE_DEVICE bool mbarrier_try_wait(uint64_t* bar, uint32_t parity) {
  uint32_t done;
  asm volatile(
      "{\n\t.reg .pred p;\n\t"
      "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\t"
      "selp.u32 %0, 1, 0, p;\n\t}"
      : "=r"(done)
      : "r"(smem_addr(bar)), "r"(parity)
      : "memory");
  return done != 0;
}

// global -> shared, completing `bytes` of transaction on `bar`.
SYMMOE_DEVICE void load_async(void* smem_dst, const void* global_src, uint32_t bytes, uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
          smem_addr(smem_dst)),
      "l"(global_src), "r"(bytes), "r"(smem_addr(bar))
      : "memory");
}

// shared -> global, tracked by the issuing thread's bulk groups.
SYMMOE_DEVICE void store_async(void* global_dst, const void* smem_src, uint32_t bytes) {
  asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(global_dst),
               "r"(smem_addr(smem_src)), "r"(bytes)
               : "memory");
}

SYMMOE_DEVICE void commit_group() { asm volatile("cp.async.bulk.commit_group;" ::: "memory"); }

// At most N committed groups still read their shared-memory source.
template <int N>
SYMMOE_DEVICE void wait_group_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(N) : "memory");
}

// Every committed group has completed (its global writes are performed).
SYMMOE_DEVICE void wait_all() { asm volatile("cp.async.bulk.wait_group 0;" ::: "memory"); }

}  // namespace symmoe::device::bulk
#endif
