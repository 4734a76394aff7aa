// Per-rank device state shared by the library's protocol kernels: the status block kernels
// report failures into, the grid-sync words of persistent kernels, and eager kernel loading.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <optional>
#include <string>

#include "symmoe/device/grid_sync.cuh"
#include "symmoe/device/status.cuh"

namespace symmoe::runtime {

// Formats a failure record as the text of the host-side error (empty for kOk).
std::string describe_status(const device::StatusBlock& status);

// Seconds -> the nanoseconds kernels compare against; <= 0 reads SYMMOE_WAIT_TIMEOUT_S.
uint64_t wait_timeout_ns(double timeout_s = 0);

class DeviceRuntime {
 public:
  // On `device` (-1: the current one). Loads every kernel of the library before returning, so
  // no spin-wait protocol can meet a lazily loaded module.
  explicit DeviceRuntime(int device = -1);
  ~DeviceRuntime();
  DeviceRuntime(const DeviceRuntime&) = delete;
  DeviceRuntime& operator=(const DeviceRuntime&) = delete;

  int device() const { return device_; }
  int num_kernels_loaded() const { return num_kernels_; }
  device::StatusBlock* status() const { return status_; }
  // The grid words of grid_sync and of the split-phase barriers' done count: one launch at a
  // time uses them, so protocol kernels of one runtime must not overlap (one stream, or
  // ordered streams); give concurrent streams a runtime each.
  device::GridSyncState* grid_state() const { return grid_; }

  // `stream` must be the stream the protocol kernels ran on (never the legacy default stream:
  // ranks sharing a GPU run concurrently). Waits for `stream`, then returns the failure text a kernel left (clearing the block so the
  // runtime is ready for new work), or nullopt.
  std::optional<std::string> take_failure(cudaStream_t stream);
  // Same, but throws symmoe::Error with the text.
  void check(cudaStream_t stream);

 private:
  void clear(cudaStream_t stream);

  int device_ = -1;
  int num_kernels_ = 0;
  device::StatusBlock* status_ = nullptr;
  device::GridSyncState* grid_ = nullptr;
};

}  // namespace symmoe::runtime
