// Every kernel of the library, so that all of them can be loaded before any spin-wait protocol
// runs. With lazy module loading, a kernel launched on a second stream can wait for its module
// until a kernel spinning on the first stream gives up (measured on the H200): a deadlock in
// disguise. Loading everything up front removes it.
#pragma once

#include <vector>

namespace symmoe::runtime {

struct KernelEntry {
  const char* name;
  const void* function;
};

std::vector<KernelEntry> all_kernels();

// Loads every kernel's module on `device` (cudaFuncGetAttributes forces the load); once per
// device per process. Returns how many kernels are loaded. Throws if one cannot be loaded
// (e.g. the binary has no code for this architecture).
int load_all_kernels(int device);

}  // namespace symmoe::runtime
