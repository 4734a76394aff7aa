// Result block of the smoke-test verify kernel (framework-free, host-readable).
#pragma once

#include <cstdint>

namespace symmoe::device {

struct SmokeCheck {
  unsigned long long words = 0;       // words compared
  unsigned long long mismatches = 0;  // words that differed
  // Smallest failing position, packed as owner << 56 | writer << 48 | word (word < 2^48);
  // ~0 when none failed.
  unsigned long long first_position = ~0ull;
  unsigned long long first_value = 0;  // the word found there (the race winner, for reporting)
};

}  // namespace symmoe::device
