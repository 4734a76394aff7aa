#include "gpu_power.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include <cuda_runtime_api.h>

namespace symmoe::cli {

PowerSummary summarize_power(const std::vector<PowerSample>& samples) {
  PowerSummary s;
  s.samples = static_cast<int>(samples.size());
  if (samples.empty()) return s;
  s.sm_mhz_min = samples[0].sm_mhz;
  int capped = 0, thermal = 0;
  for (const PowerSample& x : samples) {
    s.sm_mhz_mean += x.sm_mhz;
    s.watts_mean += x.watts;
    s.sm_mhz_min = std::min(s.sm_mhz_min, x.sm_mhz);
    s.watts_max = std::max(s.watts_max, x.watts);
    if (x.reasons & (kReasonSwPowerCap | kReasonHwPowerBrake)) ++capped;
    if (x.reasons & (kReasonSwThermal | kReasonHwThermal | kReasonHwSlowdown)) ++thermal;
  }
  s.sm_mhz_mean /= s.samples;
  s.watts_mean /= s.samples;
  s.power_capped = static_cast<double>(capped) / s.samples;
  s.thermal = static_cast<double>(thermal) / s.samples;
  return s;
}

std::string format_power(const PowerSummary& s) {
  if (s.samples == 0) return "no samples";
  char buf[160];
  int n = std::snprintf(buf, sizeof(buf), "%.0f MHz (min %.0f), %.0f W (max %.0f), power cap %.0f %%", s.sm_mhz_mean,
                        s.sm_mhz_min, s.watts_mean, s.watts_max, 100 * s.power_capped);
  if (s.thermal > 0 && n > 0 && n < static_cast<int>(sizeof(buf))) {
    std::snprintf(buf + n, sizeof(buf) - n, ", thermal %.0f %%", 100 * s.thermal);
  }
  return buf;
}

// The few NVML entry points used, declared by their stable C ABI (return 0 = NVML_SUCCESS).
struct PowerSampler::Nvml {
  using Device = void*;
  void* lib = nullptr;
  int (*init)() = nullptr;
  int (*shutdown)() = nullptr;
  int (*by_pci)(const char*, Device*) = nullptr;
  int (*clock)(Device, int, unsigned*) = nullptr;  // type 1: NVML_CLOCK_SM
  int (*power)(Device, unsigned*) = nullptr;       // milliwatts
  int (*reasons)(Device, unsigned long long*) = nullptr;
  Device dev = nullptr;
  ~Nvml() {
    if (shutdown != nullptr) shutdown();
    if (lib != nullptr) dlclose(lib);
  }
};

namespace {
template <class F>
bool resolve(void* lib, const char* name, F* f) {
  *f = reinterpret_cast<F>(dlsym(lib, name));
  return *f != nullptr;
}
}  // namespace

PowerSampler::PowerSampler(int cuda_device, int period_ms) : period_ms_(std::max(period_ms, 1)) {
  auto n = std::make_unique<Nvml>();
  n->lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (n->lib == nullptr) {
    why_ = "libnvidia-ml.so.1 not found (NVML ships with the NVIDIA driver)";
    return;
  }
  if (!resolve(n->lib, "nvmlInit_v2", &n->init) || !resolve(n->lib, "nvmlShutdown", &n->shutdown) ||
      !resolve(n->lib, "nvmlDeviceGetHandleByPciBusId_v2", &n->by_pci) ||
      !resolve(n->lib, "nvmlDeviceGetClockInfo", &n->clock) || !resolve(n->lib, "nvmlDeviceGetPowerUsage", &n->power)) {
    why_ = "libnvidia-ml.so.1 lacks an entry point this tool reads";
    n->shutdown = nullptr;
    return;
  }
  if (!resolve(n->lib, "nvmlDeviceGetCurrentClocksEventReasons", &n->reasons)) {
    resolve(n->lib, "nvmlDeviceGetCurrentClocksThrottleReasons", &n->reasons);  // older drivers; optional
  }
  if (n->init() != 0) {
    why_ = "nvmlInit failed";
    n->shutdown = nullptr;
    return;
  }
  char bus[32] = {};
  if (cudaDeviceGetPCIBusId(bus, sizeof(bus), cuda_device) != cudaSuccess || n->by_pci(bus, &n->dev) != 0) {
    cudaGetLastError();
    why_ = std::string("NVML does not know CUDA device ") + std::to_string(cuda_device) + " (PCI " + bus + ")";
    return;
  }
  nvml_ = std::move(n);
  thread_ = std::thread([this] { loop(); });
}

PowerSampler::~PowerSampler() {
  quit_ = true;
  if (thread_.joinable()) thread_.join();
}

void PowerSampler::loop() {
  while (!quit_) {
    if (active_) {
      unsigned mhz = 0, mw = 0;
      unsigned long long reasons = 0;
      const bool ok = nvml_->clock(nvml_->dev, 1, &mhz) == 0 && nvml_->power(nvml_->dev, &mw) == 0;
      if (nvml_->reasons != nullptr) nvml_->reasons(nvml_->dev, &reasons);
      if (ok) {
        std::lock_guard<std::mutex> lock(mu_);
        samples_.push_back({static_cast<double>(mhz), mw / 1000.0, reasons});
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(period_ms_));
  }
}

void PowerSampler::start() {
  std::lock_guard<std::mutex> lock(mu_);
  samples_.clear();
  active_ = true;
}

PowerSummary PowerSampler::stop() {
  active_ = false;
  std::lock_guard<std::mutex> lock(mu_);
  return summarize_power(samples_);
}

}  // namespace symmoe::cli
