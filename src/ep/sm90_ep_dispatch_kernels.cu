// EP dispatch: one persistent cooperative kernel per rank. Prep (routing scan + rows into the
// send region) -> cross-rank barrier -> pull into the expert-major receive layout
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
#include "symmoe/device/fp8_block_quant.cuh"
#include "symmoe/device/grid_sync.cuh"

namespace symmoe::ep {
namespace {

using device::EpBufferLayout;
using device::WaitContext;
using device::WaitSite;
namespace d = detail;

constexpr int kMasked = -1;
constexpr int kInvalid = -2;

__device__ int64_t load_id(const EpDispatchArgs& a, uint64_t p) {
  return a.idx_is_int64 ? static_cast<const int64_t*>(a.topk_idx)[p]
                        : static_cast<const int32_t*>(a.topk_idx)[p];
}

// Expert id, kMasked for -1, kInvalid for anything else outside [0, num_experts).
__device__ int sanitize(int64_t e, uint32_t num_experts) {
  if (e == -1) return kMasked;
  return (e < 0 || e >= static_cast<int64_t>(num_experts)) ? kInvalid : static_cast<int>(e);
}

// Whether pair (t, k) is the first of token t's top-k entries that lands on rank r.
__device__ bool first_on_rank(const EpDispatchArgs& a, uint64_t t, uint32_t k, uint32_t r) {
  const EpBufferLayout& l = a.layout;
  for (uint32_t j = 0; j < k; ++j) {
    const int e = sanitize(load_id(a, t * l.top_k + j), l.num_experts);
    if (e >= 0 && l.rank_of(static_cast<uint32_t>(e)) == r) return false;
  }
  return true;
}

// NOTE [routing scan]: block 0 alone, in three passes over the num_tokens x top_k pairs, which
// its warps split into contiguous ranges in (token, k) order. (1) Each warp counts its pairs
// per expert and its first-on-rank pairs per destination rank in its own shared histogram
// row; it also writes the sanitized ids, the weights and combine_row = -1. (2) Per expert and
// per rank, an exclusive scan over the warps turns the rows into each warp's starting
// positions; the totals are this rank's expert_counts and rank_counts. (3) Each warp walks its
// range again 32 pairs at a time; lanes with equal keys (__match_any_sync) take consecutive
// positions in lane order, and the lowest lane advances the warp's start. Positions are thus
// ordered by (token, k) and independent of timing: the layout is a pure function of routing.
__device__ void routing_scan(const EpDispatchArgs& a, int* smem, const WaitContext& ctx) {
  const EpBufferLayout& l = a.layout;
  const uint32_t E = l.num_experts, N = l.num_ranks, K = l.top_k;
  int* hist_e = smem;                  // [kEpWarps][E]
  int* hist_r = smem + kEpWarps * E;   // [kEpWarps][N]
  const uint64_t base = a.peers.base;
  auto* send_topk = l.at<int32_t>(base, l.send_topk_offset);
  auto* send_weights = l.at<float>(base, l.send_weights_offset);
  auto* send_pos = l.at<int32_t>(base, l.send_pos_offset);
  auto* combine_row = l.at<int32_t>(base, l.combine_row_offset);
  auto* rank_lists = l.at<int32_t>(base, l.rank_lists_offset);
  const uint32_t w = d::warp_id(), lane = d::lane_id();
  const uint64_t pairs = static_cast<uint64_t>(a.num_tokens) * K;
  const uint64_t per_warp = (pairs + kEpWarps - 1) / kEpWarps;
  const uint64_t begin = min(pairs, per_warp * w), end = min(pairs, begin + per_warp);

  for (uint32_t i = threadIdx.x; i < kEpWarps * (E + N); i += blockDim.x) smem[i] = 0;
  __syncthreads();
  for (uint64_t p = begin + lane; p < end; p += 32) {
    const int64_t raw = load_id(a, p);
    const int e = sanitize(raw, E);
    const uint64_t t = p / K;
    const auto k = static_cast<uint32_t>(p % K);
    send_topk[p] = e >= 0 ? e : kMasked;
    send_weights[p] = a.topk_weights[p];
    combine_row[p] = -1;
    if (e == kInvalid) {
      // Reported here, dropped from the routing; the peers learn of it through routing_error.
      d::control(a.peers, l, a.peers.rank)->routing_error = 1;
      device::record_failure(ctx, device::StatusCode::kInvalidInput,
                             WaitSite{"topk_idx", static_cast<uint32_t>(t), a.peers.rank,
                                      static_cast<int32_t>(k)},
                             E, static_cast<uint64_t>(raw));
    }
    if (e < 0) continue;
    atomicAdd(&hist_e[w * E + e], 1);
    const uint32_t r = l.rank_of(static_cast<uint32_t>(e));
    if (first_on_rank(a, t, k, r)) atomicAdd(&hist_r[w * N + r], 1);
  }
  __syncthreads();
  auto* expert_counts = l.at<int32_t>(base, l.expert_counts_offset);
  auto* rank_counts = l.at<int32_t>(base, l.rank_counts_offset);
  for (uint32_t e = threadIdx.x; e < E + N; e += blockDim.x) {
    int* column = e < E ? hist_e + e : hist_r + (e - E);
    const uint32_t stride = e < E ? E : N;
    int run = 0;
    for (int ww = 0; ww < kEpWarps; ++ww) {
      const int c = column[ww * stride];
      column[ww * stride] = run;
      run += c;
    }
    if (e < E) expert_counts[e] = run;
    else rank_counts[e - E] = run;
  }
  __syncthreads();
  for (uint64_t chunk = begin; chunk < end; chunk += 32) {
    const uint64_t p = chunk + lane;
    const int e = p < end ? sanitize(load_id(a, p), E) : kInvalid;
    const uint64_t t = p / K;
    const auto k = static_cast<uint32_t>(p % K);
    const uint32_t unique = 0x40000000u | lane;  // a key no other lane shares
    const uint32_t key_e = e >= 0 ? static_cast<uint32_t>(e) : unique;
    const uint32_t mask_e = __match_any_sync(0xFFFFFFFFu, key_e);
    const uint32_t r = e >= 0 ? l.rank_of(static_cast<uint32_t>(e)) : 0;
    const bool first = e >= 0 && first_on_rank(a, t, k, r);
    const uint32_t key_r = first ? r : unique;
    const uint32_t mask_r = __match_any_sync(0xFFFFFFFFu, key_r);
    const uint32_t lt = d::lanemask_lt();
    if (e >= 0) send_pos[p] = hist_e[w * E + e] + __popc(mask_e & lt);
    if (first) rank_lists[static_cast<uint64_t>(r) * l.max_tokens + hist_r[w * N + r] + __popc(mask_r & lt)] =
        static_cast<int32_t>(t);
    __syncwarp();
    if (e >= 0 && (mask_e & lt) == 0) hist_e[w * E + e] += __popc(mask_e);
    if (first && (mask_r & lt) == 0) hist_r[w * N + r] += __popc(mask_r);
    __syncwarp();
  }
}

// Rows into the send region, one warp per token (blocks other than block 0, unless alone).
__device__ void stage_rows(const EpDispatchArgs& a, uint64_t first_warp, uint64_t num_warps) {
  const EpBufferLayout& l = a.layout;
  const uint64_t base = a.peers.base;
  const uint32_t lane = d::lane_id();
  auto* send_x = l.at<uint8_t>(base, l.send_x_offset);
  auto* send_scales = l.at<float>(base, l.send_scales_offset);
  const auto kind = static_cast<EpInputKind>(a.input_kind);
  if (kind == EpInputKind::kInPlace) return;
  const uint32_t spr = l.scales_per_row;
  for (uint64_t t = first_warp; t < static_cast<uint64_t>(a.num_tokens); t += num_warps) {
    if (kind == EpInputKind::kQuantizeBF16) {
      // A half-warp per 128-element block, 8 elements per lane, 8 blocks per step.
      const auto* src = static_cast<const uint4*>(a.x) + t * (l.hidden / 8);
      auto* dst = reinterpret_cast<uint2*>(send_x + t * l.row_bytes);
      const uint32_t half = lane / 16, part = lane % 16;
      for (uint32_t g0 = 0; g0 < spr; g0 += 8) {
        uint4 v[4];
#pragma unroll
        for (int u = 0; u < 4; ++u) {
          const uint32_t g = g0 + 2 * u + half;
          v[u] = g < spr ? __ldg(src + g * 16 + part) : make_uint4(0, 0, 0, 0);
        }
#pragma unroll
        for (int u = 0; u < 4; ++u) {
          const uint32_t g = g0 + 2 * u + half;
          const auto* h = reinterpret_cast<const __nv_bfloat16*>(&v[u]);
          float f[8];
          float amax = 0.f;
#pragma unroll
          for (int i = 0; i < 8; ++i) {
            f[i] = __bfloat162float(h[i]);
            amax = fmaxf(amax, fabsf(f[i]));
          }
#pragma unroll
          for (int o = 8; o >= 1; o /= 2) amax = fmaxf(amax, __shfl_xor_sync(0xFFFFFFFFu, amax, o));
          const float scale = device::fp8_block_scale(amax);
          uint32_t lo = 0, hi = 0;
#pragma unroll
          for (int i = 0; i < 4; ++i) {
            lo |= static_cast<uint32_t>(device::fp8_e4m3_from_float(f[i] / scale)) << (8 * i);
            hi |= static_cast<uint32_t>(device::fp8_e4m3_from_float(f[i + 4] / scale)) << (8 * i);
          }
          if (g < spr) {
            dst[g * 16 + part] = make_uint2(lo, hi);
            if (part == 0) send_scales[t * spr + g] = scale;
          }
        }
      }
      continue;
    }
    const auto* src = static_cast<const uint4*>(a.x) + t * (l.row_bytes / 16);
    auto* dst = reinterpret_cast<uint4*>(send_x + t * l.row_bytes);
    const uint32_t n16 = static_cast<uint32_t>(l.row_bytes / 16);
    for (uint32_t i = lane; i < n16; i += 32 * 4) {
      uint4 v[4];
#pragma unroll
      for (int u = 0; u < 4; ++u) {
        if (i + 32 * u < n16) v[u] = __ldg(src + i + 32 * u);
      }
#pragma unroll
      for (int u = 0; u < 4; ++u) {
        if (i + 32 * u < n16) dst[i + 32 * u] = v[u];
      }
    }
    if (kind == EpInputKind::kCopyFP8) {
      for (uint32_t s = lane; s < spr; s += 32) send_scales[t * spr + s] = __ldg(a.x_scales + t * spr + s);
    }
  }
}

// NOTE [pull layout]: after the barrier every block derives the same receive layout from the
// sources' counts: base[src][el] = first row of source src's block in local expert el's
// segment = segment_offset[el] + sum of the counts of the sources before src. Global warps then
// take the routed tokens of all sources (flattened in source order) round-robin.
struct PullLayout {
  int* base;     // [num_ranks * experts_per_rank]
  int* seg;      // [experts_per_rank + 1], padded offsets
  int* count;    // [experts_per_rank]
  int* entries;  // [num_ranks + 1], prefix of the tokens each source sends here
};

__device__ PullLayout pull_layout_smem(const EpBufferLayout& l, int* smem) {
  PullLayout p;
  const uint32_t N = l.num_ranks, epr = l.experts_per_rank;
  p.base = smem;
  p.seg = p.base + N * epr;
  p.count = p.seg + epr + 1;
  p.entries = p.count + epr;
  return p;
}

// Returns false when the receive rows do not fit (reported by block 0).
__device__ bool derive_pull_layout(const EpDispatchArgs& a, const PullLayout& p, const WaitContext& ctx) {
  const EpBufferLayout& l = a.layout;
  const uint32_t N = l.num_ranks, epr = l.experts_per_rank;
  const int me = a.peers.rank;
  for (uint32_t i = threadIdx.x; i < N * epr; i += blockDim.x) {
    const uint32_t src = i / epr, el = i % epr;
    p.base[i] = d::load_cg(d::region<int32_t>(a.peers, src, l.expert_counts_offset) + me * epr + el);
  }
  for (uint32_t src = threadIdx.x; src < N; src += blockDim.x) {
    p.entries[src + 1] = d::load_cg(d::region<int32_t>(a.peers, src, l.rank_counts_offset) + me);
    if (blockIdx.x == 0 && static_cast<int>(src) != me &&
        d::load_cg(&d::control(a.peers, l, src)->routing_error) != 0) {
      device::record_failure(ctx, device::StatusCode::kInvalidInput,
                             WaitSite{"peer_routing", 0, me, static_cast<int32_t>(src)}, 0, 1);
    }
  }
  __syncthreads();
  for (uint32_t el = threadIdx.x; el < epr; el += blockDim.x) {
    int run = 0;
    for (uint32_t src = 0; src < N; ++src) {
      const int c = p.base[src * epr + el];
      p.base[src * epr + el] = run;
      run += c;
    }
    p.count[el] = run;
  }
  __syncthreads();
  if (threadIdx.x < 32) {
    // Warp scans: padded segment offsets and source entry offsets.
    const uint32_t lane = d::lane_id();
    int run = 0;
    for (uint32_t c = 0; c < epr; c += 32) {
      const uint32_t el = c + lane;
      int v = el < epr ? static_cast<int>(device::ep_align_up(p.count[el], l.alignment)) : 0;
      for (int o = 1; o < 32; o *= 2) {
        const int u = __shfl_up_sync(0xFFFFFFFFu, v, o);
        if (lane >= static_cast<uint32_t>(o)) v += u;
      }
      if (el < epr) p.seg[el + 1] = run + v;
      run += __shfl_sync(0xFFFFFFFFu, v, 31);
    }
    if (lane == 0) p.seg[0] = 0;
    run = 0;
    for (uint32_t c = 0; c < N; c += 32) {
      const uint32_t src = c + lane;
      int v = src < N ? p.entries[src + 1] : 0;
      for (int o = 1; o < 32; o *= 2) {
        const int u = __shfl_up_sync(0xFFFFFFFFu, v, o);
        if (lane >= static_cast<uint32_t>(o)) v += u;
      }
      __syncwarp();
      if (src < N) p.entries[src + 1] = run + v;
      run += __shfl_sync(0xFFFFFFFFu, v, 31);
    }
    if (lane == 0) p.entries[0] = 0;
  }
  __syncthreads();
  for (uint32_t i = threadIdx.x; i < N * epr; i += blockDim.x) p.base[i] += p.seg[i % epr];
  const uint64_t needed = static_cast<uint64_t>(p.seg[epr]);
  if (blockIdx.x == 0) {
    const uint64_t base = a.peers.base;
    for (uint32_t el = threadIdx.x; el <= epr; el += blockDim.x) {
      l.at<int32_t>(base, l.segment_offset_offset)[el] = p.seg[el];
      if (el < epr) l.at<int32_t>(base, l.segment_count_offset)[el] = p.count[el];
    }
    if (needed > l.recv_rows && threadIdx.x == 0) {
      device::record_failure(ctx, device::StatusCode::kInvalidInput,
                             WaitSite{"recv_capacity", 0, me, -1}, l.recv_rows, needed);
    }
  }
  __syncthreads();
  return needed <= l.recv_rows;
}

__device__ void pull_tokens(const EpDispatchArgs& a, const PullLayout& p) {
  const EpBufferLayout& l = a.layout;
  const uint32_t N = l.num_ranks, epr = l.experts_per_rank, K = l.top_k;
  const int me = a.peers.rank;
  const uint32_t lane = d::lane_id();
  const uint64_t base = a.peers.base;
  auto* recv_x = l.at<uint8_t>(base, l.recv_x_offset);
  auto* recv_scales = l.at<float>(base, l.recv_scales_offset);
  auto* recv_weights = l.at<float>(base, l.recv_weights_offset);
  auto* recv_source = l.at<int32_t>(base, l.recv_source_offset);
  const uint32_t n16 = static_cast<uint32_t>(l.row_bytes / 16);
  const uint32_t spr = l.scales_per_row;
  const int total = p.entries[N];
  const int warps = static_cast<int>(gridDim.x * kEpWarps);
  for (int j = static_cast<int>(blockIdx.x * kEpWarps + d::warp_id()); j < total; j += warps) {
    int lo = 0, hi = static_cast<int>(N);  // the source: entries[src] <= j < entries[src + 1]
    while (hi - lo > 1) {
      const int mid = (lo + hi) / 2;
      if (p.entries[mid] <= j) lo = mid;
      else hi = mid;
    }
    const int src = lo;
    const int t = d::load_cg(d::region<int32_t>(a.peers, src, l.rank_lists_offset) +
                             static_cast<uint64_t>(me) * l.max_tokens + (j - p.entries[src]));
    const uint64_t pair = static_cast<uint64_t>(t) * K + lane;
    int row = -1;
    if (lane < K) {
      const int e = d::load_cg(d::region<int32_t>(a.peers, src, l.send_topk_offset) + pair);
      if (e >= 0 && l.rank_of(static_cast<uint32_t>(e)) == static_cast<uint32_t>(me)) {
        const uint32_t el = static_cast<uint32_t>(e) - me * epr;
        row = p.base[src * epr + el] + d::load_cg(d::region<int32_t>(a.peers, src, l.send_pos_offset) + pair);
        recv_weights[row] = d::load_cg(d::region<float>(a.peers, src, l.send_weights_offset) + pair);
        recv_source[row] = static_cast<int32_t>((static_cast<uint64_t>(src) * l.max_tokens + t) * K + lane);
        d::region<int32_t>(a.peers, src, l.combine_row_offset)[pair] = row;
      }
    }
    const uint32_t targets = __ballot_sync(0xFFFFFFFFu, row >= 0);
    const auto* src_row = reinterpret_cast<const uint4*>(
        d::region<uint8_t>(a.peers, src, l.send_x_offset) + static_cast<uint64_t>(t) * l.row_bytes);
    constexpr int kUnroll = 8;
    for (uint32_t c = lane; c < n16; c += 32 * kUnroll) {
      uint4 v[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        if (c + 32 * u < n16) v[u] = d::load_cg(src_row + c + 32 * u);
      }
      for (uint32_t m = targets; m != 0; m &= m - 1) {
        const int r = __shfl_sync(0xFFFFFFFFu, row, __ffs(m) - 1);
        auto* dst = reinterpret_cast<uint4*>(recv_x + static_cast<uint64_t>(r) * l.row_bytes);
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
          if (c + 32 * u < n16) dst[c + 32 * u] = v[u];
        }
      }
    }
    if (spr != 0) {
      const float* src_scales = d::region<float>(a.peers, src, l.send_scales_offset) +
                                static_cast<uint64_t>(t) * spr;
      for (uint32_t s0 = 0; s0 < spr; s0 += 32) {  // every lane takes part in the shuffles
        const uint32_t s = s0 + lane;
        const float v = s < spr ? d::load_cg(src_scales + s) : 0.f;
        for (uint32_t m = targets; m != 0; m &= m - 1) {
          const int r = __shfl_sync(0xFFFFFFFFu, row, __ffs(m) - 1);
          if (s < spr) recv_scales[static_cast<uint64_t>(r) * spr + s] = v;
        }
      }
    }
  }
}

__global__ void __launch_bounds__(kEpThreads, 1) sm90_ep_dispatch_kernel(EpDispatchArgs a) {
  extern __shared__ __align__(16) int smem[];
  const WaitContext ctx{a.status, a.timeout_ns, "sm90_ep_dispatch"};
  const EpBufferLayout& l = a.layout;
  const int rank = a.peers.rank;
  auto* pad = reinterpret_cast<device::SignalPad*>(a.peers.base + l.pad_offset);
  device::EpControl* ctrl = d::control(a.peers, l, rank);
  // Every block reads last_op before the first grid_sync; block 0 updates it after that sync.
  const uint32_t last_op = device::ptx::ld_volatile(&ctrl->last_op);
  if (last_op == device::kEpOpDispatch) {
    // Dispatch after dispatch: peers may still read our send region of the previous one.
    if (blockIdx.x == 0 && !device::cross_rank_barrier(a.peers, pad, ctx, 10)) return;
    if (!device::grid_sync(a.grid, ctx, 10, rank)) return;
  }
  if (blockIdx.x == 0) {
    if (threadIdx.x == 0) ctrl->routing_error = 0;
    __syncthreads();
    routing_scan(a, smem, ctx);
  }
  if (gridDim.x == 1) {
    stage_rows(a, d::warp_id(), kEpWarps);
  } else if (blockIdx.x > 0) {
    stage_rows(a, (blockIdx.x - 1) * kEpWarps + d::warp_id(), (gridDim.x - 1) * kEpWarps);
  }
  if (!device::grid_sync(a.grid, ctx, 11, rank)) return;
  if (blockIdx.x == 0) {
    if (threadIdx.x == 0) ctrl->last_op = device::kEpOpDispatch;
    if (!device::cross_rank_barrier(a.peers, pad, ctx, 11)) return;
  }
  if (!device::grid_sync(a.grid, ctx, 12, rank)) return;
  const PullLayout p = pull_layout_smem(l, smem);
  if (!derive_pull_layout(a, p, ctx)) return;
  pull_tokens(a, p);
}

size_t dispatch_smem(const EpBufferLayout& l) {
  const size_t routing = size_t{kEpWarps} * (l.num_experts + l.num_ranks) * 4;
  const size_t pull = (size_t{l.num_ranks} * l.experts_per_rank + 2 * l.experts_per_rank + l.num_ranks + 2) * 4;
  return std::max(routing, pull);
}

}  // namespace

runtime::GridLaunch ep_dispatch_config(int device, runtime::SmBudget budget,
                                       const device::EpBufferLayout& layout) {
  const size_t smem = dispatch_smem(layout);
  SYMMOE_CHECK(smem <= kEpDispatchMaxSmem, "dispatch needs ", smem, " bytes of shared memory for ",
               layout.num_experts, " experts and ", layout.num_ranks, " ranks, more than the ",
               kEpDispatchMaxSmem, " set when the kernels were loaded");
  return runtime::one_block_per_sm(sm90_ep_dispatch_kernel, device, budget, kEpThreads, smem,
                                   "sm90_ep_dispatch_kernel");
}

void launch_ep_dispatch(const EpDispatchArgs& args, const runtime::GridLaunch& config,
                        cudaStream_t stream) {
  runtime::launch_kernel(sm90_ep_dispatch_kernel, args, config.grid, config.block, config.smem, true,
                         stream, "sm90_ep_dispatch_kernel");
}

}  // namespace symmoe::ep

namespace symmoe::runtime {

void append_ep_dispatch_kernels(std::vector<KernelEntry>& out) {
  out.push_back({"sm90_ep_dispatch_kernel", reinterpret_cast<const void*>(&ep::sm90_ep_dispatch_kernel),
                 static_cast<int>(ep::kEpDispatchMaxSmem), 100});
}

}  // namespace symmoe::runtime
