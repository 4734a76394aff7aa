// Grouped GEMM, fp8, decode sizes: weights on the wgmma's M side ("swap AB"), streamed by TMA
// (our own kernel, no CUTLASS).
//
// NOTE [fp8 swap-AB kernel]: with up to 64 rows per expert the GEMM is a stream of the experts'
// weights. This kernel computes outᵀ = W · actᵀ so that the weights fill wgmma's 64-row M side
// and the expert's few rows its N side (8, 16, 32 or 64: kT), with the native fp8 wgmma
// (m64nkTk32; no unpacking, unlike mma.sync on e4m3):
//  - work items are (expert, pass, 64 weight rows); a pass is kT rows of the expert (more rows:
//    more passes over its weights); experts without rows have no items (items_start in shared
//    memory: a prefix over the experts, built by every CTA from the row tables). One CTA per SM
//    of the budget; the CTAs take steps of up to two consecutive items of one expert and pass
//    (NOTE [swap-AB schedule]: from a device-wide counter or in equal contiguous ranges), so
//    the SMs stream equal shares of the weight bytes and an expert's items, which share its
//    activation rows, run on neighbouring SMs at the same time;
//  - consumer warpgroup w takes the step's item w, both read the same activation tile (the
//    pair kernels), or both take the step's one item, each half of every stage's K blocks
//    (the split kernels, NOTE [swap-AB K split]; the default up to 32 rows per expert);
//  - the producer warp's lane 0 issues the tensor copies of a stage — kD (default 4) 128-wide K blocks
//    of the step's 64-row weight items and of the kT-row activation tile, 128-byte swizzle,
//    kD * 128 contiguous bytes per row (NOTE [swap-AB K run]); activation rows past the
//    expert's rows are other experts' rows or zeros past the tensor, in output columns never
//    stored — and its lanes copy the stage's activation and weight scales (cp.async,
//    zeros for rows past the count and K blocks past K), kStages stages ahead of the consumers
//    and across step, pass and expert boundaries: the stream does not drain until the CTA's
//    last item;
//  - per K block a consumer warpgroup issues the four k32 wgmmas into one of two partial
//    buffers and promotes the K block before it while they run (acc += part * weight scale *
//    activation scale of the column: the fp8 recipe's per-block fp32 promotion, exact per
//    128-wide K block); it releases the stage once the stage's last K block is done, before
//    that block's promotion (NOTE [swap-AB overlapped promotion]);
//  - at the end of a pass each thread stores its outputs (rows = output columns n, columns =
//    the expert's rows) as bf16, the expert's rows past its count skipped;
//  - early launch (NOTE [swap-AB early launch]): the CTAs set up and pull their first weights
//    into L2 while the previous kernel drains.
// Correct for any count; chosen (choose_tile) at decode sizes, where a pass covers the rows.
// With the split kernels up to 32 rows (bench/results/gemm_swapab_split2_h200.log): gate/up
// E = 8 88-89 %, E = 32 97.5-99.8 %, down E = 8 77-79 %, E = 32 93-95 %; at 64 rows (pairs)
// 83 / 94 / 68 / 87 %. With the row-table prefetch and two fixed units per CTA (NOTE [swap-AB
// early launch], kFixedUnits; gemm_swapab_tables_h200.log, three rounds in one call against the
// build before): down E = 8 80.3-83.3 % (was 78.5-79.6) up to 32 rows, 71.5-71.7 % (69.3-69.8)
// at 64; gate/up E = 8 90.0-91.5 % (89.0-90.0). Before the split kernels, pairs only:
// Measured on the H200 (bench/results/gemm_swapab_h200.log; deepseek-v3 shapes, Wt% = weight
// bytes / time against the same run's d2d copy rate, 10 GEMMs per graph node to node, the
// auto schedule): gate/up E = 8 82-87 %, E = 32 92-97 %; down E = 8 67-74 %, E = 32 86-95 %
// at 8-64 rows per expert; CUTLASS's 64 x 128 tile 76-84 / 89-95 / 64-70 / 84-88 % in runs
// of the same day (gemm_swapab_schedule_h200.log), our mma.sync decode kernel 84-88 % / 72-74 %
// (E = 8, 8 rows only; beyond, its math caps it). The E = 8 numbers move by 2-4 points from run
// to run. Stage shape: 1 / 2 / 4 K blocks per stage gave 71-72 / 75-77 / 79-80 % on down E = 8
// up to 32 rows (gemm_swapab_kblocks_h200.log, no early launch), so 4 is the default
// (SYMMOE_GEMM_SWAPAB_KBLOCKS); the early launch adds 2-6 points at E = 8 (down 74.5-78.3 vs
// 70.2-72.6 %). Two items per warpgroup (steps of 4 items sharing each activation tile, a
// quarter less L2 traffic at 64 rows) measured 3-16 points lower at 32 and 64 rows: with 4
// items only 1 or 2 K blocks fit in a stage (short row runs) or 2-3 stages in shared memory;
// not kept. Schedules: NOTE [swap-AB schedule]. Timed right after compute-bound GEMMs the same
// sizes run 5-10 points lower (gemm_bench_h200.log: down E = 8 at 8 rows 66 % there): the board's
// power-cap average still holds the clock down (bench/RESULTS.md, "What a section inherits").
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

// The kernel in layers, each header including the one before (the consumer and the producer
// both on the schedule):
//   sm90_swapab_layout.cuh    shapes, shared memory, step codes
//   sm90_swapab_schedule.cuh  how CTAs take steps (NOTE [swap-AB schedule]), parameters, first guesses
//   sm90_swapab_producer.cuh  the producer warp: steps, tensor copies, scales
//   sm90_swapab_consumer.cuh  the consumer warpgroups: wgmmas, promotion, stores
//   sm90_swapab_kernel.cuh    the kernel: set-up, early launch, row tables, the roles
// and here the host side: tensor maps, pass widths, launch, eager loading.
#include "sm90_grouped_gemm_launch.hpp"
#include "sm90_swapab_kernel.cuh"
#include "symmoe/core/env.hpp"
#include "symmoe/core/error.hpp"
#include "symmoe/runtime/device_runtime.hpp"

namespace symmoe::gemm::sm90::swapab {

namespace {

// NOTE [swap-AB K run]: an fp8 operand [rows, K] seen as a 3-D tensor (128 bytes of a K
// block, row, K block) with strides (1, K, 128): a box of (128, box_rows, kD) is kD K blocks of
// box_rows rows, written to shared memory K block after K block, each a box_rows x 128 tile in
// the 128-byte swizzle (a 1024-byte multiple apart: each its own wgmma operand), and read from
// memory as kD * 128 contiguous bytes per row. K blocks past K arrive as zeros.
inline CUtensorMap make_kblock_map(const void* base, int64_t rows, int64_t k, int box_rows, int kd, const char* what) {
  const cuuint64_t dims[3] = {128, static_cast<cuuint64_t>(rows), static_cast<cuuint64_t>(k / kKBlock)};
  const cuuint64_t strides[2] = {static_cast<cuuint64_t>(k), 128};
  const cuuint32_t box[3] = {128, static_cast<cuuint32_t>(box_rows), static_cast<cuuint32_t>(kd)};
  return wgmma_frame::encode_map_sw128("fp8 swap-AB", what, base, CU_TENSOR_MAP_DATA_TYPE_UINT8, 3, dims, strides, box,
                                       CU_TENSOR_MAP_L2_PROMOTION_L2_256B);
}

template <class S>
struct Launch {
  static const void* kernel() { return reinterpret_cast<const void*>(&sm90_grouped_gemm_fp8_swapab_kernel<S>); }
  // schedule: NOTE [swap-AB schedule]; the split kernels run dynamic.
  static cudaError_t launch(const GroupSource& src, const LaunchSlots& slots, cudaStream_t stream,
                            ScheduleKind schedule) {
    SYMMOE_CHECK(src.groups <= S::max_groups(), "grouped GEMM (fp8 swap-AB): ", src.groups,
                 " experts; the tables in shared memory hold at most ", S::max_groups());
    const int64_t rows = src.offsets == nullptr ? int64_t{src.groups} * src.max_m : src.total_rows;
    const CUtensorMap map_act = make_kblock_map(src.act, rows, src.k, S::kT, S::kStageBlocks, "activations");
    const CUtensorMap map_w =
        make_kblock_map(src.weights, int64_t{src.groups} * src.n, src.k, kItemRows, S::kStageBlocks, "weights");
    SYMMOE_CHECK(schedule == ScheduleKind::kStatic || slots.schedule != nullptr,
                 "grouped GEMM (fp8 swap-AB): no schedule words");
    Params params{src, slots.status, runtime::wait_timeout_ns(), Schedule{slots.schedule, schedule}, slots.trace};
    cudaLaunchConfig_t config{};
    config.gridDim = dim3(std::max(slots.sm_count, 1), 1, 1);
    config.blockDim = dim3(kThreads, 1, 1);
    config.dynamicSmemBytes = S::smem_bytes(src.groups);
    config.stream = stream;
    cudaLaunchAttribute attr{};
    if (slots.early) {  // NOTE [swap-AB early launch]
      attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
      attr.val.programmaticStreamSerializationAllowed = 1;
      config.attrs = &attr;
      config.numAttrs = 1;
    }
    void* args[] = {const_cast<CUtensorMap*>(&map_act), const_cast<CUtensorMap*>(&map_w), &params};
    return cudaLaunchKernelExC(&config, kernel(), args);
  }
  static void append(std::vector<runtime::KernelEntry>& out, const char* name) {
    out.push_back({name, kernel(), kMaxSmem, -1});
  }
};

// One kernel per pass width (8, 16, 32, 64 rows: the shapes S8 .. S64), picked from
// expected_m; entries named prefix + "m<width>" + suffix.
template <class S8, class S16, class S32, class S64>
struct PassWidths {
  static cudaError_t launch(const GroupSource& src, const LaunchSlots& slots, cudaStream_t stream,
                            ScheduleKind schedule) {
    const int m = std::max(src.expected_m, 1);
    if (m <= 8) return Launch<S8>::launch(src, slots, stream, schedule);
    if (m <= 16) return Launch<S16>::launch(src, slots, stream, schedule);
    if (m <= 32) return Launch<S32>::launch(src, slots, stream, schedule);
    return Launch<S64>::launch(src, slots, stream, schedule);
  }
  static void append(std::vector<runtime::KernelEntry>& out, const std::string& prefix, const std::string& suffix) {
    // The entries keep the names' pointers: one set per instantiation, built on the first call.
    static const std::string names[4] = {prefix + "m8" + suffix, prefix + "m16" + suffix, prefix + "m32" + suffix,
                                         prefix + "m64" + suffix};
    Launch<S8>::append(out, names[0].c_str());
    Launch<S16>::append(out, names[1].c_str());
    Launch<S32>::append(out, names[2].c_str());
    Launch<S64>::append(out, names[3].c_str());
  }
};

// The pair kernels with kD K blocks per stage. Stages: as many as fit next to the tables of
// 256 experts (Shape::max_groups), at most 12.
template <int kD>
using Family = PassWidths<Shape<8, kD, 12 / kD>, Shape<16, kD, 12 / kD>, Shape<32, kD, kD == 1 ? 10 : kD == 2 ? 5 : 2>,
                          Shape<64, kD, kD == 1 ? 9 : kD == 2 ? 4 : 2>>;

// NOTE [swap-AB K split]: one item per step, its K blocks split between the consumer
// warpgroups (per stage: the first kD to warpgroup 0, the next kD to warpgroup 1), warpgroup 1's
// sums added by warpgroup 0 through shared memory at the item's end (named barrier 3, both
// warpgroups; the stage waits are and-reduced over both, so they leave together), steps from
// the device-wide counter one item at a time. A step streams half the bytes of a pair, so the
// SMs finish within about half the time of a pair of each other; each stage carries the
// activations of 2 kD K blocks (twice the pairs' share per weight byte). Stages: as many as fit
// next to the tables of 256 experts; 2 K blocks per warpgroup from 16 rows, where the
// activations take more of a stage.
using SplitFamily = PassWidths<Shape<8, 4, 3, true>, Shape<16, 2, 5, true>, Shape<32, 2, 4, true>, Shape<64, 2, 3, true>>;

// The auto schedule's kernels (swapab_split_by_default, symmoe/gemm/grouped_gemm.hpp): split
// up to kSwapAbSplitMaxM rows per expert, pairs above. Measured
// (H200, deepseek-v3 shapes, 10 GEMMs per graph; bench/results/gemm_swapab_split_h200.log,
// gemm_swapab_split2_h200.log) against the pairs' best schedule, up to 32 rows: gate/up +0-2
// points at 8 experts and +2-3 at 32 (97.5-99.8 %), down 8 experts -1 to +2 (77-79 %), 32
// experts level (93-95 %); a shape whose items leave some SMs one more (N 4352, 8 experts)
// +4-9. At 64 rows the activation tile is as large as the weights' share of a stage and
// split fell behind (down over 32 experts 81 against 87 %) where the pairs run dynamic, but
// leads where they would run static (few items per SM: 8 experts), the tail of static ranges
// costing more than the doubled activation bytes: down 8 x 64 1.027x, gate/up 1.032x, and down
// 32 x 64 0.91x, gate/up 0.98x (bench/results/gemm_swapab_overlap_ab.log, three rounds in one
// call; NOTE [swap-AB overlapped promotion] in both). Auto with that rule against the build
// before both changes (gemm_swapab_auto64_ab.log, 8, 16 and 32 experts, three rounds): down
// 8 x 64 1.042x (70.0-70.3 % of the d2d rate), gate/up 8 x 64 1.030x, 16 x 64 1.060x; down
// 16 x 64 (pairs, dynamic) 0.987x; the other 20 cases 0.992-1.006x.

// SYMMOE_GEMM_SWAPAB_SCHEDULE=split, or auto where swapab_split_by_default: the split kernels.
// Otherwise the pair kernels with SYMMOE_GEMM_SWAPAB_KBLOCKS K blocks per stage (1, 2 or 4;
// default 4). The variables are read once per launch.
cudaError_t launch(const GroupSource& src, const LaunchSlots& slots, cudaStream_t stream) {
  const std::string kind = env::get_string("SYMMOE_GEMM_SWAPAB_SCHEDULE");
  if (kind == "split" || (kind == "auto" && swapab_split_by_default(src.expected_m, src.groups, src.n, slots.sm_count))) {
    return SplitFamily::launch(src, slots, stream, ScheduleKind::kDynamic);
  }
  const ScheduleKind schedule = kind == "dynamic" ? ScheduleKind::kDynamic
                                : kind == "static" ? ScheduleKind::kStatic
                                                   : ScheduleKind::kAuto;
  const int64_t kd = env::get_int("SYMMOE_GEMM_SWAPAB_KBLOCKS");
  SYMMOE_CHECK(kd == 1 || kd == 2 || kd == 4, "SYMMOE_GEMM_SWAPAB_KBLOCKS = ", kd, ": 1, 2 or 4");
  if (kd == 4) return Family<4>::launch(src, slots, stream, schedule);
  if (kd == 2) return Family<2>::launch(src, slots, stream, schedule);
  return Family<1>::launch(src, slots, stream, schedule);
}

void append_kernels(std::vector<runtime::KernelEntry>& out) {
  const std::string prefix = "sm90_grouped_gemm_fp8_swapab_";
  Family<1>::append(out, prefix, "_k1");
  Family<2>::append(out, prefix, "_k2");
  Family<4>::append(out, prefix, "_k4");
  SplitFamily::append(out, prefix + "split_", "");
}

}  // namespace

}  // namespace symmoe::gemm::sm90::swapab

namespace symmoe::gemm::sm90 {

const ConfigOps& fp8_swapab_ops() {
  static const ConfigOps ops{describe_tile(GemmDtype::kFP8E4M3, GemmTile::kSwapAB), &wgmma_frame::no_workspace,
                             &swapab::launch, &swapab::append_kernels};
  return ops;
}

}  // namespace symmoe::gemm::sm90
