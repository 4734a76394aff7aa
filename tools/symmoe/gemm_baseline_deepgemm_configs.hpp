// The DeepGEMM configs `symmoe bench gemm` compiles (gemm_baseline_deepgemm.hpp), one
// translation unit each (tools/CMakeLists.txt: kDeepGemmConfigCount of them). X(block_m,
// block_n, stages, multicast): 128-row tiles as its contiguous layout takes, block_n 128 / 160 /
// 192 (its 1d2d kernel keeps 2 x block_n / 2 fp32 values per thread: 256 does not fit), 256-row
// tiles of two 128-row waves, and the weight tile shared by a 2-CTA cluster; stages: as many as
// fit next to the staged output tile.
#pragma once

#define SYMMOE_DEEPGEMM_CONFIGS(X) \
  X(128, 128, 5, 1)                \
  X(128, 128, 5, 2)                \
  X(128, 160, 5, 1)                \
  X(128, 192, 4, 1)                \
  X(256, 128, 3, 1)

#include <cstdint>

namespace symmoe::cli {
constexpr int kDeepGemmConfigCount = 5;

// The output tile is stored in column strips of swizzle / 2 bf16 columns (DeepGEMM: block_n a
// multiple of the strip): the kernel's kSwizzleDMode and the output tensor map's swizzle.
constexpr uint32_t deepgemm_swizzle_d(int block_n) { return block_n % 64 == 0 ? 128 : block_n % 32 == 0 ? 64 : 32; }
}
