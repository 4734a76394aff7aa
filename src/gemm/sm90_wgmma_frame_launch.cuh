// The wgmma frame's host side: tensor maps, persistent CTAs in the SM budget and clusters, the
// schedule and row-band settings, and the launch of one kernel instance (WgmmaLaunch). Private
// to src/gemm.
#pragma once

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "sm90_wgmma_frame_kernel.cuh"
#include "symmoe/core/cuda_driver.hpp"
#include "symmoe/core/env.hpp"
#include "symmoe/core/error.hpp"
#include "symmoe/runtime/device_runtime.hpp"

namespace symmoe::gemm::sm90::wgmma_frame {

// cuTensorMapEncodeTiled over `rank` (2 to 5) dimensions: no interleave, zeros past the
// tensor, unit element strides. dims[1] is the row coordinate the kernels address (32-bit)
// and strides[0] the row pitch in bytes. `family` (the kernel family) and `what` (the
// operand) name the map in errors.
inline CUtensorMap encode_map(const char* family, const char* what, const void* base, CUtensorMapDataType type,
                              cuuint32_t rank, const cuuint64_t* dims, const cuuint64_t* strides, const cuuint32_t* box,
                              CUtensorMapSwizzle swizzle, CUtensorMapL2promotion promotion) {
  SYMMOE_CHECK(dims[1] <= INT32_MAX, "grouped GEMM (", family, "): ", what, " has ", dims[1],
               " rows; tensor-map coordinates are 32-bit");
  const cuuint32_t elem_strides[5] = {1, 1, 1, 1, 1};
  CUtensorMap map{};
  const CUresult rc = driver().cuTensorMapEncodeTiled(&map, type, rank, const_cast<void*>(base), dims, strides, box,
                                                      elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle, promotion,
                                                      CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  SYMMOE_CHECK(rc == CUDA_SUCCESS, "grouped GEMM (", family, "): cuTensorMapEncodeTiled for ", what,
               " failed (CUresult ", static_cast<int>(rc), "; ", dims[1], " rows of ", strides[0], " bytes at ", base,
               ")");
  return map;
}

// encode_map with the 128-byte swizzle (operands and staged outputs).
inline CUtensorMap encode_map_sw128(const char* family, const char* what, const void* base, CUtensorMapDataType type,
                                    cuuint32_t rank, const cuuint64_t* dims, const cuuint64_t* strides,
                                    const cuuint32_t* box, CUtensorMapL2promotion promotion) {
  return encode_map(family, what, base, type, rank, dims, strides, box, CU_TENSOR_MAP_SWIZZLE_128B, promotion);
}

// 2-D tensor map over a row-major [rows, cols] matrix of `elem_bytes`-byte elements, boxes of
// box_rows x box_cols (box_cols x elem_bytes = 128 bytes), 128-byte swizzle: the layout
// desc_lo_k_major_sw128 / desc_from_lo describe for operands, and store_tile_tma stages.
// Elements past the matrix arrive as zeros.
inline CUtensorMap make_map_sw128(const void* base, CUtensorMapDataType type, int elem_bytes, int64_t rows,
                                  int64_t cols, int box_rows, CUtensorMapL2promotion promotion, const char* what) {
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(cols), static_cast<cuuint64_t>(rows)};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(cols * elem_bytes)};
  const cuuint32_t box[2] = {static_cast<cuuint32_t>(128 / elem_bytes), static_cast<cuuint32_t>(box_rows)};
  return encode_map_sw128("wgmma", what, base, type, 2, dims, strides, box, promotion);
}

// Operand [rows, k] of Shape's element type: boxes of box_rows x one K block.
template <class Shape>
CUtensorMap make_operand_map(const void* base, int64_t rows, int64_t k, int box_rows, const char* what) {
  const CUtensorMapDataType type =
      Shape::kElemBytes == 1 ? CU_TENSOR_MAP_DATA_TYPE_UINT8 : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
  return make_map_sw128(base, type, Shape::kElemBytes, rows, k, box_rows, CU_TENSOR_MAP_L2_PROMOTION_L2_256B, what);
}

// A launch of blocks of kThreads in 1-D clusters of `cluster` CTAs; `attr` holds the cluster
// attribute and must outlive the config.
inline cudaLaunchConfig_t cluster_launch_config(int grid, int cluster, size_t smem, cudaStream_t stream,
                                                cudaLaunchAttribute& attr) {
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(grid, 1, 1);
  config.blockDim = dim3(kThreads, 1, 1);
  config.dynamicSmemBytes = smem;
  config.stream = stream;
  attr.id = cudaLaunchAttributeClusterDimension;
  attr.val.clusterDim.x = cluster;
  attr.val.clusterDim.y = 1;
  attr.val.clusterDim.z = 1;
  config.attrs = &attr;
  config.numAttrs = 1;
  return config;
}

// Persistent CTAs for a launch of `kernel` in clusters of `cluster`: the SM budget, in whole
// clusters, and no more clusters than can be resident at once (GPCs hold whole clusters, so
// that can be fewer than budget / cluster). Queried once per device and kernel.
inline int persistent_ctas(const void* kernel, int cluster, int sm_budget, int device) {
  if (cluster == 1) return std::max(sm_budget, 1);
  static std::mutex mu;
  static std::map<std::pair<const void*, int>, int> resident;
  int clusters = 0;
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = resident.find({kernel, device});
    if (it == resident.end()) {
      cudaLaunchAttribute attr;
      const cudaLaunchConfig_t config = cluster_launch_config(cluster, cluster, kMaxSmem, nullptr, attr);
      int n = 0;
      const cudaError_t rc = cudaOccupancyMaxActiveClusters(&n, kernel, &config);
      SYMMOE_CHECK(rc == cudaSuccess && n > 0, "grouped GEMM (wgmma): no cluster of ", cluster,
                   " CTAs fits on device ", device, " (cudaOccupancyMaxActiveClusters: ", cudaGetErrorString(rc),
                   ", ", n, ")");
      it = resident.emplace(std::make_pair(kernel, device), n).first;
    }
    clusters = it->second;
  }
  return std::max(std::min(clusters, sm_budget / cluster), 1) * cluster;
}

// bf16 output [rows, n]: boxes of 64 rows x 64 columns, what store_tile_tma stages.
inline CUtensorMap make_out_map(void* base, int64_t rows, int64_t n) {
  return make_map_sw128(base, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, rows, n, 64, CU_TENSOR_MAP_L2_PROMOTION_NONE,
                        "the output");
}

// NOTE [wgmma stage scales]: the weight scales [E * N / 128, K / 128] in boxes of 2 rows x
// kScaleCols K blocks, unswizzled.
template <class Shape>
CUtensorMap make_weight_scale_map(const GroupSource& src) {
  const int kblocks = src.k / kFp8ScaleBlock;
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(kblocks),
                              static_cast<cuuint64_t>(int64_t{src.groups} * (src.n / kFp8ScaleBlock))};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(kblocks) * 4};
  const cuuint32_t box[2] = {static_cast<cuuint32_t>(Shape::kScaleCols), 2};
  return encode_map("wgmma", "weight scales", src.weight_scales, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, dims, strides,
                    box, CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE);
}

// NOTE [wgmma stage scales]: column-major activation scales as [K-block rows, rows] (contiguous:
// K / 128 x total_rows; masked: E * K / 128 x max_m), the K-block stride apart; rows past the
// map (the caller's padding up to the stride) are not read: the boxes' rows there come as zeros.
template <class Shape>
CUtensorMap make_act_scale_map(const GroupSource& src) {
  const bool masked = src.offsets == nullptr;
  const int64_t kblocks = src.k / kFp8ScaleBlock;
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(masked ? int64_t{src.max_m} : src.total_rows),
                              static_cast<cuuint64_t>(masked ? src.groups * kblocks : kblocks)};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(src.act_scale.kblock_stride) * 4};
  const cuuint32_t box[2] = {static_cast<cuuint32_t>(Shape::kScaleRows), 1};
  return encode_map("wgmma", "activation scales (column-major)", src.act_scales, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2,
                    dims, strides, box, CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE);
}

// Whether the scales of `src` come by tensor copies (NOTE [wgmma stage scales]): asked for
// (SYMMOE_GEMM_WGMMA_SCALES=tma), the activation scales column-major with a K-block stride of a
// multiple of 4 floats, K / 128 a multiple of kScaleCols (the weight scales' row pitch, 16-byte
// multiples) and both tensors 16-byte aligned; otherwise cp.async.
template <class Shape>
bool scale_maps_fit(const GroupSource& src) {
  if (!Shape::kScaled || env::get_string("SYMMOE_GEMM_WGMMA_SCALES") != "tma") return false;
  const int64_t kblocks = src.k / kFp8ScaleBlock;
  if (src.act_scale.kblock_stride == 1 || src.act_scale.kblock_stride % 4 != 0) return false;  // row-major or odd ld
  const auto aligned = [](const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; };
  return kblocks % Shape::kScaleCols == 0 && aligned(src.act_scales) && aligned(src.weight_scales);
}

// NOTE [wgmma tile schedule]: SYMMOE_GEMM_WGMMA_SCHEDULE.
inline WgmmaSchedule wgmma_schedule() {
  const std::string v = env::get_string("SYMMOE_GEMM_WGMMA_SCHEDULE");
  return v == "dynamic" ? WgmmaSchedule::kDynamic : v == "static" ? WgmmaSchedule::kStatic : WgmmaSchedule::kAuto;
}

// The wgmma kernels need no workspace (ConfigOps::workspace).
inline WorkspaceBytes no_workspace(int, int) { return {}; }

// Host side of one kernel instance: tensor maps over all experts' rows, persistent CTAs in the
// SM budget, launch; and its entry for eager loading.
template <class Shape, class Consumer>
struct WgmmaLaunch {
  static const void* kernel() { return reinterpret_cast<const void*>(&sm90_grouped_gemm_wgmma_kernel<Shape, Consumer>); }
  static cudaError_t launch(const GroupSource& src, const LaunchSlots& slots, cudaStream_t stream) {
    SYMMOE_CHECK(src.groups <= Shape::max_groups(), "grouped GEMM (", Consumer::name(), "): ", src.groups,
                 " experts; the tile table in shared memory holds at most ", Shape::max_groups());
    const int64_t rows = src.offsets == nullptr ? int64_t{src.groups} * src.max_m : src.total_rows;
    CUtensorMap map_act = make_operand_map<Shape>(src.act, rows, src.k, Shape::kASliceRows, "activations");
    CUtensorMap map_w =
        make_operand_map<Shape>(src.weights, int64_t{src.groups} * src.n, src.k, Shape::kBSliceRows, "weights");
    CUtensorMap map_out = Shape::kTmaStore ? make_out_map(src.out, rows, src.n) : CUtensorMap{};
    const bool scale_maps = scale_maps_fit<Shape>(src);
    CUtensorMap map_act_scales{}, map_w_scales{};
    if (scale_maps) {
      map_act_scales = make_act_scale_map<Shape>(src);
      map_w_scales = make_weight_scale_map<Shape>(src);
    }
    const WgmmaSchedule schedule = wgmma_schedule();
    SYMMOE_CHECK(schedule != WgmmaSchedule::kDynamic || Shape::kCtas == 1, "grouped GEMM (", Consumer::name(),
                 "): SYMMOE_GEMM_WGMMA_SCHEDULE=", env::get_string("SYMMOE_GEMM_WGMMA_SCHEDULE"),
                 " is built for clusters of one CTA only");
    SYMMOE_CHECK(schedule == WgmmaSchedule::kStatic || slots.schedule != nullptr, "grouped GEMM (",
                 Consumer::name(), "): no schedule words for the dynamic schedule");
    WgmmaParams params{src, slots.status, runtime::wait_timeout_ns(), scale_maps, schedule, slots.schedule};
    const void* fn = kernel();
    const int ctas = persistent_ctas(fn, Shape::kCtas, slots.sm_count, slots.device);
    const int row_band = static_cast<int>(env::get_int("SYMMOE_GEMM_WGMMA_ROW_BAND"));
    const long long tiles = wgmma_tiles_estimate(src.expected_m, src.groups, src.n, Shape::kBN);
    params.src.row_band =
        row_band >= 0 ? row_band : (Shape::kScaled ? fp8_wgmma_row_band_by_default(src.expected_m, tiles, ctas) : 0);
    cudaLaunchAttribute attr;
    const cudaLaunchConfig_t config =
        cluster_launch_config(ctas, Shape::kCtas, Shape::smem_bytes(src.groups), stream, attr);
    void* args[] = {&map_act, &map_w, &map_out, &map_act_scales, &map_w_scales, &params};
    return cudaLaunchKernelExC(&config, fn, args);
  }
  static void append(std::vector<runtime::KernelEntry>& out, const char* name) {
    out.push_back({name, kernel(), kMaxSmem, -1});
  }
};

}  // namespace symmoe::gemm::sm90::wgmma_frame
