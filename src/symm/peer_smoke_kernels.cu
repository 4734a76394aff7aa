// Kernels of the peer read/write smoke test (any arch; memory-bound, 8-byte words).
#include <cuda_runtime.h>

#include "symmoe/core/error.hpp"
#include "symmoe/device/smoke_pattern.cuh"
#include "symmoe/symm/peer_smoke.hpp"
#include "symmoe/symm/peer_validation.hpp"
#include "../runtime/kernel_launch.cuh"
#include "../runtime/kernel_lists.hpp"

namespace symmoe::symm {
namespace {

struct SmokeArgs {
  device::PeerTable table;
  uint64_t words_per_slice;
  device::SmokeCheck* result;
};

__global__ void smoke_poison_kernel(SmokeArgs args) {
  auto* local = reinterpret_cast<uint64_t*>(args.table.base);
  const uint64_t total = args.words_per_slice * args.table.num_ranks;
  for (uint64_t i = blockIdx.x * uint64_t{blockDim.x} + threadIdx.x; i < total;
       i += uint64_t{gridDim.x} * blockDim.x) {
    local[i] = device::kSmokePoison;
  }
}

// Rank `me` fills slice `me` of every peer's buffer.
__global__ void smoke_write_kernel(SmokeArgs args) {
  const int me = args.table.rank;
  auto* my_slice = reinterpret_cast<uint64_t*>(args.table.base) + me * args.words_per_slice;
  const uint64_t total = args.words_per_slice * args.table.num_ranks;
  for (uint64_t i = blockIdx.x * uint64_t{blockDim.x} + threadIdx.x; i < total;
       i += uint64_t{gridDim.x} * blockDim.x) {
    const int owner = static_cast<int>(i / args.words_per_slice);
    const uint64_t word = i % args.words_per_slice;
    args.table.map(my_slice, owner)[word] = device::smoke_word(me, owner, word);
  }
}

__device__ void record(device::SmokeCheck* out, int owner, int writer, uint64_t word,
                       uint64_t found) {
  atomicAdd(&out->mismatches, 1ull);
  const unsigned long long position = (static_cast<unsigned long long>(owner) << 56) |
                                      (static_cast<unsigned long long>(writer) << 48) | word;
  if (atomicMin(&out->first_position, position) > position) {
    atomicExch(&out->first_value, found);  // best effort: racing writers may interleave
  }
}

// remote == 0: owner is this rank only; remote == 1: every rank's buffer, read through the table.
template <bool kRemote>
__global__ void smoke_verify_kernel(SmokeArgs args) {
  const int n = args.table.num_ranks;
  const uint64_t per_owner = args.words_per_slice * n;
  const uint64_t total = kRemote ? per_owner * n : per_owner;
  const auto* local = reinterpret_cast<const uint64_t*>(args.table.base);
  unsigned long long checked = 0;
  for (uint64_t i = blockIdx.x * uint64_t{blockDim.x} + threadIdx.x; i < total;
       i += uint64_t{gridDim.x} * blockDim.x) {
    const int owner = kRemote ? static_cast<int>(i / per_owner) : args.table.rank;
    const uint64_t in_owner = kRemote ? i % per_owner : i;
    const int writer = static_cast<int>(in_owner / args.words_per_slice);
    const uint64_t word = in_owner % args.words_per_slice;
    const uint64_t found = kRemote ? args.table.map(local, owner)[in_owner] : local[in_owner];
    if (found != device::smoke_word(writer, owner, word)) record(args.result, owner, writer, word, found);
    ++checked;
  }
  atomicAdd(&args.result->words, checked);
}

struct LaunchConfig {
  dim3 grid;
  dim3 block;
};

LaunchConfig smoke_config(int device) {
  int sms = 0;
  SYMMOE_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  // Each rank of a group may share the GPU with the others: a modest grid keeps every rank's
  // kernel resident at once.
  return {dim3(static_cast<unsigned>(std::max(1, sms / 4))), dim3(256)};
}

void launch(void (*kernel)(SmokeArgs), const SmokeArgs& args, int device, cudaStream_t stream) {
  const LaunchConfig cfg = smoke_config(device);
  runtime::launch_kernel(kernel, args, static_cast<int>(cfg.grid.x), static_cast<int>(cfg.block.x), 0,
                         false, stream, "smoke kernel");
}

void check_args(const device::PeerTable& table, int device, uint64_t words_per_slice) {
  SYMMOE_CHECK(words_per_slice > 0 && words_per_slice < (uint64_t{1} << 48),
               "words_per_slice ", words_per_slice, " must lie in [1, 2^48)");
  validate_peer_table(table, device);
}

}  // namespace

void launch_smoke_poison(const device::PeerTable& table, int device, uint64_t words_per_slice,
                         cudaStream_t stream) {
  check_args(table, device, words_per_slice);
  launch(smoke_poison_kernel, SmokeArgs{table, words_per_slice, nullptr}, device, stream);
}

void launch_smoke_write(const device::PeerTable& table, int device, uint64_t words_per_slice,
                        cudaStream_t stream) {
  check_args(table, device, words_per_slice);
  launch(smoke_write_kernel, SmokeArgs{table, words_per_slice, nullptr}, device, stream);
}

void launch_smoke_verify(const device::PeerTable& table, int device, uint64_t words_per_slice,
                         bool remote, device::SmokeCheck* result, cudaStream_t stream) {
  check_args(table, device, words_per_slice);
  SYMMOE_CHECK(result != nullptr, "smoke verify needs a device result block");
  const SmokeArgs args{table, words_per_slice, result};
  if (remote) {
    launch(smoke_verify_kernel<true>, args, device, stream);
  } else {
    launch(smoke_verify_kernel<false>, args, device, stream);
  }
}

}  // namespace symmoe::symm

namespace symmoe::runtime {

void append_smoke_kernels(std::vector<KernelEntry>& out) {
  out.push_back({"smoke_poison_kernel", reinterpret_cast<const void*>(&symm::smoke_poison_kernel)});
  out.push_back({"smoke_write_kernel", reinterpret_cast<const void*>(&symm::smoke_write_kernel)});
  out.push_back({"smoke_verify_kernel<false>",
                 reinterpret_cast<const void*>(&symm::smoke_verify_kernel<false>)});
  out.push_back({"smoke_verify_kernel<true>",
                 reinterpret_cast<const void*>(&symm::smoke_verify_kernel<true>)});
}

}  // namespace symmoe::runtime
