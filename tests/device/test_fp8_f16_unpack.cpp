// The integer e4m3 -> f16 unpack of the decode GEMM (device/fp8_f16_unpack.cuh), compiled for the
// host: every code in every byte position against fp8_e4m3_to_float.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>

#include "symmoe/device/fp8_block_quant.cuh"
#include "symmoe/device/fp8_f16_unpack.cuh"

namespace symmoe::device {
namespace {

// IEEE binary16 bits to float (all finite encodings; the unpack never makes inf or NaN).
double f16_value(uint16_t h) {
  const int sign = h >> 15, exp = (h >> 10) & 0x1F, mant = h & 0x3FF;
  const double mag = exp == 0 ? std::ldexp(mant, -24) : std::ldexp(1024 + mant, exp - 25);
  return sign ? -mag : mag;
}

bool is_nan_code(uint32_t b) { return (b & 0x7F) == 0x7F; }

TEST(Fp8F16Unpack, EveryCodeInEveryPositionIsExactTimesTwoToTheMinus8) {
  std::mt19937 rng(7);
  int checked = 0;
  for (uint32_t code = 0; code < 256; ++code) {
    if (is_nan_code(code)) continue;
    const double want = static_cast<double>(fp8_e4m3_to_float(static_cast<uint8_t>(code))) / kE4m3AsF16Unscale;
    for (int pos = 0; pos < 4; ++pos) {
      for (int trial = 0; trial < 4; ++trial) {
        uint32_t w = rng();
        w = (w & ~(0xFFu << (8 * pos))) | (code << (8 * pos));
        uint32_t lo = 0, hi = 0;
        e4m3x4_to_f16x2_scaled(w, lo, hi);
        // Byte b0 -> lo low half, b1 -> lo high half, b2 -> hi low half, b3 -> hi high half.
        const uint32_t pair = pos < 2 ? lo : hi;
        const uint16_t half = static_cast<uint16_t>((pos & 1) ? pair >> 16 : pair & 0xFFFF);
        ASSERT_EQ(f16_value(half), want) << "code 0x" << std::hex << code << " in byte " << pos << " of 0x" << w;
        ++checked;
      }
    }
  }
  EXPECT_EQ(checked, 254 * 16);
}

TEST(Fp8F16Unpack, TheOtherHalvesCarryTheOtherBytes) {
  // A word of four known codes: each half holds its own byte, unaffected by its neighbours.
  const uint8_t codes[4] = {0x38, 0xB8, 0x01, 0xFE};  // 1.0, -1.0, the smallest subnormal, -448
  const uint32_t w = codes[0] | codes[1] << 8 | codes[2] << 16 | static_cast<uint32_t>(codes[3]) << 24;
  uint32_t lo = 0, hi = 0;
  e4m3x4_to_f16x2_scaled(w, lo, hi);
  const uint16_t halves[4] = {static_cast<uint16_t>(lo), static_cast<uint16_t>(lo >> 16), static_cast<uint16_t>(hi),
                              static_cast<uint16_t>(hi >> 16)};
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(f16_value(halves[i]) * kE4m3AsF16Unscale, fp8_e4m3_to_float(codes[i])) << "byte " << i;
  }
  EXPECT_EQ(f16_value(halves[2]) * kE4m3AsF16Unscale, std::ldexp(1.0, -9));
  EXPECT_EQ(f16_value(halves[3]) * kE4m3AsF16Unscale, -448.0);
}

}  // namespace
}  // namespace symmoe::device
