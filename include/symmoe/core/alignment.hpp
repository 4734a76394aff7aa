// Pointer alignment, for the checks before a launch.
#pragma once

#include <cstdint>

namespace symmoe {

// True when `p` is a multiple of `alignment` bytes (null counts as aligned; callers that need a
// pointer check for null on their own, with their own message).
inline bool is_aligned(const void* p, uintptr_t alignment) {
  return reinterpret_cast<uintptr_t>(p) % alignment == 0;
}

}  // namespace symmoe
