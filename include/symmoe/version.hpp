// The single source of symmoe's version: CMake reads these three lines.
#pragma once

#define SYMMOE_VERSION_MAJOR 0
#define SYMMOE_VERSION_MINOR 1
#define SYMMOE_VERSION_PATCH 0

#define SYMMOE_STRINGIFY_IMPL(x) #x
#define SYMMOE_STRINGIFY(x) SYMMOE_STRINGIFY_IMPL(x)
#define SYMMOE_VERSION_STRING                                                    \
  SYMMOE_STRINGIFY(SYMMOE_VERSION_MAJOR)                                         \
  "." SYMMOE_STRINGIFY(SYMMOE_VERSION_MINOR) "." SYMMOE_STRINGIFY(SYMMOE_VERSION_PATCH)

namespace symmoe {
inline constexpr const char* kVersion = SYMMOE_VERSION_STRING;
}  // namespace symmoe
