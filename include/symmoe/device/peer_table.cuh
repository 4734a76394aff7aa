// The peer table kernels use to reach other ranks' symmetric buffers (framework-free).
#pragma once

#include <cstdint>

#include "symmoe/device/common.cuh"

namespace symmoe::device {

// One NVL72 domain: the most ranks whose buffers one GPU can map.
inline constexpr int kMaxRanks = 72;

// NOTE [peer table]: `offsets[r]` is peer_base[r] - base, so a pointer p into this rank's
// buffer maps to the same position in rank r's buffer as p + offsets[r]. The table is plain
// data passed by value as a kernel parameter (600 bytes). The host validates every peer base
// (symm/peer_validation.hpp) before any launch that uses the table: a null or unmapped peer
// must fail on the host, not fault asynchronously inside a kernel. Entries past num_ranks
// are zero.
struct PeerTable {
  uint64_t base = 0;  // this rank's buffer
  int64_t offsets[kMaxRanks] = {};
  int32_t rank = 0;
  int32_t num_ranks = 0;

  template <class T>
  SYMMOE_HOST_DEVICE T* map(T* local, int dst_rank) const {
    return reinterpret_cast<T*>(reinterpret_cast<int64_t>(local) + offsets[dst_rank]);
  }

  SYMMOE_HOST_DEVICE uint64_t peer_base(int r) const {
    return base + static_cast<uint64_t>(offsets[r]);
  }
};

}  // namespace symmoe::device
