// Thin helpers over the cuMem VMM driver calls (private to symm).
#pragma once

#include <cuda.h>

#include <string>

namespace symmoe::symm::vmm {

CUmemAllocationProp allocation_prop(int device, CUmemAllocationHandleType types);

// Recommended granularity for `types` on `device`.
size_t granularity(int device, CUmemAllocationHandleType types);

// cuMemCreate; returns "" or the driver's error text (never throws).
std::string try_create(size_t bytes, int device, CUmemAllocationHandleType types,
                       CUmemGenericAllocationHandle* out);

// Export to a POSIX fd or a fabric handle; returns "" or the error text.
std::string try_export_fd(CUmemGenericAllocationHandle handle, int* fd);
std::string try_export_fabric(CUmemGenericAllocationHandle handle, CUmemFabricHandle* out);

// Import; returns "" or the error text.
std::string try_import_fd(int fd, CUmemGenericAllocationHandle* out);
std::string try_import_fabric(const CUmemFabricHandle& in, CUmemGenericAllocationHandle* out);

}  // namespace symmoe::symm::vmm
