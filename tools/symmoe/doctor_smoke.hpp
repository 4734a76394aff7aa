// The doctor's multi-rank smoke tests (GPU symmetric buffer, or the host heap without a GPU).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "report.hpp"
#include "symmoe/comm/fork_ranks.hpp"

namespace symmoe::cli {

struct SmokeOptions {
  int ranks = 4;
  std::vector<int> devices;  // thread ranks: round-robin over these
  uint64_t bytes_per_rank = 16ull << 20;
  double timeout_s = 60;
};

// N ranks as threads over a GPU symmetric buffer.
void smoke_gpu_threads(Report& report, const SmokeOptions& options);
// N ranks as threads over the host symmetric heap (no GPU needed).
void smoke_host_threads(Report& report, const SmokeOptions& options);
// N ranks as forked processes (TCP group + fd passing); each uses the GPU if it finds one.
// Must run before this process initializes CUDA; the results are reported later.
std::vector<comm::ForkedRank> smoke_processes_fork(const SmokeOptions& options);
void report_process_smoke(Report& report, const SmokeOptions& options,
                          const std::vector<comm::ForkedRank>& results);
// The pre-launch check rejects an injected null peer without launching (rank 0 of a buffer).
void check_null_peer_rejected(Report& report, bool gpu, const SmokeOptions& options);

}  // namespace symmoe::cli
