// CPU reference of the symmetric heap: every rank's buffer is a memfd, shared with the other
// ranks through the group's descriptor exchange and mapped into each rank's address space, so
// the peer table, validation and the smoke pattern run unchanged on machines without a GPU
// (the CLI's fallback and the CI tests). Works for thread ranks and process ranks alike.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "symmoe/comm/group.hpp"
#include "symmoe/device/peer_table.cuh"
#include "symmoe/symm/peer_smoke.hpp"

namespace symmoe::reference {

class HostSymmetricHeap {
 public:
  // Collective over `group`.
  HostSymmetricHeap(comm::Group& group, size_t bytes_per_rank);
  ~HostSymmetricHeap();
  HostSymmetricHeap(const HostSymmetricHeap&) = delete;
  HostSymmetricHeap& operator=(const HostSymmetricHeap&) = delete;

  size_t bytes_per_rank() const { return bytes_; }
  int rank() const { return rank_; }
  int num_ranks() const { return static_cast<int>(bases_.size()); }
  std::span<void* const> bases() const { return bases_; }
  device::PeerTable peer_table() const;

 private:
  size_t bytes_ = 0;
  int rank_ = 0;
  std::vector<void*> bases_;
};

// The smoke test of symm/peer_smoke.hpp on the host heap (same pattern, same layout).
// `table` defaults to the heap's own; it is validated (null and duplicate peers) first.
symm::SmokeReport run_host_peer_smoke(comm::Group& group, const HostSymmetricHeap& heap,
                                      const device::PeerTable* table = nullptr);

}  // namespace symmoe::reference
