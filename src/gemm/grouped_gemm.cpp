#include "symmoe/gemm/grouped_gemm.hpp"

#include <algorithm>

#include "../runtime/kernel_lists.hpp"
#include "sm90_grouped_gemm_launch.hpp"
#include "symmoe/core/device_info.hpp"
#include "symmoe/core/env.hpp"
#include "symmoe/core/error.hpp"

namespace symmoe::gemm {

namespace {

const sm90::ConfigOps& ops_for(GemmDtype dtype, GemmTile tile) {
  if (tile == GemmTile::kDecode) return sm90::fp8_decode_ops();
  if (tile == GemmTile::kSwapAB) return sm90::fp8_swapab_ops();
  if (tile == GemmTile::kWgmma) return dtype == GemmDtype::kFP8E4M3 ? sm90::fp8_wgmma_ops() : sm90::bf16_wgmma_ops();
  const bool small = tile == GemmTile::kSmallM;
  if (dtype == GemmDtype::kFP8E4M3) return small ? sm90::fp8_small_ops() : sm90::fp8_large_ops();
  return small ? sm90::bf16_small_ops() : sm90::bf16_large_ops();
}

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// The fp8 wgmma tile for `hint` (NOTE [fp8 wgmma tile width]; an empty hint: the shape unknown).
// The fp8 wgmma kernel's 128 x width x 128 tile; fp8_wgmma_tile_n returns 128, 192 or 256.
TileChoice describe_fp8_wgmma(const sm90::WgmmaShapeHint& hint) {
  const int width = sm90::fp8_wgmma_tile_n(hint);
  const char* name = width == 192   ? "fp8 128x192x128 wgmma, warp-specialized (no CUTLASS)"
                     : width == 128 ? "fp8 128x128x128 wgmma, warp-specialized (no CUTLASS)"
                                    : "fp8 128x256x128 wgmma, warp-specialized (no CUTLASS)";
  return TileChoice{GemmTile::kWgmma, 128, width, 128, name};
}

}  // namespace

TileChoice describe_tile(GemmDtype dtype, GemmTile tile) {
  SYMMOE_CHECK(tile != GemmTile::kAuto, "describe_tile needs a concrete tile (kLargeM, kSmallM, kDecode, kWgmma or kSwapAB)");
  if (tile == GemmTile::kWgmma) {
    if (dtype == GemmDtype::kBF16) {
      return TileChoice{tile, 128, 256, 64, "bf16 128x256x64 wgmma, warp-specialized (no CUTLASS)"};
    }
    return describe_fp8_wgmma({});
  }
  if (tile == GemmTile::kSwapAB) {
    SYMMOE_CHECK(dtype == GemmDtype::kFP8E4M3, "the swap-AB kernel (GemmTile::kSwapAB) is fp8 only; bf16 decode "
                 "sizes use kSmallM");
    return TileChoice{tile, 64, 128, 128, "fp8 swap-AB 64x128x128 (rows x weight rows), TMA weight stream, wgmma"};
  }
  if (tile == GemmTile::kDecode) {
    SYMMOE_CHECK(dtype == GemmDtype::kFP8E4M3, "the decode kernel (GemmTile::kDecode) is fp8 only; bf16 decode "
                 "sizes use kSmallM");
    return TileChoice{tile, kDecodeMaxM, 128, 128, "fp8 decode 8x128x128, weight streaming, mma.sync"};
  }
  const bool small = tile == GemmTile::kSmallM;
  if (dtype == GemmDtype::kFP8E4M3) {
    return small ? TileChoice{tile, 64, 128, 128, "fp8 64x128x128 ping-pong"}
                 : TileChoice{tile, 128, 128, 128, "fp8 128x128x128 cooperative, cluster 1x2"};
  }
  return small ? TileChoice{tile, 64, 128, 64, "bf16 64x128x64 ping-pong"}
               : TileChoice{tile, 128, 256, 64, "bf16 128x256x64 cooperative, cluster 1x2"};
}

namespace {

TileChoice choose_tile_by_shape(GemmDtype dtype, int expected_m, int num_experts, int n, int sm_count) {
  const TileChoice large = describe_tile(dtype, GemmTile::kLargeM);
  const TileChoice small = describe_tile(dtype, GemmTile::kSmallM);
  auto tiles = [&](const TileChoice& c) {
    return grid_tiles_estimate(std::max(expected_m, 1), num_experts, n, c.tile_m, c.tile_n);
  };
  if (dtype == GemmDtype::kFP8E4M3 && expected_m <= kSwapAbMaxM) return describe_tile(dtype, GemmTile::kSwapAB);
  if (expected_m <= small.tile_m) return small;
  if (2 * tiles(large) < sm_count) return small;
  const int wgmma_min_m = dtype == GemmDtype::kFP8E4M3 ? kWgmmaMinM : kBf16WgmmaMinM;
  if (expected_m < wgmma_min_m) return large;
  return dtype == GemmDtype::kFP8E4M3 ? describe_fp8_wgmma({expected_m, num_experts, n, sm_count})
                                      : describe_tile(dtype, GemmTile::kWgmma);
}

}  // namespace

TileChoice choose_tile(GemmDtype dtype, int expected_m, int num_experts, int n, int sm_count, ScaleLayout act_scales) {
  const TileChoice by_shape = choose_tile_by_shape(dtype, expected_m, num_experts, n, sm_count);
  // NOTE [activation scale layouts]: the CUTLASS tiles read row-major scales only.
  if (dtype == GemmDtype::kFP8E4M3 && act_scales == ScaleLayout::kColumnMajor && is_cutlass_tile(by_shape.tile)) {
    return describe_fp8_wgmma({expected_m, num_experts, n, sm_count});
  }
  return by_shape;
}

GroupedGemm::GroupedGemm(runtime::DeviceRuntime& rt, int max_experts) : rt_(&rt), max_experts_(max_experts) {
  SYMMOE_CHECK(max_experts >= 1, "GroupedGemm: max_experts = ", max_experts, " must be positive");
  const DeviceInfo info = query_device(rt.device());
  SYMMOE_CHECK(info.cc_major == 9, "the grouped GEMM kernels are built for SM90 (Hopper, sm_90a); device ",
               rt.device(), " is ", info.name, " (", info.arch, ")");
  device_sms_ = info.num_sms;
  cc_major_ = info.cc_major;
  size_t arrays = 0, kernel = 0;
  for (const GemmDtype d : {GemmDtype::kFP8E4M3, GemmDtype::kBF16}) {
    for (const GemmTile t : {GemmTile::kLargeM, GemmTile::kSmallM}) {
      const sm90::WorkspaceBytes w = ops_for(d, t).workspace(max_experts, device_sms_);
      arrays = std::max(arrays, w.arrays);
      kernel = std::max(kernel, w.kernel);
    }
  }
  int previous = -1;
  SYMMOE_CUDA_CHECK(cudaGetDevice(&previous));
  SYMMOE_CUDA_CHECK(cudaSetDevice(rt.device()));
  cudaError_t rc = cudaMalloc(&arrays_, arrays);
  if (rc == cudaSuccess && kernel > 0) rc = cudaMalloc(&kernel_workspace_, kernel);
  if (rc == cudaSuccess) rc = cudaMalloc(&schedule_, kScheduleBytes);
  if (rc == cudaSuccess) rc = cudaMemset(schedule_, 0, kScheduleBytes);
  if (rc == cudaSuccess) rc = cudaStreamSynchronize(nullptr);  // zeroed before any stream uses it
  cudaSetDevice(previous);
  if (rc != cudaSuccess) {
    if (schedule_ != nullptr) cudaFree(schedule_);
    if (kernel_workspace_ != nullptr) cudaFree(kernel_workspace_);
    if (arrays_ != nullptr) cudaFree(arrays_);
    SYMMOE_CUDA_CHECK(rc, "GroupedGemm workspace (", arrays + kernel, " bytes for ", max_experts, " experts)");
  }
  workspace_bytes_ = arrays + kernel + kScheduleBytes;
}

GroupedGemm::~GroupedGemm() {
  if (schedule_ != nullptr) cudaFree(schedule_);
  if (kernel_workspace_ != nullptr) cudaFree(kernel_workspace_);
  if (arrays_ != nullptr) cudaFree(arrays_);
}

TileChoice GroupedGemm::run(const GroupedGemmProblem& p, cudaStream_t stream, const GroupedGemmOptions& o) {
  validate_problem(p);
  SYMMOE_CHECK(p.num_experts <= max_experts_, "grouped GEMM over ", p.num_experts,
               " experts: this GroupedGemm was sized for ", max_experts_, " (max_experts)");
  runtime::SmBudget budget = o.budget;
  if (budget.reserved_sms < 0) budget.reserved_sms = 0;
  const runtime::SmPlan plan = runtime::plan_sms(device_sms_, cc_major_, budget);
  TileChoice tile;
  int expected = o.expected_m;
  if (expected <= 0) {
    expected = p.layout == GroupedLayout::kMasked ? p.max_m
                                                  : static_cast<int>(ceil_div(std::max<int64_t>(p.total_rows, 1), p.num_experts));
  }
  if (o.tile == GemmTile::kAuto) {
    tile = choose_tile(p.dtype, expected, p.num_experts, p.n, plan.usable, p.act_scale_layout);
  } else if (p.dtype == GemmDtype::kFP8E4M3 && o.tile == GemmTile::kWgmma) {
    tile = describe_fp8_wgmma({expected, p.num_experts, p.n, plan.usable});
  } else {
    tile = describe_tile(p.dtype, o.tile);
  }
  // NOTE [activation scale layouts]: the CUTLASS tiles read row-major scales only (kAuto never
  // takes them for column-major scales).
  SYMMOE_CHECK(p.act_scale_layout != ScaleLayout::kColumnMajor || !is_cutlass_tile(tile.tile),
               "grouped GEMM tile ", tile.name,
               " reads row-major activation scales only (act_scale_layout = kColumnMajor): use GemmTile::kAuto, "
               "kWgmma, kSwapAB or kDecode");
  if (p.rows() == 0) return tile;  // nothing to compute (also no pointer to read)

  sm90::GroupSource src{};
  src.act = p.act;
  src.act_scales = p.act_scales;
  if (p.dtype == GemmDtype::kFP8E4M3) src.act_scale = p.act_scale_strides();
  src.weights = p.weights;
  src.weight_scales = p.weight_scales;
  src.offsets = p.layout == GroupedLayout::kContiguous ? p.offsets : nullptr;
  src.counts = p.counts;
  src.out = p.out;
  src.total_rows = p.total_rows;
  src.max_m = p.max_m;
  src.n = p.n;
  src.k = p.k;
  src.groups = p.num_experts;
  src.expected_m = expected;
  src.wgmma_tile_n = tile.tile == GemmTile::kWgmma ? tile.tile_n : 0;
  SYMMOE_CHECK(o.swizzle == 1 || o.swizzle == 2 || o.swizzle == 4 || o.swizzle == 8,
               "GroupedGemmOptions::swizzle = ", o.swizzle, ": 1, 2, 4 or 8");
  const sm90::LaunchSlots slots{arrays_,      kernel_workspace_, plan.usable, rt_->device(),
                                rt_->status(), o.swizzle,         o.raster == GemmRaster::kAlongN,
                                o.early_launch, static_cast<int*>(schedule_), o.trace};
  SYMMOE_CUDA_CHECK(ops_for(p.dtype, tile.tile).launch(src, slots, stream), "grouped GEMM launch (", tile.name,
                    ", ", p.num_experts, " experts, N = ", p.n, ", K = ", p.k, ", ", plan.usable, " SMs)");
  return tile;
}

namespace sm90 {

int fp8_wgmma_tile_n(const WgmmaShapeHint& hint) {
  const int64_t width = env::get_int("SYMMOE_GEMM_WGMMA_TILE_N");
  SYMMOE_CHECK(width == 0 || width == 256 || width == 192 || width == 128, "SYMMOE_GEMM_WGMMA_TILE_N = ", width,
               ": 0 (auto), 256, 192 or 128");
  if (width != 0) return static_cast<int>(width);
  const bool needs_256 = env::get_int("SYMMOE_GEMM_WGMMA_CLUSTER") != 1 ||
                         env::get_string("SYMMOE_GEMM_WGMMA_EPILOGUE") != "tma" ||
                         env::get_int("SYMMOE_GEMM_WGMMA_OVERLAP") > 2 ||
                         env::get_string("SYMMOE_GEMM_WGMMA_STAGES") == "4";
  if (needs_256) return 256;
  if (hint.expected_m <= 0 || hint.experts <= 0 || hint.n <= 0 || hint.sms <= 0) return 192;
  // NOTE [fp8 wgmma tile width]: waves of persistent CTAs, each a tile's columns long.
  const auto columns = [&](int w) {
    const int64_t tiles = wgmma_tiles_estimate(hint.expected_m, hint.experts, hint.n, w);
    return ceil_div(tiles, hint.sms) * w;
  };
  return columns(256) * 105 < columns(192) * 100 ? 256 : 192;
}

int fp8_wgmma_overlap(int tile_n) {
  const int64_t overlap = env::get_int("SYMMOE_GEMM_WGMMA_OVERLAP");
  if (overlap >= 0) return static_cast<int>(overlap);
  return tile_n == 256 ? 2 : 0;
}

}  // namespace sm90

}  // namespace symmoe::gemm

namespace symmoe::runtime {

void append_grouped_gemm_kernels(std::vector<KernelEntry>& out) {
  using namespace symmoe::gemm;
  for (const GemmDtype d : {GemmDtype::kFP8E4M3, GemmDtype::kBF16}) {
    for (const GemmTile t : {GemmTile::kLargeM, GemmTile::kSmallM}) ops_for(d, t).append_kernels(out);
  }
  sm90::fp8_decode_ops().append_kernels(out);
  sm90::fp8_swapab_ops().append_kernels(out);
  sm90::fp8_wgmma_ops().append_kernels(out);
  sm90::bf16_wgmma_ops().append_kernels(out);
}

}  // namespace symmoe::runtime
