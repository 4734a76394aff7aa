// Self-identifying 64-bit words for the peer read/write smoke test (framework-free).
#pragma once

#include <cstdint>

#include "symmoe/device/common.cuh"

namespace symmoe::device {

// Bits 63..56: writer rank, 55..48: owner rank (whose buffer holds the word), 47..0: a mix
// of the word index. The poison byte 0xA5 exceeds every rank (< 72), so poison never passes.
inline constexpr uint64_t kSmokePoison = 0xA5A5A5A5A5A5A5A5ull;

SYMMOE_HOST_DEVICE uint64_t smoke_word(uint32_t writer, uint32_t owner, uint64_t index) {
  uint64_t z = index + 0x9E3779B97F4A7C15ull * (1 + writer * 131 + owner);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return (static_cast<uint64_t>(writer & 0xFF) << 56) | (static_cast<uint64_t>(owner & 0xFF) << 48) |
         (z & 0xFFFFFFFFFFFFull);
}

SYMMOE_HOST_DEVICE uint32_t smoke_word_writer(uint64_t word) { return static_cast<uint32_t>(word >> 56); }
SYMMOE_HOST_DEVICE uint32_t smoke_word_owner(uint64_t word) {
  return static_cast<uint32_t>((word >> 48) & 0xFF);
}

}  // namespace symmoe::device
