// Peer read/write smoke test over a symmetric buffer: every rank writes a self-identifying
// pattern into its slice of every peer's buffer, then checks its own buffer and reads back
// every peer's buffer in full.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

#include "symmoe/comm/group.hpp"
#include "symmoe/device/peer_table.cuh"
#include "symmoe/device/smoke_check.cuh"
#include "symmoe/symm/symmetric_buffer.hpp"

namespace symmoe::symm {

// Buffer layout: num_ranks slices of words_per_slice 64-bit words; slice w of rank o's buffer
// is written by rank w with device::smoke_word(w, o, i).
uint64_t smoke_words_per_slice(size_t bytes_per_rank, int num_ranks);

// Launchers. Each validates `table` (pre-launch peer check) before it enqueues anything.
void launch_smoke_poison(const device::PeerTable& table, int device, uint64_t words_per_slice,
                         cudaStream_t stream);
void launch_smoke_write(const device::PeerTable& table, int device, uint64_t words_per_slice,
                        cudaStream_t stream);
// remote = false: check the local buffer (what every writer left here);
// remote = true: read every peer's whole buffer through the table.
void launch_smoke_verify(const device::PeerTable& table, int device, uint64_t words_per_slice,
                         bool remote, device::SmokeCheck* result, cudaStream_t stream);

struct SmokeReport {
  uint64_t words_written = 0;
  uint64_t local_words_checked = 0;
  uint64_t remote_words_checked = 0;
  uint64_t mismatches = 0;
  std::string first_mismatch;  // empty when none
  double write_ms = 0;          // the write kernel, this rank
  double remote_read_ms = 0;    // the remote verify kernel, this rank
  bool ok() const { return mismatches == 0; }
};

// Collective over `group`. `table` defaults to the buffer's own; a caller may pass another one
// (e.g. with an injected bad peer) to see it rejected before launch.
SmokeReport run_peer_smoke(comm::Group& group, const SymmetricBuffer& buffer,
                           const device::PeerTable* table = nullptr);

// "word 17 of slice 3 in rank 1's buffer holds 0x.. (writer 2, owner 1); expected 0x.."
std::string describe_smoke_mismatch(const device::SmokeCheck& check, uint64_t words_per_slice);

}  // namespace symmoe::symm
