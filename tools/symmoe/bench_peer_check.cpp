// `symmoe bench peer-check`: what the pre-launch peer validation costs per launch.
//
// Measures, on rank 0 of N virtual ranks: (a) a full check (null/duplicate scan plus one
// cuPointerGetAttribute per peer) with the cache emptied before each call, and (b) a cached
// check (one hash lookup + compare). Same run, same pointer set; median of many repetitions.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <vector>

#include "args.hpp"
#include "bench_common.hpp"
#include "commands.hpp"
#include "report.hpp"
#include "symmoe/comm/thread_group.hpp"
#include "symmoe/core/device_info.hpp"
#include "symmoe/core/error.hpp"
#include "symmoe/reference/host_symmetric_heap.hpp"
#include "symmoe/symm/peer_validation.hpp"
#include "symmoe/symm/symmetric_buffer.hpp"

namespace symmoe::cli {

using ::symmoe::detail::concat;
using Clock = std::chrono::steady_clock;

namespace {

struct Timings {
  double full_us = 0;
  double cached_ns = 0;
};

Timings measure(std::span<void* const> bases, int rank, int device,
                const symm::PointerProbe& probe, int reps) {
  Timings t;
  std::vector<double> full;
  for (int i = 0; i < reps; ++i) {
    symm::forget_validated(bases, device);
    const auto a = Clock::now();
    symm::validate_peers(bases, rank, device, probe);
    full.push_back(std::chrono::duration<double, std::micro>(Clock::now() - a).count());
  }
  t.full_us = median(full);
  constexpr int kBatch = 10000;
  std::vector<double> cached;
  for (int i = 0; i < reps; ++i) {
    const auto a = Clock::now();
    for (int j = 0; j < kBatch; ++j) symm::validate_peers(bases, rank, device, probe);
    cached.push_back(std::chrono::duration<double, std::nano>(Clock::now() - a).count() / kBatch);
  }
  t.cached_ns = median(cached);
  return t;
}

symm::ProbeResult host_probe(const void*, int, std::string*) {
  return symm::ProbeResult::kAddressable;
}

}  // namespace

int run_bench_peer_check(const std::vector<std::string>& argv) {
  std::vector<int> rank_counts = {2, 8, 72};
  int reps = 101;
  std::string json_path;
  const std::string usage = "usage: symmoe bench peer-check [--ranks 2,8,72] [--reps N] [--json FILE]";
  if (help_requested(argv)) return print_usage(usage);
  try {
    Args args(argv, {}, {"ranks", "reps", "json"});
    if (auto r = args.get_int_list("ranks"); !r.empty()) rank_counts = r;
    reps = static_cast<int>(args.get_int("reps", reps, 3, 100000));
    json_path = args.get("json").value_or("");
  } catch (const Error& e) {
    return usage_exit("bench peer-check", e, usage);
  }
  const bool gpu = probe_cuda().device_count > 0;
  Report report("symmoe bench peer-check");
  report.section(concat("pre-launch peer validation cost (", gpu ? "GPU symmetric buffer, driver probe"
                                                                 : "no GPU: host heap, null/duplicate checks only",
                        "), median of ", reps));
  std::printf("  %6s %16s %16s %10s\n", "ranks", "full check (us)", "cached (ns)", "speedup");
  for (int n : rank_counts) {
    SYMMOE_CHECK(n >= 1 && n <= device::kMaxRanks, "--ranks ", n, " must lie in [1, 72]");
    Timings t;
    comm::run_thread_ranks(n, gpu ? std::vector<int>{0} : std::vector<int>{}, [&](comm::Group& g) {
      std::unique_ptr<symm::SymmetricBuffer> buf;
      std::unique_ptr<reference::HostSymmetricHeap> heap;
      if (gpu) buf = symm::SymmetricBuffer::create(g, symm::SymmetricBufferOptions::from_env(2 << 20));
      else heap = std::make_unique<reference::HostSymmetricHeap>(g, 4096);
      if (g.rank() == 0) {
        t = gpu ? measure(buf->peer_bases(), 0, buf->device(), symm::driver_pointer_probe, reps)
                : measure(heap->bases(), 0, -1, host_probe, reps);
      }
      g.barrier();
    });
    std::printf("  %6d %16.2f %16.1f %9.0fx\n", n, t.full_us, t.cached_ns,
                t.full_us * 1000 / t.cached_ns);
    report.fact(concat("ranks_", n, "_full_check"), t.full_us, "us");
    report.fact(concat("ranks_", n, "_cached_check"), t.cached_ns, "ns");
  }
  if (!json_path.empty()) report.write_json(json_path);
  return 0;
}

}  // namespace symmoe::cli
