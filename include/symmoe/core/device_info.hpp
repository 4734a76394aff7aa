// What the host needs to know about a CUDA device before sizing or launching anything.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace symmoe {

struct CudaStatus {
  int device_count = 0;      // 0 when no usable device
  int runtime_version = 0;   // e.g. 13000
  int driver_version = 0;    // 0 when no driver
  std::string reason;        // why device_count is 0 (empty otherwise)
};

// Never throws: a machine without a driver or device reports device_count 0 and a reason.
CudaStatus probe_cuda();

struct DeviceInfo {
  int ordinal = -1;
  std::string name;
  int cc_major = 0;
  int cc_minor = 0;
  std::string arch;           // "sm_90"
  int num_sms = 0;
  int l2_bytes = 0;
  int smem_per_block_optin = 0;
  int smem_per_sm = 0;
  int max_threads_per_sm = 0;
  size_t total_mem = 0;
  std::string pci_bus_id;
  bool vmm_supported = false;
  bool posix_fd_supported = false;
  bool fabric_supported = false;
};

// Read once per device and cached (launch configurations call this on every launch).
DeviceInfo query_device(int ordinal);

// Ordinal of the calling thread's current device.
int current_device();

// Row-major [n x n]: can_access[i * n + j] == device i can access device j (diagonal true).
std::vector<bool> p2p_matrix(int num_devices);

}  // namespace symmoe
