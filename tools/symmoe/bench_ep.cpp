// `symmoe bench dispatch` / `symmoe bench combine`: EP dispatch and combine between ranks as
// threads (virtual ranks on one GPU, or one rank per GPU with --devices), against a
// straightforward GPU implementation in the same run (ep_baseline.hpp: chunks moved with one
// copy per peer, and with NCCL send/recv when every rank has its own GPU) and the d2d copy rate.
//
// Timing: each rank captures one CUDA graph of 8 steps [event, dispatch, event, combine] and
// replays it `reps` times after a host barrier; an op's time is the interval between its
// events (what the rank's stream spends in it, waiting for peers included). Per rank the median
// over all steps; the table shows the slowest rank. "Empty" is the same op with 0 tokens on
// every rank: launch + barrier + bookkeeping, no data. The baseline is host-synchronous (its
// split sizes reach the host), timed with the host clock between barriers.
//
// Byte accounting (payload rows only; ids, weights, scales of bf16 rows excluded):
//   dispatch Remote  = sum over receivers of tokens read from other ranks x row bytes
//                      (row bytes = 2H for bf16, H + H/32 for fp8 with its scales)
//   dispatch Logical = sum over ranks of: staging (read input row + write send row, per token)
//                      + tokens read by receivers (once per token and destination rank)
//                      + rows written (once per (token, expert) pair)
//   combine  Remote  = sum over (token, k) pairs whose expert lives on another rank of 2H
//   combine  Logical = pairs x 2H read + tokens x 2H written
//   BW = Logical / slowest rank's time (the ranks share one GPU's HBM: compare with the d2d
//   copy rate); CommBW = Remote / time.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <mutex>
#include <random>

#include "args.hpp"
#include "bench_common.hpp"
#include "commands.hpp"
#include "ep_baseline.hpp"
#include "report.hpp"
#include "symmoe/comm/thread_group.hpp"
#include "symmoe/core/cuda_handles.hpp"
#include "symmoe/core/device_info.hpp"
#include "symmoe/core/error.hpp"
#include "symmoe/core/nccl_loader.hpp"
#include "symmoe/ep/ep_buffer.hpp"
#include "symmoe/ep/routing.hpp"
#include "symmoe/reference/ep_reference.hpp"

namespace symmoe::cli {

using ::symmoe::detail::concat;

namespace {

struct Options {
  ModelPreset model = model_presets()[0];
  std::vector<int> tokens = {1, 128, 4096};
  std::vector<std::string> routings = {"uniform", "zipf"};
  int ranks = 8;
  std::vector<int> devices = {0};
  device::EpPayload payload = device::EpPayload::kBF16;
  int alignment = 128;
  int reps = 10;
  bool baseline = true;
  std::string json;
};

constexpr int kStepsPerGraph = 8;

int parse(const std::vector<std::string>& argv, Options* o, const char* name) {
  const std::string usage =
      concat("usage: symmoe bench ", name,
             " [--model deepseek-v3|qwen3-moe|kimi-k2] [--experts E] [--top-k K] [--hidden H] "
             "[--tokens 1,128,4096] [--routing uniform,zipf] [--ranks 8] [--devices 0,1,...] "
             "[--payload bf16|fp8] [--alignment 128] [--reps 10] [--no-baseline] [--json FILE]");
  if (help_requested(argv)) return print_usage(usage);
  try {
    Args args(argv, {"no-baseline"}, {"model", "experts", "top-k", "hidden", "tokens", "routing", "ranks",
                                      "devices", "payload", "alignment", "reps", "json"});
    const std::string model = args.get("model").value_or(o->model.name);
    o->model = find_model(model);
    o->model.experts = static_cast<int>(args.get_int("experts", o->model.experts, 1, 1024));
    o->model.top_k = static_cast<int>(args.get_int("top-k", o->model.top_k, 1, 32));
    o->model.hidden = static_cast<int>(args.get_int("hidden", o->model.hidden, 8, 65536));
    if (args.get("tokens")) o->tokens = args.get_int_list("tokens");
    for (int t : o->tokens) SYMMOE_CHECK(t >= 1 && t <= 65536, "--tokens ", t, " must lie in [1, 65536]");
    if (auto r = args.get("routing")) o->routings = split_commas(*r);
    for (const auto& r : o->routings) SYMMOE_CHECK(r == "uniform" || r == "zipf", "--routing '", r, "': uniform or zipf");
    o->ranks = static_cast<int>(args.get_int("ranks", o->ranks, 1, 72));
    if (args.get("devices")) o->devices = args.get_int_list("devices");
    const std::string payload = args.get("payload").value_or("bf16");
    SYMMOE_CHECK(payload == "bf16" || payload == "fp8", "--payload '", payload, "': bf16 or fp8");
    o->payload = payload == "fp8" ? device::EpPayload::kFP8 : device::EpPayload::kBF16;
    o->alignment = static_cast<int>(args.get_int("alignment", o->alignment, 1, 4096));
    o->reps = static_cast<int>(args.get_int("reps", o->reps, 1, 10000));
    o->baseline = !args.flag("no-baseline");
    o->json = args.get("json").value_or("");
    return kParsed;
  } catch (const Error& e) {
    return usage_exit(concat("bench ", name), e, usage);
  }
}

// Top-k ids of every rank: distinct experts per token; uniform, or Zipf(1) over expert ids
// (expert 0 hottest, so the first ranks receive the most).
std::vector<std::vector<int64_t>> make_routing(const ep::EpShape& s, int tokens, const std::string& kind,
                                               uint64_t seed) {
  std::vector<double> weight(s.num_experts, 1.0);
  if (kind == "zipf") {
    for (int e = 0; e < s.num_experts; ++e) weight[e] = 1.0 / (e + 1);
  }
  std::vector<std::vector<int64_t>> ids(s.num_ranks);
  for (int r = 0; r < s.num_ranks; ++r) {
    std::mt19937_64 rng(seed * 131 + r);
    std::discrete_distribution<int> pick(weight.begin(), weight.end());
    ids[r].resize(static_cast<size_t>(tokens) * s.top_k);
    for (int t = 0; t < tokens; ++t) {
      int64_t* row = ids[r].data() + static_cast<size_t>(t) * s.top_k;
      for (int k = 0; k < s.top_k; ++k) {
        int64_t e;
        do e = pick(rng); while (std::find(row, row + k, e) != row + k);
        row[k] = e;
      }
    }
  }
  return ids;
}

struct Accounting {
  uint64_t dispatch_remote = 0, dispatch_logical = 0, combine_remote = 0, combine_logical = 0;
  uint64_t max_rows_needed = 0;   // expert-major rows incl. padding, largest rank
  uint64_t max_pairs_received = 0;
};

Accounting account(const ep::EpShape& s, int tokens, const std::vector<ep::RoutingLayout>& layouts,
                   device::EpPayload payload, int alignment) {
  Accounting a;
  const uint64_t h = static_cast<uint64_t>(s.hidden);
  const uint64_t row = payload == device::EpPayload::kFP8 ? h + h / 32 : 2 * h;
  const int epr = s.experts_per_rank();
  for (int me = 0; me < s.num_ranks; ++me) {
    uint64_t rows = 0, pairs = 0;
    for (int e = me * epr; e < (me + 1) * epr; ++e) {
      uint64_t n = 0;
      for (const auto& l : layouts) n += l.tokens_per_expert[e];
      rows += (n + alignment - 1) / alignment * alignment;
      pairs += n;
    }
    a.max_rows_needed = std::max(a.max_rows_needed, rows);
    a.max_pairs_received = std::max(a.max_pairs_received, pairs);
    a.dispatch_logical += static_cast<uint64_t>(tokens) * (2 * h + row) + pairs * row;
    uint64_t my_pairs = 0, remote_pairs = 0;
    for (int src = 0; src < s.num_ranks; ++src) {
      const uint64_t n = layouts[src].tokens_per_rank[me];
      a.dispatch_logical += n * row;
      if (src != me) a.dispatch_remote += n * row;
    }
    for (int e = 0; e < s.num_experts; ++e) {
      my_pairs += layouts[me].tokens_per_expert[e];
      if (s.rank_of(e) != me) remote_pairs += layouts[me].tokens_per_expert[e];
    }
    a.combine_logical += my_pairs * 2 * h + static_cast<uint64_t>(tokens) * 2 * h;
    a.combine_remote += remote_pairs * 2 * h;
  }
  return a;
}

ep::EpConfig ep_config(const Options& o, const ep::EpShape& s, int tokens, int64_t capacity) {
  ep::EpConfig c;
  c.num_experts = s.num_experts;
  c.top_k = s.top_k;
  c.hidden = s.hidden;
  c.max_tokens_per_rank = tokens;
  c.alignment = o.alignment;
  c.payload = o.payload;
  c.recv_capacity_rows = capacity;
  return c;
}

struct Timing {
  double dispatch_us = 0, combine_us = 0;                 // slowest rank's median
  double empty_dispatch_us = 0, empty_combine_us = 0;
  double base_dispatch_us = 0, base_combine_us = 0;  // peer-copy baseline
  double nccl_dispatch_us = 0, nccl_combine_us = 0;  // NCCL send/recv baseline (one GPU per rank)
};

// Per rank: medians of the dispatch and combine intervals over all replayed steps.
std::pair<double, double> time_graph(comm::Group& g, runtime::DeviceRuntime& rt, cudaStream_t stream, int reps,
                                     const std::function<void()>& dispatch, const std::function<void()>& combine) {
  std::vector<Event> marks(2 * kStepsPerGraph + 1);
  CapturedGraph graph(stream, [&] {
    for (int i = 0; i < kStepsPerGraph; ++i) {
      marks[2 * i].record_in_graph(stream);
      dispatch();
      marks[2 * i + 1].record_in_graph(stream);
      combine();
    }
    marks.back().record_in_graph(stream);
  });
  std::vector<double> d, c;
  for (int rep = 0; rep < reps + 1; ++rep) {  // one warm-up replay
    g.barrier();
    graph.launch(stream);
    rt.check(stream);
    for (int i = 0; rep > 0 && i < kStepsPerGraph; ++i) {
      d.push_back(marks[2 * i + 1].since(marks[2 * i]) * 1e3);
      c.push_back(marks[2 * i + 2].since(marks[2 * i + 1]) * 1e3);
    }
  }
  return {median(d), median(c)};
}

using Clock = std::chrono::steady_clock;

Timing run_case(const Options& o, const ep::EpShape& s, int tokens, const std::vector<std::vector<int64_t>>& ids,
                const Accounting& acc, int64_t capacity, int sms_per_rank, bool distinct_gpus) {
  std::mutex m;
  std::vector<Timing> per_rank(o.ranks);
  comm::run_thread_ranks(o.ranks, o.devices, [&](comm::Group& g) {
    const int rank = g.rank();
    int device = 0;
    SYMMOE_CUDA_CHECK(cudaGetDevice(&device));
    runtime::DeviceRuntime rt(device);
    auto buffer = ep::EpBuffer::create(g, rt, ep_config(o, s, tokens, capacity));
    Stream stream;
    const uint64_t elems = static_cast<uint64_t>(tokens) * s.hidden;
    void *x = nullptr, *out = nullptr;
    int64_t* idx = nullptr;
    float* w = nullptr;
    SYMMOE_CUDA_CHECK(cudaMalloc(&x, elems * 2));
    SYMMOE_CUDA_CHECK(cudaMalloc(&out, elems * 2));
    SYMMOE_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&idx), ids[rank].size() * 8));
    SYMMOE_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&w), ids[rank].size() * 4));
    SYMMOE_CUDA_CHECK(cudaMemsetAsync(x, 0x3C, elems * 2, stream));  // bf16 0x3C3C ~ 0.0115
    SYMMOE_CUDA_CHECK(cudaMemcpyAsync(idx, ids[rank].data(), ids[rank].size() * 8, cudaMemcpyHostToDevice, stream));
    SYMMOE_CUDA_CHECK(cudaMemsetAsync(w, 0, ids[rank].size() * 4, stream));
    const runtime::SmBudget budget{sms_per_rank, 0};
    ep::DispatchInput in;
    in.x = x;
    in.topk_idx = idx;
    in.topk_weights = w;
    ep::DispatchHandle handle;
    Timing t;
    for (int empty = 0; empty < 2; ++empty) {
      in.num_tokens = empty ? 0 : tokens;
      const auto [d, c] = time_graph(
          g, rt, stream, o.reps, [&] { handle = buffer->dispatch(in, stream, budget); },
          [&] { buffer->combine(handle, out, stream, nullptr, budget); });
      (empty ? t.empty_dispatch_us : t.dispatch_us) = d;
      (empty ? t.empty_combine_us : t.combine_us) = c;
    }
    SYMMOE_CUDA_CHECK(cudaStreamSynchronize(stream));
    g.barrier();  // every rank's last combine ended before any buffer is unmapped
    buffer.reset();
    g.barrier();
    // Baselines, host-timed between barriers: the peer-copy one always, NCCL where every rank
    // has its own GPU.
    auto time_baseline = [&](BaselineTransport transport, double* dispatch_us, double* combine_us) {
      BaselineEp base(g, s, tokens, std::max<uint64_t>(acc.max_pairs_received, 1), transport);
      std::vector<double> d, c;
      for (int rep = 0; rep < o.reps + 1; ++rep) {
        g.barrier();
        const auto t0 = Clock::now();
        base.dispatch(x, idx, w, tokens, stream);
        const auto t1 = Clock::now();
        base.combine(out, stream);
        const auto t2 = Clock::now();
        if (rep == 0) continue;
        d.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
        c.push_back(std::chrono::duration<double, std::micro>(t2 - t1).count());
      }
      *dispatch_us = median(d);
      *combine_us = median(c);
    };
    if (o.baseline && o.payload == device::EpPayload::kBF16) {
      time_baseline(BaselineTransport::kPeerCopy, &t.base_dispatch_us, &t.base_combine_us);
      if (distinct_gpus) time_baseline(BaselineTransport::kNccl, &t.nccl_dispatch_us, &t.nccl_combine_us);
    }
    SYMMOE_CUDA_CHECK(cudaStreamSynchronize(stream));
    cudaFree(x);
    cudaFree(out);
    cudaFree(idx);
    cudaFree(w);
    std::lock_guard lock(m);
    per_rank[rank] = t;
  }, 600);
  Timing worst;
  for (const Timing& t : per_rank) {
    worst.dispatch_us = std::max(worst.dispatch_us, t.dispatch_us);
    worst.combine_us = std::max(worst.combine_us, t.combine_us);
    worst.empty_dispatch_us = std::max(worst.empty_dispatch_us, t.empty_dispatch_us);
    worst.empty_combine_us = std::max(worst.empty_combine_us, t.empty_combine_us);
    worst.base_dispatch_us = std::max(worst.base_dispatch_us, t.base_dispatch_us);
    worst.base_combine_us = std::max(worst.base_combine_us, t.base_combine_us);
    worst.nccl_dispatch_us = std::max(worst.nccl_dispatch_us, t.nccl_dispatch_us);
    worst.nccl_combine_us = std::max(worst.nccl_combine_us, t.nccl_combine_us);
  }
  return worst;
}

// Without a GPU the CPU reference is the backend: the same routings and byte accounting, all
// ranks' dispatch and combine computed on the host by one thread (no baseline, no d2d rate).
int run_cpu(const Options& o, const char* name, bool show_dispatch, const std::string& why) {
  const ep::EpShape shape{o.ranks, o.model.experts, o.model.top_k, o.model.hidden};
  shape.validate();
  Report report(concat("symmoe bench ", name));
  report.section(concat(name, ": ", o.model.name, " (", shape.num_experts, " experts, top-", shape.top_k,
                        ", hidden ", shape.hidden, "), ", o.ranks, " ranks on the CPU reference backend"));
  report.line(concat("no CUDA GPU (", why, "): timing the CPU reference (one host thread for all ranks); "
                     "the GPU kernels are not involved"));
  std::printf("\n  %-8s %6s %10s %10s %11s %10s\n", "Routing", "Tokens", "Remote(MB)", "Logical", "CPU(us)", "BW(GB/s)");
  for (const auto& routing : o.routings) {
    for (int tokens : o.tokens) {
      const auto ids = make_routing(shape, tokens, routing, 7);
      std::vector<ep::RoutingLayout> layouts;
      std::vector<reference::RankTokens> in(o.ranks);
      for (int r = 0; r < o.ranks; ++r) {
        layouts.push_back(ep::compute_routing_layout(std::span<const int64_t>(ids[r]), tokens, shape));
        in[r].num_tokens = tokens;
        in[r].x.assign(static_cast<size_t>(tokens) * shape.hidden, 0x3C3C);
        in[r].topk_idx = ids[r];
        in[r].topk_weights.assign(ids[r].size(), 0.5f);
      }
      const Accounting acc = account(shape, tokens, layouts, o.payload, o.alignment);
      const auto t0 = Clock::now();
      const auto received = reference::dispatch_reference(in, shape, o.alignment, o.payload);
      const auto t1 = Clock::now();
      std::vector<std::vector<uint16_t>> y;
      for (const auto& m : received) y.emplace_back(m.src_rank.size() * shape.hidden, uint16_t{0x3C3C});
      const auto t2 = Clock::now();
      reference::combine_reference(y, received, in, shape);
      const auto t3 = Clock::now();
      const double us = std::chrono::duration<double, std::micro>(show_dispatch ? t1 - t0 : t3 - t2).count();
      const uint64_t remote = show_dispatch ? acc.dispatch_remote : acc.combine_remote;
      const uint64_t logical = show_dispatch ? acc.dispatch_logical : acc.combine_logical;
      std::printf("  %-8s %6d %10.1f %10.1f %11.1f %10.2f\n", routing.c_str(), tokens, remote / 1e6, logical / 1e6, us,
                  logical / (us * 1e-6) / 1e9);
      report.record(concat(routing, " T=", tokens, " ", name, " cpu_reference"), us, "us");
    }
  }
  if (!o.json.empty()) report.write_json(o.json);
  return 0;
}

int run(const std::vector<std::string>& argv, const char* name, bool show_dispatch) {
  Options o;
  if (const int rc = parse(argv, &o, name); rc != kParsed) return rc;
  const CudaStatus cuda = probe_cuda();
  if (cuda.device_count == 0) return run_cpu(o, name, show_dispatch, cuda.reason);
  for (int d : o.devices) {
    SYMMOE_CHECK(d >= 0 && d < cuda.device_count, "--devices names device ", d, " of ", cuda.device_count);
  }
  const ep::EpShape shape{o.ranks, o.model.experts, o.model.top_k, o.model.hidden};
  shape.validate();
  const DeviceInfo info = query_device(o.devices[0]);
  const int ranks_per_device = (o.ranks + static_cast<int>(o.devices.size()) - 1) / static_cast<int>(o.devices.size());
  const int sms_per_rank = std::max(1, (info.num_sms - 2) / ranks_per_device);
  SYMMOE_CUDA_CHECK(cudaSetDevice(o.devices[0]));
  const double d2d = d2d_copy_gbps(o.reps);
  const bool shared_gpu = ranks_per_device > 1;
  Report report(concat("symmoe bench ", name));
  report.section(concat(name, ": ", o.model.name, " (", shape.num_experts, " experts, top-", shape.top_k,
                        ", hidden ", shape.hidden, "), ", o.ranks, shared_gpu ? " virtual ranks on " : " ranks on ",
                        o.devices.size(), " x ", info.name, ", ", sms_per_rank, " SMs per rank, ",
                        o.payload == device::EpPayload::kFP8 ? "fp8 payload" : "bf16 payload"));
  report.line("Remote = bytes read from other ranks' buffers; Logical = bytes read + written (staging, "
              "pull reads once per token and destination rank, one write per (token, expert) row; combine: "
              "one read per (token, k), one write per token); BW = Logical / slowest rank's median; "
              "Empty = the same op with 0 tokens (launch + barrier + bookkeeping)");
  std::string nccl_why;
  const NcclApi* nccl_api = nccl(&nccl_why);
  const bool with_nccl = !shared_gpu && nccl_api != nullptr && nccl_api->has_point_to_point();
  report.line(shared_gpu ? "NCCL all-to-all baseline: n/a (the ranks share one GPU; NCCL needs one GPU per rank)"
              : with_nccl ? concat("NCCL all-to-all baseline: grouped ncclSend/ncclRecv of the same chunks (",
                                   nccl_version_string(), ")")
                          : concat("NCCL all-to-all baseline: n/a (", nccl_api ? "no ncclSend/ncclRecv" : nccl_why, ")"));
  report.fact("d2d copy rate (1 GiB cudaMemcpyAsync, read+write)", d2d, "GB/s");
  std::printf("\n  %-8s %6s %10s %10s %9s %10s %10s %9s %8s %10s %8s %14s\n", "Routing", "Tokens", "Remote(MB)",
              "Logical", "Worst(us)", "BW(GB/s)", "CommBW", "vs d2d", "Empty", "Base(us)", "speedup", "sym mem/rank");
  if (with_nccl) std::printf("  (then per row: NCCL(us) and speedup over NCCL)\n");
  for (const auto& routing : o.routings) {
    for (int tokens : o.tokens) {
      const auto ids = make_routing(shape, tokens, routing, 7);
      std::vector<ep::RoutingLayout> layouts;
      for (const auto& r : ids) layouts.push_back(ep::compute_routing_layout(std::span<const int64_t>(r), tokens, shape));
      const Accounting acc = account(shape, tokens, layouts, o.payload, o.alignment);
      // Worst-case receive rows where every rank's buffer fits in 60 % of the free memory.
      const ep::EpConfig probe = ep_config(o, shape, tokens, 0);
      size_t free_bytes = 0, total_bytes = 0;
      SYMMOE_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
      const uint64_t worst_bytes = ep::ep_buffer_layout(probe, o.ranks).bytes_per_rank * ranks_per_device;
      const bool fits = worst_bytes < free_bytes * 0.6;
      const int64_t capacity = fits ? 0 : static_cast<int64_t>(acc.max_rows_needed);
      const Timing t = run_case(o, shape, tokens, ids, acc, capacity, sms_per_rank, with_nccl);
      const double us = show_dispatch ? t.dispatch_us : t.combine_us;
      const double empty = show_dispatch ? t.empty_dispatch_us : t.empty_combine_us;
      const double base = show_dispatch ? t.base_dispatch_us : t.base_combine_us;
      const uint64_t remote = show_dispatch ? acc.dispatch_remote : acc.combine_remote;
      const uint64_t logical = show_dispatch ? acc.dispatch_logical : acc.combine_logical;
      const double bw = logical / (us * 1e-6) / 1e9;
      const double comm = remote / (us * 1e-6) / 1e9;
      // Symmetric memory per rank for this capacity (DESIGN: every bench prints it).
      const double gib = ep::ep_buffer_layout(ep_config(o, shape, tokens, capacity), o.ranks).bytes_per_rank /
                         double(1ull << 30);
      char gib_text[32];
      std::snprintf(gib_text, sizeof(gib_text), "%.2fGiB", gib);
      const std::string cap = concat(fits ? "worst " : "fit ", gib_text);
      report.record(concat(routing, " T=", tokens, " symmetric_bytes_per_rank"), gib * (1ull << 30), "B");
      // No baseline (fp8 payload, --no-baseline): n/a, never a 0 that reads like a measurement.
      char base_text[16] = "n/a", speedup_text[16] = "n/a";
      if (base > 0) {
        std::snprintf(base_text, sizeof(base_text), "%.1f", base);
        std::snprintf(speedup_text, sizeof(speedup_text), "%.2fx", base / us);
      }
      std::printf("  %-8s %6d %10.1f %10.1f %9.1f %10.1f %10.1f %8.1f%% %8.1f %10s %8s %14s\n",
                  routing.c_str(), tokens, remote / 1e6, logical / 1e6, us, bw, comm, 100 * bw / d2d, empty,
                  base_text, speedup_text, cap.c_str());
      const double nccl_us = show_dispatch ? t.nccl_dispatch_us : t.nccl_combine_us;
      if (nccl_us > 0) std::printf("  %-8s %6s NCCL %9.1f us, %5.2fx\n", "", "", nccl_us, nccl_us / us);
      // The JSON keeps both ops (combine needs a dispatch, so both were measured).
      for (const bool d : {true, false}) {
        const std::string key = concat(routing, " T=", tokens, d ? " dispatch" : " combine");
        const double op_us = d ? t.dispatch_us : t.combine_us;
        const uint64_t op_logical = d ? acc.dispatch_logical : acc.combine_logical;
        const uint64_t op_remote = d ? acc.dispatch_remote : acc.combine_remote;
        const double op_base = d ? t.base_dispatch_us : t.base_combine_us;
        report.record(key + " worst", op_us, "us");
        report.record(key + " empty", d ? t.empty_dispatch_us : t.empty_combine_us, "us");
        report.record(key + " remote", op_remote / 1e6, "MB");
        report.record(key + " logical", op_logical / 1e6, "MB");
        report.record(key + " bw", op_logical / (op_us * 1e-6) / 1e9, "GB/s");
        report.record(key + " comm_bw", op_remote / (op_us * 1e-6) / 1e9, "GB/s");
        report.record(key + " fraction_of_d2d", op_logical / (op_us * 1e-6) / 1e9 / d2d);
        if (op_base > 0) report.record(key + " baseline", op_base, "us");
        const double op_nccl = d ? t.nccl_dispatch_us : t.nccl_combine_us;
        if (op_nccl > 0) report.record(key + " nccl_baseline", op_nccl, "us");
      }
      // The pair (dispatch + combine) for the combined figure.
      const double pair_bw = (acc.dispatch_logical + acc.combine_logical) / ((t.dispatch_us + t.combine_us) * 1e-6) / 1e9;
      report.record(concat(routing, " T=", tokens, " dispatch+combine bw"), pair_bw, "GB/s");
      report.record(concat(routing, " T=", tokens, " dispatch+combine fraction_of_d2d"), pair_bw / d2d);
    }
  }
  if (!o.json.empty()) report.write_json(o.json);
  return 0;
}

}  // namespace

int run_bench_dispatch(const std::vector<std::string>& args) { return run(args, "dispatch", true); }
int run_bench_combine(const std::vector<std::string>& args) { return run(args, "combine", false); }

}  // namespace symmoe::cli
