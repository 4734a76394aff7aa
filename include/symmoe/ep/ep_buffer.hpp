// Expert-parallel dispatch and combine over one symmetric buffer per rank
// (device/ep_buffer_layout.cuh holds the layout and NOTE [EP buffer protocol]).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>

#include "symmoe/comm/group.hpp"
#include "symmoe/device/ep_buffer_layout.cuh"
#include "symmoe/runtime/barrier_kernels.hpp"
#include "symmoe/runtime/device_runtime.hpp"
#include "symmoe/runtime/sm_budget.hpp"
#include "symmoe/symm/symmetric_buffer.hpp"

namespace symmoe::ep {

enum class TokenDtype { kBF16, kFP8E4M3 };
enum class IdDtype { kInt32, kInt64 };

// Fixed at creation (ranks must agree; checked). The buffer is sized for the worst case, so
// dispatch and combine never wait for the host and can be captured in a CUDA graph.
struct EpConfig {
  int num_experts = 0;           // global; must divide by the number of ranks
  int top_k = 0;
  int hidden = 0;                // multiple of 8 (bf16) or of 128 (fp8)
  int max_tokens_per_rank = 0;   // more tokens in one call is an error before launch
  int alignment = 128;           // rows of each expert segment are padded to a multiple
  device::EpPayload payload = device::EpPayload::kBF16;  // what receivers get
  // Rows of the expert-major receive layout; 0 = the worst case (every token of every rank
  // routes min(top_k, experts_per_rank) pairs to one rank). A smaller capacity saves memory;
  // a dispatch that needs more rows writes none and fails with a named error.
  int64_t recv_capacity_rows = 0;
  symm::HandleType handle_type = symm::HandleType::kAuto;
};

// One source rank's dispatch input, all device pointers (row-major, contiguous).
struct DispatchInput {
  const void* x = nullptr;              // [num_tokens, hidden], bf16 or fp8 e4m3
  TokenDtype x_dtype = TokenDtype::kBF16;
  const float* x_scales = nullptr;      // fp8 input: [num_tokens, hidden / 128]
  const void* topk_idx = nullptr;       // [num_tokens, top_k]; -1 masks a slot
  IdDtype idx_dtype = IdDtype::kInt64;
  const float* topk_weights = nullptr;  // [num_tokens, top_k]
  int num_tokens = 0;
};

// What combine needs from the dispatch it inverts.
struct DispatchHandle {
  int num_tokens = 0;
  uint64_t sequence = 0;  // dispatches enqueued on this buffer so far
};

class EpBuffer {
 public:
  // Collective over `group` (one rank per member; ranks may share a GPU); returns on every
  // rank together. NOTE [allocations between EP calls]: dispatch and combine kernels wait for
  // their peers on the device, and cudaMalloc / cudaFree / VMM mapping calls may wait for the
  // device's running kernels. A rank that allocates while a peer's EP kernel already waits for
  // it can stall until the wait bound (SYMMOE_WAIT_TIMEOUT_S) fails the call: allocate before
  // the first dispatch, or with every rank idle (e.g. behind a group barrier).
  static std::unique_ptr<EpBuffer> create(comm::Group& group, runtime::DeviceRuntime& rt,
                                          const EpConfig& config);
  ~EpBuffer();
  EpBuffer(const EpBuffer&) = delete;
  EpBuffer& operator=(const EpBuffer&) = delete;

  // Enqueues a dispatch on `stream`: afterwards this rank's receive layout holds the rows
  // every rank routed to its experts. Input dtypes, shapes and pointers are checked before
  // launch; top-k ids are checked on the device (status block, read by rt.check(stream)):
  // an invalid id is reported by its rank and by every rank it would have sent to.
  // BF16 input into an FP8 buffer is quantized on the fly (1x128 blocks, scale = amax / 448).
  DispatchHandle dispatch(const DispatchInput& in, cudaStream_t stream,
                          runtime::SmBudget budget = runtime::current_sm_budget(),
                          double timeout_s = 0);

  // Enqueues a combine: out[t] = bf16(sum over k ascending of w[t,k] * y(row of (t, k))) in fp32
  // over the expert outputs every rank wrote into expert_output() (bf16, one row per receive
  // row). `weights` overrides the dispatch's top-k weights ([num_tokens, top_k] f32).
  void combine(const DispatchHandle& handle, void* out, cudaStream_t stream,
               const float* weights = nullptr,
               runtime::SmBudget budget = runtime::current_sm_budget(), double timeout_s = 0);

  // Receive layout (device pointers into this rank's buffer; see NOTE [expert-major layout]
  // in reference/ep_reference.hpp). Valid after the dispatch completed on the stream.
  void* recv_x() const;                 // [recv_capacity_rows, hidden] bf16 or fp8
  float* recv_scales() const;           // [recv_capacity_rows, hidden / 128] (fp8 only)
  float* recv_weights() const;          // [recv_capacity_rows]
  int32_t* recv_source() const;         // [recv_capacity_rows]: (src_rank * max_tokens + token) * top_k + k
  int32_t* segment_offsets() const;     // [experts_per_rank + 1]
  int32_t* segment_counts() const;      // [experts_per_rank]
  void* expert_output() const;          // [recv_capacity_rows, hidden] bf16: combine's input
  // The send region: rows written here by the caller (x = send_x(), and for fp8 x_scales =
  // send_scales()) are dispatched without the staging copy. Write them only after the
  // previous combine (or dispatch) on this buffer was enqueued.
  void* send_x() const;                 // [max_tokens_per_rank, hidden] in the payload dtype
  float* send_scales() const;           // [max_tokens_per_rank, hidden / 128] (fp8 only)

  const EpConfig& config() const { return config_; }
  const device::EpBufferLayout& layout() const { return layout_; }
  int rank() const { return buffer_->rank(); }
  int num_ranks() const { return buffer_->num_ranks(); }
  size_t bytes_per_rank() const { return buffer_->mapped_bytes_per_rank(); }
  const symm::SymmetricBuffer& buffer() const { return *buffer_; }
  runtime::GridLaunch last_launch() const { return last_launch_; }

 private:
  EpBuffer() = default;

  EpConfig config_;
  device::EpBufferLayout layout_;
  std::unique_ptr<symm::SymmetricBuffer> buffer_;
  runtime::DeviceRuntime* rt_ = nullptr;
  uint64_t dispatches_ = 0;
  runtime::GridLaunch last_launch_;
};

// The layout a configuration gives on `num_ranks` ranks (validates it), for budgeting.
device::EpBufferLayout ep_buffer_layout(const EpConfig& config, int num_ranks);

}  // namespace symmoe::ep
