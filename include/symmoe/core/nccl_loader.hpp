// NCCL, loaded on demand with dlopen so that symmoe runs where NCCL is absent.
// Search order: SYMMOE_NCCL_LIBRARY, then libnccl.so.2 / libnccl.so on the loader path.
#pragma once

#include <string>

namespace symmoe {

struct NcclApi {
  int (*ncclGetVersion)(int* version);
  const char* (*ncclGetErrorString)(int result);
  std::string path;  // what was loaded
};

// The loaded API, or nullptr when NCCL cannot be loaded (`why` says why).
const NcclApi* nccl(std::string* why = nullptr);

// "2.28.9" style version string, or a reason it is unknown.
std::string nccl_version_string();

}  // namespace symmoe
