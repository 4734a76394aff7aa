#include "vmm.hpp"

#include <cstdint>

#include "symmoe/core/cuda_driver.hpp"
#include "symmoe/core/error.hpp"

namespace symmoe::symm::vmm {
namespace {

std::string text_of(const char* call, CUresult rc) {
  if (rc == CUDA_SUCCESS) return "";
  return detail::concat(call, " failed: ", detail::cuda_driver_error_text(rc));
}

}  // namespace

CUmemAllocationProp allocation_prop(int device, CUmemAllocationHandleType types) {
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = device;
  prop.requestedHandleTypes = types;
  return prop;
}

size_t granularity(int device, CUmemAllocationHandleType types) {
  const CUmemAllocationProp prop = allocation_prop(device, types);
  size_t g = 0;
  SYMMOE_CU_CHECK(driver().cuMemGetAllocationGranularity(&g, &prop,
                                                         CU_MEM_ALLOC_GRANULARITY_RECOMMENDED),
                  "device ", device);
  SYMMOE_CHECK(g > 0 && (g & (g - 1)) == 0, "granularity ", g, " is not a power of two");
  return g;
}

std::string try_create(size_t bytes, int device, CUmemAllocationHandleType types,
                       CUmemGenericAllocationHandle* out) {
  const CUmemAllocationProp prop = allocation_prop(device, types);
  return text_of("cuMemCreate", driver().cuMemCreate(out, bytes, &prop, 0));
}

std::string try_export_fd(CUmemGenericAllocationHandle handle, int* fd) {
  return text_of("cuMemExportToShareableHandle(POSIX_FILE_DESCRIPTOR)",
                 driver().cuMemExportToShareableHandle(
                     fd, handle, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
}

std::string try_export_fabric(CUmemGenericAllocationHandle handle, CUmemFabricHandle* out) {
  return text_of("cuMemExportToShareableHandle(FABRIC)",
                 driver().cuMemExportToShareableHandle(out, handle, CU_MEM_HANDLE_TYPE_FABRIC, 0));
}

std::string try_import_fd(int fd, CUmemGenericAllocationHandle* out) {
  return text_of("cuMemImportFromShareableHandle(POSIX_FILE_DESCRIPTOR)",
                 driver().cuMemImportFromShareableHandle(
                     out, reinterpret_cast<void*>(static_cast<uintptr_t>(fd)),
                     CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
}

std::string try_import_fabric(const CUmemFabricHandle& in, CUmemGenericAllocationHandle* out) {
  return text_of("cuMemImportFromShareableHandle(FABRIC)",
                 driver().cuMemImportFromShareableHandle(out, const_cast<CUmemFabricHandle*>(&in),
                                                         CU_MEM_HANDLE_TYPE_FABRIC));
}

}  // namespace symmoe::symm::vmm
