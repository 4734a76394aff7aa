// How a symmetric buffer's physical memory is shared between ranks.
#pragma once

#include <string>
#include <string_view>

namespace symmoe::symm {

enum class HandleType {
  kAuto,    // fabric where every rank can create and export one, else fd
  kFd,      // POSIX file descriptor passed over a Unix socket: ranks on one host
  kFabric,  // CUmemFabricHandle: ranks across an NVLink/IMEX domain (e.g. GB200 NVL72)
};

const char* handle_type_name(HandleType type);
HandleType parse_handle_type(std::string_view text);  // "auto" | "fd" | "fabric"
HandleType handle_type_from_env();                     // SYMMOE_HANDLE_TYPE

struct HandleSupport {
  bool fd_ok = false;
  std::string fd_detail;      // what happened when trying
  bool fabric_ok = false;
  std::string fabric_detail;
};

// Really tries each type on `device`: create a small allocation, export it, import it back,
// release. Never throws for an unsupported type; the detail says what failed.
HandleSupport probe_handle_support(int device);

}  // namespace symmoe::symm
