#include "support/gpu.hpp"

#include "symmoe/core/device_info.hpp"

namespace symmoe::test {

int gpu_count(std::string* why) {
  const CudaStatus s = probe_cuda();
  if (why != nullptr) *why = s.reason;
  return s.device_count;
}

}  // namespace symmoe::test
