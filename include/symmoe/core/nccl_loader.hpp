// NCCL, loaded on demand with dlopen so that symmoe runs where NCCL is absent.
// Search order: SYMMOE_NCCL_LIBRARY, then libnccl.so.2 / libnccl.so on the loader path.
#pragma once

#include <cstddef>
#include <string>

namespace symmoe {

// ncclUniqueId: 128 opaque bytes, passed by value to ncclCommInitRank.
struct NcclUniqueId {
  char internal[128];
};
using NcclComm = void*;  // ncclComm_t
inline constexpr int kNcclUint8 = 1;  // ncclDataType_t ncclUint8 (counts are bytes)

struct NcclApi {
  int (*ncclGetVersion)(int* version);
  const char* (*ncclGetErrorString)(int result);
  // Point-to-point (NCCL >= 2.7); null when the library lacks them. Streams are cudaStream_t.
  int (*ncclGetUniqueId)(NcclUniqueId* id);
  int (*ncclCommInitRank)(NcclComm* comm, int nranks, NcclUniqueId id, int rank);
  int (*ncclCommDestroy)(NcclComm comm);
  int (*ncclGroupStart)();
  int (*ncclGroupEnd)();
  int (*ncclSend)(const void* buf, size_t count, int datatype, int peer, NcclComm comm, void* stream);
  int (*ncclRecv)(void* buf, size_t count, int datatype, int peer, NcclComm comm, void* stream);
  std::string path;  // what was loaded

  bool has_point_to_point() const {
    return ncclGetUniqueId && ncclCommInitRank && ncclCommDestroy && ncclGroupStart && ncclGroupEnd &&
           ncclSend && ncclRecv;
  }
};

// The loaded API, or nullptr when NCCL cannot be loaded (`why` says why).
const NcclApi* nccl(std::string* why = nullptr);

// "2.28.9" style version string, or a reason it is unknown.
std::string nccl_version_string();

}  // namespace symmoe
