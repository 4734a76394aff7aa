// The same-run baseline of `symmoe bench dispatch|combine`: what a straightforward GPU EP layer
// does (the torch recipe: bucket the (token, k) pairs by expert, gather the rows, learn the
// split sizes on the host, exchange chunks with one copy per peer, copy back and gather-sum
// each token's rows through the inverse permutation), with
// the same rank threads and symmetric memory as symmoe itself. Host-synchronous by design:
// the split sizes must reach the host, as for NCCL's all-to-all.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "symmoe/comm/group.hpp"
#include "symmoe/ep/routing.hpp"
#include "symmoe/symm/symmetric_buffer.hpp"

namespace symmoe::cli {

// How the chunks travel: one cudaMemcpyAsync per peer through symmetric memory (any ranks,
// also several per GPU), or NCCL send/recv in one group (one GPU per rank).
enum class BaselineTransport { kPeerCopy, kNccl };

class BaselineEp {
 public:
  // Collective. `recv_rows`: rows this rank's receive buffer holds (the largest any rank
  // receives: one row per (token, k) pair, no deduplication).
  BaselineEp(comm::Group& group, const ep::EpShape& shape, int max_tokens, uint64_t recv_rows,
             BaselineTransport transport = BaselineTransport::kPeerCopy);
  ~BaselineEp();
  BaselineEp(const BaselineEp&) = delete;
  BaselineEp& operator=(const BaselineEp&) = delete;

  // bf16 rows, int64 ids (-1 masked), fp32 weights; returns when every rank's rows arrived.
  void dispatch(const void* x, const int64_t* topk_idx, const float* topk_weights, int num_tokens,
                cudaStream_t stream);
  // The received rows (in place) are the expert outputs; out is [num_tokens, hidden] bf16.
  void combine(void* out, cudaStream_t stream);

 private:
  // Rows of my chunk for `dst` (first row in staging, count) and where the chunk from `src`
  // lands in my receive buffer (first row, count).
  std::pair<uint64_t, uint64_t> my_chunk(const std::vector<int32_t>& offsets, int dst) const;
  std::pair<uint64_t, uint64_t> chunk_from(int src, int me_or_dst) const;
  void exchange_nccl(bool forward, const std::vector<int32_t>& offsets, cudaStream_t stream);

  comm::Group& group_;
  ep::EpShape shape_;
  BaselineTransport transport_;
  void* nccl_comm_ = nullptr;
  void* recv_plain_ = nullptr;  // NCCL transport: receive rows (no peer mapping needed)
  int num_tokens_ = 0;
  const float* weights_ = nullptr;
  std::unique_ptr<symm::SymmetricBuffer> recv_;
  void* staging_ = nullptr;   // [max_tokens * top_k, hidden] bf16, pairs sorted by expert
  int32_t* slot_of_pair_ = nullptr;  // [max_tokens * top_k]: staging row of each pair, -1 masked
  int32_t* counts_ = nullptr;  // [num_experts]
  int32_t* cursor_ = nullptr;  // [num_experts]
  int32_t* host_counts_ = nullptr;  // pinned
  std::vector<int32_t> all_counts_;  // [ranks][experts]
};

}  // namespace symmoe::cli
