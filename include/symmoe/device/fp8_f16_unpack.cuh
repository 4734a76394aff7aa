// e4m3 codes to f16 with integer operations only (no F2FP): the decode GEMM unpacks its weights
// this way (NOTE [fp8 to f16 in two pipes] in src/gemm/sm90_grouped_gemm_fp8_decode_kernels.cu).
// Host and device: the CPU tests check every code against fp8_e4m3_to_float.
#pragma once

#include <cstdint>

#include "symmoe/device/common.cuh"

namespace symmoe::device {

// An e4m3 code's sign, exponent and mantissa bits placed in f16's fields read as the code's
// value times 2^-8 (f16's exponent bias is 15, e4m3's 7); subnormals map to subnormals
// exactly. The NaN codes (0x7F, 0xFF) become 0x3F80 / 0xBF80 (+-1.875): not valid inputs.
inline constexpr float kE4m3AsF16Unscale = 256.f;

// Bytes [b3 b2 b1 b0] -> [b3 b1 b2 b0].
SYMMOE_HOST_DEVICE uint32_t swap_middle_bytes(uint32_t w) {
#if defined(__CUDA_ARCH__)
  return __byte_perm(w, 0, 0x3120);
#else
  return (w & 0xFF0000FFu) | ((w >> 8) & 0x0000FF00u) | ((w << 8) & 0x00FF0000u);
#endif
}

// Word [b3 b2 b1 b0] of e4m3 codes -> lo = f16x2 (b0 low half, b1 high half), hi = (b2, b3),
// each value times 2^-8. The pairs are those of cvt.rn.f16x2.e4m3x2 on the word's low and
// high 16 bits, so operands unpacked either way agree on the order of k.
SYMMOE_HOST_DEVICE void e4m3x4_to_f16x2_scaled(uint32_t w, uint32_t& lo, uint32_t& hi) {
  const uint32_t x = swap_middle_bytes(w);  // b0, b1 at bytes 0, 2; b2, b3 at bytes 1, 3
  lo = ((x << 7) & 0x3F803F80u) | ((x << 8) & 0x80008000u);
  hi = ((x >> 1) & 0x3F803F80u) | (x & 0x80008000u);
}

}  // namespace symmoe::device
