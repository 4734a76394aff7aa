// The SM90 grouped GEMM against the CPU reference: both dtypes, both tile families, both
// layouts, random rows per expert (0 included), poisoned outputs, device-side row-table errors,
// graph replay and SM budgets.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "support/device_array.hpp"
#include "support/env_guard.hpp"
#include "support/error_text.hpp"
#include "support/gpu.hpp"
#include "symmoe/core/bf16.hpp"
#include "symmoe/core/cuda_handles.hpp"
#include "symmoe/device/fp8_block_quant.cuh"
#include "symmoe/gemm/act_scales_transpose.hpp"
#include "symmoe/gemm/grouped_gemm.hpp"
#include "symmoe/reference/grouped_gemm_reference.hpp"

namespace symmoe::gemm {
namespace {

using test::DeviceArray;

constexpr uint16_t kPoison = 0xFFFF;  // poison bytes 0xFF: a bf16 NaN no computation produces

// Host tensors of one problem; `problem(host)` points a GroupedGemmProblem at them.
struct HostCase {
  GemmDtype dtype = GemmDtype::kBF16;
  GroupedLayout layout = GroupedLayout::kContiguous;
  int experts = 0, n = 0, k = 0, max_m = 0;
  int64_t rows = 0;
  std::vector<uint8_t> act, weights;  // bf16 bits or e4m3 codes, raw bytes
  std::vector<float> act_scales, weight_scales;
  std::vector<int32_t> offsets, counts;
  ScaleLayout scale_layout = ScaleLayout::kRowMajor;  // of act_scales (NOTE [activation scale layouts])
  int64_t scale_ld = 0;

  GroupedGemmProblem problem(const void* a, const float* as, const void* w, const float* ws, const int32_t* off,
                             const int32_t* cnt, void* out) const {
    GroupedGemmProblem p;
    p.dtype = dtype;
    p.layout = layout;
    p.num_experts = experts;
    p.n = n;
    p.k = k;
    p.total_rows = layout == GroupedLayout::kContiguous ? rows : 0;
    p.max_m = layout == GroupedLayout::kMasked ? max_m : 0;
    p.act = a;
    p.act_scales = as;
    p.weights = w;
    p.weight_scales = ws;
    p.offsets = layout == GroupedLayout::kContiguous ? off : nullptr;
    p.counts = cnt;
    p.out = out;
    p.act_scale_layout = scale_layout;
    p.act_scales_ld = scale_ld;
    return p;
  }
};

// Integer mode: small integers (and power-of-two scales) so every partial sum is exact in the
// kernel's accumulators and only the final bf16 rounding remains, equal to the reference's.
HostCase make_case(GemmDtype dtype, GroupedLayout layout, int experts, int n, int k, int max_count, bool integers,
                   uint64_t seed) {
  std::mt19937_64 rng(seed);
  HostCase c;
  c.dtype = dtype;
  c.layout = layout;
  c.experts = experts;
  c.n = n;
  c.k = k;
  c.max_m = max_count;
  int64_t row = 0;
  for (int e = 0; e < experts; ++e) {
    // Expert 1 is empty, expert 2 full; the rest random (0 included).
    const int m = e == 1 ? 0 : e == 2 ? max_count : static_cast<int>(rng() % (max_count + 1));
    if (layout == GroupedLayout::kContiguous) {
      row += rng() % 5;  // unused rows between segments stay poisoned
      c.offsets.push_back(static_cast<int32_t>(row));
      row += m;
    }
    c.counts.push_back(m);
  }
  c.rows = layout == GroupedLayout::kContiguous ? row + 3 : int64_t{experts} * max_count;
  const size_t act_elems = static_cast<size_t>(c.rows) * k, w_elems = static_cast<size_t>(experts) * n * k;
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  auto int_value = [&] { return static_cast<float>(static_cast<int>(rng() % 7) - 3); };
  if (dtype == GemmDtype::kBF16) {
    c.act.resize(act_elems * 2);
    c.weights.resize(w_elems * 2);
    auto fill = [&](std::vector<uint8_t>& v) {
      for (size_t i = 0; i < v.size() / 2; ++i) {
        const uint16_t b = float_to_bf16_bits(integers ? int_value() : u(rng));
        std::memcpy(&v[2 * i], &b, 2);
      }
    };
    fill(c.act);
    fill(c.weights);
  } else {
    auto code = [&] {
      if (integers) return device::fp8_e4m3_from_float(int_value());
      uint8_t q;
      do q = static_cast<uint8_t>(rng()); while ((q & 0x7F) == 0x7F);  // no NaN codes
      return q;
    };
    c.act.resize(act_elems);
    c.weights.resize(w_elems);
    for (auto& q : c.act) q = code();
    for (auto& q : c.weights) q = code();
    c.act_scales.resize(static_cast<size_t>(c.rows) * (k / 128));
    c.weight_scales.resize(static_cast<size_t>(experts) * (n / 128) * (k / 128));
    for (auto& s : c.act_scales) s = std::ldexp(1.f, static_cast<int>(rng() % 5) - 2 - (integers ? 0 : 6));
    for (auto& s : c.weight_scales) s = integers ? std::ldexp(1.f, static_cast<int>(rng() % 3) - 1) : 0.25f + 0.5f * (u(rng) + 1.f) / 2;
  }
  return c;
}

// The fp8 case `c` (row-major scales) with its activation scales column-major, `pad` NaN
// floats after each K block's rows (ld = rows or max_m + pad): a kernel reading a wrong index
// meets NaN.
HostCase with_column_major_scales(HostCase c, int64_t pad) {
  const int kb = c.k / 128;
  const bool masked = c.layout == GroupedLayout::kMasked;
  const int64_t per_expert = masked ? c.max_m : c.rows, ld = per_expert + pad;
  const int groups = masked ? c.experts : 1;
  std::vector<float> cm(static_cast<size_t>(groups) * kb * ld, std::nanf(""));
  for (int e = 0; e < groups; ++e) {
    for (int64_t i = 0; i < per_expert; ++i) {
      for (int b = 0; b < kb; ++b) cm[(int64_t{e} * kb + b) * ld + i] = c.act_scales[(e * per_expert + i) * kb + b];
    }
  }
  c.act_scales = std::move(cm);
  c.scale_layout = ScaleLayout::kColumnMajor;
  c.scale_ld = ld;
  return c;
}

// Device copies of a HostCase and its output.
struct DeviceCase {
  DeviceArray<uint8_t> act, weights;
  DeviceArray<float> act_scales, weight_scales;
  DeviceArray<int32_t> offsets, counts;
  DeviceArray<uint16_t> out;
  explicit DeviceCase(const HostCase& c)
      : act(c.act), weights(c.weights), act_scales(c.act_scales), weight_scales(c.weight_scales),
        offsets(c.offsets), counts(c.counts), out(static_cast<size_t>(c.rows) * c.n) {}
  GroupedGemmProblem problem(const HostCase& c) const {
    return c.problem(act.get(), c.dtype == GemmDtype::kFP8E4M3 ? act_scales.get() : nullptr, weights.get(),
                     c.dtype == GemmDtype::kFP8E4M3 ? weight_scales.get() : nullptr,
                     offsets.size() ? offsets.get() : nullptr, counts.get(), out.get());
  }
  void poison(cudaStream_t s) { test::poison(out.get(), out.size() * 2, 0xFF, s); }
};

// The reference of a HostCase, computed once and compared against any number of outputs:
// bf16 output (kPoison outside the experts' rows), the exact products and the per-element
// bound of expect_matches, and each row's expert (-1: none).
struct Expected {
  std::vector<uint16_t> out;
  std::vector<double> exact, bound;
  std::vector<int> expert;
};

// The bound: one bf16 rounding plus the accumulators' precision, |gpu - ref| <= 2^-8 |ref| +
// eps * sum_k |a_k b_k|, eps = 2^-9 for fp8 (wgmma's fp8 accumulation keeps fewer bits than
// fp32; per-128-K promotion bounds its reach) and 2^-16 for bf16.
Expected expected_of(const HostCase& c) {
  Expected x;
  x.out.assign(static_cast<size_t>(c.rows) * c.n, kPoison);
  const GroupedGemmProblem hp = c.problem(c.act.data(), c.act_scales.data(), c.weights.data(),
                                          c.weight_scales.data(), c.offsets.data(), c.counts.data(), x.out.data());
  std::vector<double> abs_sum;
  reference::grouped_gemm_reference(hp, &x.exact, &abs_sum);
  x.bound.assign(x.out.size(), 0.0);
  x.expert.assign(static_cast<size_t>(c.rows), -1);
  const double eps = c.dtype == GemmDtype::kFP8E4M3 ? std::ldexp(1.0, -9) : std::ldexp(1.0, -16);
  for (int e = 0; e < c.experts; ++e) {
    const int64_t row0 = c.layout == GroupedLayout::kContiguous ? c.offsets[e] : int64_t{e} * c.max_m;
    for (int64_t r = row0; r < row0 + c.counts[e]; ++r) {
      x.expert[r] = e;
      for (int n = 0; n < c.n; ++n) {
        const size_t o = static_cast<size_t>(r) * c.n + n;
        x.bound[o] = std::ldexp(std::fabs(x.exact[o]), -8) + eps * abs_sum[o];
      }
    }
  }
  return x;
}

// Compares against the reference: rows of an expert within the bound (bit-exact when
// `integers`), every other row still poisoned.
void expect_matches(const HostCase& c, const Expected& x, const std::vector<uint16_t>& got, bool integers,
                    const std::string& what) {
  ASSERT_EQ(got.size(), x.out.size()) << what;
  int bad = 0;
  for (int64_t r = 0; r < c.rows; ++r) {
    for (int n = 0; n < c.n; ++n) {
      const size_t o = static_cast<size_t>(r) * c.n + n;
      const int e = x.expert[r];
      if (e < 0) {
        if (got[o] != kPoison && bad++ < 5) ADD_FAILURE() << what << ": row " << r << " belongs to no expert but was written";
      } else if (integers) {
        if (got[o] != x.out[o] && bad++ < 5) {
          ADD_FAILURE() << what << ": expert " << e << " row " << r << " col " << n << ": got bf16 0x" << std::hex
                        << got[o] << ", reference 0x" << x.out[o] << std::dec;
        }
      } else {
        const double g = bf16_bits_to_float(got[o]);
        if (!(std::fabs(g - x.exact[o]) <= x.bound[o]) && bad++ < 5) {
          ADD_FAILURE() << what << ": expert " << e << " row " << r << " col " << n << ": got " << g << ", exact "
                        << x.exact[o] << ", bound " << x.bound[o];
        }
      }
    }
  }
  EXPECT_EQ(bad, 0) << what;
}

void expect_matches(const HostCase& c, const std::vector<uint16_t>& got, bool integers, const std::string& what) {
  expect_matches(c, expected_of(c), got, integers, what);
}

// `got` must equal `base` bit for bit (poisoned rows included); `what` names got's run, `base_what` base's.
void expect_same_bits(const HostCase& c, const std::vector<uint16_t>& got, const std::vector<uint16_t>& base,
                      const std::string& what, const std::string& base_what) {
  ASSERT_EQ(got.size(), base.size()) << what;
  size_t diff = 0;
  while (diff < got.size() && got[diff] == base[diff]) ++diff;
  EXPECT_EQ(diff, got.size()) << what << ": first difference from " << base_what << " at element " << diff << " (row "
                              << diff / c.n << ", col " << diff % c.n << ")";
}

struct Gpu {
  runtime::DeviceRuntime rt;
  Stream stream;
  GroupedGemm gemm;
  Gpu() : rt(0), gemm(rt, 64) {}
};

std::vector<uint16_t> run(Gpu& g, const HostCase& c, GemmTile tile, runtime::SmBudget budget = {},
                          int expected_m = 0, TileChoice* chosen = nullptr) {
  DeviceCase d(c);
  d.poison(g.stream);
  GroupedGemmOptions o;
  o.tile = tile;
  o.budget = budget;
  o.expected_m = expected_m;
  const TileChoice t = g.gemm.run(d.problem(c), g.stream, o);
  if (chosen != nullptr) *chosen = t;
  g.rt.check(g.stream);
  return d.out.download();
}

const char* name(GemmDtype d) { return d == GemmDtype::kFP8E4M3 ? "fp8" : "bf16"; }
const char* name(GemmTile t) {
  return t == GemmTile::kSmallM   ? "small-M tile"
         : t == GemmTile::kDecode ? "decode kernel"
         : t == GemmTile::kWgmma  ? "wgmma kernel"
         : t == GemmTile::kSwapAB ? "swap-AB kernel"
                                  : "large-M tile";
}
const char* name(GroupedLayout l) { return l == GroupedLayout::kMasked ? "masked" : "contiguous"; }

// Runs `tile` with counts[expert] = count (invalid): the failure names the expert, and the
// other experts match the reference (the invalid one computes nothing).
void expect_invalid_count_reported(Gpu& g, HostCase c, GemmTile tile, int expert, int count) {
  c.counts[expert] = count;
  DeviceCase d(c);
  d.poison(g.stream);
  GroupedGemmOptions o;
  o.tile = tile;
  g.gemm.run(d.problem(c), g.stream, o);
  const auto failure = g.rt.take_failure(g.stream);
  ASSERT_TRUE(failure.has_value()) << name(tile);
  const std::string text = "grouped GEMM: expert " + std::to_string(expert) + " has counts = " + std::to_string(count);
  EXPECT_NE(failure->find(text), std::string::npos) << *failure;
  c.counts[expert] = 0;
  expect_matches(c, d.out.download(), false, std::string(name(tile)) + ": valid experts next to an invalid one");
}

TEST(GroupedGemmGpu, EveryDtypeTileAndLayoutMatchesTheReference) {
  SYMMOE_SKIP_WITHOUT_GPU();
  Gpu g;
  uint64_t seed = 1;
  for (const GemmDtype dtype : {GemmDtype::kFP8E4M3, GemmDtype::kBF16}) {
    for (const GroupedLayout layout : {GroupedLayout::kContiguous, GroupedLayout::kMasked}) {
      for (const GemmTile tile :
           {GemmTile::kLargeM, GemmTile::kSmallM, GemmTile::kDecode, GemmTile::kWgmma, GemmTile::kSwapAB}) {
        if ((tile == GemmTile::kDecode || tile == GemmTile::kSwapAB) && dtype != GemmDtype::kFP8E4M3) continue;
        // N = 384: an odd number of 128-wide tiles (clusters of 2 along N get a partial pair);
        // up to 200 rows per expert: partial M tiles of both families.
        const HostCase c = make_case(dtype, layout, 5, 384, 512, 200, /*integers=*/false, seed++);
        const std::string what = std::string(name(dtype)) + " " + name(layout) + " " + name(tile);
        expect_matches(c, run(g, c, tile), false, what);
      }
    }
  }
}

TEST(GroupedGemmGpu, IntegerInputsAreExact) {
  SYMMOE_SKIP_WITHOUT_GPU();
  Gpu g;
  for (const GemmDtype dtype : {GemmDtype::kFP8E4M3, GemmDtype::kBF16}) {
    for (const GemmTile tile :
         {GemmTile::kLargeM, GemmTile::kSmallM, GemmTile::kDecode, GemmTile::kWgmma, GemmTile::kSwapAB}) {
      if ((tile == GemmTile::kDecode || tile == GemmTile::kSwapAB) && dtype != GemmDtype::kFP8E4M3) continue;
      const HostCase c = make_case(dtype, GroupedLayout::kContiguous, 7, 256, 1024, 150, /*integers=*/true, 40);
      expect_matches(c, run(g, c, tile), true, std::string("integers ") + name(dtype) + " " + name(tile));
    }
  }
}

// The decode and swap-AB kernels size their pass (8, 16, 32 or 64 rows) from expected_m and
// make further passes over the weights for larger experts: every pass width against counts
// below, at and above it, both layouts, K not a multiple of the decode kernel's pipeline depth
// nor of the swap-AB kernel's stage count (the ring wraps inside a pass and across passes), N
// of 4 and 6 swap-AB items (pairs); on 3 and 5 SMs the swap-AB kernel's steps start in the
// middle of a pass and of an expert (its auto schedule: the split kernels up to 32 rows, and at
// 64 where the pairs would run static — 6 experts x 4 items on every SM —, the pair kernels at
// 64 on 2 SMs, 12 items each: the pairs' device side runs dynamic there).
void expect_pass_kernel_matches(GemmTile tile, uint64_t seed) {
  Gpu g;
  for (const GroupedLayout layout : {GroupedLayout::kContiguous, GroupedLayout::kMasked}) {
    for (const int expected : {8, 16, 32, 64}) {
      for (const int max_count : {expected - 3, expected + 5}) {
        const HostCase c = make_case(GemmDtype::kFP8E4M3, layout, 6, 256, 640, max_count, false, seed++);
        const std::string what = std::string(name(tile)) + " " + name(layout) + " expected_m " +
                                 std::to_string(expected) + " max rows " + std::to_string(max_count);
        expect_matches(c, run(g, c, tile, {}, expected), false, what);
        if (tile == GemmTile::kSwapAB && expected == 16) {
          const HostCase odd = make_case(GemmDtype::kFP8E4M3, layout, 7, 384, 1664, max_count, false, seed++);
          const Expected x = expected_of(odd);
          expect_matches(odd, x, run(g, odd, tile, runtime::SmBudget{3, 0}, expected), false, what + " N 384 on 3 SMs");
          expect_matches(odd, x, run(g, odd, tile, runtime::SmBudget{5, 0}, expected), false, what + " N 384 on 5 SMs");
        }
        if (tile == GemmTile::kSwapAB && expected == 64) {
          expect_matches(c, run(g, c, tile, runtime::SmBudget{2, 0}, expected), false, what + " on 2 SMs (pairs)");
        }
      }
    }
  }
  const HostCase exact = make_case(GemmDtype::kFP8E4M3, GroupedLayout::kMasked, 5, 384, 896, 24, true, 41);
  expect_matches(exact, run(g, exact, tile, runtime::SmBudget{3, 0}, 24), true,
                 std::string(name(tile)) + " integers on 3 SMs");

  // An invalid count is reported naming the expert; the other experts are computed.
  HostCase bad = make_case(GemmDtype::kFP8E4M3, GroupedLayout::kMasked, 4, 256, 256, 8, false, 42);
  expect_invalid_count_reported(g, bad, tile, 2, -1);
}

TEST(GroupedGemmGpu, DecodeKernelMatchesForEveryPassWidth) {
  SYMMOE_SKIP_WITHOUT_GPU();
  expect_pass_kernel_matches(GemmTile::kDecode, 300);
}

TEST(GroupedGemmGpu, SwapAbKernelMatchesForEveryPassWidth) {
  SYMMOE_SKIP_WITHOUT_GPU();
  expect_pass_kernel_matches(GemmTile::kSwapAB, 500);
}

// The swap-AB kernel's other stage shapes and its schedules: 1 and 2 K blocks per stage
// (SYMMOE_GEMM_SWAPAB_KBLOCKS; the default, 4, runs above) with the dynamic and the static
// schedule, 4 with the auto and the static one (SYMMOE_GEMM_SWAPAB_SCHEDULE; NOTE [swap-AB
// schedule]; auto: the split kernels up to 32 rows, at 64 the pair kernels on 5 SMs, N = 768
// giving 60 items, whose device side takes dynamic there, and the split kernels on all SMs,
// where the pairs would run static), and the split
// kernels (NOTE
// [swap-AB K split]: 8 or 4 K blocks per stage, half per warpgroup). 13 K blocks: the last
// stage of every item runs past K (zeros, zero scales) for 2, 4 and split, where warpgroup 1's
// last half holds one K block (8 rows) or none (16-64 rows). Runs alternate between 5 SMs and
// all of them, so the dynamic schedule's counter is reset for grids of either size.
// Against the reference and, with integer inputs, bit-exact.
TEST(GroupedGemmGpu, SwapAbKernelStageShapesAndSchedulesMatch) {
  SYMMOE_SKIP_WITHOUT_GPU();
  Gpu g;
  uint64_t seed = 600;
  struct Variant {
    const char* kd;
    const char* schedule;
    int n;
  };
  const Variant variants[] = {
      {"1", "dynamic", 384}, {"2", "static", 384}, {"4", "auto", 768}, {"4", "static", 384}, {"4", "split", 384}};
  for (const auto& [kd, schedule, n] : variants) {
    const test::EnvGuard env_kd("SYMMOE_GEMM_SWAPAB_KBLOCKS", kd);
    const test::EnvGuard env_schedule("SYMMOE_GEMM_SWAPAB_SCHEDULE", schedule);
    const std::string shape = std::string(kd) + " K blocks per stage, " + schedule + " schedule, N " + std::to_string(n);
    for (const GroupedLayout layout : {GroupedLayout::kContiguous, GroupedLayout::kMasked}) {
      for (const int expected : {8, 16, 32, 64}) {
        const HostCase c = make_case(GemmDtype::kFP8E4M3, layout, 5, n, 1664, expected + 3, false, seed++);
        const std::string what = "swap-AB, " + shape + ", " + name(layout) + " expected_m " + std::to_string(expected);
        const Expected x = expected_of(c);  // the reference once for both budgets
        expect_matches(c, x, run(g, c, GemmTile::kSwapAB, runtime::SmBudget{5, 0}, expected), false, what);
        expect_matches(c, x, run(g, c, GemmTile::kSwapAB, {}, expected), false, what + ", every SM");
      }
    }
    const HostCase exact = make_case(GemmDtype::kFP8E4M3, GroupedLayout::kContiguous, 4, 256, 1664, 40, true, seed++);
    expect_matches(exact, run(g, exact, GemmTile::kSwapAB, {}, 40), true, "swap-AB integers, " + shape);
  }
}

// NOTE [swap-AB trace]: a launch with GroupedGemmOptions::trace writes one entry per CTA of
// its grid and none past it: milestones in their causal order (each thread's own in program
// order; the grid wait before anything the producer or consumers record), an SM index below
// the device's count, and items that add up to the launch's work (every expert's passes x
// N / 64); the output still matches the reference. Split (8 rows) and pair kernels (64), on 5
// SMs and on all.
TEST(GroupedGemmGpu, SwapAbTraceRecordsEveryCtaInOrder) {
  SYMMOE_SKIP_WITHOUT_GPU();
  Gpu g;
  int sms = 0;
  SYMMOE_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  uint64_t seed = 800;
  for (const int expected : {8, 64}) {
    for (const runtime::SmBudget budget : {runtime::SmBudget{5, 0}, runtime::SmBudget{}}) {
      const HostCase c = make_case(GemmDtype::kFP8E4M3, GroupedLayout::kMasked, 6, 384, 1664, expected + 5, false,
                                   seed++);
      const int ctas = budget.num_sms == 0 ? sms : budget.num_sms;
      const std::string what = "swap-AB trace, expected_m " + std::to_string(expected) + ", " +
                               std::to_string(ctas) + " CTAs";
      DeviceCase d(c);
      d.poison(g.stream);
      DeviceArray<uint64_t> trace(std::vector<uint64_t>(static_cast<size_t>(sms) * kSwapAbTraceWords, 0));
      GroupedGemmOptions o;
      o.tile = GemmTile::kSwapAB;
      o.budget = budget;
      o.expected_m = expected;
      o.trace = trace.get();
      g.gemm.run(d.problem(c), g.stream, o);
      g.rt.check(g.stream);
      expect_matches(c, d.out.download(), false, what);
      const std::vector<uint64_t> words = trace.download();
      int64_t items = 0;
      for (int b = 0; b < sms; ++b) {
        const uint64_t* e = &words[static_cast<size_t>(b) * kSwapAbTraceWords];
        if (b >= ctas) {
          EXPECT_EQ(e[kTraceStart], 0u) << what << ": entry " << b << " past the grid written";
          continue;
        }
        const std::string at = what + ", CTA " + std::to_string(b);
        EXPECT_NE(e[kTraceStart], 0u) << at;
        EXPECT_LE(e[kTraceStart], e[kTraceWaitDone]) << at;
        EXPECT_LE(e[kTraceWaitDone], e[kTraceTablesDone]) << at;
        EXPECT_LE(e[kTraceWaitDone], e[kTraceFirstStage]) << at;
        EXPECT_LE(e[kTraceFirstStage], e[kTraceConsumerEnd]) << at;
        EXPECT_LE(e[kTraceWaitDone], e[kTraceProducerDone]) << at;
        EXPECT_LT(e[kTraceSm], static_cast<uint64_t>(sms)) << at;
        items += static_cast<int64_t>(e[kTraceItems]);
      }
      int64_t want = 0;
      for (const int count : c.counts) want += (count + expected - 1) / expected;  // passes of `expected` rows
      EXPECT_EQ(items, want * (c.n / 64)) << what;
    }
  }
}

// The wgmma kernel: the stage ring wraps inside a tile (14 K blocks over 3-4 stages; 3 K
// blocks: an odd count, the overlapped promotion's single-block remainder) and
// across tiles (3 SMs: many tiles per CTA), more than 32 experts (the tile prefix is built 32
// at a time), experts with 0 rows and odd row-block counts (a cluster pair's second tile past
// the rows), warpgroups with rows past the count (direct stores next to tensor stores), N =
// 128 mod 256 (the second half past N; 192-wide tiles past N and across weight-scale blocks),
// both layouts; scales by cp.async and, in one variant, by tensor copies where they fit (K 2560
// with N 384: weight-scale rows past N; K 1024; K 1792 and 384 fall back to cp.async: NOTE
// [wgmma stage scales]); single-batch tiles with the unrolled mainloop (NOTE [unrolled fp8
// mainloop]; 14 and 3 K blocks over 4-5 stages, 20 over 4; at 5 stages the ring carried on
// across tiles, NOTE [unrolled stage ring]: each tile's first stage moves on by 4 or 3) and the
// rolled one; tile
// schedules (NOTE [wgmma tile schedule]): static, dynamic (a device-wide counter; the unit tags
// left in shared memory by the previous launch), auto (dynamic with 80 tiles on 1 SM, static in
// clusters). The first
// variant, the 192- and 128-wide tiles and the overlapped promotion (NOTE
// [overlapped promotion]: narrower wgmma batches) are checked against the reference;
// every other variant (cluster, epilogue, issue order, scale copies: the same arithmetic in the same order)
// must give the first variant's bits, poisoned rows included. An invalid count is reported
// naming the expert in every variant.
TEST(GroupedGemmGpu, WgmmaKernelMatchesAcrossTilesStagesAndExperts) {
  SYMMOE_SKIP_WITHOUT_GPU();
  Gpu g;
  struct Variant {
    const char *cluster, *epilogue, *ordered, *tile_n, *overlap, *stages = "3", *scales = "cp_async",
        *unroll = "1", *schedule = "static";
  };
  const Variant variants[] = {{"1", "direct", "0", "256", "0"}, {"1", "tma", "0", "256", "0"},
                              {"1", "tma", "1", "256", "0"},    {"1", "direct", "1", "256", "0"},
                              {"2", "direct", "0", "256", "0"}, {"2", "tma", "0", "256", "0"},
                              {"2", "tma", "1", "256", "0"},    {"1", "tma", "0", "192", "0"},
                              {"1", "tma", "1", "192", "0"},    {"1", "tma", "0", "256", "1"},
                              {"1", "tma", "0", "192", "1"},    {"1", "tma", "0", "256", "2"},
                              {"1", "tma", "0", "192", "2"},    {"1", "tma", "0", "256", "3"},
                              {"1", "tma", "0", "256", "4"},    {"1", "tma", "0", "256", "5"},
                              {"1", "tma", "0", "256", "2", "4"}, {"1", "tma", "0", "128", "0"},
                              {"1", "direct", "0", "256", "0", "3", "tma"},
                              {"1", "tma", "0", "192", "0", "3", "cp_async", "0"},
                              {"1", "tma", "0", "128", "0", "3", "cp_async", "0"},
                              {"1", "tma", "0", "192", "0", "3", "cp_async", "1", "dynamic"},
                              {"1", "tma", "0", "192", "0", "3", "cp_async", "0", "dynamic"},
                              {"1", "tma", "0", "256", "2", "3", "cp_async", "1", "dynamic"},
                              {"1", "direct", "0", "256", "0", "3", "tma", "1", "dynamic"},
                              {"1", "tma", "1", "256", "0", "3", "cp_async", "1", "dynamic"},
                              {"1", "direct", "0", "256", "0", "3", "cp_async", "1", "dynamic"},
                              {"1", "tma", "0", "192", "0", "3", "cp_async", "1", "auto"},
                              {"2", "tma", "0", "256", "0", "3", "cp_async", "1", "auto"}};
  auto label = [](const Variant& v) {
    return std::string("wgmma (cluster ") + v.cluster + ", " + v.epilogue + " epilogue, ordered " + v.ordered +
           ", 128x" + v.tile_n + ", overlapped promotion " + v.overlap + ", " + v.stages + " stages, " + v.scales +
           " scales, unroll " + v.unroll + ", " + v.schedule + " schedule) ";
  };
  struct VariantEnv {
    test::EnvGuard cluster, epilogue, ordered, tile_n, overlap, stages, scales, unroll, schedule;
    explicit VariantEnv(const Variant& v)
        : cluster("SYMMOE_GEMM_WGMMA_CLUSTER", v.cluster),
          epilogue("SYMMOE_GEMM_WGMMA_EPILOGUE", v.epilogue),
          ordered("SYMMOE_GEMM_WGMMA_ORDERED", v.ordered),
          tile_n("SYMMOE_GEMM_WGMMA_TILE_N", v.tile_n),
          overlap("SYMMOE_GEMM_WGMMA_OVERLAP", v.overlap),
          stages("SYMMOE_GEMM_WGMMA_STAGES", v.stages),
          scales("SYMMOE_GEMM_WGMMA_SCALES", v.scales),
          unroll("SYMMOE_GEMM_WGMMA_UNROLL", v.unroll),
          schedule("SYMMOE_GEMM_WGMMA_SCHEDULE", v.schedule) {}
  };
  // SYMMOE_TEST_WGMMA_VARIANTS="9,10" runs only those variants (indices into `variants`) besides
  // variant 0, the base of the bit comparisons: a shorter device run while one variant is
  // being worked on. Unset: all.
  const char* only = std::getenv("SYMMOE_TEST_WGMMA_VARIANTS");
  auto selected = [&](size_t i) {
    if (only == nullptr || *only == '\0' || i == 0) return true;
    const std::string list = std::string(",") + only + ",";
    return list.find("," + std::to_string(i) + ",") != std::string::npos;
  };
  if (only != nullptr && *only != '\0') std::printf("wgmma variants: 0,%s (SYMMOE_TEST_WGMMA_VARIANTS)\n", only);
  auto run_variant = [&](const Variant& v, const HostCase& c, runtime::SmBudget budget) {
    const VariantEnv env(v);
    return run(g, c, GemmTile::kWgmma, budget);
  };
  // The reference once per case (x), for every variant and budget.
  auto check_all = [&](const HostCase& c, const Expected& x, runtime::SmBudget budget, bool integers,
                       const std::string& what) {
    const std::vector<uint16_t> base = run_variant(variants[0], c, budget);
    expect_matches(c, x, base, integers, label(variants[0]) + what);
    for (size_t i = 1; i < std::size(variants); ++i) {
      if (!selected(i)) continue;
      const std::vector<uint16_t> got = run_variant(variants[i], c, budget);
      if (std::string(variants[i].tile_n) != variants[0].tile_n || std::string(variants[i].overlap) != "0") {
        expect_matches(c, x, got, integers, label(variants[i]) + what);
        continue;
      }
      expect_same_bits(c, got, base, label(variants[i]) + what, label(variants[0]));
    }
  };
  uint64_t seed = 500;
  for (const GroupedLayout layout : {GroupedLayout::kContiguous, GroupedLayout::kMasked}) {
    const HostCase c = make_case(GemmDtype::kFP8E4M3, layout, 6, 256, 1792, 300, false, seed++);
    const Expected xc = expected_of(c);
    check_all(c, xc, {}, false, std::string(name(layout)) + " K 1792");
    check_all(c, xc, runtime::SmBudget{3, 0}, false, std::string(name(layout)) + " K 1792 on 3 SMs");
    const HostCase many = make_case(GemmDtype::kFP8E4M3, layout, 40, 128, 384, 140, false, seed++);
    const Expected xm = expected_of(many);
    check_all(many, xm, {}, false, std::string(name(layout)) + " 40 experts");
    // 80 tiles on one SM: the auto schedule takes the counter (NOTE [wgmma tile schedule]).
    check_all(many, xm, runtime::SmBudget{1, 0}, false, std::string(name(layout)) + " 40 experts on 1 SM");
    const HostCase scale_copies = make_case(GemmDtype::kFP8E4M3, layout, 6, 384, 2560, 300, false, seed++);
    check_all(scale_copies, expected_of(scale_copies), runtime::SmBudget{4, 0}, false,
              std::string(name(layout)) + " K 2560 N 384 on 4 SMs");
  }
  const HostCase exact = make_case(GemmDtype::kFP8E4M3, GroupedLayout::kMasked, 3, 384, 1024, 260, true, 43);
  check_all(exact, expected_of(exact), runtime::SmBudget{5, 0}, true, "integers on 5 SMs");

  HostCase bad = make_case(GemmDtype::kFP8E4M3, GroupedLayout::kContiguous, 4, 256, 256, 130, false, 44);
  for (size_t i = 0; i < std::size(variants); ++i) {
    if (!selected(i)) continue;
    const Variant& v = variants[i];
    const VariantEnv env(v);
    SCOPED_TRACE(label(v));
    expect_invalid_count_reported(g, bad, GemmTile::kWgmma, 1, -5);
  }
}

// The bf16 wgmma kernel (NOTE [bf16 wgmma kernel]): K not a multiple of its 64-wide blocks (the
// last block's columns past K arrive as zeros), N not a multiple of 256 or even 64 (tensor
// stores clipped at N, direct stores per 8 columns), the stage ring wrapping across tiles on
// 3 SMs, more than 32 experts, rows past the count next to full row blocks (a cluster pair's
// second tile past the rows; a 2 x 2 cluster's column blocks past N), both epilogues, clusters
// of 1, 2 and 2 x 2, 4 stages with the output staged in 64-column rounds (the last round of N
// 328 clipped, of N 512 K 24 with 4 rounds per tile) and both layouts; integer
// inputs exact; an invalid count reported naming the expert.
TEST(GroupedGemmGpu, Bf16WgmmaKernelMatchesAcrossShapesAndEpilogues) {
  SYMMOE_SKIP_WITHOUT_GPU();
  Gpu g;
  uint64_t seed = 700;
  struct Variant {
    const char *epilogue, *cluster, *stages, *schedule = "static";
  };
  const Variant variants[] = {{"tma", "1", "3"},    {"direct", "1", "3"}, {"tma", "2", "3"}, {"direct", "2", "3"},
                              {"tma", "4", "3"},    {"direct", "4", "3"}, {"tma", "1", "4"},
                              {"tma", "1", "3", "dynamic"}, {"direct", "1", "4", "dynamic"}};
  // The cases and their references once, for every variant (each case under each of its budgets;
  // 0 SMs: every SM).
  struct Case {
    HostCase c;
    Expected x;
    std::vector<int> sms;
    bool integers;
    std::string what;
  };
  std::vector<Case> cases;
  auto add = [&](HostCase c, std::vector<int> sms, bool integers, std::string what) {
    Expected x = expected_of(c);
    cases.push_back(Case{std::move(c), std::move(x), std::move(sms), integers, std::move(what)});
  };
  for (const GroupedLayout layout : {GroupedLayout::kContiguous, GroupedLayout::kMasked}) {
    add(make_case(GemmDtype::kBF16, layout, 6, 328, 1000, 300, false, seed++), {0, 3}, false,
        std::string(name(layout)) + " N 328 K 1000");
    add(make_case(GemmDtype::kBF16, layout, 40, 256, 200, 140, false, seed++), {0}, false,
        std::string(name(layout)) + " 40 experts K 200");
    add(make_case(GemmDtype::kBF16, layout, 3, 512, 24, 129, false, seed++), {0}, false,
        std::string(name(layout)) + " K 24");
  }
  add(make_case(GemmDtype::kBF16, GroupedLayout::kMasked, 3, 384, 1088, 260, true, 45), {5}, true, "integers");
  for (const auto& [epilogue, cluster, stages, schedule] : variants) {
    const test::EnvGuard env("SYMMOE_GEMM_WGMMA_EPILOGUE", epilogue);
    const test::EnvGuard env_cluster("SYMMOE_GEMM_WGMMA_BF16_CLUSTER", cluster);
    const test::EnvGuard env_stages("SYMMOE_GEMM_WGMMA_STAGES", stages);
    const test::EnvGuard env_schedule("SYMMOE_GEMM_WGMMA_SCHEDULE", schedule);
    const std::string ep = std::string(epilogue) + " epilogue, cluster " + cluster + ", " + stages + " stages, " +
                           schedule + " schedule: ";
    for (const Case& k : cases) {
      for (const int sms : k.sms) {
        const std::string on = sms == 0 ? "" : " on " + std::to_string(sms) + " SMs";
        const runtime::SmBudget budget = sms == 0 ? runtime::SmBudget{} : runtime::SmBudget{sms, 0};
        expect_matches(k.c, k.x, run(g, k.c, GemmTile::kWgmma, budget), k.integers, ep + k.what + on);
      }
    }
    HostCase bad = make_case(GemmDtype::kBF16, GroupedLayout::kContiguous, 4, 256, 256, 130, false, 46);
    SCOPED_TRACE(ep);
    expect_invalid_count_reported(g, bad, GemmTile::kWgmma, 1, -5);
  }
}

// NOTE [wgmma tile schedule]: the dynamic schedule is built for clusters of one; asking for it
// with clusters is refused before launch, naming the setting.
TEST(GroupedGemmGpu, DynamicWgmmaScheduleWithClustersIsRefused) {
  SYMMOE_SKIP_WITHOUT_GPU();
  Gpu g;
  const HostCase c = make_case(GemmDtype::kFP8E4M3, GroupedLayout::kContiguous, 4, 256, 256, 130, false, 78);
  const test::EnvGuard env_schedule("SYMMOE_GEMM_WGMMA_SCHEDULE", "dynamic");
  const test::EnvGuard env_cluster("SYMMOE_GEMM_WGMMA_CLUSTER", "2");
  const test::EnvGuard env_tile_n("SYMMOE_GEMM_WGMMA_TILE_N", "256");
  const test::EnvGuard env_overlap("SYMMOE_GEMM_WGMMA_OVERLAP", "0");
  const test::EnvGuard env_epilogue("SYMMOE_GEMM_WGMMA_EPILOGUE", "direct");
  DeviceCase d(c);
  GroupedGemmOptions o;
  o.tile = GemmTile::kWgmma;
  try {
    g.gemm.run(d.problem(c), g.stream, o);
    ADD_FAILURE() << "dynamic schedule with clusters of 2 was launched";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("SYMMOE_GEMM_WGMMA_SCHEDULE=dynamic is built for clusters of one"),
              std::string::npos)
        << e.what();
  }
}

// The fp8 wgmma kernel's auto tile order (fp8_wgmma_row_band_by_default): an expected_m hint
// from kWgmmaRowBandMinM rows takes bands of 16 row blocks with the dynamic schedule. Experts
// of up to 2200 rows (18 row blocks: a full band and a clipped one; expert 1 empty, expert 2
// full), both layouts, every SM and 3 SMs (the counter over more units per CTA): checked
// against the reference, and equal to the column-band walk (SYMMOE_GEMM_WGMMA_ROW_BAND=0,
// static) bit for bit, as each tile's arithmetic does not depend on the order.
TEST(GroupedGemmGpu, WgmmaAutoRowBandsMatchTheReference) {
  SYMMOE_SKIP_WITHOUT_GPU();
  Gpu g;
  uint64_t seed = 900;
  for (const GroupedLayout layout : {GroupedLayout::kContiguous, GroupedLayout::kMasked}) {
    const HostCase c = make_case(GemmDtype::kFP8E4M3, layout, 4, 384, 512, 2200, false, seed++);
    const Expected x = expected_of(c);
    for (const int sms : {0, 3}) {
      const runtime::SmBudget budget = sms == 0 ? runtime::SmBudget{} : runtime::SmBudget{sms, 0};
      const std::string what = std::string(name(layout)) + (sms == 0 ? "" : " on 3 SMs");
      std::vector<uint16_t> columns;
      {
        const test::EnvGuard env_band("SYMMOE_GEMM_WGMMA_ROW_BAND", "0");
        const test::EnvGuard env_schedule("SYMMOE_GEMM_WGMMA_SCHEDULE", "static");
        columns = run(g, c, GemmTile::kWgmma, budget, kWgmmaRowBandMinM);
      }
      const std::vector<uint16_t> rows = run(g, c, GemmTile::kWgmma, budget, kWgmmaRowBandMinM);
      expect_matches(c, x, rows, false, "auto row bands, " + what);
      expect_same_bits(c, rows, columns, "auto row bands, " + what, "column bands");
    }
  }
}

TEST(GroupedGemmGpu, SmBudgetAndGraphReplayGiveTheSameBits) {
  SYMMOE_SKIP_WITHOUT_GPU();
  Gpu g;
  const HostCase c = make_case(GemmDtype::kFP8E4M3, GroupedLayout::kContiguous, 9, 512, 768, 300, false, 77);
  const auto full = run(g, c, GemmTile::kAuto);
  EXPECT_EQ(run(g, c, GemmTile::kAuto, runtime::SmBudget{16, 0}), full) << "16 SMs";
  DeviceCase d(c);
  d.poison(g.stream);
  CapturedGraph graph(g.stream, [&] { g.gemm.run(d.problem(c), g.stream); });
  for (int i = 0; i < 3; ++i) graph.launch(g.stream);
  g.rt.check(g.stream);
  EXPECT_EQ(d.out.download(), full) << "graph replay";
}

TEST(GroupedGemmGpu, InvalidRowTablesAreReportedNamingTheExpert) {
  SYMMOE_SKIP_WITHOUT_GPU();
  Gpu g;
  HostCase c = make_case(GemmDtype::kBF16, GroupedLayout::kMasked, 4, 256, 256, 64, false, 5);
  c.counts[3] = 65;  // beyond max_m
  DeviceCase d(c);
  d.poison(g.stream);
  g.gemm.run(d.problem(c), g.stream);
  const auto failure = g.rt.take_failure(g.stream);
  ASSERT_TRUE(failure.has_value());
  EXPECT_NE(failure->find("grouped GEMM: expert 3 has counts = 65, outside [0, max_m = 64]"), std::string::npos)
      << *failure;
  // The other experts were computed.
  c.counts[3] = 0;
  expect_matches(c, d.out.download(), false, "valid experts next to an invalid one");

  HostCase s = make_case(GemmDtype::kFP8E4M3, GroupedLayout::kContiguous, 3, 256, 256, 32, false, 6);
  s.counts[0] = static_cast<int32_t>(s.rows) + 1;  // the segment leaves the rows
  DeviceCase ds(s);
  g.gemm.run(ds.problem(s), g.stream);
  const auto f2 = g.rt.take_failure(g.stream);
  ASSERT_TRUE(f2.has_value());
  EXPECT_NE(f2->find("expert 0 has counts = " + std::to_string(s.rows + 1)), std::string::npos) << *f2;
  EXPECT_NE(f2->find("leaves the " + std::to_string(s.rows) + " rows"), std::string::npos) << *f2;
}

// NOTE [activation scale layouts]: every fp8 kernel reading column-major activation scales (a
// NaN-padded leading dimension) gives the bits of its row-major run, which matches the
// reference: the wgmma tiles (192, 128 and 256 wide; with tensor-copy scales too, NOTE [wgmma
// stage scales]: K / 128 a multiple of 4 and a leading dimension of a multiple of 4 floats; the
// contiguous experts start at random gaps, so at rows not 16-byte aligned in the scales' rows
// too), the swap-AB split and pair kernels and the
// decode kernel, both layouts. kAuto at a size where a CUTLASS tile would run takes the wgmma
// kernel; a CUTLASS tile asked for is refused before launch, naming the layout.
TEST(GroupedGemmGpu, ColumnMajorActivationScalesGiveTheRowMajorBits) {
  SYMMOE_SKIP_WITHOUT_GPU();
  Gpu g;
  struct Kernel {
    GemmTile tile;
    int expected_m, max_count, k = 640;  // 5 K blocks
    const char *tile_n = "0", *scales = "cp_async";
  };
  // K = 2560 for the tensor-copy variants: 20 K blocks (whole boxes of 4 weight-scale K blocks).
  const Kernel kernels[] = {{GemmTile::kWgmma, 0, 200},
                            {GemmTile::kWgmma, 0, 200, 640, "128"},
                            {GemmTile::kWgmma, 0, 200, 640, "256"},
                            {GemmTile::kWgmma, 0, 160, 2560, "192", "tma"},
                            {GemmTile::kWgmma, 0, 160, 2560, "256", "tma"},
                            {GemmTile::kWgmma, 0, 160, 2560, "128", "tma"},
                            {GemmTile::kSwapAB, 8, 13},
                            {GemmTile::kSwapAB, 32, 29},
                            {GemmTile::kSwapAB, 64, 69},
                            {GemmTile::kDecode, 8, 21},
                            {GemmTile::kAuto, 100, 100}};
  uint64_t seed = 90;
  for (const GroupedLayout layout : {GroupedLayout::kContiguous, GroupedLayout::kMasked}) {
    for (const Kernel& kn : kernels) {
      const test::EnvGuard tile_n("SYMMOE_GEMM_WGMMA_TILE_N", kn.tile_n), scales("SYMMOE_GEMM_WGMMA_SCALES", kn.scales);
      const HostCase c = make_case(GemmDtype::kFP8E4M3, layout, 5, 384, kn.k, kn.max_count, false, seed++);
      const std::string what = std::string(name(kn.tile)) + " " + name(layout) + " expected_m " +
                               std::to_string(kn.expected_m) + " tile_n " + kn.tile_n + " scales " + kn.scales;
      TileChoice row_tile, col_tile;
      const std::vector<uint16_t> base = run(g, c, kn.tile, {}, kn.expected_m, &row_tile);
      expect_matches(c, base, false, what + " (row-major scales)");
      // Tensor copies need a leading dimension of a multiple of 4 floats (1-4 NaN floats of
      // padding); the other kernels take any (3).
      const int64_t per_expert = layout == GroupedLayout::kMasked ? c.max_m : c.rows;
      const bool copies = std::string(kn.scales) == "tma";
      const HostCase cm = with_column_major_scales(c, copies ? 4 - per_expert % 4 : 3);
      const std::vector<uint16_t> got = run(g, cm, kn.tile, {}, kn.expected_m, &col_tile);
      if (kn.tile == GemmTile::kAuto) {
        EXPECT_EQ(row_tile.tile, GemmTile::kSmallM) << what << ": " << row_tile.name;
        EXPECT_EQ(col_tile.tile, GemmTile::kWgmma) << what << ": " << col_tile.name;
        expect_matches(cm, got, false, what + " column-major scales");
      } else {
        expect_same_bits(c, got, base, what + " column-major scales", "row-major scales");
      }
    }
  }
  const HostCase cm =
      with_column_major_scales(make_case(GemmDtype::kFP8E4M3, GroupedLayout::kContiguous, 3, 256, 256, 16, false, 99), 0);
  DeviceCase d(cm);
  GroupedGemmOptions o;
  o.tile = GemmTile::kLargeM;
  EXPECT_NE(test::error_text([&] { g.gemm.run(d.problem(cm), g.stream, o); })
                .find("reads row-major activation scales only (act_scale_layout = kColumnMajor)"),
            std::string::npos);
  EXPECT_FALSE(g.rt.take_failure(g.stream).has_value());
}

// NOTE [activation scale transpose]: row-major scales copied column-major on the device
// (transpose_act_scales, into a NaN-poisoned buffer: a float the copy missed or a read past the
// rows meets NaN) give the row-major run's bits through the default fp8 kernel (tensor-copy
// scales: K / 128 = 20, ld a multiple of 4), both layouts.
TEST(GroupedGemmGpu, TransposedActivationScalesGiveTheRowMajorBits) {
  SYMMOE_SKIP_WITHOUT_GPU();
  Gpu g;
  uint64_t seed = 120;
  for (const GroupedLayout layout : {GroupedLayout::kContiguous, GroupedLayout::kMasked}) {
    const HostCase c = make_case(GemmDtype::kFP8E4M3, layout, 5, 384, 2560, 157, false, seed++);
    const std::string what = std::string("wgmma kernel, ") + name(layout) + ", transposed scales";
    const std::vector<uint16_t> base = run(g, c, GemmTile::kWgmma);
    expect_matches(c, base, false, what + " (row-major run)");
    DeviceCase d(c);
    d.poison(g.stream);
    const GroupedGemmProblem p = d.problem(c);
    const size_t floats = column_major_act_scales_floats(p);
    DeviceArray<float> col(std::vector<float>(floats, std::nanf("")));
    GroupedGemmOptions o;
    o.tile = GemmTile::kWgmma;
    g.gemm.run(transpose_act_scales(p, col.get(), floats, g.stream), g.stream, o);
    g.rt.check(g.stream);
    expect_same_bits(c, d.out.download(), base, what, "row-major scales");
  }
}

TEST(GroupedGemmGpu, BadCallsFailBeforeLaunchWithNamedErrors) {
  SYMMOE_SKIP_WITHOUT_GPU();
  Gpu g;
  const HostCase c = make_case(GemmDtype::kFP8E4M3, GroupedLayout::kContiguous, 3, 256, 256, 16, false, 9);
  DeviceCase d(c);
  GroupedGemmProblem p = d.problem(c);
  p.k = 200;
  EXPECT_NE(test::error_text([&] { g.gemm.run(p, g.stream); }).find("K = 200 must be a multiple of 128"),
            std::string::npos);
  p = d.problem(c);
  p.num_experts = 65;
  EXPECT_NE(test::error_text([&] { g.gemm.run(p, g.stream); }).find("sized for 64 (max_experts)"),
            std::string::npos);
  p = d.problem(c);
  p.weight_scales = nullptr;
  EXPECT_NE(test::error_text([&] { g.gemm.run(p, g.stream); }).find("weight_scales"), std::string::npos);
  EXPECT_FALSE(g.rt.take_failure(g.stream).has_value());
}

}  // namespace
}  // namespace symmoe::gemm
