// Expert prefetch copies (16-byte vector loads/stores by every thread, or 1-D bulk TMA copies
// through shared memory: SYMMOE_PREFETCH_COPY), and the fp32 gradient reduce back to owners.
// Measured on the H200 (bench/RESULTS.md): the vector copy beats the bulk pipeline's best shape
// (64 KiB x 3 stages) by 0.5-1.5 points of the d2d rate, and every other shape tried (chunk
// 8-64 KiB, 2-16 stages, 1-3 stores in flight) by more.
#include <cuda_runtime.h>

#include <algorithm>

#include "../runtime/kernel_launch.cuh"
#include "../runtime/kernel_lists.hpp"
#include "prefetch_copy_launch.hpp"
#include "symmoe/core/device_info.hpp"
#include "symmoe/core/env.hpp"
#include "symmoe/core/error.hpp"
#include "symmoe/device/ptx_bulk.cuh"
#include "symmoe/device/split_barrier.cuh"

namespace symmoe::prefetch {
namespace {

constexpr int kThreads = 1024;  // the vector copy uses them all; the bulk copy one
constexpr size_t kBarrierBytes = 128;  // mbarriers at the front of shared memory
constexpr size_t kPrefetchSmem = kBarrierBytes + size_t{kPrefetchPipelineBytes};
static_assert(kPrefetchMaxStages * sizeof(uint64_t) <= kBarrierBytes);

// NOTE [bulk prefetch pipeline]: the work is num_tasks x chunks_per_task chunks of up to
// chunk_bytes; block b takes chunks b, b + grid, ... One thread per block issues everything:
// it keeps L = stages - stores_in_flight loads (global -> shared, completing on the stage's
// mbarrier) ahead of the store (shared -> global, a bulk group) it issues for the oldest
// landed stage. The load of chunk i + L reuses the stage of chunk i + L - stages, whose store
// is stores_in_flight groups older than chunk i's: wait_group_read<stores_in_flight> before
// that load guarantees the store has finished reading the stage. After the last store,
// wait_all makes every write complete before the block counts itself done.
template <int kStoresInFlight>
__device__ bool copy_chunks(const PrefetchCopyArgs& a, uint8_t* smem, const device::WaitContext& ctx) {
  namespace bulk = device::bulk;
  auto* bars = reinterpret_cast<uint64_t*>(smem);
  uint8_t* stages = smem + kBarrierBytes;
  const uint64_t chunk_bytes = a.pipeline.chunk_bytes;
  const int num_stages = a.pipeline.stages;
  const uint64_t ahead = static_cast<uint64_t>(num_stages - kStoresInFlight);
  const uint64_t expert_bytes = a.layout.expert_bytes;
  const uint64_t per_task = (expert_bytes + chunk_bytes - 1) / chunk_bytes;
  const uint64_t total = per_task * a.num_tasks;
  const uint64_t first = blockIdx.x;
  const uint64_t mine = first < total ? (total - first + gridDim.x - 1) / gridDim.x : 0;
  auto* local = reinterpret_cast<uint8_t*>(a.peers.base);

  for (int s = 0; s < num_stages; ++s) bulk::mbarrier_init(&bars[s], 1);
  bulk::fence_mbarrier_init();

  auto chunk = [&](uint64_t i, uint8_t** src, uint8_t** dst, uint32_t* bytes, uint32_t* peer) {
    const uint64_t k = first + i * gridDim.x;
    const device::CopyTask t = a.tasks[k / per_task];
    const uint64_t offset = (k % per_task) * chunk_bytes;
    *bytes = static_cast<uint32_t>(min(chunk_bytes, expert_bytes - offset));
    *src = a.peers.map(local + t.src_offset + offset, static_cast<int>(t.src_rank));
    *dst = a.peers.map(local + t.dst_offset + offset, static_cast<int>(t.dst_rank));
    *peer = t.src_rank;
  };
  auto issue_load = [&](uint64_t i) {
    uint8_t *src, *dst;
    uint32_t bytes, peer;
    chunk(i, &src, &dst, &bytes, &peer);
    const int s = static_cast<int>(i % num_stages);
    bulk::mbarrier_arrive_expect_tx(&bars[s], bytes);
    bulk::load_async(stages + chunk_bytes * s, src, bytes, &bars[s]);
  };

  for (uint64_t i = 0; i < mine && i < ahead; ++i) issue_load(i);
  for (uint64_t i = 0; i < mine; ++i) {
    const int s = static_cast<int>(i % num_stages);
    const uint32_t parity = static_cast<uint32_t>((i / num_stages) & 1);
    uint8_t *src, *dst;
    uint32_t bytes, peer;
    chunk(i, &src, &dst, &bytes, &peer);
    const bool landed = device::bounded_wait(
        ctx, device::WaitSite{"bulk_load", static_cast<uint32_t>(i), a.peers.rank, static_cast<int32_t>(peer)},
        1, [&] { return uint64_t{bulk::mbarrier_try_wait(&bars[s], parity)}; },
        [](uint64_t v) { return v != 0; });
    if (!landed) {
      bulk::wait_all();
      return false;
    }
    bulk::store_async(dst, stages + chunk_bytes * s, bytes);
    bulk::commit_group();
    const uint64_t next = i + ahead;
    if (next < mine) {
      bulk::wait_group_read<kStoresInFlight>();
      issue_load(next);
    }
  }
  bulk::wait_all();
  return true;
}

__device__ bool copy_chunks(const PrefetchCopyArgs& a, uint8_t* smem, const device::WaitContext& ctx) {
  switch (a.pipeline.stores_in_flight) {
    case 2: return copy_chunks<2>(a, smem, ctx);
    case 3: return copy_chunks<3>(a, smem, ctx);
    default: return copy_chunks<1>(a, smem, ctx);
  }
}

// NOTE [vector prefetch copy]: the same chunks as the bulk pipeline (block b takes chunks b,
// b + grid, ..., so a rank's blocks work on neighbouring chunks at any time); every thread
// moves 16-byte words j, j + blockDim, ... of a chunk, with up to kVectorUnroll loads in flight
// before it stores them. Each thread's stores are performed before the block counts itself
// done (fences in count_block_done). (Equal contiguous ranges per block, and chunks cut at
// arbitrary 16-byte boundaries, both measured slower on the H200.)
constexpr int kVectorUnroll = 8;

__device__ void copy_chunks_vector(const PrefetchCopyArgs& a) {
  const uint64_t chunk_bytes = a.pipeline.chunk_bytes;
  const uint64_t expert_bytes = a.layout.expert_bytes;
  const uint64_t per_task = (expert_bytes + chunk_bytes - 1) / chunk_bytes;
  const uint64_t total = per_task * a.num_tasks;
  auto* local = reinterpret_cast<uint8_t*>(a.peers.base);
  for (uint64_t k = blockIdx.x; k < total; k += gridDim.x) {
    const device::CopyTask t = a.tasks[k / per_task];
    const uint64_t offset = (k % per_task) * chunk_bytes;
    const uint32_t words = static_cast<uint32_t>(min(chunk_bytes, expert_bytes - offset) / 16);
    const auto* src = reinterpret_cast<const uint4*>(
        a.peers.map(local + t.src_offset + offset, static_cast<int>(t.src_rank)));
    auto* dst = reinterpret_cast<uint4*>(a.peers.map(local + t.dst_offset + offset, static_cast<int>(t.dst_rank)));
    for (uint32_t base = threadIdx.x; base < words; base += kVectorUnroll * blockDim.x) {
      uint4 v[kVectorUnroll];
#pragma unroll
      for (int u = 0; u < kVectorUnroll; ++u) {
        const uint32_t j = base + u * blockDim.x;
        if (j < words) v[u] = device::ptx::ld_nc_na_v4(src + j);
      }
#pragma unroll
      for (int u = 0; u < kVectorUnroll; ++u) {
        const uint32_t j = base + u * blockDim.x;
        if (j < words) device::ptx::st_na_v4(dst + j, v[u]);
      }
    }
  }
}

// Start and end barriers per NOTE [split-phase barrier]: no grid_sync, so each block starts
// copying as soon as every rank has arrived and leaves as soon as its copies are complete; only
// the grid's last block waits for the other ranks at the end.
__global__ void __launch_bounds__(kThreads, 1) sm90_prefetch_copy_kernel(PrefetchCopyArgs a) {
  extern __shared__ __align__(128) uint8_t smem[];
  const device::WaitContext ctx{a.status, a.timeout_ns, "sm90_prefetch_copy"};
  auto* pad = reinterpret_cast<device::SignalPad*>(a.peers.base + a.layout.pad_offset);
  // Early launch: nothing before this line reads or writes memory (NOTE [early prefetch launch]).
  device::ptx::griddep_wait();
  const bool stamp = a.trace != nullptr && threadIdx.x == 0;
  if (stamp && blockIdx.x == 0) a.trace->kernel_start_ns = device::ptx::globaltimer_ns();
  const uint64_t base = device::split_barrier_base(pad);
  // Start: every owner's weights are final and every consumer's slots are free.
  int ok = !a.synchronize || device::split_barrier_enter(a.peers, pad, base, ctx, 0);
  if (stamp && blockIdx.x == 0) a.trace->entered_ns = device::ptx::globaltimer_ns();
  if (ok && a.pipeline.vector) {
    copy_chunks_vector(a);
  } else if (ok && threadIdx.x == 0) {
    ok = copy_chunks(a, smem, ctx);
  }
  // This block's copies are complete (or abandoned): the next kernel may be scheduled.
  device::ptx::griddep_launch_dependents();
  // Static weights (no barriers, no trace) touch no grid state: such launches may overlap.
  if (!a.synchronize && a.trace == nullptr) return;
  // A failed block still counts itself done (the grid word returns to 0).
  if (!device::count_block_done(a.grid)) return;
  if (stamp) a.trace->copies_done_ns = device::ptx::globaltimer_ns();
  // End: every copy into every slot is performed before any rank goes on.
  if (a.synchronize) device::split_barrier_exit(a.peers, pad, base, ctx, 1);
  if (stamp) a.trace->left_ns = device::ptx::globaltimer_ns();
}

// Owner-pulls reduction: grads[j] += sum over sources (rank order) of slot gradients, then the
// sources are zeroed. float4 granularity; sources are read and cleared by the owner only.
__global__ void __launch_bounds__(256) fp32_grad_reduce_kernel(GradReduceArgs a) {
  const device::WaitContext ctx{a.status, a.timeout_ns, "fp32_grad_reduce"};
  auto* pad = reinterpret_cast<device::SignalPad*>(a.peers.base + a.pad_offset);
  // Start: every rank finished writing its slot gradients (stream order covers this rank's).
  // Both barriers per NOTE [split-phase barrier].
  const uint64_t base = device::split_barrier_base(pad);
  if (!device::split_barrier_enter(a.peers, pad, base, ctx, 0)) {
    device::count_block_done(a.grid);
    return;
  }
  const uint64_t vec_per_expert = a.elements / 4;
  const uint64_t total = vec_per_expert * a.experts_per_rank;
  auto* local = reinterpret_cast<uint8_t*>(a.peers.base);
  for (uint64_t v = blockIdx.x * uint64_t{blockDim.x} + threadIdx.x; v < total;
       v += uint64_t{gridDim.x} * blockDim.x) {
    const uint64_t j = v / vec_per_expert;
    const uint64_t q = v % vec_per_expert;
    float4* out = reinterpret_cast<float4*>(a.owner_grads + j * a.elements) + q;
    float4 acc = *out;
    const uint32_t begin = a.source_begin[j], end = a.source_begin[j + 1];
    for (uint32_t k = begin; k < end; ++k) {
      const GradSource src = a.sources[k];
      const float4 g = reinterpret_cast<const float4*>(
          a.peers.map(local + src.offset, static_cast<int>(src.rank)))[q];
      acc.x += g.x;
      acc.y += g.y;
      acc.z += g.z;
      acc.w += g.w;
    }
    *out = acc;
    for (uint32_t k = begin; k < end; ++k) {
      const GradSource src = a.sources[k];
      reinterpret_cast<float4*>(a.peers.map(local + src.offset, static_cast<int>(src.rank)))[q] =
          make_float4(0.f, 0.f, 0.f, 0.f);
    }
  }
  // End: every slot is cleared before any rank writes new gradients into it.
  if (device::count_block_done(a.grid)) device::split_barrier_exit(a.peers, pad, base, ctx, 1);
}

}  // namespace

PrefetchPipeline prefetch_pipeline_from_env() {
  PrefetchPipeline p{};
  p.chunk_bytes = static_cast<uint32_t>(env::get_int("SYMMOE_PREFETCH_CHUNK_KB")) * 1024;
  p.stages = static_cast<int>(env::get_int("SYMMOE_PREFETCH_STAGES"));
  p.stores_in_flight = static_cast<int>(env::get_int("SYMMOE_PREFETCH_STORES_IN_FLIGHT"));
  p.vector = env::get_string("SYMMOE_PREFETCH_COPY") == "vector" ? 1 : 0;
  p.early_launch = env::get_bool("SYMMOE_PREFETCH_EARLY_LAUNCH") ? 1 : 0;
  if (p.vector) return p;  // no stages
  SYMMOE_CHECK(uint64_t{p.chunk_bytes} * p.stages <= kPrefetchPipelineBytes, "the prefetch pipeline ",
               "needs SYMMOE_PREFETCH_STAGES (", p.stages, ") x SYMMOE_PREFETCH_CHUNK_KB (",
               p.chunk_bytes / 1024, ") <= ", kPrefetchPipelineBytes / 1024, " KiB of shared memory");
  SYMMOE_CHECK(p.stores_in_flight < p.stages, "SYMMOE_PREFETCH_STORES_IN_FLIGHT (", p.stores_in_flight,
               ") must be below SYMMOE_PREFETCH_STAGES (", p.stages, ")");
  return p;
}

runtime::GridLaunch prefetch_copy_config(int device, runtime::SmBudget budget,
                                         const PrefetchPipeline& pipeline, uint64_t num_chunks) {
  const DeviceInfo info = query_device(device);
  // The vector copy needs no stages but takes the same shared memory: one block per SM, so
  // the grid covers exactly the SMs of the budget.
  const size_t smem = kBarrierBytes + (pipeline.vector ? size_t{kPrefetchPipelineBytes}
                                                       : size_t{pipeline.chunk_bytes} * pipeline.stages);
  SYMMOE_CHECK(static_cast<size_t>(info.smem_per_block_optin) >= smem, "the prefetch "
               "pipeline needs ", smem, " bytes of shared memory per block; device ",
               device, " offers ", info.smem_per_block_optin);
  runtime::GridLaunch c;
  c.sms = runtime::plan_sms(info.num_sms, info.cc_major, budget);
  c.block = kThreads;
  c.smem = smem;
  c.grid = static_cast<int>(std::max<uint64_t>(1, std::min<uint64_t>(c.sms.usable, num_chunks)));
  return c;
}

// NOTE [early prefetch launch]: with PrefetchPipeline::early_launch the prefetch is launched as
// a programmatic dependent of the kernel before it on the stream: its blocks may become
// resident while that kernel finishes (for a previous prefetch: while its last block waits at
// the end barrier), and wait in griddepcontrol.wait — before any memory access — until it has
// completed and its writes are visible. Every block triggers its own dependents once its
// copies are done. Stream semantics are unchanged; only launch latency is hidden.
void launch_prefetch_copy(const PrefetchCopyArgs& args, const runtime::GridLaunch& config,
                          cudaStream_t stream) {
  runtime::launch_kernel(sm90_prefetch_copy_kernel, args, config.grid, config.block, config.smem, true,
                         stream, "sm90_prefetch_copy_kernel", args.pipeline.early_launch != 0);
}

runtime::GridLaunch grad_reduce_config(int device, runtime::SmBudget budget) {
  const DeviceInfo info = query_device(device);
  int per_sm = 0;
  SYMMOE_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, fp32_grad_reduce_kernel, 256, 0));
  runtime::GridLaunch c;
  c.sms = runtime::plan_sms(info.num_sms, info.cc_major, budget);
  c.block = 256;
  c.grid = std::max(1, std::min(per_sm, 4) * c.sms.usable);
  return c;
}

void launch_grad_reduce(const GradReduceArgs& args, const runtime::GridLaunch& config,
                        cudaStream_t stream) {
  runtime::launch_kernel(fp32_grad_reduce_kernel, args, config.grid, config.block, config.smem, true,
                         stream, "fp32_grad_reduce_kernel");
}

}  // namespace symmoe::prefetch

namespace symmoe::runtime {

void append_prefetch_kernels(std::vector<KernelEntry>& out) {
  out.push_back({"sm90_prefetch_copy_kernel",
                 reinterpret_cast<const void*>(&prefetch::sm90_prefetch_copy_kernel),
                 static_cast<int>(prefetch::kPrefetchSmem)});
  out.push_back({"fp32_grad_reduce_kernel",
                 reinterpret_cast<const void*>(&prefetch::fp32_grad_reduce_kernel)});
}

}  // namespace symmoe::runtime
