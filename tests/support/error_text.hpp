// The text of the symmoe::Error a callable throws, or "<no error>".
#pragma once

#include <functional>
#include <string>

#include "symmoe/core/error.hpp"

namespace symmoe::test {

inline std::string error_text(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "<no error>";
}

}  // namespace symmoe::test
