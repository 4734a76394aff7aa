// The residency report reproduced on one GPU: a side stream holds SMs while a cooperative grid
// with a grid-wide barrier launches, with every SM requested and with a reserve.
#include <gtest/gtest.h>

#include "support/gpu.hpp"
#include "symmoe/core/device_info.hpp"
#include "symmoe/runtime/residency_probe.hpp"

namespace symmoe::runtime {
namespace {

constexpr double kHoldSeconds = 2.0;

TEST(ResidencyGpu, EverySmRequestedWaitsForResidencyOrFailsClearly) {
  SYMMOE_SKIP_WITHOUT_GPU();
  DeviceRuntime rt(0);
  const ResidencyReport r = probe_residency(rt, {0, 0}, 2, kHoldSeconds, /*timeout_s=*/30);
  std::printf("all SMs, side stream holding 2: grid %d, %.1f ms, side still running: %d, failure: '%s'\n",
              r.grid, r.grid_ms, int(r.side_still_running), r.failure.c_str());
  // Never a silent hang: the grid finished (after the holder let go) or reported a timeout.
  if (r.failure.empty()) {
    EXPECT_FALSE(r.side_still_running) << "a full grid cannot finish while 2 SMs are held";
    EXPECT_GT(r.grid_ms, 1000 * kHoldSeconds * 0.5);
  } else {
    EXPECT_NE(r.failure.find("blocks arrived"), std::string::npos) << r.failure;
  }
}

TEST(ResidencyGpu, ShortDeadlineGivesAClearError) {
  SYMMOE_SKIP_WITHOUT_GPU();
  DeviceRuntime rt(0);
  const ResidencyReport r = probe_residency(rt, {0, 0}, 2, kHoldSeconds, /*timeout_s=*/0.5);
  std::printf("all SMs, 0.5 s deadline: %.1f ms, failure: '%s'\n", r.grid_ms, r.failure.c_str());
  if (r.failure.empty()) {
    // The scheduler held the whole grid back until it fit: it waited, it did not hang.
    EXPECT_GT(r.grid_ms, 1000 * kHoldSeconds * 0.5);
  } else {
    EXPECT_NE(r.failure.find("grid_sync"), std::string::npos);
    EXPECT_NE(r.failure.find("blocks arrived"), std::string::npos) << r.failure;
    EXPECT_LT(r.grid_ms, 1000 * (0.5 + 1.0));
  }
  // The runtime is ready for new work afterwards.
  const ResidencyReport after = probe_residency(rt, {0, 2}, 2, 0.2, 30);
  EXPECT_TRUE(after.failure.empty()) << after.failure;
}

TEST(ResidencyGpu, ReserveCompletesWhileTheSideKernelStillRuns) {
  SYMMOE_SKIP_WITHOUT_GPU();
  DeviceRuntime rt(0);
  const ResidencyReport r = probe_residency(rt, {0, 2}, 2, kHoldSeconds, 30);
  std::printf("reserve 2, side stream holding 2: grid %d, %.3f ms, side still running: %d\n",
              r.grid, r.grid_ms, int(r.side_still_running));
  EXPECT_TRUE(r.failure.empty()) << r.failure;
  EXPECT_TRUE(r.side_still_running);
  EXPECT_LT(r.grid_ms, 500.0);
  EXPECT_EQ(r.usable_sms, query_device(0).num_sms - 2);
}

}  // namespace
}  // namespace symmoe::runtime
