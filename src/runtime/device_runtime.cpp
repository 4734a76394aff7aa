#include "symmoe/runtime/device_runtime.hpp"

#include <cstring>

#include "symmoe/core/cuda_handles.hpp"
#include "symmoe/core/env.hpp"
#include "symmoe/core/error.hpp"
#include "symmoe/runtime/kernel_registry.hpp"

namespace symmoe::runtime {

using ::symmoe::detail::concat;

std::string describe_status(const device::StatusBlock& s) {
  const auto code = static_cast<device::StatusCode>(s.code);
  if (code == device::StatusCode::kOk) return "";
  const std::string site(s.site, strnlen(s.site, sizeof(s.site)));
  const std::string kernel(s.kernel, strnlen(s.kernel, sizeof(s.kernel)));
  const std::string where = concat("kernel ", kernel, " on rank ", s.rank, " (SM ", s.sm,
                                   ", block ", s.block, ", thread ", s.thread, ")");
  if (code == device::StatusCode::kTimeout) {
    std::string what;
    if (site == "grid_sync") {
      what = concat("grid_sync (tag ", s.tag, "): ", s.seen, " of ", s.expected,
                    " blocks arrived. Every block of a grid-synchronized launch must be resident "
                    "at once: is another stream holding SMs? (see SYMMOE_RESERVED_SMS)");
    } else if (site == "cross_rank_barrier") {
      what = concat("cross_rank_barrier (tag ", s.tag, ") for rank ", s.peer,
                    ": expected its epoch >= ", s.expected, ", saw ", s.seen,
                    ". Rank ", s.peer, " did not arrive: it may have failed, be stuck, or run "
                    "a different sequence of barriers");
    } else {
      what = concat(site, " (tag ", s.tag, ") for rank ", s.peer, ": expected ", s.expected,
                    ", saw ", s.seen);
    }
    return concat(where, " timed out after ", static_cast<double>(s.waited_ns) * 1e-9,
                  " s in ", what, " [bound: ", static_cast<double>(s.timeout_ns) * 1e-9,
                  " s, SYMMOE_WAIT_TIMEOUT_S]");
  }
  if (code == device::StatusCode::kInvalidInput) {
    if (site == "topk_idx") {
      return concat(where, ": topk_idx[token ", s.tag, ", k ", s.peer, "] = ",
                    static_cast<int64_t>(s.seen), " is out of range: expert ids lie in [0, ",
                    s.expected, ") or are -1 to mask a slot (the pair was not dispatched)");
    }
    if (site == "peer_routing") {
      return concat(where, ": rank ", s.peer, " dispatched an invalid top-k id (its own error "
                    "names it); its invalid pairs were not dispatched");
    }
    if (site == "recv_capacity") {
      return concat(where, ": the dispatch needs ", s.seen, " receive rows but the EP buffer holds ",
                    s.expected, " (EpConfig::recv_capacity_rows); nothing was received");
    }
    if (site == "combine_order") {
      return concat(where, ": combine without a preceding dispatch on this EP buffer (last "
                    "operation ", s.seen, "; 0 none, 2 combine)");
    }
    if (site == "combine_row") {
      return concat(where, ": token ", s.tag, ", k ", s.peer, " has no receive row (its "
                    "dispatch failed), so its output row is incomplete");
    }
    if (site == "grouped_gemm_rows") {
      const bool masked = s.peer < 0;
      return concat("grouped GEMM: expert ", s.tag, " has counts = ", static_cast<int64_t>(s.seen),
                    masked ? "" : concat(" rows from offset ", s.peer),
                    masked ? concat(", outside [0, max_m = ", s.expected, "]")
                           : concat(", which leaves the ", s.expected, " rows of the activations"),
                    "; that expert's output was not computed");
    }
    return concat(where, " rejected its input in ", site, " (tag ", s.tag, "): value ", s.seen,
                  ", limit ", s.expected);
  }
  return concat(where, " reported unknown status code ", s.code);
}

uint64_t wait_timeout_ns(double timeout_s) {
  if (timeout_s <= 0) timeout_s = env::get_float("SYMMOE_WAIT_TIMEOUT_S");
  return static_cast<uint64_t>(timeout_s * 1e9);
}

DeviceRuntime::DeviceRuntime(int device) {
  if (device < 0) SYMMOE_CUDA_CHECK(cudaGetDevice(&device));
  device_ = device;
  num_kernels_ = load_all_kernels(device);
  int previous = -1;
  SYMMOE_CUDA_CHECK(cudaGetDevice(&previous));
  SYMMOE_CUDA_CHECK(cudaSetDevice(device));
  SYMMOE_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&status_), sizeof(device::StatusBlock)));
  SYMMOE_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&grid_), sizeof(device::GridSyncState)));
  // A private non-blocking stream: other ranks sharing this GPU may be running kernels.
  {
    Stream stream;
    clear(stream);
  }
  SYMMOE_CUDA_CHECK(cudaSetDevice(previous));
}

void DeviceRuntime::clear(cudaStream_t stream) {
  SYMMOE_CUDA_CHECK(cudaMemsetAsync(status_, 0, sizeof(device::StatusBlock), stream));
  SYMMOE_CUDA_CHECK(cudaMemsetAsync(grid_, 0, sizeof(device::GridSyncState), stream));
  SYMMOE_CUDA_CHECK(cudaStreamSynchronize(stream));
}

DeviceRuntime::~DeviceRuntime() {
  if (status_ != nullptr) cudaFree(status_);
  if (grid_ != nullptr) cudaFree(grid_);
}

std::optional<std::string> DeviceRuntime::take_failure(cudaStream_t stream) {
  SYMMOE_CUDA_CHECK(cudaStreamSynchronize(stream), "waiting for rank work on device ", device_);
  device::StatusBlock s{};
  SYMMOE_CUDA_CHECK(cudaMemcpyAsync(&s, status_, sizeof(s), cudaMemcpyDeviceToHost, stream));
  SYMMOE_CUDA_CHECK(cudaStreamSynchronize(stream));
  if (s.code == 0 && s.abort == 0) return std::nullopt;
  // Clear the record and the grid-sync words: an aborted round may have left blocks counted.
  clear(stream);
  return s.code != 0 ? describe_status(s) : std::string("a kernel aborted without a record");
}

void DeviceRuntime::check(cudaStream_t stream) {
  if (auto failure = take_failure(stream)) SYMMOE_FAIL(*failure);
}

}  // namespace symmoe::runtime
