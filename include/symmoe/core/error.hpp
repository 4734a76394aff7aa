// symmoe's one exception type and its check macros.
//
// Every failure the library reports is a symmoe::Error whose message says
//   what failed, where (file:line), the values involved, and the rule that was broken.
// Library code never calls exit()/abort(); device-side failures reach the host through
// status words and become an Error there.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

namespace symmoe {

class Error : public std::runtime_error {
 public:
  Error(std::string message, const char* file, int line)
      : std::runtime_error(std::move(message)), file_(file), line_(line) {}

  const char* file() const noexcept { return file_; }
  int line() const noexcept { return line_; }

 private:
  const char* file_;
  int line_;
};

namespace detail {

// Streams every argument into one string; an empty pack gives "".
template <class... Args>
std::string concat(Args&&... args) {
  std::ostringstream os;
  ((os << std::forward<Args>(args)), ...);
  return os.str();
}

[[noreturn]] void throw_error(const char* kind, const char* expr, const char* file, int line,
                              const std::string& detail);

// Named error strings for the CUDA runtime and driver and for NCCL. They do not require a
// device: the driver's strings come through its entry points when a driver is present.
std::string cuda_runtime_error_text(int code);
std::string cuda_driver_error_text(int code);
std::string nccl_error_text(int code);

}  // namespace detail
}  // namespace symmoe

// Fails with "<msg> [check `cond` failed at file:line]".
#define SYMMOE_CHECK(cond, ...)                                                             \
  do {                                                                                      \
    if (!(cond)) [[unlikely]] {                                                             \
      ::symmoe::detail::throw_error("check", #cond, __FILE__, __LINE__,                     \
                                    ::symmoe::detail::concat(__VA_ARGS__));                 \
    }                                                                                       \
  } while (0)

// Unconditional failure with a message.
#define SYMMOE_FAIL(...)                                                                    \
  ::symmoe::detail::throw_error("error", nullptr, __FILE__, __LINE__,                       \
                                ::symmoe::detail::concat(__VA_ARGS__))

// A call returning an integer status where 0 is success; `text_fn` names a failing status.
#define SYMMOE_CHECK_STATUS_(kind, text_fn, expr, ...)                                      \
  do {                                                                                      \
    const int symmoe_rc_ = static_cast<int>(expr);                                          \
    if (symmoe_rc_ != 0) [[unlikely]] {                                                     \
      ::symmoe::detail::throw_error(                                                        \
          kind, #expr, __FILE__, __LINE__,                                                  \
          ::symmoe::detail::text_fn(symmoe_rc_) +                                           \
              ::symmoe::detail::concat("" __VA_OPT__(, "; ", ) __VA_ARGS__));               \
    }                                                                                       \
  } while (0)

// CUDA runtime call; extra arguments describe the values involved.
#define SYMMOE_CUDA_CHECK(expr, ...) \
  SYMMOE_CHECK_STATUS_("CUDA runtime", cuda_runtime_error_text, expr __VA_OPT__(, ) __VA_ARGS__)

// CUDA driver call (through symmoe::driver()).
#define SYMMOE_CU_CHECK(expr, ...) \
  SYMMOE_CHECK_STATUS_("CUDA driver", cuda_driver_error_text, expr __VA_OPT__(, ) __VA_ARGS__)

// NCCL call (through symmoe::nccl()).
#define SYMMOE_NCCL_CHECK(expr, ...) \
  SYMMOE_CHECK_STATUS_("NCCL", nccl_error_text, expr __VA_OPT__(, ) __VA_ARGS__)
