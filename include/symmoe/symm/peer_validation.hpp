// Pre-launch validation of symmetric peer mappings (see NOTE [peer table]).
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>

#include "symmoe/device/peer_table.cuh"

namespace symmoe::symm {

enum class ProbeResult {
  kAddressable,  // the driver knows the address on this device
  kInvalid,      // the driver answered CUDA_ERROR_INVALID_VALUE: not mapped here
  kUnknown,      // any other answer: not treated as a failure
};

// Asks whether `ptr` is addressable from `device`; `detail` receives the driver's answer.
using PointerProbe = std::function<ProbeResult(const void* ptr, int device, std::string* detail)>;

// The default probe: cuPointerGetAttribute(CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL).
ProbeResult driver_pointer_probe(const void* ptr, int device, std::string* detail);

// Throws a symmoe::Error naming the first offending rank, its pointer, this rank, the group
// size and the constraint, unless every base is non-null, distinct and addressable. Checks,
// in order: group size (1..kMaxRanks), this rank in range, null bases, duplicate bases, then
// the probe (only kInvalid fails). Successful checks are cached per (device, rank, bases):
// later calls cost one lookup. SYMMOE_SKIP_PEER_CHECK=1 makes this a no-op.
void validate_peers(std::span<void* const> bases, int rank, int device,
                    const PointerProbe& probe = driver_pointer_probe);

// Same, for the bases recorded in a peer table.
void validate_peer_table(const device::PeerTable& table, int device,
                         const PointerProbe& probe = driver_pointer_probe);

// Drops cached successes for this pointer set (called when a buffer is unmapped, since its
// addresses may be reused).
void forget_validated(std::span<void* const> bases, int device);

struct ValidationCounters {
  uint64_t full_checks = 0;  // checks that ran the probe
  uint64_t cache_hits = 0;   // checks answered by the cache
  uint64_t skipped = 0;      // checks disabled by SYMMOE_SKIP_PEER_CHECK
};
ValidationCounters validation_counters();

}  // namespace symmoe::symm
