// Where expert weights and prefetch slots sit in each rank's symmetric buffer. One header
// drives the host's sizing and the kernels' addressing (framework-free).
#pragma once

#include <cstdint>

#include "symmoe/device/common.cuh"
#include "symmoe/device/cross_rank_barrier.cuh"

namespace symmoe::device {

// Every expert's bytes are a multiple of this: the copy engine moves 16-byte units, and 128
// keeps each expert on its own cache lines.
inline constexpr uint64_t kExpertAlignment = 128;

// NOTE [expert pool layout]: rank r's buffer = [owned experts | slots | signal pad].
// Global expert e is owned by rank e / experts_per_rank and stored at owned_at(e) in that
// rank's buffer; slot s of any rank sits at slot_at(s). The pad serves the prefetch kernel's
// start and end barriers.
struct ExpertPoolLayout {
  uint64_t expert_bytes = 0;
  uint32_t num_ranks = 0;
  uint32_t experts_per_rank = 0;
  uint32_t num_slots = 0;
  uint64_t slots_offset = 0;
  uint64_t pad_offset = 0;
  uint64_t bytes_per_rank = 0;

  SYMMOE_HOST_DEVICE uint32_t num_experts() const { return num_ranks * experts_per_rank; }
  SYMMOE_HOST_DEVICE uint32_t owner(uint32_t expert) const { return expert / experts_per_rank; }
  SYMMOE_HOST_DEVICE uint64_t owned_at(uint32_t expert) const {
    return static_cast<uint64_t>(expert % experts_per_rank) * expert_bytes;
  }
  SYMMOE_HOST_DEVICE uint64_t slot_at(uint32_t slot) const {
    return slots_offset + static_cast<uint64_t>(slot) * expert_bytes;
  }
};

// expert_bytes must already be a multiple of kExpertAlignment (the host checks).
SYMMOE_HOST_DEVICE ExpertPoolLayout make_expert_pool_layout(uint64_t expert_bytes,
                                                            uint32_t num_ranks,
                                                            uint32_t experts_per_rank,
                                                            uint32_t num_slots) {
  ExpertPoolLayout l;
  l.expert_bytes = expert_bytes;
  l.num_ranks = num_ranks;
  l.experts_per_rank = experts_per_rank;
  l.num_slots = num_slots;
  l.slots_offset = static_cast<uint64_t>(experts_per_rank) * expert_bytes;
  const uint64_t end = l.slots_offset + static_cast<uint64_t>(num_slots) * expert_bytes;
  l.pad_offset = (end + alignof(SignalPad) - 1) / alignof(SignalPad) * alignof(SignalPad);
  l.bytes_per_rank = l.pad_offset + kSignalPadBytes;
  return l;
}

// One expert copy: `expert_bytes` from (src_rank, src_offset) to (dst_rank, dst_offset).
struct CopyTask {
  uint32_t src_rank;
  uint32_t dst_rank;
  uint64_t src_offset;
  uint64_t dst_offset;
};

}  // namespace symmoe::device
