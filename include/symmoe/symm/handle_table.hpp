// The table of shareable handles ranks exchange (one per rank), with strict checks: a table
// from a binding (e.g. a tensor a framework all-gathered) must fail on the host, with a named
// error, when its count, element type or element size does not fit its handle type.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "symmoe/symm/handle_type.hpp"

namespace symmoe::symm {

enum class HandleElement { kInt32, kInt64, kUInt8 };

const char* handle_element_name(HandleElement element);

struct ShareableHandleTable {
  HandleType type = HandleType::kFd;  // kFd or kFabric
  HandleElement element = HandleElement::kInt32;
  size_t element_bytes = 0;  // bytes of one rank's handle
  size_t count = 0;          // handles (ranks)
  std::vector<uint8_t> data;  // count * element_bytes, rank-major
};

// Size of one fabric handle (CUmemFabricHandle).
inline constexpr size_t kFabricHandleBytes = 64;

// fd: int32 or int64 elements of their own size, each value a valid descriptor (>= 0, fits
// an int); fabric: uint8 elements of kFabricHandleBytes. Both: count == world_size and
// data.size() == count * element_bytes. Throws symmoe::Error naming the field and both values.
void check_handle_table(const ShareableHandleTable& table, int world_size);

ShareableHandleTable make_fd_table(const std::vector<int>& fds);
ShareableHandleTable make_fabric_table(const std::vector<uint8_t>& handles, size_t count);

// The descriptor of rank r (after check_handle_table).
int fd_at(const ShareableHandleTable& table, int rank);
const uint8_t* fabric_at(const ShareableHandleTable& table, int rank);

}  // namespace symmoe::symm
