// Between the host side of the grouped GEMM (grouped_gemm.cpp, plain C++) and the translation
// units that instantiate the CUTLASS kernels (sm90_grouped_gemm_*_kernels.cu). Private.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "symmoe/device/status.cuh"
#include "symmoe/gemm/grouped_gemm.hpp"
#include "symmoe/runtime/kernel_registry.hpp"

namespace symmoe::gemm::sm90 {

// What the argument builder needs of a GroupedGemmProblem, by value (a kernel parameter).
struct GroupSource {
  const void* act;
  const float* act_scales;   // fp8 only, at act_scale.index(e, row, kb)
  ScaleStrides act_scale;    // NOTE [activation scale layouts]; the CUTLASS tiles take row-major only
  const void* weights;
  const float* weight_scales;  // fp8 only
  const int32_t* offsets;    // null: masked layout (expert e starts at row e * max_m)
  const int32_t* counts;
  void* out;
  int64_t total_rows;        // contiguous: rows of act / out
  int max_m;                 // masked
  int n, k, groups;
  int expected_m;            // rows per expert the caller expects (GroupedGemmOptions): the decode and swap-AB
                             // passes, the swap-AB schedule, the bf16 wgmma stage count
  int wgmma_tile_n = 0;      // fp8 wgmma: the tile width GroupedGemm::run chose (fp8_wgmma_tile_n)
  int row_band = 0;          // wgmma kernels' tile walk: 0 = bands of column blocks, > 0 = bands of row_band
                             // row blocks (NOTE [grouped GEMM tile order]; SYMMOE_GEMM_WGMMA_ROW_BAND)
};

// Device memory a launch of one configuration uses besides the problem's tensors.
struct LaunchSlots {
  void* arrays;            // NOTE [grouped GEMM argument arrays]
  void* kernel_workspace;  // CUTLASS's: one pair of tensor maps per persistent CTA
  int sm_count;            // persistent CTAs: the SM budget
  int device;
  device::StatusBlock* status;  // invalid row tables are recorded here
  int swizzle;             // GroupedGemmOptions::swizzle
  bool raster_along_n;     // GroupedGemmOptions::raster
  bool early;              // GroupedGemmOptions::early_launch
  int* schedule;           // 2 zero-initialised words that persist across launches (NOTE [swap-AB schedule])
  uint64_t* trace;         // GroupedGemmOptions::trace (swap-AB only; null: off)
};

struct WorkspaceBytes {
  size_t arrays = 0;
  size_t kernel = 0;
};

// One compiled tile configuration (one translation unit each, so they build in parallel).
struct ConfigOps {
  TileChoice tile;
  WorkspaceBytes (*workspace)(int groups, int sm_count);
  // Enqueues the argument builder, then the GEMM. Errors: CUDA's, or cudaErrorInvalidValue
  // when CUTLASS rejects the arguments (validate_problem runs first, so that is a bug).
  cudaError_t (*launch)(const GroupSource& src, const LaunchSlots& slots, cudaStream_t stream);
  void (*append_kernels)(std::vector<runtime::KernelEntry>& out);
};
const ConfigOps& fp8_large_ops();   // sm90_grouped_gemm_fp8_large_kernels.cu
const ConfigOps& fp8_small_ops();   // sm90_grouped_gemm_fp8_small_kernels.cu
const ConfigOps& bf16_large_ops();  // sm90_grouped_gemm_bf16_large_kernels.cu
const ConfigOps& bf16_small_ops();  // sm90_grouped_gemm_bf16_small_kernels.cu
const ConfigOps& fp8_decode_ops();  // sm90_grouped_gemm_fp8_decode_kernels.cu (no CUTLASS)
const ConfigOps& fp8_swapab_ops();  // sm90_grouped_gemm_fp8_swapab_kernels.cu (no CUTLASS)
const ConfigOps& fp8_wgmma_ops();   // sm90_grouped_gemm_fp8_wgmma_kernels.cu (no CUTLASS)
const ConfigOps& bf16_wgmma_ops();  // sm90_grouped_gemm_bf16_wgmma_kernels.cu (no CUTLASS)

// The fp8 wgmma kernel's tile width and promotion overlap as the environment and the shape set
// them (grouped_gemm.cpp). SYMMOE_GEMM_WGMMA_TILE_N = 0 (default): 256 where another setting
// exists for 256-wide tiles only (clusters of 2, the direct epilogue, activation fragments in
// registers, 4 stages), else 192, the single-batch tile with the unrolled mainloop — or 256
// where the shape is known and its waves of 256-wide tiles are more than 5 % shorter (NOTE
// [fp8 wgmma tile width]). SYMMOE_GEMM_WGMMA_OVERLAP = -1 (default): 2 with 256-wide tiles, 0
// (no overlap; unrolled) with 192 and 128.
struct WgmmaShapeHint {
  int expected_m = 0;  // rows per expert; 0: shape unknown
  int experts = 0;
  int n = 0;
  int sms = 0;  // persistent CTAs
};
int fp8_wgmma_tile_n(const WgmmaShapeHint& hint);
int fp8_wgmma_overlap(int tile_n);

}  // namespace symmoe::gemm::sm90

