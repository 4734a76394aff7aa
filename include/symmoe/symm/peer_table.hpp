// Building the device peer table from every rank's buffer base (host side).
#pragma once

#include <span>

#include "symmoe/device/peer_table.cuh"

namespace symmoe::symm {

// bases[r] is rank r's buffer as mapped in this process (nullptr where a peer is not mapped;
// validation rejects that before launch). Throws when bases.size() exceeds kMaxRanks or `rank`
// is out of range.
device::PeerTable make_peer_table(std::span<void* const> bases, int rank);

}  // namespace symmoe::symm
