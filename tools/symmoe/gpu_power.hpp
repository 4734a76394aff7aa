// The board's SM clock and power while a benchmark section runs (`symmoe bench gemm --power`):
// an H200 streaming weights or running fp8 wgmma at full rate meets its power cap, and its SM
// clock then drops by up to a third (bench/RESULTS.md), so two kernels timed at different clocks
// are not compared like for like. Read from NVML (libnvidia-ml.so.1, loaded at run time: the
// driver ships it, the toolkit's headers are not needed); where it cannot be loaded the sampler
// says why and the benchmark prints no power figures.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace symmoe::cli {

struct PowerSample {
  double sm_mhz = 0;
  double watts = 0;
  uint64_t reasons = 0;  // NVML clock event reasons (nvmlClocksEventReason*)
};

// NVML's clock event reason bits that mean "held back by power" or "by heat".
inline constexpr uint64_t kReasonSwPowerCap = 0x4, kReasonHwSlowdown = 0x8, kReasonSwThermal = 0x20,
                          kReasonHwThermal = 0x40, kReasonHwPowerBrake = 0x80;

struct PowerSummary {
  int samples = 0;
  double sm_mhz_mean = 0, sm_mhz_min = 0;
  double watts_mean = 0, watts_max = 0;
  double power_capped = 0;  // fraction of samples with the software power cap or the power brake
  double thermal = 0;       // fraction with a thermal or hardware slowdown
};

PowerSummary summarize_power(const std::vector<PowerSample>& samples);
// "1921 MHz (min 1410), 663 W (max 705), power cap 41 %" (thermal share only when non-zero);
// "no samples" for an empty summary.
std::string format_power(const PowerSummary& s);

// Samples the device every period_ms on a thread of its own between start() and stop().
class PowerSampler {
 public:
  explicit PowerSampler(int cuda_device, int period_ms = 10);
  ~PowerSampler();
  PowerSampler(const PowerSampler&) = delete;
  PowerSampler& operator=(const PowerSampler&) = delete;

  bool available() const { return nvml_ != nullptr; }
  const std::string& why_unavailable() const { return why_; }
  void start();          // begins a section (drops the samples of the last one)
  PowerSummary stop();   // ends it

 private:
  struct Nvml;
  void loop();
  std::unique_ptr<Nvml> nvml_;
  std::string why_;
  int period_ms_;
  std::atomic<bool> active_{false}, quit_{false};
  std::mutex mu_;
  std::vector<PowerSample> samples_;
  std::thread thread_;
};

}  // namespace symmoe::cli
