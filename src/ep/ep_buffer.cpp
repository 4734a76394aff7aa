#include "symmoe/ep/ep_buffer.hpp"

#include <cstdint>
#include <limits>

#include "ep_kernels_launch.hpp"
#include "symmoe/core/alignment.hpp"
#include "symmoe/core/error.hpp"
#include "symmoe/core/log.hpp"
#include "symmoe/ep/routing.hpp"
#include "symmoe/symm/peer_validation.hpp"

namespace symmoe::ep {

namespace {

const char* payload_name(device::EpPayload p) {
  return p == device::EpPayload::kFP8 ? "fp8 e4m3" : "bf16";
}

}  // namespace

device::EpBufferLayout ep_buffer_layout(const EpConfig& c, int num_ranks) {
  EpShape shape{num_ranks, c.num_experts, c.top_k, c.hidden};
  shape.validate();
  SYMMOE_CHECK(c.num_experts <= kEpMaxExperts, c.num_experts, " experts: dispatch supports at most ",
               kEpMaxExperts);
  SYMMOE_CHECK(c.top_k <= kEpMaxTopK, "top_k ", c.top_k, ": dispatch supports at most ", kEpMaxTopK);
  if (c.payload == device::EpPayload::kFP8) {
    SYMMOE_CHECK(c.hidden % device::kFp8BlockElems == 0, "hidden ", c.hidden, " must be a multiple of ",
                 device::kFp8BlockElems, " for an fp8 payload (one scale per 1x128 block)");
  } else {
    SYMMOE_CHECK(c.hidden % 8 == 0, "hidden ", c.hidden, " must be a multiple of 8 (16-byte bf16 rows)");
  }
  SYMMOE_CHECK(c.max_tokens_per_rank >= 1, "max_tokens_per_rank ", c.max_tokens_per_rank,
               " must be positive");
  SYMMOE_CHECK(c.alignment >= 1 && c.alignment <= 4096, "segment alignment ", c.alignment,
               " must lie in [1, 4096]");
  SYMMOE_CHECK(c.recv_capacity_rows >= 0, "recv_capacity_rows ", c.recv_capacity_rows, " is negative");
  const uint64_t pairs = static_cast<uint64_t>(num_ranks) * c.max_tokens_per_rank * c.top_k;
  SYMMOE_CHECK(pairs < (uint64_t{1} << 31), num_ranks, " ranks x ", c.max_tokens_per_rank,
               " tokens x top_k ", c.top_k, " exceed the 2^31 pairs that 32-bit row tags address");
  const auto layout = device::make_ep_buffer_layout(
      static_cast<uint32_t>(num_ranks), static_cast<uint32_t>(c.num_experts),
      static_cast<uint32_t>(c.top_k), static_cast<uint32_t>(c.hidden),
      static_cast<uint32_t>(c.max_tokens_per_rank), static_cast<uint32_t>(c.alignment), c.payload,
      static_cast<uint64_t>(c.recv_capacity_rows));
  SYMMOE_CHECK(layout.recv_rows < (uint64_t{1} << 31), "a receive layout of ", layout.recv_rows,
               " rows exceeds the 2^31 rows 32-bit row indices address: set recv_capacity_rows");
  return layout;
}

std::unique_ptr<EpBuffer> EpBuffer::create(comm::Group& group, runtime::DeviceRuntime& rt,
                                           const EpConfig& config) {
  std::unique_ptr<EpBuffer> b(new EpBuffer());
  b->config_ = config;
  b->layout_ = ep_buffer_layout(config, group.size());
  b->rt_ = &rt;
  symm::SymmetricBufferOptions options;
  options.bytes_per_rank = b->layout_.bytes_per_rank;
  options.handle_type = config.handle_type;
  options.layout_name = "ep_buffer";
  options.layout_params = {static_cast<uint64_t>(config.num_experts), static_cast<uint64_t>(config.top_k),
                           static_cast<uint64_t>(config.hidden),
                           static_cast<uint64_t>(config.max_tokens_per_rank),
                           static_cast<uint64_t>(config.alignment), static_cast<uint64_t>(config.payload),
                           b->layout_.recv_rows};
  b->buffer_ = symm::SymmetricBuffer::create(group, options);
  SYMMOE_CHECK(b->buffer_->device() == rt.device(), "the EP buffer lives on device ",
               b->buffer_->device(), " but the device runtime on device ", rt.device());
  // No rank may launch an EP kernel while a peer is still mapping: a mapping change can wait
  // for the kernels running on the device, and a launched kernel spins until that peer joins.
  group.barrier();
  SYMMOE_LOG_INFO("EP buffer on rank ", group.rank(), ": ", b->buffer_->mapped_bytes_per_rank(),
                  " bytes (", b->layout_.recv_rows, " receive rows of ", b->layout_.row_bytes,
                  " bytes, ", payload_name(config.payload), ")");
  return b;
}

EpBuffer::~EpBuffer() = default;

template <class T>
static T* at(const symm::SymmetricBuffer& b, uint64_t offset) {
  return reinterpret_cast<T*>(static_cast<char*>(b.local()) + offset);
}

void* EpBuffer::recv_x() const { return at<void>(*buffer_, layout_.recv_x_offset); }
float* EpBuffer::recv_scales() const { return at<float>(*buffer_, layout_.recv_scales_offset); }
float* EpBuffer::recv_weights() const { return at<float>(*buffer_, layout_.recv_weights_offset); }
int32_t* EpBuffer::recv_source() const { return at<int32_t>(*buffer_, layout_.recv_source_offset); }
int32_t* EpBuffer::segment_offsets() const { return at<int32_t>(*buffer_, layout_.segment_offset_offset); }
int32_t* EpBuffer::segment_counts() const { return at<int32_t>(*buffer_, layout_.segment_count_offset); }
void* EpBuffer::expert_output() const { return at<void>(*buffer_, layout_.expert_out_offset); }
void* EpBuffer::send_x() const { return at<void>(*buffer_, layout_.send_x_offset); }
float* EpBuffer::send_scales() const { return at<float>(*buffer_, layout_.send_scales_offset); }

DispatchHandle EpBuffer::dispatch(const DispatchInput& in, cudaStream_t stream,
                                  runtime::SmBudget budget, double timeout_s) {
  const int T = in.num_tokens;
  SYMMOE_CHECK(T >= 0 && T <= config_.max_tokens_per_rank, "dispatch of ", T,
               " tokens: this EP buffer holds 0..", config_.max_tokens_per_rank,
               " per rank (max_tokens_per_rank, fixed at creation)");
  const bool fp8_buffer = config_.payload == device::EpPayload::kFP8;
  EpInputKind kind = EpInputKind::kCopyBF16;
  if (in.x_dtype == TokenDtype::kFP8E4M3) {
    SYMMOE_CHECK(fp8_buffer, "an fp8 e4m3 input cannot be dispatched through a bf16 EP buffer: "
                 "create it with payload = fp8, or pass bf16 rows");
    SYMMOE_CHECK(T == 0 || in.x_scales != nullptr, "an fp8 input needs x_scales [num_tokens, hidden / 128]");
    SYMMOE_CHECK(is_aligned(in.x_scales, 4), "x_scales must be 4-byte aligned");
    kind = EpInputKind::kCopyFP8;
  } else if (fp8_buffer) {
    kind = EpInputKind::kQuantizeBF16;
  }
  if (in.x == send_x() && (kind == EpInputKind::kCopyBF16 ||
                           (kind == EpInputKind::kCopyFP8 && in.x_scales == send_scales()))) {
    kind = EpInputKind::kInPlace;
  }
  if (T > 0) {
    SYMMOE_CHECK(in.x != nullptr && in.topk_idx != nullptr && in.topk_weights != nullptr,
                 "dispatch of ", T, " tokens needs x, topk_idx and topk_weights (a null pointer was given)");
  }
  SYMMOE_CHECK(is_aligned(in.x, 16), "x must be 16-byte aligned (rows move as 16-byte vectors), got ", in.x);
  SYMMOE_CHECK(is_aligned(in.topk_idx, in.idx_dtype == IdDtype::kInt64 ? 8 : 4) && is_aligned(in.topk_weights, 4),
               "topk_idx and topk_weights must be aligned to their element size");

  const runtime::GridLaunch config = ep_dispatch_config(rt_->device(), budget, layout_);
  EpDispatchArgs args{};
  args.peers = buffer_->peer_table();
  symm::validate_peer_table(args.peers, rt_->device());
  args.layout = layout_;
  args.x = in.x;
  args.x_scales = in.x_scales;
  args.topk_idx = in.topk_idx;
  args.topk_weights = in.topk_weights;
  args.num_tokens = T;
  args.idx_is_int64 = in.idx_dtype == IdDtype::kInt64 ? 1 : 0;
  args.input_kind = static_cast<int>(kind);
  args.grid = rt_->grid_state();
  args.status = rt_->status();
  args.timeout_ns = runtime::wait_timeout_ns(timeout_s);
  launch_ep_dispatch(args, config, stream);
  last_launch_ = config;
  return DispatchHandle{T, ++dispatches_};
}

void EpBuffer::combine(const DispatchHandle& handle, void* out, cudaStream_t stream,
                       const float* weights, runtime::SmBudget budget, double timeout_s) {
  SYMMOE_CHECK(dispatches_ > 0 && handle.sequence == dispatches_, "combine with the handle of dispatch #",
               handle.sequence, " but this buffer's latest dispatch is #", dispatches_,
               ": combine inverts the latest dispatch (its routing is overwritten by the next)");
  SYMMOE_CHECK(handle.num_tokens >= 0 && handle.num_tokens <= config_.max_tokens_per_rank,
               "a dispatch handle of ", handle.num_tokens, " tokens does not fit this buffer");
  SYMMOE_CHECK(handle.num_tokens == 0 || out != nullptr, "combine needs an output [num_tokens, hidden] bf16");
  SYMMOE_CHECK(is_aligned(out, 16), "combine output must be 16-byte aligned, got ", out);
  SYMMOE_CHECK(is_aligned(weights, 4), "combine weights must be 4-byte aligned");
  const runtime::GridLaunch config = ep_combine_config(rt_->device(), budget);
  EpCombineArgs args{};
  args.peers = buffer_->peer_table();
  symm::validate_peer_table(args.peers, rt_->device());
  args.layout = layout_;
  args.out = out;
  args.weights = weights;
  args.num_tokens = handle.num_tokens;
  args.grid = rt_->grid_state();
  args.status = rt_->status();
  args.timeout_ns = runtime::wait_timeout_ns(timeout_s);
  launch_ep_combine(args, config, stream);
  last_launch_ = config;
}

}  // namespace symmoe::ep
