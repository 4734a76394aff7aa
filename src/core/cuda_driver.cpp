#include "symmoe/core/cuda_driver.hpp"

#include <cuda_runtime_api.h>

#include <mutex>

#include "symmoe/core/error.hpp"

namespace symmoe {
namespace {

// The entry points are requested at the CUDA 12.0 ABI: every function used here has had a
// stable signature since then, and 13.x drivers serve it.
constexpr unsigned kDriverAbiVersion = 12000;

struct Loaded {
  DriverApi api{};
  bool ok = false;
  std::string why;
};

template <class Fn>
bool resolve(const char* symbol, Fn& out, std::string& why) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult status{};
  cudaError_t rc = cudaGetDriverEntryPointByVersion(symbol, &fn, kDriverAbiVersion,
                                                    cudaEnableDefault, &status);
  if (rc != cudaSuccess || status != cudaDriverEntryPointSuccess || fn == nullptr) {
    why = detail::concat("cannot resolve driver entry point ", symbol, ": ",
                         detail::cuda_runtime_error_text(rc), ", query status ",
                         static_cast<int>(status));
    cudaGetLastError();  // the failed query must not linger as a sticky runtime error
    return false;
  }
  out = reinterpret_cast<Fn>(fn);
  return true;
}

const Loaded& loaded() {
  static const Loaded instance = [] {
    Loaded l;
    DriverApi& a = l.api;
    l.ok = resolve("cuGetErrorName", a.cuGetErrorName, l.why) &&
           resolve("cuGetErrorString", a.cuGetErrorString, l.why) &&
           resolve("cuDriverGetVersion", a.cuDriverGetVersion, l.why) &&
           resolve("cuDeviceGet", a.cuDeviceGet, l.why) &&
           resolve("cuDeviceGetAttribute", a.cuDeviceGetAttribute, l.why) &&
           resolve("cuMemCreate", a.cuMemCreate, l.why) &&
           resolve("cuMemRelease", a.cuMemRelease, l.why) &&
           resolve("cuMemExportToShareableHandle", a.cuMemExportToShareableHandle, l.why) &&
           resolve("cuMemImportFromShareableHandle", a.cuMemImportFromShareableHandle, l.why) &&
           resolve("cuMemGetAllocationGranularity", a.cuMemGetAllocationGranularity, l.why) &&
           resolve("cuMemAddressReserve", a.cuMemAddressReserve, l.why) &&
           resolve("cuMemAddressFree", a.cuMemAddressFree, l.why) &&
           resolve("cuMemMap", a.cuMemMap, l.why) &&
           resolve("cuMemUnmap", a.cuMemUnmap, l.why) &&
           resolve("cuMemSetAccess", a.cuMemSetAccess, l.why) &&
           resolve("cuPointerGetAttribute", a.cuPointerGetAttribute, l.why) &&
           resolve("cuTensorMapEncodeTiled", a.cuTensorMapEncodeTiled, l.why);
    return l;
  }();
  return instance;
}

}  // namespace

bool driver_available(std::string* why) {
  const Loaded& l = loaded();
  if (!l.ok && why != nullptr) *why = l.why;
  return l.ok;
}

const DriverApi& driver() {
  const Loaded& l = loaded();
  if (!l.ok) SYMMOE_FAIL("the CUDA driver API is unavailable: ", l.why);
  return l.api;
}

}  // namespace symmoe
