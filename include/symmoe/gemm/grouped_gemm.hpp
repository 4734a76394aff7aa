// The expert grouped GEMM on SM90: out[e] = act[e] · W[e]ᵀ over the layouts of
// gemm/grouped_gemm_problem.hpp, FP8 (DeepSeek-V3 block scales) or BF16, BF16 out.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "symmoe/gemm/grouped_gemm_problem.hpp"
#include "symmoe/runtime/device_runtime.hpp"
#include "symmoe/runtime/sm_budget.hpp"

namespace symmoe::gemm {

// Kernel families. kLargeM: 128-row tiles, two consumer warpgroups per tile, clusters of 2
// along N sharing the activation tile (fp8 128x128x128, bf16 128x256x64). kSmallM: 64-row
// tiles, ping-pong consumer warpgroups, no cluster (fp8 64x128x128, bf16 64x128x64): sizes
// where 128-row tiles would be mostly padding. kDecode (fp8 only): our weight-streaming kernel
// for up to 8 rows per expert (mma.sync fragments loaded straight from global memory, no
// argument builder; NOTE [fp8 decode kernel]); correct for any count, in passes of up to 32;
// superseded by kSwapAB, not chosen by kAuto.
// kWgmma: our warp-specialized persistent wgmma/TMA kernel, 128x256 tiles (128x192
// with SYMMOE_GEMM_WGMMA_TILE_N=192), two consumer warpgroups, promotion per 128-wide K block
// overlapped with the next wgmma batch, tensor-store epilogue (NOTE [fp8 wgmma kernel]); kAuto
// takes it for fp8 from kWgmmaMinM rows per expert (1.02-1.11x kLargeM at 128 rows, 1.05-1.13x
// at 256, 1.01-1.22x at 1024-4096), for bf16 (NOTE [bf16 wgmma kernel]) from kBf16WgmmaMinM
// (0.975-1.09x kLargeM's 128x256 tile at 256-4096 rows over three runs; 0.95-0.97x at 192).
// kSwapAB (fp8 only): our decode-size wgmma/TMA kernel with the weights on wgmma's M side and
// the expert's rows (8, 16, 32 or 64 per pass, from expected_m) on its N side, every SM of the
// budget streaming an equal share of the weight bytes (NOTE [fp8 swap-AB kernel]); up to
// kSwapAbSplitMaxM rows per expert its split kernels (NOTE [swap-AB K split]), above them its
// pair kernels (SYMMOE_GEMM_SWAPAB_SCHEDULE overrides).
enum class GemmTile { kAuto, kLargeM, kSmallM, kDecode, kWgmma, kSwapAB };
// The CUTLASS families, which read row-major activation scales only (NOTE [activation scale layouts]).
constexpr bool is_cutlass_tile(GemmTile t) { return t == GemmTile::kLargeM || t == GemmTile::kSmallM; }

struct TileChoice {
  GemmTile tile = GemmTile::kLargeM;
  int tile_m = 0, tile_n = 0, tile_k = 0;
  const char* name = "";  // e.g. "fp8 128x128x128 coop 1x2"
};

// The heuristic: expected_m = rows per expert the caller expects (the row tables live on the
// device, so the host does not know them). fp8: kSwapAB up to kSwapAbMaxM rows (at or above
// CUTLASS's 64-row tile at every measured size but down x 8 experts x 64 rows, level there).
// Otherwise kSmallM when expected_m <= 64, or when 128-row tiles would leave more than half of
// `sm_count` SMs without a tile; else kLargeM — or our wgmma kernels (kWgmma) from kWgmmaMinM
// (fp8) / kBf16WgmmaMinM (bf16) rows per expert (bench/RESULTS.md; fp8 below 128 rows was not
// measured against CUTLASS). kDecode is no longer chosen (kSwapAB leads it at every measured
// size) and stays selectable. Column-major activation scales (NOTE [activation scale layouts])
// take kWgmma wherever the shape would take kLargeM or kSmallM: the CUTLASS tiles read
// row-major scales only.
inline constexpr int kSwapAbMaxM = 64;
inline constexpr int kDecodeMaxM = 8;
inline constexpr int kWgmmaMinM = 128;
inline constexpr int kBf16WgmmaMinM = 256;
TileChoice choose_tile(GemmDtype dtype, int expected_m, int num_experts, int n, int sm_count,
                       ScaleLayout act_scales = ScaleLayout::kRowMajor);

// Within a tile family, what the auto settings take from the shape (bench/RESULTS.md):
// kSwapAB's split kernels (SYMMOE_GEMM_SWAPAB_SCHEDULE = auto) up to kSwapAbSplitMaxM rows per
// expert, and up to kSwapAbMaxM where the pair kernels would walk static ranges: fewer than
// kSwapAbDynamicMinItems 64-row weight items per SM (num_experts x n / 64, one pass each), where
// the split kernels' single items from the device-wide counter end the SMs closer together
// (NOTE [swap-AB schedule]); the bf16 kWgmma kernel's 4 stages up to kBf16FourStageMaxM
// (SYMMOE_GEMM_WGMMA_STAGES = auto; fp8 keeps 3).
inline constexpr int kSwapAbSplitMaxM = 32;
inline constexpr int kSwapAbDynamicMinItems = 12;
inline constexpr int kSwapAbItemRows = 64;  // weight rows of a swap-AB work item (one wgmma M)
inline constexpr int kBf16FourStageMaxM = 512;
constexpr bool swapab_split_by_default(int expected_m, int num_experts, int n, int sm_count) {
  if (expected_m <= kSwapAbSplitMaxM) return true;
  if (expected_m > kSwapAbMaxM) return false;
  return static_cast<long long>(num_experts) * (n / kSwapAbItemRows) <
         static_cast<long long>(kSwapAbDynamicMinItems) * sm_count;
}
constexpr int bf16_wgmma_stages_by_default(int expected_m) { return expected_m <= kBf16FourStageMaxM ? 4 : 3; }
// The fp8 kWgmma kernel's tile order (SYMMOE_GEMM_WGMMA_ROW_BAND = -1, auto): from
// kWgmmaRowBandMinM rows per expert, or from kWgmmaRowBandMinTilesPerCta tiles per persistent
// CTA (the launch's wgmma_tiles_estimate over the CTAs it launches), bands of
// kWgmmaRowBand row blocks walked column block by column block, with the dynamic schedule (NOTE
// [wgmma tile schedule]); below both, bands of 8 column blocks. Measured on an H100:
// - gate/up 8 x 4096 (gemm_l2_traffic_order_h100.log, gemm_wgmma_order_dyn_ab_h100.log): the
//   static column-band walk read 2.5 GB from DRAM against DeepGEMM's 1.2 GB; row bands with the
//   counter read 1.0 GB and ran 1.07-1.08x at gate/up 4096 rows, 1.02x at down 4096;
// - by tiles per CTA (gemm_wgmma_row_band_{1024,small}_ab_h100.log, 128 x 192 tiles, 132
//   CTAs, two calls): gate/up 32 x 1024 (42.7 tiles per CTA, as gate/up 8 x 4096) 1.07x in
//   both; down 32 x 1024 (73.7) 1.05x and 1.00x; down 32 x 512 (36.8) 1.01x and 1.03x; at 4
//   to 21 tiles per CTA (256 to 1024 rows over 8 experts, gate/up 32 x 512) 0.94-1.08x, no
//   consistent sign then;
// - by rows per expert, after the stage ring, the tiles located ahead and the column-major
//   scales (gemm_row_band_ab_h100.log, gemm_row_band_512_ab_h100.log: two calls, column-major
//   scales, 2-3 rounds of 20 replays, --power): from 512 rows row bands ran 0.992-1.133x
//   (gate/up 32 x 512 1.133x, gate/up 8 x 1024 1.060x and 1.069x, down 8 x 1024 1.010x and
//   1.018x, down 8 x 512 0.992x, the rest 0.997-1.007x); at 256 rows 0.985-1.002x. Nsight
//   Compute at gate/up 8 x 1024 (ncu_row_band_gate_up_8x1024_h100.log): 414 -> 371 us, DRAM
//   bytes 576 -> 405 MB (DeepGEMM's 128 x 192 s4: 353 us, 505 MB).
inline constexpr int kWgmmaRowBandMinM = 512;
inline constexpr int kWgmmaRowBandMinTilesPerCta = 32;
inline constexpr int kWgmmaRowBand = 16;
// Rows of every wgmma kernel's output tile (the frame static_asserts its kBM against it).
inline constexpr int kWgmmaTileRows = 128;
// Output tiles of tile_m x tile_n when each of `experts` receives expected_m rows (0 when any
// argument is not positive): the estimate behind the tile heuristic (choose_tile).
constexpr long long grid_tiles_estimate(int expected_m, int experts, int n, int tile_m, int tile_n) {
  if (expected_m <= 0 || experts <= 0 || n <= 0 || tile_m <= 0 || tile_n <= 0) return 0;
  return static_cast<long long>(experts) * ((expected_m + tile_m - 1) / tile_m) * ((n + tile_n - 1) / tile_n);
}
// The same for the wgmma kernels' kWgmmaTileRows-row tiles: the estimate behind the fp8 wgmma tile
// width (fp8_wgmma_tile_n) and tile order (below).
constexpr long long wgmma_tiles_estimate(int expected_m, int experts, int n, int tile_n) {
  return grid_tiles_estimate(expected_m, experts, n, kWgmmaTileRows, tile_n);
}
// `tiles`: wgmma_tiles_estimate for the launch's tile width; `ctas`: the persistent CTAs launched.
constexpr int fp8_wgmma_row_band_by_default(int expected_m, long long tiles, int ctas) {
  if (expected_m >= kWgmmaRowBandMinM) return kWgmmaRowBand;
  return ctas > 0 && tiles >= static_cast<long long>(kWgmmaRowBandMinTilesPerCta) * ctas ? kWgmmaRowBand : 0;
}
TileChoice describe_tile(GemmDtype dtype, GemmTile tile);

// Order in which the persistent CTAs walk an expert's output tiles: down M first (CTAs running
// together share weight tiles) or along N first (they share activation tiles); `swizzle`
// (1, 2, 4, 8) walks bands that many tiles wide, for L2 reuse in both operands.
enum class GemmRaster { kAlongM, kAlongN };

struct GroupedGemmOptions {
  GemmTile tile = GemmTile::kAuto;
  GemmRaster raster = GemmRaster::kAlongM;
  int swizzle = 1;
  // Rows per expert for the heuristic; 0: max_m (masked) or total_rows / E (contiguous).
  int expected_m = 0;
  // SMs the persistent grid may occupy (num_sms 0 = every SM; reserved_sms < 0 counts as 0:
  // the GEMM has no grid-wide barrier, so it needs no reserve unless the caller asks for one).
  runtime::SmBudget budget = runtime::current_sm_budget();
  // Programmatic dependent launch (kSwapAB; NOTE [swap-AB early launch]): the GEMM's CTAs may
  // start on SMs the previous kernel on the stream has left, set up and pull their first
  // weights into L2, and wait for that kernel before touching anything else; they let the next
  // kernel start likewise. No effect unless the previous kernel triggers its dependents (a
  // GEMM of this family does) or has finished.
  bool early_launch = true;
  // Diagnostics (kSwapAB only; NOTE [swap-AB trace]): when set, every CTA of the launch writes
  // kSwapAbTraceWords words at trace + blockIdx.x * kSwapAbTraceWords (room for one entry per
  // SM of the budget): global-timer nanoseconds of its milestones (SwapAbTraceEvent) and the
  // work items it took. A captured run writes on every replay. Costs a few stores per CTA.
  uint64_t* trace = nullptr;
};

// NOTE [swap-AB trace]: the words of a CTA's trace entry (GroupedGemmOptions::trace).
// kStart .. kConsumerEnd: %globaltimer (ns) when the CTA started, when griddepcontrol.wait
// returned, when its row tables were built, when consumer warpgroup 0 saw its first stage,
// when the producer issued its last copies, and when consumer warpgroup 0 stored its last
// outputs; kItems: work items the CTA took; kSm: the SM it ran on.
enum SwapAbTraceEvent : int {
  kTraceStart = 0,
  kTraceWaitDone,
  kTraceTablesDone,
  kTraceFirstStage,
  kTraceProducerDone,
  kTraceConsumerEnd,
  kTraceItems,
  kTraceSm,
  kSwapAbTraceWords
};

// One per device and stream user: owns the argument arrays and CUTLASS's workspace, sized for
// up to `max_experts` groups at every SM of the device, so run() allocates nothing and can be
// captured in a CUDA graph. Every run() (and every replay of a captured one) rewrites that
// workspace: runs must be ordered on one stream; work that may overlap (another stream, a graph
// replayed next to eager runs) needs its own GroupedGemm. A captured run replays with the
// pointers, shapes and options of its capture; counts and offsets are read at replay time.
class GroupedGemm {
 public:
  GroupedGemm(runtime::DeviceRuntime& rt, int max_experts);
  ~GroupedGemm();
  GroupedGemm(const GroupedGemm&) = delete;
  GroupedGemm& operator=(const GroupedGemm&) = delete;

  // Validates `p` (validate_problem; experts <= max_experts), picks the tile, enqueues on
  // `stream`. counts / offsets are read on the device: an invalid entry (negative, beyond
  // max_m, a segment leaving total_rows) computes nothing for that expert and is reported by
  // rt.check(stream) naming the expert. Returns the tile used.
  TileChoice run(const GroupedGemmProblem& p, cudaStream_t stream, const GroupedGemmOptions& options = {});

  int max_experts() const { return max_experts_; }
  size_t workspace_bytes() const { return workspace_bytes_; }

 private:
  runtime::DeviceRuntime* rt_;
  int max_experts_;
  int device_sms_ = 0;
  int cc_major_ = 0;
  void* arrays_ = nullptr;
  void* kernel_workspace_ = nullptr;
  void* schedule_ = nullptr;  // the swap-AB kernel's work counter (NOTE [swap-AB schedule])
  static constexpr size_t kScheduleBytes = 256;
  size_t workspace_bytes_ = 0;
};

}  // namespace symmoe::gemm
