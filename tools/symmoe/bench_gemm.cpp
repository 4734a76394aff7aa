// `symmoe bench gemm`: the expert grouped GEMM on model shapes against same-run cuBLASLt
// baselines (gemm_baseline.hpp): one dense GEMM of the same total FLOPs, and a loop of one
// GEMM per expert.
//
// Shapes: gate/up N = 2 I, K = H; down N = H, K = I (H hidden, I the expert's intermediate
// size). Every expert gets M rows (contiguous layout, offsets e * M; or masked with max_m = M).
//
// Timing: each implementation is captured once in a CUDA graph and replayed `reps` times with
// events around every replay (no host launch cost in the numbers); the median is reported. Each
// section first replays its graph untimed for --warmup-ms (Timing), and the sizes run in rising
// rows per expert (cases()).
// Our GEMM is timed two ways: "time" = a graph of `per_graph` (10) GEMMs back to back divided
// by that count — node to node, as in a captured model step, where a GEMM follows another
// kernel — with the launches alternating between two copies of the weights so that no launch
// finds the previous one's weights in L2; "1/graph" = one GEMM per graph, which adds the graph
// launch latency (a few us) to every sample. Wt% uses "time"; the baselines are timed like
// "time" (per_graph launches per graph, alternating weights).
//
// Accounting (per launch):
//   FLOPs   = 2 * E * M * N * K
//   Bytes   = act E*M*K*b + weights E*N*K*b + out E*M*N*2 (+ fp8 scales E*M*K/128*4 and
//             E*N*K/128^2*4), b = 1 (fp8) or 2 (bf16): each operand read once, out written once
//   HBM GB/s = Bytes / time; Wt% = weight bytes / time as a fraction of the same-run d2d copy
//   rate of 1 GiB (the decode-size criterion: weights dominate when M is small). Copy% = the
//   same against a d2d copy of the weight bytes themselves, timed like the GEMM (10 per graph):
//   what a kernel that only moves those bytes reaches at this size (launch, ramp and tail
//   included), so Wt% / Copy% separates the size's fixed costs from the GEMM's own.
//   Dense baseline: act [E*M, K] x one [N, K] weight matrix: the same FLOPs, E times fewer
//   weight bytes, per-tensor scales (no block-scale promotion): an upper bound for fp8. fp8
//   also gets "Dense block-scaled": that GEMM with the recipe's 1 x 128 / 128 x 128 scales
//   (cuBLASLt's promoting kernels, gemm_baseline.hpp), the same arithmetic as ours on one
//   weight matrix; n/a where cuBLASLt has no algorithm for it.
// --baselines picks them: cublas (dense and per-expert loop), deepgemm (its grouped GEMM, when
// built in), both (default) or none (= --no-baseline); deepgemm alone lets an A/B of our
// settings time DeepGEMM in every round at a fraction of the cost.
// --power: the board's SM clock, power and power-cap share over each timed section (ours, the
// baselines; gpu_power.hpp), so that implementations timed at different clocks show it. A
// section needs ~1 s for the figures to mean much (NVML refreshes power every ~20-100 ms):
// raise --reps; fewer than 20 samples are flagged.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "args.hpp"
#include "bench_common.hpp"
#include "commands.hpp"
#include "gemm_baseline.hpp"
#include "gemm_baseline_deepgemm.hpp"
#include "gemm_trace.hpp"
#include "gpu_power.hpp"
#include "report.hpp"
#include "symmoe/core/cuda_handles.hpp"
#include "symmoe/core/device_info.hpp"
#include "symmoe/core/error.hpp"
#include "symmoe/gemm/act_scales_transpose.hpp"
#include "symmoe/gemm/grouped_gemm.hpp"
#include "symmoe/runtime/device_runtime.hpp"

namespace symmoe::cli {

using ::symmoe::detail::concat;
using gemm::GemmDtype;
using gemm::GroupedLayout;

namespace {

// --warmup-ms default (Timing).
constexpr int kDefaultWarmupMs = 300;

struct GemmOptions {
  ModelPreset model = model_presets()[0];
  std::vector<int> m = {8, 64, 256, 1024, 4096};
  std::vector<int> experts = {8, 32};
  std::vector<std::string> ops = {"gate_up", "down"};
  std::vector<GemmDtype> dtypes = {GemmDtype::kFP8E4M3, GemmDtype::kBF16};
  GroupedLayout layout = GroupedLayout::kContiguous;
  gemm::ScaleLayout act_scales = gemm::ScaleLayout::kRowMajor;  // fp8 activation scales (--act-scales)
  bool transpose_scales = false;  // --act-scales row-to-col: row-major, transposed before each GEMM
  gemm::GemmTile tile = gemm::GemmTile::kAuto;
  gemm::GemmRaster raster = gemm::GemmRaster::kAlongM;
  int swizzle = 1;
  int reps = 20;
  int per_graph = 10;
  int sms = 0;
  bool baseline = true;  // the cuBLASLt baselines (dense, per-expert loop)
  bool deepgemm = true;  // the DeepGEMM baseline, when built in
  bool early_launch = true;
  bool dry_run = false;
  bool trace = false;
  bool power = false;
  int warmup_ms = kDefaultWarmupMs;  // each section replayed this long before it is timed (Timing)
  std::string json;
  bool fp8_any() const { return std::count(dtypes.begin(), dtypes.end(), GemmDtype::kFP8E4M3) > 0; }
};

constexpr const char* kGemmUsage =
    "usage: symmoe bench gemm [--model deepseek-v3|qwen3-moe|kimi-k2] [--hidden H] [--intermediate I] "
    "[--m 8,64,256,1024,4096] [--experts 8,32] [--op gate_up,down] [--dtype fp8,bf16] "
    "[--layout contiguous|masked] [--act-scales row|col|row-to-col] [--tile auto|large|small|decode|wgmma|swapab] [--raster m|n] "
    "[--swizzle 1|2|4|8] [--reps 20] [--per-graph 10] [--warmup-ms MS] [--sms N] [--baselines cublas,deepgemm|none] "
    "[--no-baseline] [--no-early-launch] [--trace] [--power] [--dry-run] [--json FILE]";

int parse_gemm(const std::vector<std::string>& argv, GemmOptions* o) {
  if (help_requested(argv)) return print_usage(kGemmUsage);
  try {
    Args args(argv, {"no-baseline", "no-early-launch", "dry-run", "trace", "power"},
              {"model", "hidden", "intermediate", "m", "experts", "op", "dtype", "layout", "act-scales", "tile", "raster", "swizzle", "reps", "per-graph", "warmup-ms", "sms", "json", "baselines"});
    const std::string model = args.get("model").value_or(o->model.name);
    o->model = find_model(model);
    o->model.hidden = static_cast<int>(args.get_int("hidden", o->model.hidden, 128, 65536));
    o->model.intermediate = static_cast<int>(args.get_int("intermediate", o->model.intermediate, 128, 65536));
    if (args.get("m")) o->m = args.get_int_list("m");
    for (int m : o->m) SYMMOE_CHECK(m >= 1 && m <= 65536, "--m ", m, " must lie in [1, 65536]");
    if (args.get("experts")) o->experts = args.get_int_list("experts");
    for (int e : o->experts) SYMMOE_CHECK(e >= 1 && e <= 1024, "--experts ", e, " must lie in [1, 1024]");
    if (auto op = args.get("op")) o->ops = split_commas(*op);
    for (const auto& op : o->ops) SYMMOE_CHECK(op == "gate_up" || op == "down", "--op '", op, "': gate_up or down");
    if (auto d = args.get("dtype")) {
      o->dtypes.clear();
      for (const auto& t : split_commas(*d)) {
        SYMMOE_CHECK(t == "fp8" || t == "bf16", "--dtype '", t, "': fp8 or bf16");
        o->dtypes.push_back(t == "fp8" ? GemmDtype::kFP8E4M3 : GemmDtype::kBF16);
      }
    }
    const std::string layout = args.get("layout").value_or("contiguous");
    SYMMOE_CHECK(layout == "contiguous" || layout == "masked", "--layout '", layout, "': contiguous or masked");
    o->layout = layout == "masked" ? GroupedLayout::kMasked : GroupedLayout::kContiguous;
    const std::string act_scales = args.get("act-scales").value_or("row");
    SYMMOE_CHECK(act_scales == "row" || act_scales == "col" || act_scales == "row-to-col", "--act-scales '",
                 act_scales, "': row ([rows, K/128]), col (K-block-major) or row-to-col (row-major, copied ",
                 "column-major by transpose_act_scales before each GEMM, the copy timed with it)");
    o->act_scales = act_scales == "row" ? gemm::ScaleLayout::kRowMajor : gemm::ScaleLayout::kColumnMajor;
    o->transpose_scales = act_scales == "row-to-col";
    const std::string tile = args.get("tile").value_or("auto");
    SYMMOE_CHECK(tile == "auto" || tile == "large" || tile == "small" || tile == "decode" || tile == "wgmma" ||
                     tile == "swapab",
                 "--tile '", tile, "': auto, large, small, decode (fp8), wgmma or swapab (fp8)");
    o->tile = tile == "large"    ? gemm::GemmTile::kLargeM
              : tile == "small"  ? gemm::GemmTile::kSmallM
              : tile == "decode" ? gemm::GemmTile::kDecode
              : tile == "wgmma"  ? gemm::GemmTile::kWgmma
              : tile == "swapab" ? gemm::GemmTile::kSwapAB
                                 : gemm::GemmTile::kAuto;
    SYMMOE_CHECK(o->act_scales == gemm::ScaleLayout::kRowMajor || !gemm::is_cutlass_tile(o->tile) || !o->fp8_any(),
                 "--act-scales ", act_scales, " with --tile ", tile,
                 ": the CUTLASS tiles read row-major scales only (col and row-to-col give the GEMM column-major ones)");
    const std::string raster = args.get("raster").value_or("m");
    SYMMOE_CHECK(raster == "m" || raster == "n", "--raster '", raster, "': m or n");
    o->raster = raster == "n" ? gemm::GemmRaster::kAlongN : gemm::GemmRaster::kAlongM;
    o->swizzle = static_cast<int>(args.get_int("swizzle", 1, 1, 8));
    o->reps = static_cast<int>(args.get_int("reps", o->reps, 1, 100000));
    o->per_graph = static_cast<int>(args.get_int("per-graph", o->per_graph, 1, 100));
    o->sms = static_cast<int>(args.get_int("sms", 0, 0, 1024));
    o->warmup_ms = static_cast<int>(args.get_int("warmup-ms", o->warmup_ms, 0, 60000));
    o->baseline = o->deepgemm = !args.flag("no-baseline");
    if (auto b = args.get("baselines")) {
      SYMMOE_CHECK(o->baseline, "--baselines and --no-baseline: give one of them");
      o->baseline = o->deepgemm = false;
      for (const auto& t : split_commas(*b)) {
        SYMMOE_CHECK(t == "cublas" || t == "deepgemm" || t == "none", "--baselines '", t,
                     "': a list of cublas, deepgemm, or none");
        o->baseline = o->baseline || t == "cublas";
        o->deepgemm = o->deepgemm || t == "deepgemm";
      }
    }
    o->early_launch = !args.flag("no-early-launch");
    o->dry_run = args.flag("dry-run");
    o->trace = args.flag("trace");
    o->power = args.flag("power");
    SYMMOE_CHECK(!o->trace || o->per_graph >= 2, "--trace needs --per-graph >= 2 (a launch and its predecessor)");
    o->json = args.get("json").value_or("");
    return kParsed;
  } catch (const Error& e) {
    return usage_exit("bench gemm", e, kGemmUsage);
  }
}

struct Case {
  std::string op;
  GemmDtype dtype;
  int experts, m, n, k;
  double flops() const { return 2.0 * experts * m * double(n) * k; }
  double elem() const { return dtype == GemmDtype::kFP8E4M3 ? 1 : 2; }
  double weight_bytes() const { return double(experts) * n * k * elem(); }
  double bytes() const {
    double b = double(experts) * m * k * elem() + weight_bytes() + double(experts) * m * n * 2;
    if (dtype == GemmDtype::kFP8E4M3) b += double(experts) * m * (k / 128) * 4 + double(experts) * (n / 128) * (k / 128) * 4;
    return b;
  }
  std::string key() const {
    return concat(op, " ", dtype == GemmDtype::kFP8E4M3 ? "fp8" : "bf16", " E=", experts, " M=", m);
  }
};

// The cases in the order they run: rows per expert ascending, then dtype, op and experts as
// given, so the memory-bound decode sizes come before the compute-bound ones that hold the board
// at its power cap (the warm-up replays before each section, Timing, cover the rest).
std::vector<Case> cases(const GemmOptions& o) {
  std::vector<int> ms = o.m;
  std::sort(ms.begin(), ms.end());
  ms.erase(std::unique(ms.begin(), ms.end()), ms.end());
  std::vector<Case> out;
  for (int m : ms) {
    for (const GemmDtype d : o.dtypes) {
      for (const auto& op : o.ops) {
        const int n = op == "gate_up" ? 2 * o.model.intermediate : o.model.hidden;
        const int k = op == "gate_up" ? o.model.hidden : o.model.intermediate;
        for (int e : o.experts) out.push_back(Case{op, d, e, m, n, k});
      }
    }
  }
  return out;
}

// How each section is timed: the median over `reps` graph replays, after replaying the graph
// untimed for `warmup_ms`. The board's power-cap controller averages power over a window, so a
// section timed right after a compute-bound one ran at the clock that one left. On the H200
// (bench/results/gemm_bench_order_ab_h200.log) down over 8 experts at 256 rows ran at 1515 MHz and
// 754 TFLOPS right after gate/up 32 x 256 and its baselines, at 1965 MHz and 930 after a light
// section, its dense baseline alike; on the H100 (gemm_bench_order_settle_ab_h100.log, an idle
// gap instead of the replays) down over 8 experts ran 50.3 / 82.5 us at 8 / 256 rows with no gap,
// 44.9 / 69.9 after 300 ms, 44.8 / 69.8 first in a fresh process. Replaying the section itself
// (not idling) lets a compute-bound section reach its own power-capped steady clock, as it would
// in a serving loop, and a memory-bound one fall back to its own. Measured on the H100
// (gemm_bench_order_warmup_ab_h100.log): down fp8 8 x 8 45.1 us with the replays, 49.7 without,
// 45.1 first in a fresh process; at 256 rows the replays make sections slower than a fresh
// process does (gate/up fp8 32 x 256 504 against 470 us): their own power-capped clock.
struct Timing {
  cudaStream_t stream;
  int reps;
  int warmup_ms;
};

// Median over timing.reps graph replays of what `enqueue` puts on the stream, in microseconds;
// the graph holds `per_graph` calls enqueue(0 .. per_graph - 1) and the time is per call. With a
// sampler, *power gets the clock and power over the replays.
double time_graph_us(const Timing& timing, const std::function<void(int)>& enqueue, int per_graph = 1,
                     PowerSampler* sampler = nullptr, PowerSummary* power = nullptr) {
  cudaStream_t stream = timing.stream;
  enqueue(0);  // warm-up outside the graph (module load, first-touch)
  SYMMOE_CUDA_CHECK(cudaStreamSynchronize(stream));
  CapturedGraph graph(stream, [&] {
    for (int i = 0; i < per_graph; ++i) enqueue(i);
  });
  const auto warm_until = std::chrono::steady_clock::now() + std::chrono::milliseconds(timing.warmup_ms);
  do {  // at least one untimed replay, whatever warmup_ms
    graph.launch(stream);
    SYMMOE_CUDA_CHECK(cudaStreamSynchronize(stream));
  } while (std::chrono::steady_clock::now() < warm_until);
  std::vector<double> us;
  if (sampler != nullptr) sampler->start();
  for (int i = 0; i < timing.reps; ++i) {
    Event start, stop;
    start.record(stream);
    graph.launch(stream);
    stop.record(stream);
    SYMMOE_CUDA_CHECK(cudaEventSynchronize(stop));
    us.push_back(stop.since(start) * 1e3 / per_graph);
  }
  if (sampler != nullptr) {
    const PowerSummary summary = sampler->stop();
    if (power != nullptr) *power = summary;
  }
  return median(us);
}

struct DeviceBuf {
  void* p = nullptr;
  explicit DeviceBuf(size_t bytes) { SYMMOE_CUDA_CHECK(cudaMalloc(&p, std::max<size_t>(bytes, 16)), bytes, " bytes"); }
  ~DeviceBuf() { cudaFree(p); }
  DeviceBuf(const DeviceBuf&) = delete;
  DeviceBuf& operator=(const DeviceBuf&) = delete;
  template <class T>
  T* as() const { return static_cast<T*>(p); }
};

}  // namespace

int run_bench_gemm(const std::vector<std::string>& argv) {
  GemmOptions o;
  if (const int rc = parse_gemm(argv, &o); rc != kParsed) return rc;
  const auto all = cases(o);
  Report report("symmoe bench gemm");
  const bool fp8_any = o.fp8_any();
  report.section(concat("grouped GEMM: ", o.model.name, " (hidden ", o.model.hidden, ", intermediate ",
                        o.model.intermediate, "), ", o.layout == GroupedLayout::kMasked ? "masked" : "contiguous",
                        " layout, bf16 out",
                        fp8_any ? concat("; fp8 = e4m3 with 1x128 activation (",
                                         o.transpose_scales ? "row-major, copied column-major before each GEMM: "
                                                              "transpose_act_scales, timed with it"
                                         : o.act_scales == gemm::ScaleLayout::kColumnMajor ? "column-major"
                                                                                            : "row-major",
                                         ") and 128x128 weight scales")
                                : std::string()));
  report.line("FLOPs = 2 E M N K; Bytes = act + weights + out (+ fp8 scales), each once; HBM = Bytes / time; "
              "Wt% = weight bytes / time vs the d2d copy rate");
  report.line("Dense = cuBLASLt, one GEMM [E*M, K] x [N, K] (same FLOPs, one weight matrix, per-tensor scales); "
              "Loop = cuBLASLt, one GEMM per expert");
  if (fp8_any) {
    report.line("Dense block-scaled = the same dense GEMM with the recipe's 1x128 activation and 128x128 weight "
                "scales (cuBLASLt's own promotion); ours = its time / ours");
  }
  if (!deepgemm_kernels().empty()) {
    report.line("DeepGEMM = its SM90 fp8 grouped GEMM (contiguous layout), every built-in config; ours = its time / "
                "ours (> 1: ours faster)");
  }
  int gpus = 0;
  if (cudaGetDeviceCount(&gpus) != cudaSuccess) gpus = 0;
  cudaGetLastError();
  if (o.dry_run || gpus == 0) {
    std::printf("  %-8s %5s %5s %5s %6s %6s %10s %10s\n", "Op", "dtype", "E", "M", "N", "K", "GFLOP", "MB");
    for (const Case& c : all) {
      std::printf("  %-8s %5s %5d %5d %6d %6d %10.2f %10.1f\n", c.op.c_str(),
                  c.dtype == GemmDtype::kFP8E4M3 ? "fp8" : "bf16", c.experts, c.m, c.n, c.k, c.flops() / 1e9,
                  c.bytes() / 1e6);
      report.record(c.key() + " gflop", c.flops() / 1e9);
      report.record(c.key() + " bytes", c.bytes() / 1e6, "MB");
    }
    if (!o.json.empty()) report.write_json(o.json);
    if (o.dry_run) return 0;
    std::fprintf(stderr, "symmoe bench gemm: no CUDA GPU: timing needs an SM90 GPU (--dry-run lists the cases)\n");
    return 1;
  }

  const int device = current_device();
  const DeviceInfo info = query_device(device);
  runtime::DeviceRuntime rt(device);
  Stream stream;
  const double d2d = d2d_copy_gbps(5);
  report.line(concat("device: ", info.name, ", ", info.num_sms, " SMs; d2d copy rate (1 GiB, read+write): ",
                     d2d, " GB/s"));
  report.record("d2d_copy_gbps", d2d, "GB/s");
  const Timing timing{stream, o.reps, o.warmup_ms};
  report.line(concat("each timed section: median of ", o.reps, " graph replays, after ", o.warmup_ms,
                     " ms of replays untimed (--warmup-ms: its own steady clock and power, not the section before's)"));
  report.record("warmup_ms", o.warmup_ms, "ms");
  std::unique_ptr<PowerSampler> sampler;
  if (o.power) {
    sampler = std::make_unique<PowerSampler>(device);
    if (!sampler->available()) {
      report.line(concat("--power: no figures: ", sampler->why_unavailable()));
      sampler.reset();
    }
  }
  int max_e = 1;
  for (int e : o.experts) max_e = std::max(max_e, e);
  gemm::GroupedGemm gg(rt, max_e);
  gemm::GroupedGemmOptions go;
  go.tile = o.tile;
  go.budget = runtime::SmBudget{o.sms, 0};
  go.raster = o.raster;
  go.swizzle = o.swizzle;

  std::printf("  %-8s %5s %4s %5s %6s %6s %-9s %9s %8s %8s %6s %6s %8s %9s %8s %7s %9s %7s\n", "Op", "dtype", "E",
              "M", "N", "K", "tile", "time(us)", "TFLOPS", "HBM GB/s", "Wt%", "Copy%", "1/graph", "Dense(us)", "TFLOPS",
              "vsDense", "Loop(us)", "vsLoop");
  for (const Case& c : all) {
    const bool fp8 = c.dtype == GemmDtype::kFP8E4M3;
    const size_t rows = static_cast<size_t>(c.experts) * c.m;
    const size_t eb = fp8 ? 1 : 2;
    const size_t w_bytes = static_cast<size_t>(c.experts) * c.n * c.k * eb;
    DeviceBuf act(rows * c.k * eb), w(w_bytes), w2(o.per_graph > 1 ? w_bytes : 0), out(rows * c.n * 2);
    // Launch i of a graph reads weights_for(i): consecutive launches alternate between the copies.
    auto weights_for = [&](int i) { return i % 2 == 0 ? w.p : w2.p; };
    DeviceBuf as(fp8 ? rows * (c.k / 128) * 4 : 0), ws(fp8 ? size_t(c.experts) * (c.n / 128) * (c.k / 128) * 4 : 0);
    DeviceBuf offsets(c.experts * 4), counts(c.experts * 4);
    if (fp8) {
      fill_fp8(act.p, rows * c.k, 1, stream);
      fill_fp8(w.p, size_t(c.experts) * c.n * c.k, 2, stream);
      if (o.per_graph > 1) fill_fp8(w2.p, size_t(c.experts) * c.n * c.k, 2, stream);
      fill_f32(as.as<float>(), rows * (c.k / 128), 1.f / 16, stream);
      fill_f32(ws.as<float>(), size_t(c.experts) * (c.n / 128) * (c.k / 128), 1.f / 16, stream);
    } else {
      fill_bf16(act.p, rows * c.k, 1, stream);
      fill_bf16(w.p, size_t(c.experts) * c.n * c.k, 2, stream);
      if (o.per_graph > 1) fill_bf16(w2.p, size_t(c.experts) * c.n * c.k, 2, stream);
    }
    fill_i32_ramp(offsets.as<int32_t>(), c.experts, c.m, stream);
    fill_i32(counts.as<int32_t>(), c.experts, c.m, stream);
    gemm::GroupedGemmProblem p;
    p.dtype = c.dtype;
    p.layout = o.layout;
    p.num_experts = c.experts;
    p.n = c.n;
    p.k = c.k;
    p.total_rows = o.layout == GroupedLayout::kContiguous ? static_cast<int64_t>(rows) : 0;
    p.max_m = o.layout == GroupedLayout::kMasked ? c.m : 0;
    p.act = act.p;
    p.act_scales = fp8 ? as.as<float>() : nullptr;
    // Every scale holds the same value, so one buffer serves either layout (ld = its rows).
    if (fp8) p.act_scale_layout = o.transpose_scales ? gemm::ScaleLayout::kRowMajor : o.act_scales;
    p.weights = w.p;
    p.weight_scales = fp8 ? ws.as<float>() : nullptr;
    p.offsets = o.layout == GroupedLayout::kContiguous ? offsets.as<int32_t>() : nullptr;
    p.counts = counts.as<int32_t>();
    p.out = out.p;
    go.expected_m = c.m;
    go.early_launch = o.early_launch;
    go.tile = o.tile;  // decode and swap-AB are fp8 only: bf16 runs the CUTLASS tile of that size
    if (!fp8 && (o.tile == gemm::GemmTile::kDecode || o.tile == gemm::GemmTile::kSwapAB)) go.tile = gemm::GemmTile::kSmallM;
    // --act-scales row-to-col: each GEMM of a timed graph is preceded by the copy of its scales
    // into `col_scales` (NOTE [activation scale transpose]); `gemm_problem` enqueues it.
    const bool transposed = fp8 && o.transpose_scales;
    const size_t col_floats = transposed ? gemm::column_major_act_scales_floats(p) : 0;
    DeviceBuf col_scales(col_floats * sizeof(float));
    auto gemm_problem = [&](const gemm::GroupedGemmProblem& q) {
      return transposed ? gemm::transpose_act_scales(q, col_scales.as<float>(), col_floats, stream) : q;
    };
    gemm::TileChoice tile;
    // --trace: launch i of the graph writes its CTAs' entries at trace_words + i * trace_stride.
    const size_t trace_stride = size_t(info.num_sms) * gemm::kSwapAbTraceWords;
    const size_t trace_bytes = o.trace ? o.per_graph * trace_stride * sizeof(uint64_t) : 0;
    DeviceBuf trace_words(trace_bytes);
    PowerSummary power_ours, power_dense, power_loop, power_dense_block;
    if (o.trace) SYMMOE_CUDA_CHECK(cudaMemset(trace_words.p, 0, trace_bytes));
    const double us = time_graph_us(
        timing,
        [&](int i) {
          gemm::GroupedGemmProblem pi = p;
          pi.weights = weights_for(i);
          gemm::GroupedGemmOptions gi = go;
          if (o.trace) gi.trace = trace_words.as<uint64_t>() + i * trace_stride;
          tile = gg.run(gemm_problem(pi), stream, gi);
        },
        o.per_graph, sampler.get(), &power_ours);
    const bool traced = o.trace && tile.tile == gemm::GemmTile::kSwapAB;  // the other kernels write no trace
    SwapAbTraceSummary trace;
    if (traced) {
      std::vector<uint64_t> words(trace_bytes / sizeof(uint64_t));
      SYMMOE_CUDA_CHECK(cudaMemcpy(words.data(), trace_words.p, trace_bytes, cudaMemcpyDeviceToHost));
      trace = summarize_swapab_trace(words, o.per_graph, info.num_sms);
    }
    const double us_one =
        o.per_graph > 1 ? time_graph_us(timing, [&](int) { gg.run(gemm_problem(p), stream, go); }) : us;
    // The copy alone (its share of `us`): rows x K/128 floats read and written.
    const double transpose_us =
        transposed ? time_graph_us(timing, [&](int) { gemm_problem(p); }, o.per_graph) : 0.0;
    double copy_frac = 0;  // weight bytes / time vs a same-size d2d copy (read + write bytes / time)
    if (o.per_graph > 1) {
      const double copy_us = time_graph_us(
          timing,
          [&](int i) {
            SYMMOE_CUDA_CHECK(
                cudaMemcpyAsync(weights_for(i + 1), weights_for(i), w_bytes, cudaMemcpyDeviceToDevice, stream));
          },
          o.per_graph);
      copy_frac = (c.weight_bytes() / us) / (2.0 * c.weight_bytes() / copy_us);
    }
    rt.check(stream);
    // A baseline cuBLASLt refuses (e.g. an fp8 shape it has no kernel for) shows as n/a.
    double dense_us = 0, loop_us = 0, dense_block_us = 0;
    std::string baseline_note, dense_block_note;
    if (o.baseline) {
      try {
        CublasLtGemm dense(c.dtype, static_cast<int64_t>(rows), c.n, c.k);
        dense_us = time_graph_us(
            timing, [&](int i) { dense.run(act.p, weights_for(i), out.p, stream); }, o.per_graph,
            sampler.get(), &power_dense);
        CublasLtGemm one(c.dtype, c.m, c.n, c.k);
        loop_us = time_graph_us(
            timing,
            [&](int i) {
              const char* wi = static_cast<const char*>(weights_for(i));
              for (int e = 0; e < c.experts; ++e) {
                one.run(act.as<char>() + size_t(e) * c.m * c.k * eb, wi + size_t(e) * c.n * c.k * eb,
                        out.as<char>() + size_t(e) * c.m * c.n * 2, stream);
              }
            },
            o.per_graph, sampler.get(), &power_loop);
      } catch (const Error& e) {
        baseline_note = e.what();
        SYMMOE_CUDA_CHECK(cudaStreamSynchronize(stream));
      }
      if (fp8) {  // the same dense GEMM with the recipe's block scales (its own n/a)
        try {
          CublasLtGemm dense_block(c.dtype, static_cast<int64_t>(rows), c.n, c.k, Fp8Scales::kBlock);
          dense_block_us = time_graph_us(
              timing, [&](int i) { dense_block.run(act.p, weights_for(i), out.p, stream); }, o.per_graph,
              sampler.get(), &power_dense_block);
        } catch (const Error& e) {
          dense_block_note = e.what();
          SYMMOE_CUDA_CHECK(cudaStreamSynchronize(stream));
        }
      }
    }
    // DeepGEMM (when built in; gemm_baseline_deepgemm.hpp): every compiled config that takes
    // the case, timed like ours, its output checked against ours (recomputed once: the cuBLASLt
    // baselines wrote into `out`; DeepGEMM writes its own buffer).
    struct DeepGemmRun {
      std::string name;
      double us, rel_diff;
      PowerSummary power;
    };
    std::vector<DeepGemmRun> dg_runs;
    std::string dg_note;
    if (o.deepgemm && fp8 && o.layout == GroupedLayout::kContiguous && !deepgemm_kernels().empty()) {
      const auto configs = deepgemm_configs(c.experts, c.m, c.n, c.k);
      if (info.num_sms != kDeepGemmSms || (o.sms != 0 && o.sms != kDeepGemmSms)) {
        dg_note = concat("its kernels are built for ", kDeepGemmSms, " SMs");
      } else if (configs.empty()) {
        dg_note = concat("no built-in config takes M = ", c.m, " per expert (multiples of 128 rows)");
      }
      if (dg_note.empty()) {
        DeviceBuf out_dg(rows * c.n * 2);
        gg.run(gemm_problem(p), stream, go);  // ours again: the cuBLASLt baselines wrote into `out`
        for (const DeepGemmConfig& cfg : configs) {
          try {
            DeepGemmGrouped dg(cfg, c.experts, c.m, c.n, c.k, act.p, as.as<float>(), ws.as<float>(), out_dg.p, stream);
            PowerSummary dg_power;
            const double dg_us = time_graph_us(
                timing, [&](int i) { dg.run(weights_for(i), stream); }, o.per_graph, sampler.get(), &dg_power);
            dg_runs.push_back({cfg.name(), dg_us, bf16_max_rel_diff(out_dg.p, out.p, rows * c.n, stream), dg_power});
          } catch (const Error& e) {
            dg_note = concat(cfg.name(), ": ", e.what());
            SYMMOE_CUDA_CHECK(cudaStreamSynchronize(stream));
          }
        }
      }
    }
    // TFLOPS of a timing of this case (0 for none: a baseline that did not run).
    auto tflops_at = [&](double t_us) { return t_us > 0 ? c.flops() / (t_us * 1e-6) / 1e12 : 0.0; };
    const double tflops = tflops_at(us);
    const double hbm = c.bytes() / (us * 1e-6) / 1e9;
    const double wt = c.weight_bytes() / (us * 1e-6) / 1e9 / d2d;
    const double dense_tflops = tflops_at(dense_us), dense_block_tflops = tflops_at(dense_block_us);
    char tile_text[16];
    if (tile.tile == gemm::GemmTile::kDecode) {
      std::snprintf(tile_text, sizeof(tile_text), "decode");
    } else if (tile.tile == gemm::GemmTile::kSwapAB) {
      std::snprintf(tile_text, sizeof(tile_text), "swapab");
    } else if (tile.tile == gemm::GemmTile::kWgmma) {
      std::snprintf(tile_text, sizeof(tile_text), "w%dx%d", tile.tile_m, tile.tile_n);
    } else {
      std::snprintf(tile_text, sizeof(tile_text), "%dx%d", tile.tile_m, tile.tile_n);
    }
    std::printf(
        "  %-8s %5s %4d %5d %6d %6d %-9s %9.1f %8.1f %8.0f %5.1f%% %5.1f%% %8.1f %9.1f %8.1f %6.2fx %9.1f %6.2fx\n",
        c.op.c_str(), fp8 ? "fp8" : "bf16", c.experts, c.m, c.n, c.k, tile_text, us, tflops, hbm, 100 * wt,
        100 * copy_frac, us_one, dense_us, dense_tflops, dense_us > 0 ? dense_us / us : 0.0, loop_us,
                loop_us > 0 ? loop_us / us : 0.0);
    if (!baseline_note.empty()) std::printf("  %8s baseline n/a: %s\n", "", baseline_note.c_str());
    if (transposed) {  // bytes: every scale read once and written once
      const double scale_bytes = 2.0 * double(rows) * (c.k / 128) * sizeof(float);
      std::printf("  %8s scale transpose alone %9.1f us (%.0f GB/s), %.1f%% of the time\n", "", transpose_us,
                  scale_bytes / (transpose_us * 1e-6) / 1e9, 100 * transpose_us / us);
    }
    if (dense_block_us > 0) {
      std::printf("  %8s Dense block-scaled    %9.1f us %8.1f TFLOPS  ours %5.2fx\n", "", dense_block_us,
                  dense_block_tflops, dense_block_us / us);
    } else if (!dense_block_note.empty()) {
      std::printf("  %8s Dense block-scaled n/a: %s\n", "", dense_block_note.c_str());
    }
    double dg_best_us = 0;
    for (const DeepGemmRun& r : dg_runs) {
      std::printf("  %8s DeepGEMM %-12s %9.1f us %8.1f TFLOPS  ours %5.2fx  max |diff| / max |ours| %.2e\n", "",
                  r.name.c_str(), r.us, tflops_at(r.us), r.us / us, r.rel_diff);
      if (dg_best_us == 0 || r.us < dg_best_us) dg_best_us = r.us;
    }
    if (!dg_note.empty()) std::printf("  %8s DeepGEMM n/a: %s\n", "", dg_note.c_str());
    if (sampler) {
      auto print_power = [&](const std::string& what, const PowerSummary& ps) {
        std::printf("  %8s power %-22s %s%s\n", "", what.c_str(), format_power(ps).c_str(),
                    ps.samples < 20 ? " (few samples: raise --reps)" : "");
      };
      print_power("ours", power_ours);
      if (dense_us > 0) print_power("dense", power_dense);
      if (dense_block_us > 0) print_power("dense block-scaled", power_dense_block);
      if (loop_us > 0) print_power("loop", power_loop);
      for (const DeepGemmRun& r : dg_runs) print_power("DeepGEMM " + r.name, r.power);
    }
    if (traced) {
      for (const auto& line : trace.lines()) std::printf("  %8s %s\n", "", line.c_str());
    }
    std::fflush(stdout);
    const std::string key = c.key();
    report.record(key + " us", us, "us");
    report.record(key + " us_one_per_graph", us_one, "us");
    if (transposed) report.record(key + " scale_transpose_us", transpose_us, "us");
    report.record(key + " tflops", tflops, "TFLOPS");
    report.record(key + " hbm_gbps", hbm, "GB/s");
    report.record(key + " weight_fraction_of_d2d", wt);
    if (copy_frac > 0) report.record(key + " weight_fraction_of_same_size_copy", copy_frac);
    report.record(key + " tile_m", tile.tile_m);
    report.record(key + " tile_n", tile.tile_n);
    report.record(key + " early_launch", o.early_launch ? 1 : 0);
    if (dense_us > 0) {
      report.record(key + " dense_us", dense_us, "us");
      report.record(key + " dense_tflops", dense_tflops, "TFLOPS");
    }
    if (dense_block_us > 0) {
      report.record(key + " dense_block_scaled_us", dense_block_us, "us");
      report.record(key + " dense_block_scaled_tflops", dense_block_tflops, "TFLOPS");
    }
    if (loop_us > 0) report.record(key + " loop_us", loop_us, "us");
    for (const DeepGemmRun& r : dg_runs) {
      report.record(key + " deepgemm " + r.name + " us", r.us, "us");
      report.record(key + " deepgemm " + r.name + " max_rel_diff", r.rel_diff);
    }
    auto record_power = [&](const std::string& what, const PowerSummary& ps) {
      if (ps.samples == 0) return;
      report.record(key + " " + what + " sm_mhz", ps.sm_mhz_mean, "MHz");
      report.record(key + " " + what + " sm_mhz_min", ps.sm_mhz_min, "MHz");
      report.record(key + " " + what + " watts", ps.watts_mean, "W");
      report.record(key + " " + what + " power_capped_fraction", ps.power_capped);
    };
    record_power("power ours", power_ours);
    record_power("power dense", power_dense);
    record_power("power dense block-scaled", power_dense_block);
    record_power("power loop", power_loop);
    for (const DeepGemmRun& r : dg_runs) record_power("power deepgemm " + r.name, r.power);
    if (dg_best_us > 0) {
      report.record(key + " deepgemm_best_us", dg_best_us, "us");
      report.record(key + " deepgemm_best_tflops", tflops_at(dg_best_us), "TFLOPS");
    }
    for (int i = 0; i < SwapAbTraceSummary::kMilestones && trace.launches > 0; ++i) {
      const std::string k = key + " trace " + SwapAbTraceSummary::kKeys[i];
      report.record(k + " min_us", trace.us[i].min, "us");
      report.record(k + " median_us", trace.us[i].med, "us");
      report.record(k + " max_us", trace.us[i].max, "us");
    }
  }
  if (!o.json.empty()) report.write_json(o.json);
  return 0;
}

}  // namespace symmoe::cli
