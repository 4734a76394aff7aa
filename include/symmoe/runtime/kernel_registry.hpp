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
  // The most dynamic shared memory any launch of the kernel uses, set once at load time.
  // NOTE [attributes at load time]: cudaFuncSetAttribute is never called at launch time: a
  // change of a kernel's attribute can wait for running instances of that kernel, and with
  // ranks sharing a GPU those may be spinning on the very rank that is launching.
  int max_dynamic_smem = 0;
  // Preferred shared-memory carveout in percent (-1: the driver's choice). Kernels whose grids
  // must be co-resident at their occupancy take 100: the driver may otherwise configure an SM
  // with room for fewer of their blocks than the occupancy calculator promised.
  int smem_carveout_percent = -1;
};

std::vector<KernelEntry> all_kernels();

// Loads every kernel's module on `device` (cudaFuncGetAttributes forces the load) and sets
// its shared-memory limit; once per device per process. Returns how many kernels are loaded. Throws if one cannot be loaded
// (e.g. the binary has no code for this architecture).
int load_all_kernels(int device);

}  // namespace symmoe::runtime
