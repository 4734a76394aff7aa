// The power summary of `symmoe bench gemm --power` (tools/symmoe/gpu_power.hpp).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "../../tools/symmoe/gpu_power.hpp"

namespace symmoe::cli {
namespace {

TEST(GpuPower, SummaryAveragesAndCountsCapReasons) {
  const std::vector<PowerSample> samples = {
      {1980, 600, 0},
      {1410, 705, kReasonSwPowerCap},
      {1800, 690, kReasonHwPowerBrake | kReasonSwThermal},
      {1950, 640, kReasonHwSlowdown},
  };
  const PowerSummary s = summarize_power(samples);
  EXPECT_EQ(s.samples, 4);
  EXPECT_DOUBLE_EQ(s.sm_mhz_mean, (1980 + 1410 + 1800 + 1950) / 4.0);
  EXPECT_DOUBLE_EQ(s.sm_mhz_min, 1410);
  EXPECT_DOUBLE_EQ(s.watts_mean, (600 + 705 + 690 + 640) / 4.0);
  EXPECT_DOUBLE_EQ(s.watts_max, 705);
  EXPECT_DOUBLE_EQ(s.power_capped, 0.5);  // the software cap and the power brake
  EXPECT_DOUBLE_EQ(s.thermal, 0.5);       // thermal and hardware slowdown
  EXPECT_EQ(format_power(s), "1785 MHz (min 1410), 659 W (max 705), power cap 50 %, thermal 50 %");
}

TEST(GpuPower, EmptyAndCoolSectionsSayWhatTheyHave) {
  EXPECT_EQ(summarize_power({}).samples, 0);
  EXPECT_EQ(format_power(summarize_power({})), "no samples");
  const PowerSummary cool = summarize_power({{1980, 300, 0}});
  EXPECT_EQ(format_power(cool), "1980 MHz (min 1980), 300 W (max 300), power cap 0 %");
}

// Without NVML (this CI machine has no driver) the sampler says why and records nothing; with
// it, a section with no time in it still ends cleanly.
TEST(GpuPower, SamplerEitherRunsOrSaysWhyNot) {
  PowerSampler sampler(0, 1);
  if (!sampler.available()) {
    EXPECT_FALSE(sampler.why_unavailable().empty());
    return;
  }
  sampler.start();
  EXPECT_GE(sampler.stop().samples, 0);
}

}  // namespace
}  // namespace symmoe::cli
