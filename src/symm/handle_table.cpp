#include "symmoe/symm/handle_table.hpp"

#include <climits>
#include <cstring>

#include "symmoe/core/error.hpp"

namespace symmoe::symm {

namespace {

// Rank r's descriptor value as stored (int32 or int64 element).
int64_t raw_fd(const ShareableHandleTable& t, size_t r) {
  if (t.element == HandleElement::kInt32) {
    int32_t v32 = 0;
    std::memcpy(&v32, t.data.data() + r * 4, 4);
    return v32;
  }
  int64_t v = 0;
  std::memcpy(&v, t.data.data() + r * 8, 8);
  return v;
}

}  // namespace

const char* handle_element_name(HandleElement element) {
  switch (element) {
    case HandleElement::kInt32: return "int32";
    case HandleElement::kInt64: return "int64";
    case HandleElement::kUInt8: return "uint8";
  }
  return "?";
}

void check_handle_table(const ShareableHandleTable& t, int world_size) {
  SYMMOE_CHECK(t.type == HandleType::kFd || t.type == HandleType::kFabric,
               "a handle table holds fd or fabric handles, not '", handle_type_name(t.type), "'");
  SYMMOE_CHECK(t.count == static_cast<size_t>(world_size), "handle table: ", t.count,
               " handles != world_size=", world_size, " (one ", handle_type_name(t.type),
               " handle per rank)");
  if (t.type == HandleType::kFabric) {
    SYMMOE_CHECK(t.element == HandleElement::kUInt8, "handle table: fabric handles must be uint8, got ",
                 handle_element_name(t.element));
    SYMMOE_CHECK(t.element_bytes == kFabricHandleBytes, "handle table: a fabric handle is ",
                 kFabricHandleBytes, " bytes (CUmemFabricHandle), got ", t.element_bytes,
                 " (shape must be [world_size, ", kFabricHandleBytes, "])");
  } else {
    SYMMOE_CHECK(t.element == HandleElement::kInt32 || t.element == HandleElement::kInt64,
                 "handle table: fd handles must be int32 or int64, got ", handle_element_name(t.element));
    const size_t expected = t.element == HandleElement::kInt32 ? 4 : 8;
    SYMMOE_CHECK(t.element_bytes == expected, "handle table: ", handle_element_name(t.element),
                 " fd handles are ", expected, " bytes each, got ", t.element_bytes,
                 " (shape must be [world_size])");
  }
  SYMMOE_CHECK(t.data.size() == t.count * t.element_bytes, "handle table: ", t.data.size(),
               " bytes of data for ", t.count, " handles of ", t.element_bytes, " bytes");
  if (t.type == HandleType::kFd) {
    for (size_t r = 0; r < t.count; ++r) {
      const int64_t v = raw_fd(t, r);
      SYMMOE_CHECK(v >= 0 && v <= INT_MAX, "handle table: rank ", r, "'s descriptor ", v,
                   " is not a valid file descriptor");
    }
  }
}

ShareableHandleTable make_fd_table(const std::vector<int>& fds) {
  ShareableHandleTable t;
  t.type = HandleType::kFd;
  t.element = HandleElement::kInt32;
  t.element_bytes = sizeof(int32_t);
  t.count = fds.size();
  t.data.resize(fds.size() * sizeof(int32_t));
  for (size_t r = 0; r < fds.size(); ++r) {
    const int32_t v = fds[r];
    std::memcpy(t.data.data() + r * 4, &v, 4);
  }
  return t;
}

ShareableHandleTable make_fabric_table(const std::vector<uint8_t>& handles, size_t count) {
  ShareableHandleTable t;
  t.type = HandleType::kFabric;
  t.element = HandleElement::kUInt8;
  t.element_bytes = kFabricHandleBytes;
  t.count = count;
  t.data = handles;
  return t;
}

int fd_at(const ShareableHandleTable& t, int rank) {
  SYMMOE_CHECK(t.type == HandleType::kFd && rank >= 0 && static_cast<size_t>(rank) < t.count,
               "fd_at(", rank, ") on a table of ", t.count, " ", handle_type_name(t.type), " handles");
  return static_cast<int>(raw_fd(t, static_cast<size_t>(rank)));
}

const uint8_t* fabric_at(const ShareableHandleTable& t, int rank) {
  SYMMOE_CHECK(t.type == HandleType::kFabric && rank >= 0 && static_cast<size_t>(rank) < t.count,
               "fabric_at(", rank, ") on a table of ", t.count, " ", handle_type_name(t.type),
               " handles");
  return t.data.data() + static_cast<size_t>(rank) * kFabricHandleBytes;
}

}  // namespace symmoe::symm
