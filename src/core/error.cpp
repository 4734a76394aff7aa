#include "symmoe/core/error.hpp"

#include <cuda_runtime_api.h>

#include <string_view>

#include "symmoe/core/cuda_driver.hpp"
#include "symmoe/core/nccl_loader.hpp"

namespace symmoe::detail {
namespace {

// "…/src/symm/foo.cpp" -> "symm/foo.cpp": enough to find the line, short enough to read.
std::string_view short_path(const char* file) {
  std::string_view path(file);
  size_t cut = path.rfind('/');
  if (cut == std::string_view::npos || cut == 0) return path;
  size_t prev = path.rfind('/', cut - 1);
  return prev == std::string_view::npos ? path : path.substr(prev + 1);
}

}  // namespace

void throw_error(const char* kind, const char* expr, const char* file, int line,
                 const std::string& detail) {
  std::ostringstream os;
  const std::string_view where = short_path(file);
  const std::string_view what(kind);
  if (what == "check") {
    if (!detail.empty()) os << detail << " ";
    os << "[check `" << expr << "` failed at " << where << ":" << line << "]";
  } else if (what == "error") {
    os << detail << " [at " << where << ":" << line << "]";
  } else {
    os << kind << " call `" << expr << "` failed at " << where << ":" << line << ": " << detail;
  }
  throw Error(os.str(), file, line);
}

std::string cuda_runtime_error_text(int code) {
  auto err = static_cast<cudaError_t>(code);
  return concat(cudaGetErrorName(err), " (", code, "): ", cudaGetErrorString(err));
}

std::string cuda_driver_error_text(int code) {
  if (driver_available()) {
    const char* name = nullptr;
    const char* text = nullptr;
    const auto& api = driver();
    api.cuGetErrorName(static_cast<CUresult>(code), &name);
    api.cuGetErrorString(static_cast<CUresult>(code), &text);
    if (name != nullptr) {
      return concat(name, " (", code, "): ", text != nullptr ? text : "no description");
    }
  }
  return concat("CUresult ", code, " (no driver to name it)");
}

std::string nccl_error_text(int code) {
  if (const NcclApi* api = nccl()) {
    return concat("ncclResult ", code, ": ", api->ncclGetErrorString(code));
  }
  return concat("ncclResult ", code, " (NCCL not loaded to name it)");
}

}  // namespace symmoe::detail
