// GPU tests skip, with the reason, where no CUDA device exists.
#pragma once

#include <gtest/gtest.h>

#include <string>

namespace symmoe::test {

// Number of CUDA devices (0 without a driver or device); `why` receives the reason for 0.
int gpu_count(std::string* why = nullptr);

}  // namespace symmoe::test

#define SYMMOE_SKIP_WITHOUT_GPU()                                        \
  do {                                                                   \
    std::string symmoe_why_;                                             \
    if (::symmoe::test::gpu_count(&symmoe_why_) == 0) {                  \
      GTEST_SKIP() << "no CUDA GPU: " << symmoe_why_;                    \
    }                                                                    \
  } while (0)
