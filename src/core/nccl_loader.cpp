#include "symmoe/core/nccl_loader.hpp"

#include <dlfcn.h>

#include <type_traits>
#include <vector>

#include "symmoe/core/env.hpp"
#include "symmoe/core/error.hpp"

namespace symmoe {
namespace {

struct Loaded {
  NcclApi api{};
  bool ok = false;
  std::string why;
};

const Loaded& loaded() {
  static const Loaded instance = [] {
    Loaded l;
    std::vector<std::string> candidates;
    const std::string configured = env::get_string("SYMMOE_NCCL_LIBRARY");
    if (!configured.empty()) candidates.push_back(configured);
    candidates.push_back("libnccl.so.2");
    candidates.push_back("libnccl.so");
    std::string tried;
    for (const auto& path : candidates) {
      void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (handle == nullptr) {
        const char* err = dlerror();
        tried += detail::concat(tried.empty() ? "" : "; ", path, ": ", err ? err : "not found");
        continue;
      }
      l.api.ncclGetVersion = reinterpret_cast<int (*)(int*)>(dlsym(handle, "ncclGetVersion"));
      l.api.ncclGetErrorString =
          reinterpret_cast<const char* (*)(int)>(dlsym(handle, "ncclGetErrorString"));
      if (l.api.ncclGetVersion == nullptr || l.api.ncclGetErrorString == nullptr) {
        tried += detail::concat(tried.empty() ? "" : "; ", path, ": missing NCCL symbols");
        dlclose(handle);
        continue;
      }
      auto optional = [handle](auto& fn, const char* name) {
        fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(handle, name));
      };
      optional(l.api.ncclGetUniqueId, "ncclGetUniqueId");
      optional(l.api.ncclCommInitRank, "ncclCommInitRank");
      optional(l.api.ncclCommDestroy, "ncclCommDestroy");
      optional(l.api.ncclGroupStart, "ncclGroupStart");
      optional(l.api.ncclGroupEnd, "ncclGroupEnd");
      optional(l.api.ncclSend, "ncclSend");
      optional(l.api.ncclRecv, "ncclRecv");
      l.api.path = path;
      l.ok = true;
      return l;
    }
    l.why = "NCCL could not be loaded (" + tried + "); set SYMMOE_NCCL_LIBRARY to its path";
    return l;
  }();
  return instance;
}

}  // namespace

const NcclApi* nccl(std::string* why) {
  const Loaded& l = loaded();
  if (!l.ok) {
    if (why != nullptr) *why = l.why;
    return nullptr;
  }
  return &l.api;
}

std::string nccl_version_string() {
  std::string why;
  const NcclApi* api = nccl(&why);
  if (api == nullptr) return "unavailable: " + why;
  int code = 0;
  SYMMOE_NCCL_CHECK(api->ncclGetVersion(&code));
  // NCCL >= 2.9 encodes major*10000 + minor*100 + patch.
  return detail::concat(code / 10000, ".", (code % 10000) / 100, ".", code % 100, " (", api->path,
                        ")");
}

}  // namespace symmoe
