// A symmetric buffer: `bytes_per_rank` of device memory on every rank of a group, each rank's
// allocation mapped into every rank's address space (cuMem VMM), so kernels reach a peer's
// copy with plain loads, stores and TMA through the peer table.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "symmoe/comm/group.hpp"
#include "symmoe/device/peer_table.cuh"
#include "symmoe/symm/handle_type.hpp"

namespace symmoe::symm {

struct SymmetricBufferOptions {
  size_t bytes_per_rank = 0;
  HandleType handle_type = HandleType::kAuto;
  // Name and parameters of the layout the caller will place in the buffer: ranks must agree on
  // both (all-gathered digest). Never include launch settings such as SM counts here: a buffer
  // must not depend on them.
  std::string layout_name = "raw";
  std::vector<uint64_t> layout_params;

  // Options with handle_type from SYMMOE_HANDLE_TYPE.
  static SymmetricBufferOptions from_env(size_t bytes_per_rank);
};

// NOTE [symmetric heap]: one virtual range of num_ranks * stride bytes is reserved per buffer
// on each rank; rank r's allocation is mapped at base + r * stride, so a peer's copy sits at a
// fixed distance ((r - rank) * stride) from the local one. Creation is collective: ranks agree
// on the configuration, create and export their allocation, exchange handles, import, map and
// grant this device read/write access, then validate every peer before returning. Destruction
// is local (unmap, free the range, release every handle); call it on all ranks after the last
// kernel that touches the buffer has finished everywhere (e.g. after a group barrier).
// What every symmetric buffer of this process holds right now (all ranks of the process
// together). Creation and destruction keep these exact, so a leak shows as a non-zero count
// after every buffer is gone.
struct SymmetricMemoryStats {
  int64_t live_buffers = 0;
  int64_t allocations = 0;       // physical allocations created here (one per buffer)
  int64_t allocated_bytes = 0;   // their bytes
  int64_t imported_handles = 0;  // peers' allocations imported here
  int64_t mappings = 0;          // mapped ranges (one per rank per buffer)
  int64_t reserved_bytes = 0;    // virtual address space reserved
};
SymmetricMemoryStats symmetric_memory_stats();

class SymmetricBuffer {
 public:
  // Collective over `group`; the calling thread's current CUDA device owns the allocation.
  static std::unique_ptr<SymmetricBuffer> create(comm::Group& group,
                                                 const SymmetricBufferOptions& options);
  ~SymmetricBuffer();
  SymmetricBuffer(const SymmetricBuffer&) = delete;
  SymmetricBuffer& operator=(const SymmetricBuffer&) = delete;

  int rank() const { return rank_; }
  int num_ranks() const { return num_ranks_; }
  int device() const { return device_; }
  size_t bytes_per_rank() const { return bytes_per_rank_; }       // as requested
  size_t mapped_bytes_per_rank() const { return stride_; }         // physical, rounded up
  size_t reserved_virtual_bytes() const { return stride_ * num_ranks_; }
  HandleType handle_type() const { return handle_type_; }          // kFd or kFabric
  const std::string& handle_reason() const { return handle_reason_; }

  void* local() const { return bases_[rank_]; }
  void* peer(int r) const;
  std::span<void* const> peer_bases() const { return bases_; }
  device::PeerTable peer_table() const;

  // Pre-launch check of every peer mapping (cached after the first call).
  void validate() const;

 private:
  SymmetricBuffer() = default;
  void release() noexcept;

  int rank_ = 0;
  int num_ranks_ = 0;
  int device_ = -1;
  size_t bytes_per_rank_ = 0;
  size_t stride_ = 0;
  HandleType handle_type_ = HandleType::kFd;
  std::string handle_reason_;
  uint64_t va_ = 0;
  std::vector<bool> mapped_;
  std::vector<unsigned long long> handles_;  // CUmemGenericAllocationHandle per rank
  std::vector<void*> bases_;
};

}  // namespace symmoe::symm
