// PTX for the grouped GEMM's own SM90 mainloop: 2-D tensor (TMA) loads, 4-byte cp.async with
// mbarrier completion, wgmma shared-memory descriptors and ordering, mbarrier waits with a
// deadline, register reallocation. Private to src/gemm.
#pragma once

#include <cuda.h>

#include <cstdint>

#include "symmoe/device/bounded_wait.cuh"
#include "symmoe/device/ptx_bulk.cuh"

namespace symmoe::gemm::sm90::tma {

using device::bulk::smem_addr;

// global -> shared: the box of `map` at (c0 = inner coordinate, c1 = outer), completing its
// bytes on `bar`. Out-of-bounds rows and columns arrive as zeros and still count.
SYMMOE_DEVICE void load_2d(void* dst, const CUtensorMap* map, int32_t c0, int32_t c1, uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];" ::"r"(
          smem_addr(dst)),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(smem_addr(bar))
      : "memory");
}

// The box of a 3-D tensor map at (c0, c1, c2) into L2 (no shared memory, no completion).
SYMMOE_DEVICE void prefetch_l2_3d(const CUtensorMap* map, int32_t c0, int32_t c1, int32_t c2) {
  asm volatile("cp.async.bulk.prefetch.tensor.3d.L2.global.tile [%0, {%1, %2, %3}];" ::"l"(
                   reinterpret_cast<uint64_t>(map)),
               "r"(c0), "r"(c1), "r"(c2)
               : "memory");
}

// global -> shared: the box of a 3-D tensor map at (c0, c1, c2), completing on `bar`.
SYMMOE_DEVICE void load_3d(void* dst, const CUtensorMap* map, int32_t c0, int32_t c1, int32_t c2, uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];" ::"r"(
          smem_addr(dst)),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(smem_addr(bar))
      : "memory");
}

// global -> shared of every CTA of the cluster in `cta_mask`, at dst's offset in each,
// completing the bytes on the mbarrier at bar's offset in each of them.
SYMMOE_DEVICE void load_2d_multicast(void* dst, const CUtensorMap* map, int32_t c0, int32_t c1, uint64_t* bar,
                                     uint16_t cta_mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
      " [%0], [%1, {%2, %3}], [%4], %5;" ::"r"(smem_addr(dst)),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(smem_addr(bar)), "h"(cta_mask)
      : "memory");
}

// shared -> global: the box of `map` at (c0, c1) from src, in this thread's bulk group; rows
// and columns outside the tensor are not written. Before it, the generic-proxy writes of src
// must be made visible to the async proxy (fence_proxy_async + a barrier of the writers).
SYMMOE_DEVICE void store_2d(const CUtensorMap* map, int32_t c0, int32_t c1, const void* src) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];" ::"l"(
                   reinterpret_cast<uint64_t>(map)),
               "r"(c0), "r"(c1), "r"(smem_addr(src))
               : "memory");
}
SYMMOE_DEVICE void bulk_commit() { asm volatile("cp.async.bulk.commit_group;" ::: "memory"); }
// Waits until this thread's committed bulk stores have read their shared memory (the source
// may be rewritten) / have completed.
SYMMOE_DEVICE void bulk_wait_read_all() { asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory"); }
SYMMOE_DEVICE void bulk_wait_all() { asm volatile("cp.async.bulk.wait_group 0;" ::: "memory"); }
SYMMOE_DEVICE void fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); }

// stmatrix .x4: four 8 x 8 b16 matrices; r[k] is this thread's pair (row lane / 4, columns
// 2 (lane % 4), + 1) of matrix k, and lane 8 k + i gives the address of row i of matrix k.
SYMMOE_DEVICE void stmatrix_x4(void* row_addr, uint32_t r0, uint32_t r1, uint32_t r2, uint32_t r3) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};" ::"r"(smem_addr(row_addr)), "r"(r0),
               "r"(r1), "r"(r2), "r"(r3)
               : "memory");
}

// Four 8 x 8 b16 matrices (8 rows of 16 bytes each) from shared memory: lane 8 m + i gives the
// address of row i of matrix m; lane 4 g + t receives bytes 4t .. 4t + 3 of row g of matrix m
// in r[m].
SYMMOE_DEVICE void ldmatrix_x4(const void* row_addr, uint32_t (&r)[4]) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr(row_addr))
               : "memory");
}

// global -> shared, 4 bytes, zeros (and no read) when !valid; completion is tracked by
// cp_async_arrive_noinc.
SYMMOE_DEVICE void cp_async_4(void* dst, const void* src, bool valid) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;" ::"r"(smem_addr(dst)), "l"(src), "r"(valid ? 4 : 0)
               : "memory");
}

// Arrives on `bar` once every cp.async this thread issued before has landed. The arrival is
// not counted in advance: `bar`'s expected count includes one per thread that calls this.
SYMMOE_DEVICE void cp_async_arrive_noinc(uint64_t* bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" ::"r"(smem_addr(bar)) : "memory");
}

SYMMOE_DEVICE void prefetch_map(const CUtensorMap* map) {
  asm volatile("prefetch.tensormap [%0];" ::"l"(reinterpret_cast<uint64_t>(map)) : "memory");
}

SYMMOE_DEVICE void mbarrier_arrive(uint64_t* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem_addr(bar)) : "memory");
}

// Arrives on the mbarrier at bar's offset in the shared memory of cluster CTA `cta` (this
// CTA's own rank included). Default (CTA-scope) semantics, as a stage release needs: what it
// orders is this warp's completed wgmma reads of the stage before the peer's next tensor
// copy into it; .release.cluster would cost a GPU-wide MEMBAR per arrival.
SYMMOE_DEVICE void mbarrier_arrive_cluster(uint64_t* bar, uint32_t cta) {
  asm volatile(
      "{\n\t.reg .b32 remote;\n\t"
      "mapa.shared::cluster.u32 remote, %0, %1;\n\t"
      "mbarrier.arrive.shared::cluster.b64 _, [remote];\n\t}" ::"r"(smem_addr(bar)),
      "r"(cta)
      : "memory");
}

// Every thread of every CTA of the cluster arrives (release) and waits (acquire); threads of
// a warp may arrive at different times (not .aligned).
SYMMOE_DEVICE void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release;\n\tbarrier.cluster.wait.acquire;" ::: "memory");
}

// Waits for the phase of `bar` with parity `parity`. The pipeline's waits are intra-CTA, but a
// faulting copy would leave them waiting forever: device::bounded_wait reports a wait past
// `ctx.timeout_ns` (site `site`, tag = stage) and returns false, as it does on abort.
SYMMOE_DEVICE bool mbarrier_wait(uint64_t* bar, uint32_t parity, const device::WaitContext& ctx, const char* site,
                                 uint32_t stage) {
  return device::bounded_wait(
      ctx, device::WaitSite{site, stage, -1, -1}, parity,
      [bar, parity]() -> uint64_t { return device::bulk::mbarrier_try_wait(bar, parity) ? 1 : 0; },
      [](uint64_t done) { return done != 0; });
}

// NOTE [probed stage wait]: a consumer tests the next stage's full barrier once (mbarrier_probe,
// no loop) right after its current K block's wgmmas are done, before it promotes them, and
// enters the bounded wait before that next K block only if the test failed (wait_unless_probed).
// The test's latency (a long-scoreboard round trip) then runs under the promotion's FFMAs
// instead of between them and the next wgmma, where the other warpgroup's wgmmas are all that
// keeps the tensor pipe busy. A test has no side effect; a stale or unused one costs nothing.
// Measured (H200, same call): unrolled 128 x 192 1.047x, 128 x 128 0.994x, overlapped 128 x 256
// 0.994x (bench/results/gemm_wgmma_probe_ab.log).
SYMMOE_DEVICE bool mbarrier_probe(uint64_t* bar, uint32_t parity) { return device::bulk::mbarrier_try_wait(bar, parity); }

// The wait of NOTE [probed stage wait]: nothing if `probed` (the phase was seen complete), else
// mbarrier_wait while `ok` (cleared on timeout or abort), then the warp reconverges before the
// .aligned wgmma instructions that follow.
SYMMOE_DEVICE void wait_unless_probed(bool probed, uint64_t* bar, uint32_t parity, bool& ok,
                                      const device::WaitContext& ctx, const char* site, uint32_t stage) {
  if (!probed) {
    if (ok) ok = mbarrier_wait(bar, parity, ctx, site, stage);
    __syncwarp();
  }
}

// Warpgroup register budgets (every warp of the warpgroup executes it).
template <int kRegs>
SYMMOE_DEVICE void regs_dec() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(kRegs));
}
template <int kRegs>
SYMMOE_DEVICE void regs_inc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(kRegs));
}

// Named barrier kId (1-15; 0 is __syncthreads) completing when `threads` threads (whole warps)
// have arrived: named_sync arrives and waits for completion, named_arrive arrives only. The id
// is an immediate, so ptxas reserves only the barriers used.
template <int kId>
SYMMOE_DEVICE void named_sync(uint32_t threads) {
  asm volatile("bar.sync %0, %1;" ::"n"(kId), "r"(threads) : "memory");
}
template <int kId>
SYMMOE_DEVICE void named_arrive(uint32_t threads) {
  asm volatile("bar.arrive %0, %1;" ::"n"(kId), "r"(threads) : "memory");
}

// Named barrier kId as named_sync that also returns whether `pred` held in every arriving thread.
template <int kId>
SYMMOE_DEVICE bool named_sync_and(uint32_t threads, bool pred) {
  uint32_t all;
  asm volatile(
      "{\n\t.reg .pred p, q;\n\t"
      "setp.ne.u32 p, %1, 0;\n\t"
      "bar.red.and.pred q, %2, %3, p;\n\t"
      "selp.u32 %0, 1, 0, q;\n\t}"
      : "=r"(all)
      : "r"(pred ? 1u : 0u), "n"(kId), "r"(threads)
      : "memory");
  return all != 0;
}

}  // namespace symmoe::gemm::sm90::tma

namespace symmoe::gemm::sm90::wgmma {

// Shared-memory matrix descriptor of a K-major tile stored as 128-byte rows with the 128-byte
// swizzle (what a TMA box of 128 one-byte columns with CU_TENSOR_MAP_SWIZZLE_128B writes):
// start address >> 4 (bits 0-13), stride between 8-row groups 1024 bytes >> 4 (bits 32-45),
// layout 128B swizzle (bits 62-63 = 1). The tile must start 1024-byte aligned; the k-th
// 32-byte slice of the rows is the same descriptor plus 2k (32 bytes >> 4). In two halves: the
// low word (start address, a function of the tile) and the constant high word.
SYMMOE_DEVICE uint32_t desc_lo_k_major_sw128(const void* tile) { return (tma::smem_addr(tile) & 0x3FFFF) >> 4; }
// NOTE [wgmma descriptor steps]: a K slice's descriptor is desc_from_lo(lo + step)
// (desc_k32_slice), never the 64-bit descriptor plus step: on the whole descriptor ptxas adds
// with carry (UIADD3 and UIADD3.X per operand and wgmma, then re-sets the high word) for a
// carry that cannot happen —
// the start address is below 2^14 in 16-byte units (shared memory < 256 KiB) and the steps are
// a few units; on the low word it adds 32 bits and keeps the high word a constant, as
// DeepGEMM's kernels do (the default fp8 kernel: 72 of its 84 UIADD3.X gone, 104 fewer
// instructions; the swap-AB kernels 8-56 fewer). The bf16 kernel's rolled loop showed no carry
// chain and is left as it was. Measured neutral (H100, same call, against the build before:
// 1.003x over 8 large-M cases, 1.002x over 8 decode cases, 0.997x per GHz; the GPU tests pass:
// bench/results/gemm_desc_lo_{large,decode}_ab_h100.log); kept for the shorter chain.
SYMMOE_DEVICE uint64_t desc_from_lo(uint32_t lo) { return (uint64_t{(1024 >> 4) | (1u << 30)} << 32) | lo; }
// K slice k (32 bytes of each row: one k32 fp8 wgmma) of the rows whose start-address word is lo.
SYMMOE_DEVICE uint64_t desc_k32_slice(uint32_t lo, int k) { return desc_from_lo(lo + 2 * k); }

SYMMOE_DEVICE void fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
SYMMOE_DEVICE void commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
template <int N>
SYMMOE_DEVICE void wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
}

// Pins the accumulator registers at this point of the program: the compiler must not move
// their reads or writes across the wgmma wait before it.
template <int R>
SYMMOE_DEVICE void fence_operands(float (&d)[R]) {
#pragma unroll
  for (int i = 0; i < R; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

}  // namespace symmoe::gemm::sm90::wgmma
