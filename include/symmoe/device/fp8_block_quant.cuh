// FP8 e4m3 with one fp32 scale per 1x128 block: the quantization dispatch applies on the fly,
// shared by the kernels and the CPU reference so both round identically (framework-free).
#pragma once

#include <cuda_fp8.h>

#include <cstdint>

#include "symmoe/device/common.cuh"

namespace symmoe::device {

// Largest finite e4m3 value.
inline constexpr float kFp8E4M3Max = 448.f;

// NOTE [fp8 block scale]: scale = amax / 448 over the block's 128 values (1 for an all-zero
// block), q = e4m3(x / scale) with round-to-nearest-even and saturation to +-448; x is
// recovered as q * scale. Both sides use IEEE fp32 division (no fast-math), so the CPU
// reference reproduces the device bits exactly.
SYMMOE_HOST_DEVICE float fp8_block_scale(float amax) {
  return amax > 0.f ? amax / kFp8E4M3Max : 1.f;
}

SYMMOE_HOST_DEVICE uint8_t fp8_e4m3_from_float(float v) {
  return static_cast<uint8_t>(__nv_cvt_float_to_fp8(v, __NV_SATFINITE, __NV_E4M3));
}

SYMMOE_HOST_DEVICE float fp8_e4m3_to_float(uint8_t q) {
  const __half_raw h = __nv_cvt_fp8_to_halfraw(static_cast<__nv_fp8_storage_t>(q), __NV_E4M3);
  return __half2float(__half(h));
}

}  // namespace symmoe::device
