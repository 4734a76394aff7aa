// `symmoe bench prefetch` / `symmoe bench grad-reduce`: expert-weight movement between virtual
// ranks on one GPU (the copies stay in HBM; the GPU's bandwidth is shared by the ranks).
//
// Byte accounting (printed with the table):
//   Data   = sum over ranks of bytes read + bytes written by that rank's kernel
//            (prefetch: 2 x copies x expert bytes; grad-reduce: reads of slot + owner grads,
//            writes of owner grads + zeroed slots)
//   Remote = the part of Data whose source or destination is another rank's buffer
//   Worst  = the slowest rank's time per prefetch (CUDA graph of 10 prefetches replayed twice
//            back to back per timing window; median over reps); "1/graph" = the same with a
//            graph of one prefetch replayed 20 times (a graph launch per prefetch)
//   BW = Data / Worst, CommBW = Remote / Worst; baselines in the same run: a 1 GiB
//   cudaMemcpyAsync device-to-device copy (read + write), and the same copies issued as one
//   cudaMemcpyAsync per expert from every rank at once.
//   --phases adds, per case, the worst rank's phase times of one prefetch from its trace
//   (PrefetchTrace): relaunch gap after the previous prefetch, start wait, copies, end wait.
#include <algorithm>
#include <cstdio>
#include <mutex>
#include <random>

#include "args.hpp"
#include "bench_common.hpp"
#include "commands.hpp"
#include "report.hpp"
#include "symmoe/comm/thread_group.hpp"
#include "symmoe/core/cuda_handles.hpp"
#include "symmoe/core/device_info.hpp"
#include "symmoe/core/error.hpp"
#include "symmoe/prefetch/grad_reducer.hpp"
#include "symmoe/prefetch/prefetcher.hpp"

namespace symmoe::cli {

using ::symmoe::detail::concat;
using prefetch::ExpertSpec;
using prefetch::PrefetchPlan;

namespace {

struct Case {
  std::string name;
  uint32_t rows, cols;
  std::vector<uint32_t> slots_per_rank;  // by rank (cycled)
  bool random_owners = false;
};

// Rank r's slots hold experts owned by other ranks (remote copies) when there are any. By
// default the owners go round the other ranks (slot s of rank r: owner r + 1 + s mod (ranks - 1))
// and each owner's experts in turn, so with equal slot counts every rank copies (pull) and
// serves (push) the same number of experts — a placement balanced across owners, as an EP
// engine keeps it. random_owners draws owner and expert at random: push then waits for the
// busiest owner.
PrefetchPlan make_plan(const Case& c, int ranks, uint32_t experts_per_rank, uint32_t seed) {
  std::mt19937 rng(seed);
  PrefetchPlan plan;
  plan.per_rank.resize(ranks);
  const auto others = static_cast<uint32_t>(std::max(1, ranks - 1));
  for (int r = 0; r < ranks; ++r) {
    const uint32_t k = c.slots_per_rank[r % c.slots_per_rank.size()];
    for (uint32_t s = 0; s < k; ++s) {
      uint32_t owner, local;
      if (c.random_owners) {
        owner = rng() % ranks;
        if (ranks > 1 && owner == static_cast<uint32_t>(r)) owner = (owner + 1) % ranks;
        local = rng() % experts_per_rank;
      } else {
        owner = ranks > 1 ? (r + 1 + s % others) % ranks : 0;
        local = (s / others + r) % experts_per_rank;
      }
      plan.per_rank[r].push_back({owner * experts_per_rank + local, s});
    }
  }
  return plan;
}

// A timing window runs 20 operations back to back: kOpsPerGraph operations captured in one graph
// (as an engine captures a whole step: the prefetch is one node among others, so what sits
// between two prefetches is a node-to-node gap), replayed 20 / kOpsPerGraph times. With
// kOpsPerGraph = 1 every operation pays a graph launch (reported beside). Back-to-back
// operations stay in lockstep through their barriers, so the ranks' launch skew (host threads
// waking at different times) is paid once per window; the time is divided by 20.
constexpr int kOpsPerWindow = 20;
constexpr int kOpsPerGraph = 10;

// Times a captured graph on every rank; returns the median over reps of the slowest rank (ms
// per operation).
template <class Enqueue>
double worst_rank_ms(comm::Group& g, runtime::DeviceRuntime& rt, cudaStream_t stream, int reps,
                     std::vector<double>& shared, std::mutex& m, Enqueue enqueue,
                     int ops_per_graph = kOpsPerGraph) {
  CapturedGraph graph(stream, [&] {
    for (int k = 0; k < ops_per_graph; ++k) enqueue();
  });
  std::vector<double> worst;
  for (int i = 0; i < reps + 2; ++i) {  // two warm-up windows
    Event start, stop;
    g.barrier();
    start.record(stream);
    for (int k = 0; k < kOpsPerWindow / ops_per_graph; ++k) graph.launch(stream);
    stop.record(stream);
    rt.check(stream);
    const double ms = stop.since(start) / kOpsPerWindow;
    {
      std::lock_guard lock(m);
      shared[g.rank()] = ms;
    }
    g.barrier();
    if (i >= 2) worst.push_back(*std::max_element(shared.begin(), shared.end()));
    g.barrier();
  }
  return median(worst);
}

// Where a prefetch's time goes, per rank (us): the gap from the previous prefetch's end to this
// kernel's start, the start-barrier wait, the copies, and the end-barrier wait. Measured on the
// second of two back-to-back launches in one graph, after warm-up replays.
struct Phases {
  double gap = 0, start_wait = 0, copies = 0, end_wait = 0;
};

// Collective over the ranks: host calls that may wait for the device (allocation, graph
// instantiation, free) run while no rank's kernel is waiting for a peer.
Phases measure_phases(comm::Group& g, prefetch::Prefetcher& p, cudaStream_t stream, int sms) {
  prefetch::PrefetchTrace* trace = nullptr;
  SYMMOE_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&trace), 2 * sizeof(prefetch::PrefetchTrace)));
  Phases out;
  prefetch::PrefetchTrace t[2];
  {
    CapturedGraph graph(stream, [&] {
      p.launch(stream, {sms, 0}, 0, trace);
      p.launch(stream, {sms, 0}, 0, trace + 1);
    });
    g.barrier();
    for (int i = 0; i < 10; ++i) graph.launch(stream);
    SYMMOE_CUDA_CHECK(cudaMemcpyAsync(t, trace, sizeof(t), cudaMemcpyDeviceToHost, stream));
    SYMMOE_CUDA_CHECK(cudaStreamSynchronize(stream));
    g.barrier();
  }
  cudaFree(trace);
  out.gap = (static_cast<double>(t[1].kernel_start_ns) - static_cast<double>(t[0].left_ns)) * 1e-3;
  out.start_wait = (t[1].entered_ns - t[1].kernel_start_ns) * 1e-3;
  out.copies = (t[1].copies_done_ns - t[1].entered_ns) * 1e-3;
  out.end_wait = (t[1].left_ns - t[1].copies_done_ns) * 1e-3;
  return out;
}

const std::vector<Case>& cases() {
  static const std::vector<Case> all = {
      {"slots_1", 3584, 3072, {1}},         {"slots_2", 3584, 3072, {2}},
      {"slots_3", 3584, 3072, {3}},         {"slots_5", 3584, 3072, {5}},
      {"ramp_0_3", 3584, 3072, {0, 4, 8, 12}}, {"heavy", 3584, 3072, {17}},
      {"full_3x8", 3584, 3072, {24}},       {"thin_7168x128", 7168, 128, {12}},
      {"tall_1024x3072", 1024, 3072, {12}}, {"tiny_512x512", 512, 512, {17}},
      {"random_5", 3584, 3072, {5}, true},
  };
  return all;
}

struct Options {
  int ranks = 4;
  int reps = 20;
  prefetch::PrefetchMode mode = prefetch::PrefetchMode::kPull;
  bool static_weights = false;
  bool phases = false;
  std::vector<std::string> only;  // --cases: names to run (all when empty)
  std::string json;
};

int parse(const std::vector<std::string>& argv, Options* o, const char* name) {
  const std::string usage = concat("usage: symmoe bench ", name,
                                   " [--ranks 4] [--reps 20] [--mode pull|push] [--static-weights] [--phases] "
                                   "[--cases a,b] [--json FILE]");
  if (help_requested(argv)) return print_usage(usage);
  try {
    Args args(argv, {"static-weights", "phases"}, {"ranks", "reps", "mode", "cases", "json"});
    o->ranks = static_cast<int>(args.get_int("ranks", o->ranks, 1, 16));
    o->reps = static_cast<int>(args.get_int("reps", o->reps, 1, 10000));
    const std::string mode = args.get("mode").value_or("pull");
    SYMMOE_CHECK(mode == "pull" || mode == "push", "--mode '", mode, "' must be pull or push");
    o->mode = mode == "pull" ? prefetch::PrefetchMode::kPull : prefetch::PrefetchMode::kPush;
    o->json = args.get("json").value_or("");
    o->static_weights = args.flag("static-weights");
    o->phases = args.flag("phases");
    if (auto names = args.get("cases")) {
      o->only = split_commas(*names);
      for (const std::string& n : o->only) {
        bool known = false;
        for (const Case& c : cases()) known = known || c.name == n;
        SYMMOE_CHECK(known, "--cases: no case named '", n, "'");
      }
    }
    return kParsed;
  } catch (const Error& e) {
    return usage_exit(concat("bench ", name), e, usage);
  }
}

constexpr uint32_t kExpertsPerRank = 8;

// What both benchmarks need first: the device, each virtual rank's SM slice, and the
// same-run copy ceiling.
struct Setup {
  DeviceInfo info;
  int sms_per_rank = 0;
  double d2d_gbps = 0;
};

Setup setup(const Options& o, const char* name) {
  const CudaStatus cuda = probe_cuda();
  SYMMOE_CHECK(cuda.device_count > 0, "symmoe bench ", name, " needs a CUDA GPU: ", cuda.reason);
  Setup s;
  s.info = query_device(0);
  s.sms_per_rank = (s.info.num_sms - 2) / o.ranks;
  s.d2d_gbps = d2d_copy_gbps(o.reps);
  return s;
}

}  // namespace

int run_bench_prefetch(const std::vector<std::string>& argv) {
  Options o;
  if (const int rc = parse(argv, &o, "prefetch"); rc != kParsed) return rc;
  const Setup env = setup(o, "prefetch");
  const DeviceInfo& info = env.info;
  const int sms = env.sms_per_rank;
  const double d2d = env.d2d_gbps;
  Report report("symmoe bench prefetch");
  report.section(concat("expert prefetch (", prefetch::prefetch_mode_name(o.mode),
                        o.static_weights ? ", static weights: no barriers in pull mode" : ", start and end barriers",
                        "), ", o.ranks,
                        " virtual ranks on one ", info.name, ", ", kExpertsPerRank,
                        " experts per rank, bf16"));
  report.line("Data = sum over ranks of bytes read + written (2 x copies x expert bytes); CommBW "
              "counts copies between different ranks; BW = Data / Worst; Worst = slowest rank, per "
              "prefetch, 2 replays of a 10-prefetch graph back to back per window; 1/graph = 20 "
              "replays of a 1-prefetch graph");
  report.fact("d2d copy rate (1 GiB cudaMemcpyAsync, read+write)", d2d, "GB/s");
  std::printf("\n  %-16s %4s %6s %6s %6s %4s %10s %10s %10s %10s %8s %12s %8s %14s\n", "Config", "E",
              "Slots", "H", "Hp", "SMs", "Data(MB)", "Worst(us)", "BW(GB/s)", "CommBW", "vs d2d",
              "memcpy(GB/s)", "speedup", "1/graph(us,%)");
  for (const Case& c : cases()) {
    if (!o.only.empty() && std::find(o.only.begin(), o.only.end(), c.name) == o.only.end()) continue;
    const ExpertSpec spec = ExpertSpec::single(c.rows, c.cols, prefetch::WeightDtype::kBF16);
    uint32_t max_slots = *std::max_element(c.slots_per_rank.begin(), c.slots_per_rank.end());
    const PrefetchPlan plan = make_plan(c, o.ranks, kExpertsPerRank, 1234);
    std::mutex m;
    std::vector<double> shared(o.ranks, 0);
    double worst_ms = 0, single_ms = 0, memcpy_ms = 0;
    uint64_t data = 0, remote = 0;
    std::vector<Phases> phases(o.ranks);
    comm::run_thread_ranks(o.ranks, {0}, [&](comm::Group& g) {
      auto pool = prefetch::ExpertPool::create(g, spec, kExpertsPerRank, std::max(1u, max_slots));
      runtime::DeviceRuntime rt(pool->buffer().device());
      Stream stream;
      SYMMOE_CUDA_CHECK(cudaMemsetAsync(pool->buffer().local(), g.rank() + 1, pool->layout().slots_offset, stream));
      prefetch::Prefetcher p(g, *pool, rt, plan, o.mode, {o.static_weights});
      {
        std::lock_guard lock(m);
        data += p.bytes().read + p.bytes().written;
        remote += p.bytes().remote;
      }
      const double ms = worst_rank_ms(g, rt, stream, o.reps, shared, m, [&] {
        p.launch(stream, {sms, 0});
      });
      const double ms_single = worst_rank_ms(g, rt, stream, o.reps, shared, m, [&] {
        p.launch(stream, {sms, 0});
      }, 1);
      // Baseline: the same copies, one cudaMemcpyAsync per expert (pull order on each rank).
      const auto tasks = prefetch::copy_tasks(plan, pool->layout(), g.rank(), prefetch::PrefetchMode::kPull);
      const double base = worst_rank_ms(g, rt, stream, o.reps, shared, m, [&] {
        for (const auto& t : tasks) {
          const auto* src = static_cast<const char*>(pool->buffer().peer(t.src_rank)) + t.src_offset;
          auto* dst = static_cast<char*>(pool->buffer().local()) + t.dst_offset;
          SYMMOE_CUDA_CHECK(cudaMemcpyAsync(dst, src, pool->layout().expert_bytes, cudaMemcpyDeviceToDevice, stream));
        }
      });
      if (o.phases) {
        g.barrier();
        phases[g.rank()] = measure_phases(g, p, stream, sms);
        rt.check(stream);
      }
      if (g.rank() == 0) {
        worst_ms = ms;
        single_ms = ms_single;
        memcpy_ms = base;
      }
      g.barrier();
    }, 300);
    const double bw = data / (worst_ms * 1e-3) / 1e9;
    const double comm_bw = remote / (worst_ms * 1e-3) / 1e9;
    const double memcpy_bw = memcpy_ms > 0 ? data / (memcpy_ms * 1e-3) / 1e9 : 0;
    const double single_bw = data / (single_ms * 1e-3) / 1e9;
    std::printf("  %-16s %4u %6u %6u %6u %4d %10.2f %10.2f %10.1f %10.1f %7.1f%% %12.1f %7.2fx %8.2f %4.1f%%\n",
                c.name.c_str(), kExpertsPerRank * o.ranks, max_slots, c.rows, c.cols, sms, data / 1e6,
                worst_ms * 1e3, bw, comm_bw, 100 * bw / d2d, memcpy_bw, memcpy_ms / worst_ms,
                single_ms * 1e3, 100 * single_bw / d2d);
    report.fact(c.name + " worst", worst_ms * 1e3, "us");
    report.fact(c.name + " data", data / 1e6, "MB");
    report.fact(c.name + " bw", bw, "GB/s");
    report.fact(c.name + " comm_bw", comm_bw, "GB/s");
    report.fact(c.name + " fraction_of_d2d", bw / d2d);
    report.fact(c.name + " memcpy_baseline_bw", memcpy_bw, "GB/s");
    report.fact(c.name + " worst_one_per_graph", single_ms * 1e3, "us");
    report.fact(c.name + " fraction_of_d2d_one_per_graph", single_bw / d2d);
    if (o.phases) {
      Phases worst;
      for (const Phases& q : phases) {
        worst.gap = std::max(worst.gap, q.gap);
        worst.start_wait = std::max(worst.start_wait, q.start_wait);
        worst.copies = std::max(worst.copies, q.copies);
        worst.end_wait = std::max(worst.end_wait, q.end_wait);
      }
      std::printf("  %-16s phases (us, max over ranks): relaunch gap %.2f, start wait %.2f, copies %.2f, "
                  "end wait %.2f\n", "", worst.gap, worst.start_wait, worst.copies, worst.end_wait);
      report.fact(c.name + " phase_relaunch_gap", worst.gap, "us");
      report.fact(c.name + " phase_start_wait", worst.start_wait, "us");
      report.fact(c.name + " phase_copies", worst.copies, "us");
      report.fact(c.name + " phase_end_wait", worst.end_wait, "us");
    }
  }
  if (!o.json.empty()) report.write_json(o.json);
  return 0;
}

int run_bench_grad_reduce(const std::vector<std::string>& argv) {
  Options o;
  if (const int rc = parse(argv, &o, "grad-reduce"); rc != kParsed) return rc;
  const Setup env = setup(o, "grad-reduce");
  const DeviceInfo& info = env.info;
  const int sms = env.sms_per_rank;
  const double d2d = env.d2d_gbps;
  Report report("symmoe bench grad-reduce");
  report.section(concat("fp32 gradient reduce to owners, ", o.ranks, " virtual ranks on one ",
                        info.name, ", ", kExpertsPerRank, " experts per rank"));
  report.line("Data = sum over ranks of (slot + owner gradient reads) + (owner writes + slot zeroing); "
              "CommBW counts reads and zeroing of other ranks' slots; BW = Data / Worst");
  report.fact("d2d copy rate (1 GiB cudaMemcpyAsync, read+write)", d2d, "GB/s");
  std::printf("\n  %-16s %4s %6s %6s %6s %4s %10s %10s %10s %10s %8s\n", "Config", "E", "Slots", "H",
              "Hp", "SMs", "Data(MB)", "Worst(us)", "BW(GB/s)", "CommBW", "vs d2d");
  for (const Case& c : cases()) {
    if (!o.only.empty() && std::find(o.only.begin(), o.only.end(), c.name) == o.only.end()) continue;
    if (c.rows * static_cast<uint64_t>(c.cols) > 4096ull * 3072) continue;  // keep fp32 pools modest
    const ExpertSpec spec = ExpertSpec::single(c.rows, c.cols, prefetch::WeightDtype::kBF16);
    const uint32_t max_slots = *std::max_element(c.slots_per_rank.begin(), c.slots_per_rank.end());
    const PrefetchPlan plan = make_plan(c, o.ranks, kExpertsPerRank, 99);
    std::mutex m;
    std::vector<double> shared(o.ranks, 0);
    double worst_ms = 0;
    uint64_t data = 0, remote = 0;
    comm::run_thread_ranks(o.ranks, {0}, [&](comm::Group& g) {
      auto pool = prefetch::GradPool::create(g, spec, kExpertsPerRank, std::max(1u, max_slots));
      runtime::DeviceRuntime rt(pool->buffer().device());
      Stream stream;
      float* grads = nullptr;
      SYMMOE_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&grads), kExpertsPerRank * spec.elements() * 4));
      SYMMOE_CUDA_CHECK(cudaMemsetAsync(grads, 0, kExpertsPerRank * spec.elements() * 4, stream));
      prefetch::GradReducer reducer(g, *pool, rt, plan);
      {
        std::lock_guard lock(m);
        data += reducer.bytes().read + reducer.bytes().written;
        remote += reducer.bytes().remote;
      }
      const double ms = worst_rank_ms(g, rt, stream, o.reps, shared, m, [&] {
        reducer.launch(grads, stream, {sms, 0});
      });
      if (g.rank() == 0) worst_ms = ms;
      g.barrier();
      SYMMOE_CUDA_CHECK(cudaStreamSynchronize(stream));
      cudaFree(grads);
    }, 300);
    const double bw = data / (worst_ms * 1e-3) / 1e9;
    std::printf("  %-16s %4u %6u %6u %6u %4d %10.2f %10.2f %10.1f %10.1f %7.1f%%\n", c.name.c_str(),
                kExpertsPerRank * o.ranks, max_slots, c.rows, c.cols, sms, data / 1e6, worst_ms * 1e3,
                bw, remote / (worst_ms * 1e-3) / 1e9, 100 * bw / d2d);
    report.fact(c.name + " worst", worst_ms * 1e3, "us");
    report.fact(c.name + " bw", bw, "GB/s");
    report.fact(c.name + " fraction_of_d2d", bw / d2d);
  }
  if (!o.json.empty()) report.write_json(o.json);
  return 0;
}

}  // namespace symmoe::cli
