#include "ep_baseline.hpp"

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "symmoe/core/error.hpp"

namespace symmoe::cli {
namespace {

__global__ void count_experts(const int64_t* idx, int pairs, int num_experts, int32_t* counts) {
  for (int p = blockIdx.x * blockDim.x + threadIdx.x; p < pairs; p += gridDim.x * blockDim.x) {
    const int64_t e = idx[p];
    if (e >= 0 && e < num_experts) atomicAdd(&counts[e], 1);
  }
}

// One warp per pair: claim a slot in its expert's bucket, copy the token's row there.
__global__ void gather_pairs(const uint4* x, const int64_t* idx, int pairs, int top_k, int num_experts,
                             int n16, int32_t* cursor, int32_t* slot_of_pair, uint4* staging) {
  const int lane = threadIdx.x % 32;
  const int warps = gridDim.x * blockDim.x / 32;
  for (int p = (blockIdx.x * blockDim.x + threadIdx.x) / 32; p < pairs; p += warps) {
    const int64_t e = idx[p];
    if (e < 0 || e >= num_experts) {
      if (lane == 0) slot_of_pair[p] = -1;
      continue;
    }
    int slot = 0;
    if (lane == 0) {
      slot = atomicAdd(&cursor[e], 1);
      slot_of_pair[p] = slot;
    }
    slot = __shfl_sync(0xFFFFFFFFu, slot, 0);
    const uint4* src = x + static_cast<uint64_t>(p / top_k) * n16;
    uint4* dst = staging + static_cast<uint64_t>(slot) * n16;
    for (int i = lane; i < n16; i += 32) dst[i] = src[i];
  }
}

// One warp per token: gather its top-k rows back from the staging buffer (the inverse of the
// dispatch permutation), weight and sum them in fp32, one bf16 rounding.
__global__ void gather_sum(const uint4* staging, const int32_t* slot_of_pair, const float* weights, int tokens,
                           int top_k, int n16, uint4* out) {
  const int lane = threadIdx.x % 32;
  const int warps = gridDim.x * blockDim.x / 32;
  for (int t = (blockIdx.x * blockDim.x + threadIdx.x) / 32; t < tokens; t += warps) {
    for (int i = lane; i < n16; i += 32) {
      float acc[8] = {0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f};
      for (int k = 0; k < top_k; ++k) {
        const int s = slot_of_pair[t * top_k + k];
        if (s < 0) continue;
        const float w = weights[t * top_k + k];
        const uint4 v = staging[static_cast<uint64_t>(s) * n16 + i];
        const auto* h = reinterpret_cast<const __nv_bfloat16*>(&v);
        for (int j = 0; j < 8; ++j) acc[j] += w * __bfloat162float(h[j]);
      }
      uint4 packed;
      auto* o = reinterpret_cast<__nv_bfloat16*>(&packed);
      for (int j = 0; j < 8; ++j) o[j] = __float2bfloat16_rn(acc[j]);
      out[static_cast<uint64_t>(t) * n16 + i] = packed;
    }
  }
}

}  // namespace

BaselineEp::BaselineEp(comm::Group& group, const ep::EpShape& shape, int max_tokens, uint64_t recv_rows)
    : group_(group), shape_(shape) {
  const uint64_t row = static_cast<uint64_t>(shape.hidden) * 2;
  symm::SymmetricBufferOptions o;
  o.bytes_per_rank = std::max<uint64_t>(recv_rows, 1) * row;
  o.layout_name = "baseline_ep";
  o.layout_params = {recv_rows, static_cast<uint64_t>(shape.hidden)};
  recv_ = symm::SymmetricBuffer::create(group, o);
  const uint64_t pairs = static_cast<uint64_t>(max_tokens) * shape.top_k;
  SYMMOE_CUDA_CHECK(cudaMalloc(&staging_, std::max<uint64_t>(pairs, 1) * row));
  SYMMOE_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&slot_of_pair_), std::max<uint64_t>(pairs, 1) * 4));
  SYMMOE_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&counts_), shape.num_experts * 4));
  SYMMOE_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&cursor_), shape.num_experts * 4));
  SYMMOE_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&host_counts_), shape.num_experts * 4));
  all_counts_.resize(static_cast<size_t>(shape.num_ranks) * shape.num_experts);
}

BaselineEp::~BaselineEp() {
  cudaFree(staging_);
  cudaFree(slot_of_pair_);
  cudaFree(counts_);
  cudaFree(cursor_);
  cudaFreeHost(host_counts_);
}

void BaselineEp::dispatch(const void* x, const int64_t* topk_idx, const float* topk_weights, int num_tokens,
                          cudaStream_t stream) {
  const int E = shape_.num_experts, N = shape_.num_ranks, epr = shape_.experts_per_rank();
  const int pairs = num_tokens * shape_.top_k;
  const uint64_t row = static_cast<uint64_t>(shape_.hidden) * 2;
  num_tokens_ = num_tokens;
  weights_ = topk_weights;
  SYMMOE_CUDA_CHECK(cudaMemsetAsync(counts_, 0, E * 4, stream));
  if (pairs > 0) count_experts<<<128, 256, 0, stream>>>(topk_idx, pairs, E, counts_);
  SYMMOE_CUDA_CHECK(cudaMemcpyAsync(host_counts_, counts_, E * 4, cudaMemcpyDeviceToHost, stream));
  SYMMOE_CUDA_CHECK(cudaStreamSynchronize(stream));  // the split sizes reach the host
  std::vector<int32_t> offsets(E + 1, 0);
  for (int e = 0; e < E; ++e) offsets[e + 1] = offsets[e] + host_counts_[e];
  SYMMOE_CUDA_CHECK(cudaMemcpyAsync(cursor_, offsets.data(), E * 4, cudaMemcpyHostToDevice, stream));
  if (pairs > 0) {
    gather_pairs<<<264, 256, 0, stream>>>(static_cast<const uint4*>(x), topk_idx, pairs, shape_.top_k, E,
                                          shape_.hidden / 8, cursor_, slot_of_pair_, static_cast<uint4*>(staging_));
  }
  group_.all_gather(host_counts_, all_counts_.data(), E * 4);
  // My chunk for rank dst = my pairs of dst's experts; it lands after the chunks of lower ranks.
  for (int dst = 0; dst < N; ++dst) {
    uint64_t at = 0;
    for (int src = 0; src < group_.rank(); ++src) {
      for (int e = dst * epr; e < (dst + 1) * epr; ++e) at += all_counts_[static_cast<size_t>(src) * E + e];
    }
    const uint64_t first = offsets[dst * epr], rows = offsets[(dst + 1) * epr] - first;
    if (rows == 0) continue;
    SYMMOE_CUDA_CHECK(cudaMemcpyAsync(static_cast<char*>(recv_->peer(dst)) + at * row,
                                      static_cast<char*>(staging_) + first * row, rows * row,
                                      cudaMemcpyDeviceToDevice, stream));
  }
  SYMMOE_CUDA_CHECK(cudaStreamSynchronize(stream));
  group_.barrier();  // every rank's chunks have landed
}

void BaselineEp::combine(void* out, cudaStream_t stream) {
  const int E = shape_.num_experts, N = shape_.num_ranks, epr = shape_.experts_per_rank();
  const uint64_t row = static_cast<uint64_t>(shape_.hidden) * 2;
  const int me = group_.rank();
  std::vector<int32_t> offsets(E + 1, 0);
  for (int e = 0; e < E; ++e) offsets[e + 1] = offsets[e] + all_counts_[static_cast<size_t>(me) * E + e];
  // Pull my rows back from every expert rank (its outputs are in place of the received rows).
  for (int dst = 0; dst < N; ++dst) {
    uint64_t at = 0;
    for (int src = 0; src < me; ++src) {
      for (int e = dst * epr; e < (dst + 1) * epr; ++e) at += all_counts_[static_cast<size_t>(src) * E + e];
    }
    const uint64_t first = offsets[dst * epr], rows = offsets[(dst + 1) * epr] - first;
    if (rows == 0) continue;
    SYMMOE_CUDA_CHECK(cudaMemcpyAsync(static_cast<char*>(staging_) + first * row,
                                      static_cast<char*>(recv_->peer(dst)) + at * row, rows * row,
                                      cudaMemcpyDeviceToDevice, stream));
  }
  if (num_tokens_ > 0) {
    gather_sum<<<264, 256, 0, stream>>>(static_cast<const uint4*>(staging_), slot_of_pair_, weights_, num_tokens_,
                                        shape_.top_k, shape_.hidden / 8, static_cast<uint4*>(out));
  }
  SYMMOE_CUDA_CHECK(cudaStreamSynchronize(stream));
  group_.barrier();  // nobody overwrites received rows still being pulled
}

}  // namespace symmoe::cli
