// Where dispatch and combine keep their state in each rank's symmetric buffer. One header
// drives the host's sizing and the kernels' addressing (framework-free).
#pragma once

#include <cstdint>

#include "symmoe/device/common.cuh"
#include "symmoe/device/cross_rank_barrier.cuh"

namespace symmoe::device {

// What the expert-major receive rows hold.
enum class EpPayload : uint32_t { kBF16 = 0, kFP8 = 1 };

// FP8 payloads carry one fp32 scale per 128 consecutive elements of a row (1x128 blocks).
inline constexpr int kFp8BlockElems = 128;

// Which EP operation ran last on a buffer (EpControl::last_op).
inline constexpr uint32_t kEpOpNone = 0;
inline constexpr uint32_t kEpOpDispatch = 1;
inline constexpr uint32_t kEpOpCombine = 2;

// NOTE [EP buffer protocol]: dispatch is a pull. (1) Prep, local: the source rank writes its
// rows (bf16, or fp8 + scales), top-k ids, weights and routing (per-pair position inside its
// (source, expert) block, pair counts per expert, per-destination token lists) into the send
// region of its own buffer, and sets every combine_row to -1. (2) One cross-rank barrier.
// (3) Pull: each rank reads the counts of every source for its local experts, derives the
// expert-major layout (segments in local-expert order, rows in (source rank, token, k)
// order, each segment padded to `alignment`), reads each routed token once per source
// (top-k entries landing on the same rank share that read), writes it to every row it owns,
// and writes each row index back into the source's combine_row. Combine is a pull too: one
// cross-rank barrier (every rank's expert outputs are written, every dispatch pull is done),
// then each source reads, for each token, the expert-output rows of its top-k entries in
// ascending k and sums w * y in fp32 (one bf16 rounding).
// Reuse: the send region is rewritten by the next dispatch's prep, which peers may still read
// until they reach their next barrier; when dispatch follows combine, combine's barrier
// covers this, and when dispatch follows dispatch the kernel adds an entry barrier (last_op,
// a local word every rank updates in the same sequence). Expert outputs may be written after
// this rank's dispatch and before its combine; combine must follow a dispatch (checked).
struct alignas(128) EpControl {
  uint32_t last_op;        // kEpOp*, written by the last block of each EP kernel
  uint32_t routing_error;  // nonzero: this rank's prep met an invalid top-k id (peers report it)
  uint32_t reserved[30];
};

struct EpBufferLayout {
  // Shape.
  uint32_t num_ranks = 0;
  uint32_t num_experts = 0;
  uint32_t experts_per_rank = 0;
  uint32_t top_k = 0;
  uint32_t hidden = 0;
  uint32_t max_tokens = 0;     // per source rank
  uint32_t alignment = 0;      // rows per segment are padded to a multiple of this
  EpPayload payload = EpPayload::kBF16;
  uint64_t recv_rows = 0;      // capacity of the expert-major receive layout
  uint64_t row_bytes = 0;      // hidden * (2 or 1)
  uint32_t scales_per_row = 0; // fp8: hidden / 128, else 0
  // Byte offsets inside each rank's buffer (every region 256-byte aligned).
  uint64_t pad_offset = 0;            // SignalPad
  uint64_t control_offset = 0;        // EpControl
  uint64_t send_x_offset = 0;         // [max_tokens, row_bytes]
  uint64_t send_scales_offset = 0;    // [max_tokens, scales_per_row] f32
  uint64_t send_topk_offset = 0;      // [max_tokens, top_k] i32, -1 masked
  uint64_t send_weights_offset = 0;   // [max_tokens, top_k] f32
  uint64_t send_pos_offset = 0;       // [max_tokens, top_k] i32, row inside (source, expert) block
  uint64_t expert_counts_offset = 0;  // [num_experts] i32, pairs this source sends per expert
  uint64_t rank_counts_offset = 0;    // [num_ranks] i32, tokens this source sends per rank
  uint64_t rank_lists_offset = 0;     // [num_ranks, max_tokens] i32, token ids per destination
  uint64_t combine_row_offset = 0;    // [max_tokens, top_k] i32, written by the destination
  uint64_t segment_offset_offset = 0; // [experts_per_rank + 1] i32
  uint64_t segment_count_offset = 0;  // [experts_per_rank] i32
  uint64_t recv_x_offset = 0;         // [recv_rows, row_bytes]
  uint64_t recv_scales_offset = 0;    // [recv_rows, scales_per_row] f32
  uint64_t recv_weights_offset = 0;   // [recv_rows] f32
  uint64_t recv_source_offset = 0;    // [recv_rows] i32: (src_rank * max_tokens + token) * top_k + k
  uint64_t expert_out_offset = 0;     // [recv_rows, hidden] bf16, combine's input (peers read it)
  uint64_t bytes_per_rank = 0;

  SYMMOE_HOST_DEVICE uint32_t rank_of(uint32_t expert) const { return expert / experts_per_rank; }

  template <class T>
  SYMMOE_HOST_DEVICE T* at(uint64_t base, uint64_t offset) const {
    return reinterpret_cast<T*>(base + offset);
  }
};

SYMMOE_HOST_DEVICE uint64_t ep_align_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

// Worst case of rows one rank can receive: every token of every rank routes min(top_k,
// experts_per_rank) pairs here, plus alignment padding of every segment.
SYMMOE_HOST_DEVICE uint64_t ep_worst_case_recv_rows(uint32_t num_ranks, uint32_t experts_per_rank,
                                                    uint32_t top_k, uint32_t max_tokens,
                                                    uint32_t alignment) {
  const uint64_t pairs_per_token = top_k < experts_per_rank ? top_k : experts_per_rank;
  return static_cast<uint64_t>(num_ranks) * max_tokens * pairs_per_token +
         static_cast<uint64_t>(experts_per_rank) * (alignment - 1);
}

// The host validates the shape first (ep/ep_buffer.cpp); recv_rows = 0 means the worst case.
SYMMOE_HOST_DEVICE EpBufferLayout make_ep_buffer_layout(uint32_t num_ranks, uint32_t num_experts,
                                                        uint32_t top_k, uint32_t hidden,
                                                        uint32_t max_tokens, uint32_t alignment,
                                                        EpPayload payload, uint64_t recv_rows) {
  EpBufferLayout l;
  l.num_ranks = num_ranks;
  l.num_experts = num_experts;
  l.experts_per_rank = num_experts / num_ranks;
  l.top_k = top_k;
  l.hidden = hidden;
  l.max_tokens = max_tokens;
  l.alignment = alignment;
  l.payload = payload;
  l.recv_rows = recv_rows != 0 ? recv_rows
                               : ep_worst_case_recv_rows(num_ranks, l.experts_per_rank, top_k,
                                                         max_tokens, alignment);
  l.row_bytes = static_cast<uint64_t>(hidden) * (payload == EpPayload::kFP8 ? 1 : 2);
  l.scales_per_row = payload == EpPayload::kFP8 ? hidden / kFp8BlockElems : 0;
  const uint64_t pairs = static_cast<uint64_t>(max_tokens) * top_k;
  uint64_t at = 0;
  auto region = [&at](uint64_t bytes) {
    const uint64_t offset = at;
    at = ep_align_up(at + bytes, 256);
    return offset;
  };
  l.pad_offset = region(kSignalPadBytes);
  l.control_offset = region(sizeof(EpControl));
  l.send_x_offset = region(static_cast<uint64_t>(max_tokens) * l.row_bytes);
  l.send_scales_offset = region(static_cast<uint64_t>(max_tokens) * l.scales_per_row * 4);
  l.send_topk_offset = region(pairs * 4);
  l.send_weights_offset = region(pairs * 4);
  l.send_pos_offset = region(pairs * 4);
  l.expert_counts_offset = region(static_cast<uint64_t>(num_experts) * 4);
  l.rank_counts_offset = region(static_cast<uint64_t>(num_ranks) * 4);
  l.rank_lists_offset = region(static_cast<uint64_t>(num_ranks) * max_tokens * 4);
  l.combine_row_offset = region(pairs * 4);
  l.segment_offset_offset = region((static_cast<uint64_t>(l.experts_per_rank) + 1) * 4);
  l.segment_count_offset = region(static_cast<uint64_t>(l.experts_per_rank) * 4);
  l.recv_x_offset = region(l.recv_rows * l.row_bytes);
  l.recv_scales_offset = region(l.recv_rows * l.scales_per_row * 4);
  l.recv_weights_offset = region(l.recv_rows * 4);
  l.recv_source_offset = region(l.recv_rows * 4);
  l.expert_out_offset = region(l.recv_rows * static_cast<uint64_t>(hidden) * 2);
  l.bytes_per_rank = at;
  return l;
}

}  // namespace symmoe::device
