#include "symmoe/core/device_info.hpp"

#include <cuda_runtime_api.h>

#include <map>
#include <mutex>

#include "symmoe/core/cuda_driver.hpp"
#include "symmoe/core/error.hpp"

namespace symmoe {

CudaStatus probe_cuda() {
  CudaStatus status;
  cudaRuntimeGetVersion(&status.runtime_version);
  if (cudaDriverGetVersion(&status.driver_version) != cudaSuccess) status.driver_version = 0;
  cudaGetLastError();
  int count = 0;
  const cudaError_t rc = cudaGetDeviceCount(&count);
  if (rc != cudaSuccess) {
    status.reason = detail::concat("cudaGetDeviceCount returned ",
                                   detail::cuda_runtime_error_text(static_cast<int>(rc)));
    cudaGetLastError();
    return status;
  }
  if (count == 0) {
    status.reason = "the CUDA runtime reports 0 devices";
    return status;
  }
  status.device_count = count;
  return status;
}

namespace {

DeviceInfo read_device(int ordinal) {
  cudaDeviceProp prop{};
  SYMMOE_CUDA_CHECK(cudaGetDeviceProperties(&prop, ordinal), "device ", ordinal);
  DeviceInfo info;
  info.ordinal = ordinal;
  info.name = prop.name;
  info.cc_major = prop.major;
  info.cc_minor = prop.minor;
  info.arch = detail::concat("sm_", prop.major, prop.minor);
  info.num_sms = prop.multiProcessorCount;
  info.l2_bytes = prop.l2CacheSize;
  info.smem_per_block_optin = static_cast<int>(prop.sharedMemPerBlockOptin);
  info.smem_per_sm = static_cast<int>(prop.sharedMemPerMultiprocessor);
  info.max_threads_per_sm = prop.maxThreadsPerMultiProcessor;
  info.total_mem = prop.totalGlobalMem;
  char bus[32] = {};
  if (cudaDeviceGetPCIBusId(bus, sizeof(bus), ordinal) == cudaSuccess) info.pci_bus_id = bus;
  cudaGetLastError();

  const DriverApi& cu = driver();
  CUdevice dev{};
  SYMMOE_CU_CHECK(cu.cuDeviceGet(&dev, ordinal), "device ", ordinal);
  auto attr = [&](CUdevice_attribute a) {
    int v = 0;
    SYMMOE_CU_CHECK(cu.cuDeviceGetAttribute(&v, a, dev), "device ", ordinal, " attribute ",
                    static_cast<int>(a));
    return v != 0;
  };
  info.vmm_supported = attr(CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED);
  info.posix_fd_supported = attr(CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED);
  info.fabric_supported = attr(CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED);
  return info;
}

}  // namespace

DeviceInfo query_device(int ordinal) {
  // Launch configurations ask on every call; the properties never change in a process.
  static std::mutex mutex;
  static std::map<int, DeviceInfo> cache;
  {
    std::lock_guard lock(mutex);
    if (auto it = cache.find(ordinal); it != cache.end()) return it->second;
  }
  DeviceInfo info = read_device(ordinal);
  std::lock_guard lock(mutex);
  return cache.emplace(ordinal, std::move(info)).first->second;
}

int current_device() {
  int device = -1;
  SYMMOE_CUDA_CHECK(cudaGetDevice(&device));
  return device;
}

std::vector<bool> p2p_matrix(int num_devices) {
  std::vector<bool> can(static_cast<size_t>(num_devices) * num_devices, false);
  for (int i = 0; i < num_devices; ++i) {
    for (int j = 0; j < num_devices; ++j) {
      int ok = (i == j) ? 1 : 0;
      if (i != j) SYMMOE_CUDA_CHECK(cudaDeviceCanAccessPeer(&ok, i, j), "devices ", i, " -> ", j);
      can[static_cast<size_t>(i) * num_devices + j] = ok != 0;
    }
  }
  return can;
}

}  // namespace symmoe
