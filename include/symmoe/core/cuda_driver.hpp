// The CUDA driver API, reached through the runtime's entry-point query so that symmoe links
// no libcuda and starts on machines without a GPU driver.
#pragma once

#include <cuda.h>

#include <string>

namespace symmoe {

struct DriverApi {
  decltype(&::cuGetErrorName) cuGetErrorName;
  decltype(&::cuGetErrorString) cuGetErrorString;
  decltype(&::cuDriverGetVersion) cuDriverGetVersion;
  decltype(&::cuDeviceGet) cuDeviceGet;
  decltype(&::cuDeviceGetAttribute) cuDeviceGetAttribute;
  decltype(&::cuMemCreate) cuMemCreate;
  decltype(&::cuMemRelease) cuMemRelease;
  decltype(&::cuMemExportToShareableHandle) cuMemExportToShareableHandle;
  decltype(&::cuMemImportFromShareableHandle) cuMemImportFromShareableHandle;
  decltype(&::cuMemGetAllocationGranularity) cuMemGetAllocationGranularity;
  decltype(&::cuMemAddressReserve) cuMemAddressReserve;
  decltype(&::cuMemAddressFree) cuMemAddressFree;
  decltype(&::cuMemMap) cuMemMap;
  decltype(&::cuMemUnmap) cuMemUnmap;
  decltype(&::cuMemSetAccess) cuMemSetAccess;
  decltype(&::cuPointerGetAttribute) cuPointerGetAttribute;
  decltype(&::cuTensorMapEncodeTiled) cuTensorMapEncodeTiled;
};

// True when the driver entry points could be resolved; otherwise `why` says what failed.
bool driver_available(std::string* why = nullptr);

// The resolved driver API; throws symmoe::Error when no driver is present.
const DriverApi& driver();

}  // namespace symmoe
