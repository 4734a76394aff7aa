// EP combine: one persistent cooperative kernel per rank. Cross-rank barrier -> each source
// pulls the expert-output rows of its tokens' top-k entries and sums them in a fixed order
// (NOTE [EP buffer protocol] in device/ep_buffer_layout.cuh).
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>

#include "../runtime/kernel_launch.cuh"
#include "../runtime/kernel_lists.hpp"
#include "ep_device.cuh"
#include "ep_kernels_launch.hpp"
#include "symmoe/core/device_info.hpp"
#include "symmoe/core/error.hpp"
#include "symmoe/device/cross_rank_barrier.cuh"
#include "symmoe/device/grid_sync.cuh"

namespace symmoe::ep {
namespace {

using device::EpBufferLayout;
using device::WaitContext;
using device::WaitSite;
namespace d = detail;

// Expert-output rows each lane keeps in flight per step.
constexpr int kRowsInFlight = 8;

// NOTE [combine order]: out[t] = bf16(acc), acc = 0; for k = 0 .. top_k - 1 ascending, over
// unmasked slots: acc = fmaf(w[t,k], y(row of (t, k)), acc) in fp32. The order and the fused
// multiply-add are fixed, so results are bitwise reproducible and equal the CPU reference.
// One warp per token; each lane owns 8 consecutive elements (one 16-byte vector) per step and
// issues the loads of up to kRowsInFlight rows before accumulating them in order.
__device__ void combine_tokens(const EpCombineArgs& a, const WaitContext& ctx) {
  const EpBufferLayout& l = a.layout;
  const uint32_t K = l.top_k;
  const int me = a.peers.rank;
  const uint32_t lane = d::lane_id();
  const uint64_t base = a.peers.base;
  const auto* send_topk = l.at<const int32_t>(base, l.send_topk_offset);
  const auto* combine_row = l.at<const int32_t>(base, l.combine_row_offset);
  const float* weights = a.weights != nullptr ? a.weights : l.at<const float>(base, l.send_weights_offset);
  const uint64_t y_row_bytes = static_cast<uint64_t>(l.hidden) * 2;
  const uint32_t n16 = l.hidden / 8;
  const int warps = static_cast<int>(gridDim.x * kEpWarps);
  for (int t = static_cast<int>(blockIdx.x * kEpWarps + d::warp_id()); t < a.num_tokens; t += warps) {
    const uint64_t pair = static_cast<uint64_t>(t) * K + lane;
    uint64_t y = 0;  // this lane's slot: the expert-output row's address (0: masked)
    float w = 0.f;
    if (lane < K) {
      const int e = send_topk[pair];
      const int row = d::load_cg(combine_row + pair);
      if (e >= 0 && row < 0) {
        device::record_failure(ctx, device::StatusCode::kInvalidInput,
                               WaitSite{"combine_row", static_cast<uint32_t>(t), me,
                                        static_cast<int32_t>(lane)}, 0, 0);
      } else if (e >= 0) {
        y = a.peers.peer_base(static_cast<int>(l.rank_of(static_cast<uint32_t>(e)))) +
            l.expert_out_offset + static_cast<uint64_t>(row) * y_row_bytes;
        w = weights[pair];
      }
    }
    const uint32_t slots = __ballot_sync(0xFFFFFFFFu, y != 0);
    auto* out = static_cast<uint4*>(a.out) + static_cast<uint64_t>(t) * n16;
    for (uint32_t c0 = 0; c0 < n16; c0 += 32) {
      const uint32_t c = c0 + lane;
      float acc[8] = {0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f};
      for (uint32_t rest = slots; rest != 0;) {
        uint4 v[kRowsInFlight];
        float wk[kRowsInFlight];
        bool has[kRowsInFlight];
#pragma unroll
        for (int i = 0; i < kRowsInFlight; ++i) {
          has[i] = rest != 0;
          const int k = has[i] ? __ffs(rest) - 1 : 0;
          rest &= rest - 1;
          const uint64_t row = __shfl_sync(0xFFFFFFFFu, y, k);
          wk[i] = __shfl_sync(0xFFFFFFFFu, w, k);
          v[i] = has[i] && c < n16 ? d::load_cg(reinterpret_cast<const uint4*>(row) + c)
                                   : make_uint4(0, 0, 0, 0);
        }
#pragma unroll
        for (int i = 0; i < kRowsInFlight; ++i) {
          if (!has[i]) continue;
          const auto* h = reinterpret_cast<const __nv_bfloat16*>(&v[i]);
#pragma unroll
          for (int j = 0; j < 8; ++j) acc[j] = fmaf(wk[i], __bfloat162float(h[j]), acc[j]);
        }
      }
      if (c < n16) {
        uint4 packed;
        auto* h = reinterpret_cast<__nv_bfloat16*>(&packed);
#pragma unroll
        for (int j = 0; j < 8; ++j) h[j] = __float2bfloat16_rn(acc[j]);
        out[c] = packed;
      }
    }
  }
}

__global__ void __launch_bounds__(kEpThreads, 1) sm90_ep_combine_kernel(EpCombineArgs a) {
  const WaitContext ctx{a.status, a.timeout_ns, "sm90_ep_combine"};
  const EpBufferLayout& l = a.layout;
  const int rank = a.peers.rank;
  device::EpControl* ctrl = d::control(a.peers, l, rank);
  // Read by every block before the grid_sync; block 0 updates it after.
  const uint32_t last_op = device::ptx::ld_volatile(&ctrl->last_op);
  if (last_op != device::kEpOpDispatch) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
      device::record_failure(ctx, device::StatusCode::kInvalidInput,
                             WaitSite{"combine_order", 0, rank, -1}, device::kEpOpDispatch, last_op);
    }
    return;
  }
  // Every rank's expert outputs are written and every dispatch pull is done.
  auto* pad = reinterpret_cast<device::SignalPad*>(a.peers.base + l.pad_offset);
  if (blockIdx.x == 0 && !device::cross_rank_barrier(a.peers, pad, ctx, 20)) return;
  if (!device::grid_sync(a.grid, ctx, 20, rank)) return;
  if (blockIdx.x == 0 && threadIdx.x == 0) ctrl->last_op = device::kEpOpCombine;
  combine_tokens(a, ctx);
}

}  // namespace

runtime::GridLaunch ep_combine_config(int device, runtime::SmBudget budget) {
  return runtime::one_block_per_sm(sm90_ep_combine_kernel, device, budget, kEpThreads, 0,
                                   "sm90_ep_combine_kernel");
}

void launch_ep_combine(const EpCombineArgs& args, const runtime::GridLaunch& config,
                       cudaStream_t stream) {
  runtime::launch_kernel(sm90_ep_combine_kernel, args, config.grid, config.block, config.smem, true,
                         stream, "sm90_ep_combine_kernel");
}

}  // namespace symmoe::ep

namespace symmoe::runtime {

void append_ep_combine_kernels(std::vector<KernelEntry>& out) {
  out.push_back({"sm90_ep_combine_kernel", reinterpret_cast<const void*>(&ep::sm90_ep_combine_kernel)});
}

}  // namespace symmoe::runtime
