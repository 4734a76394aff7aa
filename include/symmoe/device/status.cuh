// The status block: how a kernel reports a failure to the host without `trap` (framework-free).
#pragma once

#include <cstdint>

#include "symmoe/device/common.cuh"
#include "symmoe/device/ptx.cuh"

namespace symmoe::device {

enum class StatusCode : uint32_t {
  kOk = 0,
  kTimeout = 1,       // a bounded wait expired
  kInvalidInput = 2,  // an input failed a device-side check (e.g. an id out of range)
};

// NOTE [status block]: one per rank and launch context, in device memory, zeroed by the host.
// The first failing thread wins `code` (atomicCAS 0 -> code) and fills the record; every
// failure also raises `abort`, which every bounded wait of the grid polls, so the whole kernel
// stops within one poll interval and the stream completes. The host reads the block after the
// stream finished and raises symmoe::Error with its text (runtime/device_runtime.hpp). The
// CUDA context stays usable: no trap, no illegal access.
struct StatusBlock {
  uint32_t code;
  uint32_t abort;
  uint32_t tag;      // the wait site's tag (which barrier, which phase)
  int32_t rank;      // the rank that failed
  int32_t peer;      // the rank it waited for (-1: none)
  uint32_t sm;
  uint32_t block;
  uint32_t thread;
  uint64_t expected;
  uint64_t seen;
  uint64_t waited_ns;
  uint64_t timeout_ns;
  char site[32];     // what was waited for ("cross_rank_barrier", "grid_sync", ...)
  char kernel[32];   // which kernel
};

// Where a bounded wait happens, for the diagnostic.
struct WaitSite {
  const char* site;
  uint32_t tag;
  int32_t rank;
  int32_t peer;
};

// Per-launch wait settings every bounded wait of a kernel shares. Built inside the kernel:
// `kernel` must point to device-readable text (a string literal in device code).
struct WaitContext {
  StatusBlock* status;
  uint64_t timeout_ns;
  const char* kernel;
};

#if defined(__CUDACC__)
namespace detail {
SYMMOE_DEVICE void copy_name(char (&dst)[32], const char* src) {
  int i = 0;
  for (; src != nullptr && src[i] != '\0' && i < 31; ++i) dst[i] = src[i];
  for (; i < 32; ++i) dst[i] = '\0';
}
}  // namespace detail

SYMMOE_DEVICE bool aborted(const StatusBlock* status) {
  return ptx::ld_volatile(&status->abort) != 0;
}

// Records a failure (the first one wins the record) without stopping the kernel: for bad
// inputs found inside a cross-rank protocol, which must still meet its peers.
SYMMOE_DEVICE void record_failure(const WaitContext& ctx, StatusCode code, const WaitSite& where,
                                  uint64_t expected, uint64_t seen, uint64_t waited_ns = 0) {
  StatusBlock* s = ctx.status;
  if (atomicCAS(&s->code, 0u, static_cast<uint32_t>(code)) == 0u) {
    s->tag = where.tag;
    s->rank = where.rank;
    s->peer = where.peer;
    s->sm = ptx::smid();
    s->block = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
    s->thread = ptx::linear_thread();
    s->expected = expected;
    s->seen = seen;
    s->waited_ns = waited_ns;
    s->timeout_ns = ctx.timeout_ns;
    detail::copy_name(s->site, where.site);
    detail::copy_name(s->kernel, ctx.kernel);
  }
}

// Records a failure and raises the abort flag: every bounded wait of the grid gives up.
SYMMOE_DEVICE void report_failure(const WaitContext& ctx, StatusCode code, const WaitSite& where,
                                  uint64_t expected, uint64_t seen, uint64_t waited_ns) {
  record_failure(ctx, code, where, expected, seen, waited_ns);
  ptx::st_volatile(&ctx.status->abort, 1u);
}
#endif

}  // namespace symmoe::device
