#include "symmoe/symm/handle_type.hpp"

#include <unistd.h>

#include "symmoe/core/cuda_driver.hpp"
#include "symmoe/core/device_info.hpp"
#include "symmoe/core/env.hpp"
#include "symmoe/core/error.hpp"
#include "vmm.hpp"

namespace symmoe::symm {

const char* handle_type_name(HandleType type) {
  switch (type) {
    case HandleType::kAuto: return "auto";
    case HandleType::kFd: return "fd";
    case HandleType::kFabric: return "fabric";
  }
  return "?";
}

HandleType parse_handle_type(std::string_view text) {
  if (text == "auto") return HandleType::kAuto;
  if (text == "fd") return HandleType::kFd;
  if (text == "fabric") return HandleType::kFabric;
  SYMMOE_FAIL("unknown handle type '", text, "': expected auto, fd or fabric");
}

HandleType handle_type_from_env() {
  return parse_handle_type(env::get_string("SYMMOE_HANDLE_TYPE"));
}

namespace {

// Create -> export -> import -> release one granule; "" when the whole round trip works.
std::string round_trip(int device, CUmemAllocationHandleType type) {
  const DriverApi& cu = driver();
  size_t bytes = 0;
  try {
    bytes = vmm::granularity(device, type);
  } catch (const Error& e) {
    return e.what();
  }
  CUmemGenericAllocationHandle handle = 0;
  std::string why = vmm::try_create(bytes, device, type, &handle);
  if (!why.empty()) return why;
  CUmemGenericAllocationHandle imported = 0;
  if (type == CU_MEM_HANDLE_TYPE_FABRIC) {
    CUmemFabricHandle fabric{};
    why = vmm::try_export_fabric(handle, &fabric);
    if (why.empty()) why = vmm::try_import_fabric(fabric, &imported);
  } else {
    int fd = -1;
    why = vmm::try_export_fd(handle, &fd);
    if (why.empty()) {
      why = vmm::try_import_fd(fd, &imported);
      ::close(fd);
    }
  }
  if (imported != 0) cu.cuMemRelease(imported);
  cu.cuMemRelease(handle);
  return why;
}

}  // namespace

HandleSupport probe_handle_support(int device) {
  HandleSupport s;
  const DeviceInfo info = query_device(device);
  if (!info.vmm_supported) {
    s.fd_detail = s.fabric_detail = "device does not support virtual memory management";
    return s;
  }
  if (!info.posix_fd_supported) {
    s.fd_detail = "device attribute HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED is 0";
  } else {
    s.fd_detail = round_trip(device, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
    s.fd_ok = s.fd_detail.empty();
    if (s.fd_ok) s.fd_detail = "create/export/import round trip ok";
  }
  if (!info.fabric_supported) {
    s.fabric_detail = "device attribute HANDLE_TYPE_FABRIC_SUPPORTED is 0";
  } else {
    s.fabric_detail = round_trip(device, CU_MEM_HANDLE_TYPE_FABRIC);
    s.fabric_ok = s.fabric_detail.empty();
    if (s.fabric_ok) {
      s.fabric_detail = "create/export/import round trip ok";
    } else {
      s.fabric_detail += " (the device reports fabric support; creation needs an IMEX channel)";
    }
  }
  return s;
}

}  // namespace symmoe::symm
