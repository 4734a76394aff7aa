// Global-timer stamps one prefetch launch can record (diagnostics; device memory).
#pragma once

#include <cstdint>

namespace symmoe::prefetch {

// Written by the launch that is given it (Prefetcher::launch); nanoseconds of the GPU's global
// timer. Without barriers (static weights) `entered_ns` equals `kernel_start_ns` and `left_ns`
// equals `copies_done_ns`.
struct PrefetchTrace {
  uint64_t kernel_start_ns;  // block 0 starts
  uint64_t entered_ns;       // block 0 passes the start barrier (every rank arrived)
  uint64_t copies_done_ns;   // the last block of the grid finished its copies
  uint64_t left_ns;          // that block passed the end barrier
};

}  // namespace symmoe::prefetch
