// The dispatch and combine kernels' host triples: arguments, configuration, launchers (private).
#pragma once

#include <cuda_runtime_api.h>

#include "symmoe/device/ep_buffer_layout.cuh"
#include "symmoe/device/grid_sync.cuh"
#include "symmoe/device/peer_table.cuh"
#include "symmoe/device/status.cuh"
#include "symmoe/runtime/barrier_kernels.hpp"

namespace symmoe::ep {

// Input formats the prep phase understands.
enum class EpInputKind : int {
  kCopyBF16 = 0,      // bf16 rows into a bf16 buffer
  kCopyFP8 = 1,       // fp8 rows + scales into an fp8 buffer
  kQuantizeBF16 = 2,  // bf16 rows quantized into an fp8 buffer
  kInPlace = 3,       // the rows (and scales) already sit in the send region
};

struct EpDispatchArgs {
  device::PeerTable peers;
  device::EpBufferLayout layout;
  const void* x;
  const float* x_scales;
  const void* topk_idx;
  const float* topk_weights;
  int num_tokens;
  int idx_is_int64;
  int input_kind;  // EpInputKind
  device::GridSyncState* grid;
  device::StatusBlock* status;
  uint64_t timeout_ns;
};

struct EpCombineArgs {
  device::PeerTable peers;
  device::EpBufferLayout layout;
  void* out;             // [num_tokens, hidden] bf16
  const float* weights;  // [num_tokens, top_k]; null: the dispatch's weights
  int num_tokens;
  device::GridSyncState* grid;
  device::StatusBlock* status;
  uint64_t timeout_ns;
};

// Threads per block of both kernels (one block per SM: 32 warps keep enough loads in flight);
// the routing scan gives each warp of block 0 a histogram row.
inline constexpr int kEpThreads = 1024;
inline constexpr int kEpWarps = kEpThreads / 32;
// Limits of the kernels: a histogram row of all experts per warp; one lane per top-k slot.
inline constexpr int kEpMaxExperts = 1024;
inline constexpr int kEpMaxTopK = 32;
inline constexpr size_t kEpDispatchMaxSmem = size_t{kEpWarps} * (kEpMaxExperts + device::kMaxRanks) * 4;

// Cooperative, persistent grids: one block per usable SM.
runtime::GridLaunch ep_dispatch_config(int device, runtime::SmBudget budget,
                                       const device::EpBufferLayout& layout);
runtime::GridLaunch ep_combine_config(int device, runtime::SmBudget budget);

void launch_ep_dispatch(const EpDispatchArgs& args, const runtime::GridLaunch& config,
                        cudaStream_t stream);
void launch_ep_combine(const EpCombineArgs& args, const runtime::GridLaunch& config,
                       cudaStream_t stream);

}  // namespace symmoe::ep
