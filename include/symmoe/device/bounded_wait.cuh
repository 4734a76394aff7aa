// Spin-waits with a deadline and an abort poll (framework-free). Every cross-rank or cross-CTA
// wait in symmoe goes through here: none can hang.
#pragma once

#include <cstdint>

#include "symmoe/device/status.cuh"

#if defined(__CUDACC__)
namespace symmoe::device {

// Spins between deadline/abort polls; a poll reads the global timer and the abort flag.
inline constexpr uint32_t kSpinsPerPoll = 64;

// Waits until `load()` returns a value v with ready(v). On expiry or abort returns false (after
// reporting a timeout on expiry); `expected` is what the diagnostic says was awaited.
template <class Load, class Ready>
SYMMOE_DEVICE bool bounded_wait(const WaitContext& ctx, const WaitSite& where, uint64_t expected,
                                Load load, Ready ready) {
  uint64_t v = load();
  if (ready(v)) return true;
  const uint64_t start = ptx::globaltimer_ns();
  for (uint32_t spin = 1;; ++spin) {
    v = load();
    if (ready(v)) return true;
    if (spin % kSpinsPerPoll == 0) {
      if (aborted(ctx.status)) return false;
      const uint64_t waited = ptx::globaltimer_ns() - start;
      if (waited > ctx.timeout_ns) {
        report_failure(ctx, StatusCode::kTimeout, where, expected, v, waited);
        return false;
      }
    }
  }
}

// Waits until *p >= expected (acquire, system scope: written by peers over NVLink).
SYMMOE_DEVICE bool wait_geq_sys(const uint64_t* p, uint64_t expected, const WaitContext& ctx,
                                const WaitSite& where) {
  return bounded_wait(
      ctx, where, expected, [p] { return ptx::ld_acquire_sys(p); },
      [expected](uint64_t v) { return v >= expected; });
}

}  // namespace symmoe::device
#endif
