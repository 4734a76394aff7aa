// `symmoe bench barrier`: device-side synchronization latency, virtual ranks on one GPU.
//
//   cross-rank barrier  one block per rank, `count` barriers back to back in one launch;
//                       us per barrier = launch time / count (per rank: median of reps; the
//                       table shows the slowest rank's median).
//   baseline            what a host-driven step pays instead: kernel launch + stream
//                       synchronize + host barrier across the rank threads, per step.
//   grid+barrier round  each rank's persistent grid (one block per SM, the GPU's SMs split
//                       between the ranks): grid_sync, then block 0 runs a cross-rank barrier.
//   grid_sync           one rank, one block per usable SM (reserve 2), grid_sync only.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <mutex>
#include <vector>

#include "args.hpp"
#include "bench_common.hpp"
#include "commands.hpp"
#include "report.hpp"
#include "symmoe/comm/thread_group.hpp"
#include "symmoe/core/cuda_handles.hpp"
#include "symmoe/core/device_info.hpp"
#include "symmoe/core/error.hpp"
#include "symmoe/runtime/barrier_kernels.hpp"
#include "symmoe/runtime/residency_probe.hpp"
#include "symmoe/symm/symmetric_buffer.hpp"

namespace symmoe::cli {

using ::symmoe::detail::concat;

namespace {

struct RankState {
  explicit RankState(comm::Group& g)
      : buffer(symm::SymmetricBuffer::create(g, symm::SymmetricBufferOptions::from_env(64 * 1024))),
        rt(buffer->device()) {}
  std::unique_ptr<symm::SymmetricBuffer> buffer;
  runtime::DeviceRuntime rt;
  Stream stream;
};

struct Row {
  int ranks = 0;
  double barrier_us = 0;   // slowest rank's median
  double baseline_us = 0;  // host-synchronized step, slowest rank
  double round_us = 0;     // grid_sync + cross-rank barrier round, slowest rank
};

// Times fn (which enqueues on `stream`) per rank; returns per-rank medians in microseconds per
// unit (fn's work / units).
template <class Fn>
double timed_median_us(comm::Group& g, RankState& s, int reps, int units, Fn fn) {
  std::vector<double> samples;
  for (int i = 0; i < reps; ++i) {
    Event start, stop;
    g.barrier();
    start.record(s.stream);
    fn();
    stop.record(s.stream);
    s.rt.check(s.stream);
    samples.push_back(static_cast<double>(stop.since(start)) * 1000.0 / units);
  }
  return median(samples);
}

Row measure(int n, int count, int reps, int device_sms, size_t one_per_sm_smem) {
  Row row;
  row.ranks = n;
  std::mutex m;
  comm::run_thread_ranks(n, {0}, [&](comm::Group& g) {
    RankState s(g);
    const device::PeerTable peers = s.buffer->peer_table();
    const size_t bytes = s.buffer->bytes_per_rank();
    auto barriers = [&](int c) {
      runtime::launch_cross_rank_barriers(s.rt, peers, bytes, 0, c, 1, s.stream);
    };
    barriers(100);  // warm-up
    s.rt.check(s.stream);
    const double barrier_us = timed_median_us(g, s, reps, count, [&] { barriers(count); });

    // Baseline: a host-driven step per synchronization.
    constexpr int kSteps = 200;
    std::vector<double> steps;
    for (int rep = 0; rep < reps; ++rep) {
      g.barrier();
      const auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < kSteps; ++i) {
        barriers(0);
        SYMMOE_CUDA_CHECK(cudaStreamSynchronize(s.stream));
        g.barrier();
      }
      steps.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / kSteps);
    }
    const double baseline_us = median(steps);

    // Persistent grids, one block per SM, the SMs split between the ranks.
    const runtime::SmBudget slice{(device_sms - 2) / n, 0};
    const int rounds = std::max(100, count / 10);
    const double round_us = timed_median_us(g, s, reps, rounds, [&] {
      runtime::launch_grid_barriers(s.rt, slice, rounds, one_per_sm_smem, s.stream, &peers, bytes, 0);
    });
    {
      std::lock_guard lock(m);  // released before the group barrier below
      row.barrier_us = std::max(row.barrier_us, barrier_us);
      row.baseline_us = std::max(row.baseline_us, baseline_us);
      row.round_us = std::max(row.round_us, round_us);
    }
    g.barrier();
  }, 120);
  return row;
}

}  // namespace

int run_bench_barrier(const std::vector<std::string>& argv) {
  std::vector<int> rank_counts = {2, 4, 8};
  int count = 10000, reps = 5;
  std::string json_path;
  const std::string usage = "usage: symmoe bench barrier [--ranks 2,4,8] [--count 10000] [--reps 5] [--json FILE]";
  if (help_requested(argv)) return print_usage(usage);
  try {
    Args args(argv, {}, {"ranks", "count", "reps", "json"});
    if (auto r = args.get_int_list("ranks"); !r.empty()) rank_counts = r;
    count = static_cast<int>(args.get_int("count", count, 1, 10'000'000));
    reps = static_cast<int>(args.get_int("reps", reps, 1, 1000));
    json_path = args.get("json").value_or("");
  } catch (const Error& e) {
    return usage_exit("bench barrier", e, usage);
  }
  const CudaStatus cuda = probe_cuda();
  if (cuda.device_count == 0) {
    std::fprintf(stderr, "symmoe bench barrier: needs a CUDA GPU (%s)\n", cuda.reason.c_str());
    return 1;
  }
  const DeviceInfo info = query_device(0);
  const size_t one_per_sm = static_cast<size_t>(info.smem_per_block_optin / 2 + 1024);
  Report report("symmoe bench barrier");
  report.section(concat("device synchronization latency, virtual ranks on ", info.name,
                        " (median of ", reps, ", slowest rank)"));
  std::printf("  %5s %18s %22s %20s %9s\n", "ranks", "barrier (us)", "host baseline (us)",
              "grid+barrier (us)", "speedup");
  for (int n : rank_counts) {
    SYMMOE_CHECK(n >= 1 && n <= 32, "--ranks ", n, " must lie in [1, 32] for one GPU");
    const Row r = measure(n, count, reps, info.num_sms, one_per_sm);
    std::printf("  %5d %18.2f %22.2f %20.2f %8.1fx\n", n, r.barrier_us, r.baseline_us, r.round_us,
                r.baseline_us / r.barrier_us);
    report.fact(concat("ranks_", n, "_barrier"), r.barrier_us, "us");
    report.fact(concat("ranks_", n, "_host_baseline"), r.baseline_us, "us");
    report.fact(concat("ranks_", n, "_grid_plus_barrier_round"), r.round_us, "us");
  }
  {
    runtime::DeviceRuntime rt(0);
    Stream stream;
    const int iters = 10000;
    std::vector<double> samples;
    runtime::GridLaunch g;
    for (int i = 0; i < reps; ++i) {
      Event start, stop;
      start.record(stream);
      g = runtime::launch_grid_barriers(rt, {0, 2}, iters, one_per_sm, stream);
      stop.record(stream);
      rt.check(stream);
      samples.push_back(static_cast<double>(stop.since(start)) * 1000.0 / iters);
    }
    const double us = median(samples);
    std::printf("  grid_sync, %d blocks (one per SM, 2 SMs reserved): %.2f us\n", g.grid, us);
    report.fact("grid_sync_one_block_per_sm", us, "us");
  }
  if (!json_path.empty()) report.write_json(json_path);
  return 0;
}

int run_bench_residency(const std::vector<std::string>& argv) {
  double hold_s = 2.0;
  std::string json_path;
  const std::string usage = "usage: symmoe bench residency [--hold S] [--json FILE]";
  if (help_requested(argv)) return print_usage(usage);
  try {
    Args args(argv, {}, {"hold", "json"});
    hold_s = static_cast<double>(args.get_int("hold", 2, 1, 60));
    json_path = args.get("json").value_or("");
  } catch (const Error& e) {
    return usage_exit("bench residency", e, usage);
  }
  const CudaStatus cuda = probe_cuda();
  if (cuda.device_count == 0) {
    std::fprintf(stderr, "symmoe bench residency: needs a CUDA GPU (%s)\n", cuda.reason.c_str());
    return 1;
  }
  Report report("symmoe bench residency");
  report.section(concat("grid-synchronized launch while a side stream holds 2 SMs for ", hold_s, " s"));
  runtime::DeviceRuntime rt(0);
  struct Case {
    const char* name;
    runtime::SmBudget budget;
    double timeout_s;
  };
  const Case cases[] = {{"every SM, 30 s bound", {0, 0}, 30},
                        {"every SM, 0.5 s bound", {0, 0}, 0.5},
                        {"2 SMs reserved", {0, 2}, 30}};
  std::printf("  %-24s %6s %12s %14s  %s\n", "case", "grid", "time (ms)", "side running", "outcome");
  for (const Case& c : cases) {
    const runtime::ResidencyReport r = runtime::probe_residency(rt, c.budget, 2, hold_s, c.timeout_s);
    const std::string outcome = r.failure.empty() ? "completed" : "timed out: " + r.failure;
    std::printf("  %-24s %6d %12.3f %14s  %s\n", c.name, r.grid, r.grid_ms,
                r.side_still_running ? "yes" : "no", outcome.c_str());
    report.fact(concat(c.name, " time"), r.grid_ms, "ms");
    report.fact(concat(c.name, " side kernel still running"), r.side_still_running ? "yes" : "no");
    report.fact(concat(c.name, " outcome"), outcome);
  }
  if (!json_path.empty()) report.write_json(json_path);
  return 0;
}

}  // namespace symmoe::cli
