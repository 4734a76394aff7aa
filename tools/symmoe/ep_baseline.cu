#include "ep_baseline.hpp"

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "symmoe/core/error.hpp"
#include "symmoe/core/nccl_loader.hpp"

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

BaselineEp::BaselineEp(comm::Group& group, const ep::EpShape& shape, int max_tokens, uint64_t recv_rows,
                       BaselineTransport transport)
    : group_(group), shape_(shape), transport_(transport) {
  const uint64_t row = static_cast<uint64_t>(shape.hidden) * 2;
  if (transport == BaselineTransport::kNccl) {
    std::string why;
    const NcclApi* api = nccl(&why);
    SYMMOE_CHECK(api != nullptr, "the NCCL baseline needs NCCL: ", why);
    SYMMOE_CHECK(api->has_point_to_point(), "the NCCL baseline needs ncclSend/ncclRecv (NCCL >= 2.7); ",
                 api->path, " lacks them");
    NcclUniqueId id{};
    if (group.rank() == 0) SYMMOE_NCCL_CHECK(api->ncclGetUniqueId(&id));
    id = group.all_gather_value(id)[0];
    SYMMOE_NCCL_CHECK(api->ncclCommInitRank(&nccl_comm_, group.size(), id, group.rank()), "rank ",
                      group.rank(), " of ", group.size());
    SYMMOE_CUDA_CHECK(cudaMalloc(&recv_plain_, std::max<uint64_t>(recv_rows, 1) * row));
  } else {
    symm::SymmetricBufferOptions o;
    o.bytes_per_rank = std::max<uint64_t>(recv_rows, 1) * row;
    o.layout_name = "baseline_ep";
    o.layout_params = {recv_rows, static_cast<uint64_t>(shape.hidden)};
    recv_ = symm::SymmetricBuffer::create(group, o);
  }
  const uint64_t pairs = static_cast<uint64_t>(max_tokens) * shape.top_k;
  SYMMOE_CUDA_CHECK(cudaMalloc(&staging_, std::max<uint64_t>(pairs, 1) * row));
  SYMMOE_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&slot_of_pair_), std::max<uint64_t>(pairs, 1) * 4));
  SYMMOE_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&counts_), shape.num_experts * 4));
  SYMMOE_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&cursor_), shape.num_experts * 4));
  SYMMOE_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&host_counts_), shape.num_experts * 4));
  all_counts_.resize(static_cast<size_t>(shape.num_ranks) * shape.num_experts);
}

BaselineEp::~BaselineEp() {
  if (nccl_comm_ != nullptr) nccl()->ncclCommDestroy(nccl_comm_);
  cudaFree(recv_plain_);
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
  if (transport_ == BaselineTransport::kNccl) {
    exchange_nccl(true, offsets, stream);
    SYMMOE_CUDA_CHECK(cudaStreamSynchronize(stream));
    return;
  }
  // My chunk for rank dst lands in dst's buffer after the chunks of lower ranks.
  for (int dst = 0; dst < N; ++dst) {
    const auto [first, rows] = my_chunk(offsets, dst);
    if (rows == 0) continue;
    SYMMOE_CUDA_CHECK(cudaMemcpyAsync(static_cast<char*>(recv_->peer(dst)) + chunk_from(group_.rank(), dst).first * row,
                                      static_cast<char*>(staging_) + first * row, rows * row,
                                      cudaMemcpyDeviceToDevice, stream));
  }
  SYMMOE_CUDA_CHECK(cudaStreamSynchronize(stream));
  group_.barrier();  // every rank's chunks have landed
}

std::pair<uint64_t, uint64_t> BaselineEp::my_chunk(const std::vector<int32_t>& offsets, int dst) const {
  const int epr = shape_.experts_per_rank();
  const uint64_t first = offsets[dst * epr];
  return {first, offsets[(dst + 1) * epr] - first};
}

// Rows rank `src` sends to rank `dst`, and where they start in dst's receive buffer.
std::pair<uint64_t, uint64_t> BaselineEp::chunk_from(int src, int dst) const {
  const int E = shape_.num_experts, epr = shape_.experts_per_rank();
  uint64_t at = 0, rows = 0;
  for (int s = 0; s <= src; ++s) {
    uint64_t n = 0;
    for (int e = dst * epr; e < (dst + 1) * epr; ++e) n += all_counts_[static_cast<size_t>(s) * E + e];
    if (s < src) at += n;
    else rows = n;
  }
  return {at, rows};
}

// Forward: my chunks to every rank, their chunks into my receive buffer. Backward (combine):
// the rows I received go back to their sources, my rows come back into staging.
void BaselineEp::exchange_nccl(bool forward, const std::vector<int32_t>& offsets, cudaStream_t stream) {
  const NcclApi* api = nccl();
  const uint64_t row = static_cast<uint64_t>(shape_.hidden) * 2;
  const int me = group_.rank();
  auto* staging = static_cast<char*>(staging_);
  auto* recv = static_cast<char*>(recv_plain_);
  SYMMOE_NCCL_CHECK(api->ncclGroupStart());
  for (int peer = 0; peer < shape_.num_ranks; ++peer) {
    const auto [mine_first, mine_rows] = my_chunk(offsets, peer);       // my rows for peer's experts
    const auto [theirs_at, theirs_rows] = chunk_from(peer, me);          // peer's rows for my experts
    char* mine = staging + mine_first * row;
    char* theirs = recv + theirs_at * row;
    if (forward) {
      SYMMOE_NCCL_CHECK(api->ncclSend(mine, mine_rows * row, kNcclUint8, peer, nccl_comm_, stream));
      SYMMOE_NCCL_CHECK(api->ncclRecv(theirs, theirs_rows * row, kNcclUint8, peer, nccl_comm_, stream));
    } else {
      SYMMOE_NCCL_CHECK(api->ncclSend(theirs, theirs_rows * row, kNcclUint8, peer, nccl_comm_, stream));
      SYMMOE_NCCL_CHECK(api->ncclRecv(mine, mine_rows * row, kNcclUint8, peer, nccl_comm_, stream));
    }
  }
  SYMMOE_NCCL_CHECK(api->ncclGroupEnd());
}

void BaselineEp::combine(void* out, cudaStream_t stream) {
  const int E = shape_.num_experts, N = shape_.num_ranks, epr = shape_.experts_per_rank();
  const uint64_t row = static_cast<uint64_t>(shape_.hidden) * 2;
  const int me = group_.rank();
  std::vector<int32_t> offsets(E + 1, 0);
  for (int e = 0; e < E; ++e) offsets[e + 1] = offsets[e] + all_counts_[static_cast<size_t>(me) * E + e];
  // My rows come back from every expert rank (its outputs are in place of the received rows).
  if (transport_ == BaselineTransport::kNccl) {
    exchange_nccl(false, offsets, stream);
  } else {
    for (int dst = 0; dst < N; ++dst) {
      const auto [first, rows] = my_chunk(offsets, dst);
      if (rows == 0) continue;
      SYMMOE_CUDA_CHECK(cudaMemcpyAsync(static_cast<char*>(staging_) + first * row,
                                        static_cast<char*>(recv_->peer(dst)) + chunk_from(me, dst).first * row,
                                        rows * row, cudaMemcpyDeviceToDevice, stream));
    }
  }
  if (num_tokens_ > 0) {
    gather_sum<<<264, 256, 0, stream>>>(static_cast<const uint4*>(staging_), slot_of_pair_, weights_, num_tokens_,
                                        shape_.top_k, shape_.hidden / 8, static_cast<uint4*>(out));
  }
  SYMMOE_CUDA_CHECK(cudaStreamSynchronize(stream));
  group_.barrier();  // nobody overwrites received rows still being pulled
}

}  // namespace symmoe::cli
