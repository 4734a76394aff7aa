// Grouped GEMM, bf16, large M: our own warp-specialized, persistent wgmma/TMA kernel (no
// CUTLASS), the fp8 kernel's frame (sm90_grouped_gemm_wgmma_frame.cuh) with a mainloop that
// accumulates in the tensor cores.
//
// NOTE [bf16 wgmma kernel]: the frame of NOTE [fp8 wgmma kernel] — 128 x 256 tiles of every
// expert in one persistent grid, one producer thread issuing the two tensor copies per K block,
// two consumer warpgroups of 64 rows, the tensor-store epilogue — over bf16 operands: a K block
// is 64 elements (one 128-byte swizzled row), a stage 16 KiB of activations and 32 KiB of
// weights, and there are no scales. Each consumer warpgroup runs one m64n256k16 wgmma per 16
// elements of K into its 128 accumulators per thread (fp32, the whole of K in the tensor
// cores, as cuBLAS and CUTLASS do for bf16), and keeps one K block's wgmmas in flight: after
// issuing block kb it waits until only those are outstanding (wgmma.wait_group 1) and releases
// the stage of block kb - 1. The tile's last block is waited for before the epilogue.
// Columns past N (N = 8 mod 256 and up) and K past the last whole block arrive as zeros from
// the tensor maps or belong to the next expert's weight rows: never stored.
// Measured on the H200 against CUTLASS's 128 x 256 grouped tile (kLargeM) in the same process,
// three runs, deepseek-v3 shapes, 256-4096 rows per expert, 8 and 32 experts (bench/results/
// gemm_bf16_wgmma_h200.log, gemm_bf16_wgmma_cluster_h200.log, gemm_bench_h200.log): clusters
// of 1 at 0.975-1.09x (mean ~1.02x), so choose_tile takes this kernel from 256 rows per expert;
// it holds no CUTLASS state, one tensor map per operand for all experts. Gate/up 32 x 256
// (the case where grouped bf16 falls furthest below dense: every expert's 59 MB of weights
// meet only 256 rows): 595-666 TFLOPS against CUTLASS's 610-660 and a dense cuBLASLt 743-814;
// Nsight Compute there (clusters of 2, bench/results/ncu_bf16_wgmma_c2_32x256_stalls.txt):
// tensor pipe 81 %, L2 83 % busy, DRAM 61 %, consumers waiting on stages in 31 % of their
// samples — L2 traffic, not the mainloop. Clusters sharing operand tiles by multicast
// (SYMMOE_GEMM_WGMMA_BF16_CLUSTER) did not help reliably: pairs sharing weight tiles 664 vs
// 622 TFLOPS in one run, 626 vs 666 in the next; 2 x 2 clusters 0.70-1.02x of clusters of 1
// (gemm_bench_h200.log). Both stay selectable; the GPU test runs every cluster shape. More
// bytes in flight did help at these sizes: a fourth stage, the output staged in 64-column
// rounds (SYMMOE_GEMM_WGMMA_STAGES, four_stages below: gate/up 32 x 256 722-724 against
// 661-683 TFLOPS in the same process), taken up to 512 rows per expert.
#include <cuda.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>
#include <vector>

#include "sm90_grouped_gemm_wgmma_frame.cuh"
#include "sm90_wgmma_bf16_ops.cuh"
#include "symmoe/core/env.hpp"
#include "symmoe/core/error.hpp"

namespace symmoe::gemm::sm90::wgmma_frame {

namespace {

// The wgmmas of one 64-wide K block into d: this warpgroup's 64 activation rows x the stage's
// 256 weight rows; accumulate = false overwrites d with the block's product (a tile's first).
template <class Shape>
SYMMOE_DEVICE void issue_block_bf16(float (&d)[Shape::kBN / 2], StageDesc sd, bool accumulate) {
  const uint64_t da = wgmma::desc_from_lo(sd.a_lo);
  const uint64_t db = wgmma::desc_from_lo(sd.b_lo);
  wgmma::fence();
#pragma unroll
  for (int k = 0; k < Shape::kKElems / 16; ++k) {
    wgmma::mma_m64n256k16_bf16(d, da + 2 * k, db + 2 * k, accumulate || k > 0);
  }
  wgmma::commit();
}

template <class Shape>
struct Bf16Consumer {
  static_assert(Shape::kBN == 256 && Shape::kBatches == 1 && !Shape::kScaled && Shape::kElemBytes == 2,
                "one 256-column batch of bf16 operands");
  __host__ __device__ static constexpr const char* name() { return "grouped_gemm_bf16_wgmma"; }
  static SYMMOE_DEVICE void run(const GroupSource& src, const Smem<Shape>& sm, int n_blocks, const CUtensorMap* map_out,
                                const device::WaitContext& ctx) {
    const ConsumerThread me;
    const int kblocks = kblocks_of<Shape>(src);
    float acc[1][Shape::kBN / 2];
    int s = 0;
    uint32_t phase = 0;
    bool ok = true;
    for_each_consumer_tile<Shape>(
        src, sm, n_blocks, me, map_out, acc, ok, ctx, [&] { return StageAt{s, phase}; }, [&](const ConsumerTile&) {
      int held = -1;  // the stage of the K block whose wgmmas may still run
      for (int kb = 0; kb < kblocks; ++kb) {
        // A failed wait (reported; the abort flag stops the other waiters) does not leave the
        // loop: wgmma stays warpgroup-uniform, the stale operands are only read, nothing is stored.
        if (ok) ok = tma::mbarrier_wait(&sm.full[s], phase, ctx, "gemm_stage_full", s);
        __syncwarp();
        issue_block_bf16<Shape>(acc[0], stage_desc<Shape>(sm.a, sm.b, s, me.wg), kb > 0);
        wgmma::wait<1>();
        if (held >= 0 && me.lane == 0) release_stage<Shape>(&sm.empty[held]);
        held = s;
        advance_stage(s, phase, Shape::kStages);
      }
      wgmma::wait<0>();
      wgmma::fence_operands(acc[0]);
      if (me.lane == 0) release_stage<Shape>(&sm.empty[held]);
    });
  }
};

// 128 x 256 bf16 tiles: 3 stages of 48 KiB and the 64 KiB staged output tile (tensor stores),
// 4 stages and a 16 KiB staging buffer (tensor stores in 64-column rounds), or 4 stages with
// direct stores (SYMMOE_GEMM_WGMMA_EPILOGUE=direct); on request in clusters
// of 2 CTAs sharing each weight tile or 2 x 2 also sharing activation tiles (NOTE [wgmma weight
// multicast], SYMMOE_GEMM_WGMMA_BF16_CLUSTER=2 | 4; measured in NOTE [bf16 wgmma kernel]).
template <int kStages, int kCluster, bool kTmaStore, int kClusterN = 1, int kStageCols = 256>
using Bf16Shape = TileShape<256, 256, kStages, kCluster, kTmaStore, 2, false, kClusterN, kStageCols>;
template <int kStages, int kCluster, bool kTmaStore, int kClusterN = 1, int kStageCols = 256>
using Bf16Launch = WgmmaLaunch<Bf16Shape<kStages, kCluster, kTmaStore, kClusterN, kStageCols>,
                               Bf16Consumer<Bf16Shape<kStages, kCluster, kTmaStore, kClusterN, kStageCols>>>;
using Bf16Tma = Bf16Launch<3, 1, true>;
// 4 stages next to a 16 KiB staging buffer: the output in 64-column rounds
// (SYMMOE_GEMM_WGMMA_STAGES, four_stages).
using Bf16Tma4 = Bf16Launch<4, 1, true, 1, 64>;
using Bf16Direct = Bf16Launch<4, 1, false>;
using Bf16PairTma = Bf16Launch<3, 2, true>;
using Bf16PairDirect = Bf16Launch<4, 2, false>;
// 2 x 2 clusters: weight tiles shared down pairs of row blocks, activation tiles across pairs
// of column blocks (SYMMOE_GEMM_WGMMA_BF16_CLUSTER=4).
using Bf16QuadTma = Bf16Launch<3, 2, true, 2>;
using Bf16QuadDirect = Bf16Launch<4, 2, false, 2>;

// SYMMOE_GEMM_WGMMA_STAGES: 4 stages (Bf16Tma4) or 3; auto takes 4 up to kBf16FourStageMaxM
// rows per expert (bf16_wgmma_stages_by_default, symmoe/gemm/grouped_gemm.hpp). Measured (H200, same process, 4 and 3 alternating twice;
// bench/results/gemm_bf16_stages_swapab_odd_h200.log, gemm_bf16_stages_h200.log): at 256 rows
// 4 stages gave gate/up 8 and 32 experts 722-724 against 661-683 TFLOPS, down 32 677-678
// against 625-628; at 512 +1 to +5 %; at 128 level; at 1024-4096 rows 0 to -4 % (weight
// tiles met by more row blocks come from L2, and the rounds of the epilogue cost more than
// the extra stage hides).
bool four_stages(const GroupSource& src) {
  const std::string stages = env::get_string("SYMMOE_GEMM_WGMMA_STAGES");
  return stages == "4" || (stages == "auto" && bf16_wgmma_stages_by_default(src.expected_m) == 4);
}

cudaError_t bf16_wgmma_launch(const GroupSource& src, const LaunchSlots& slots, cudaStream_t stream) {
  const bool tma_store = env::get_string("SYMMOE_GEMM_WGMMA_EPILOGUE") == "tma";
  const int64_t cluster = env::get_int("SYMMOE_GEMM_WGMMA_BF16_CLUSTER");
  SYMMOE_CHECK(cluster != 3, "SYMMOE_GEMM_WGMMA_BF16_CLUSTER = 3: 1, 2 or 4");
  if (cluster == 4) {
    return tma_store ? Bf16QuadTma::launch(src, slots, stream) : Bf16QuadDirect::launch(src, slots, stream);
  }
  if (cluster == 2) {
    return tma_store ? Bf16PairTma::launch(src, slots, stream) : Bf16PairDirect::launch(src, slots, stream);
  }
  if (tma_store && four_stages(src)) return Bf16Tma4::launch(src, slots, stream);
  return tma_store ? Bf16Tma::launch(src, slots, stream) : Bf16Direct::launch(src, slots, stream);
}

void bf16_wgmma_append_kernels(std::vector<runtime::KernelEntry>& out) {
  Bf16Tma::append(out, "sm90_grouped_gemm_bf16_wgmma_128x256_tma_store");
  Bf16Tma4::append(out, "sm90_grouped_gemm_bf16_wgmma_128x256_tma_store_s4");
  Bf16Direct::append(out, "sm90_grouped_gemm_bf16_wgmma_128x256");
  Bf16PairTma::append(out, "sm90_grouped_gemm_bf16_wgmma_128x256_c2_tma_store");
  Bf16PairDirect::append(out, "sm90_grouped_gemm_bf16_wgmma_128x256_c2");
  Bf16QuadTma::append(out, "sm90_grouped_gemm_bf16_wgmma_128x256_c2x2_tma_store");
  Bf16QuadDirect::append(out, "sm90_grouped_gemm_bf16_wgmma_128x256_c2x2");
}

}  // namespace

}  // namespace symmoe::gemm::sm90::wgmma_frame

namespace symmoe::gemm::sm90 {

const ConfigOps& bf16_wgmma_ops() {
  static const ConfigOps ops{describe_tile(GemmDtype::kBF16, GemmTile::kWgmma), &wgmma_frame::no_workspace,
                             &wgmma_frame::bf16_wgmma_launch, &wgmma_frame::bf16_wgmma_append_kernels};
  return ops;
}

}  // namespace symmoe::gemm::sm90
