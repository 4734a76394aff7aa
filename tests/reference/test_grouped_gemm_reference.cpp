#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "symmoe/core/bf16.hpp"
#include "symmoe/core/error.hpp"
#include "symmoe/reference/grouped_gemm_reference.hpp"

namespace symmoe::reference {
namespace {

using gemm::GemmDtype;
using gemm::GroupedGemmProblem;
using gemm::GroupedLayout;

constexpr uint16_t kPoison = 0x7FC1;  // a bf16 NaN no computation produces

// e4m3 decoded from its definition (sign, 4 exponent bits with bias 7, 3 mantissa bits), not
// through the CUDA conversion the reference uses.
double e4m3_value(uint8_t q) {
  const int sign = q >> 7, exp = (q >> 3) & 15, mant = q & 7;
  const double v = exp == 0 ? std::ldexp(mant / 8.0, -6) : std::ldexp(1.0 + mant / 8.0, exp - 7);
  return sign ? -v : v;
}

struct Data {
  std::vector<uint16_t> act16, w16, out;
  std::vector<uint8_t> act8, w8;
  std::vector<float> act_scales, w_scales;
  std::vector<int32_t> offsets, counts;
};

// Random M per expert (some 0), segments separated by unused rows; integer or random values.
GroupedGemmProblem make(Data& d, GemmDtype dtype, int E, int N, int K, bool integers, uint64_t seed) {
  std::mt19937_64 rng(seed);
  int64_t row = 0;
  for (int e = 0; e < E; ++e) {
    const int m = e == 1 ? 0 : static_cast<int>(rng() % 9);
    row += rng() % 3;  // padding before the segment
    d.offsets.push_back(static_cast<int32_t>(row));
    d.counts.push_back(m);
    row += m;
  }
  const int64_t rows = row + 2;
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  auto value = [&] { return integers ? static_cast<float>(static_cast<int>(rng() % 7) - 3) : u(rng); };
  GroupedGemmProblem p;
  p.dtype = dtype;
  p.num_experts = E;
  p.n = N;
  p.k = K;
  p.total_rows = rows;
  if (dtype == GemmDtype::kBF16) {
    for (int64_t i = 0; i < rows * K; ++i) d.act16.push_back(float_to_bf16_bits(value()));
    for (int64_t i = 0; i < int64_t{E} * N * K; ++i) d.w16.push_back(float_to_bf16_bits(value()));
    p.act = d.act16.data();
    p.weights = d.w16.data();
  } else {
    for (int64_t i = 0; i < rows * K; ++i) d.act8.push_back(static_cast<uint8_t>(rng() & 0x7E));  // finite codes
    for (int64_t i = 0; i < int64_t{E} * N * K; ++i) d.w8.push_back(static_cast<uint8_t>((rng() & 0xFE) % 0xFE));
    for (int64_t i = 0; i < rows * (K / 128); ++i) d.act_scales.push_back(std::ldexp(1.f, static_cast<int>(rng() % 5) - 2));
    for (int64_t i = 0; i < int64_t{E} * (N / 128) * (K / 128); ++i) d.w_scales.push_back(0.5f + u(rng) * 0.25f);
    p.act = d.act8.data();
    p.weights = d.w8.data();
    p.act_scales = d.act_scales.data();
    p.weight_scales = d.w_scales.data();
  }
  d.out.assign(static_cast<size_t>(rows) * N, kPoison);
  p.offsets = d.offsets.data();
  p.counts = d.counts.data();
  p.out = d.out.data();
  return p;
}

// Independent fp64 value of out[row, n] of expert e.
double naive(const GroupedGemmProblem& p, int e, int64_t row, int n) {
  double acc = 0;
  for (int k = 0; k < p.k; ++k) {
    const size_t wi = (static_cast<size_t>(e) * p.n + n) * p.k + k;
    double a, w;
    if (p.dtype == GemmDtype::kBF16) {
      a = bf16_bits_to_float(static_cast<const uint16_t*>(p.act)[row * p.k + k]);
      w = bf16_bits_to_float(static_cast<const uint16_t*>(p.weights)[wi]);
    } else {
      a = e4m3_value(static_cast<const uint8_t*>(p.act)[row * p.k + k]) * p.act_scales[row * (p.k / 128) + k / 128];
      w = e4m3_value(static_cast<const uint8_t*>(p.weights)[wi]) *
          p.weight_scales[(static_cast<size_t>(e) * (p.n / 128) + n / 128) * (p.k / 128) + k / 128];
    }
    acc += a * w;
  }
  return acc;
}

void expect_matches_naive(const GroupedGemmProblem& p, const std::vector<uint16_t>& out) {
  std::vector<bool> used(static_cast<size_t>(p.rows()), false);
  for (int e = 0; e < p.num_experts; ++e) {
    const int64_t first = p.layout == GroupedLayout::kContiguous ? p.offsets[e] : int64_t{e} * p.max_m;
    for (int i = 0; i < p.counts[e]; ++i) {
      used[first + i] = true;
      for (int n = 0; n < p.n; ++n) {
        ASSERT_EQ(out[(first + i) * p.n + n], double_to_bf16_bits(naive(p, e, first + i, n)))
            << "expert " << e << " row " << i << " column " << n;
      }
    }
  }
  for (int64_t r = 0; r < p.rows(); ++r) {
    if (used[r]) continue;
    for (int n = 0; n < p.n; ++n) ASSERT_EQ(out[r * p.n + n], kPoison) << "row " << r << " of no expert was written";
  }
}

TEST(GroupedGemmReference, IntegerBf16InputsGiveExactSums) {
  Data d;
  GroupedGemmProblem p = make(d, GemmDtype::kBF16, 5, 24, 40, true, 1);
  std::vector<double> exact;
  grouped_gemm_reference(p, &exact);
  expect_matches_naive(p, d.out);
  for (size_t i = 0; i < exact.size(); ++i) EXPECT_EQ(exact[i], std::round(exact[i]));  // integers stay exact
}

TEST(GroupedGemmReference, Fp8WithBlockScalesMatchesAnIndependentDecoder) {
  Data d;
  GroupedGemmProblem p = make(d, GemmDtype::kFP8E4M3, 3, 256, 256, false, 2);
  grouped_gemm_reference(p);
  expect_matches_naive(p, d.out);
}

// sum_k |a_k b_k| for every output, from the independent decoder; and every result the same
// on 1 thread as on 5 (an expert's rows split between threads).
TEST(GroupedGemmReference, AbsProductsMatchTheDecoderAndNoResultDependsOnTheThreadCount) {
  Data d;
  GroupedGemmProblem p = make(d, GemmDtype::kFP8E4M3, 3, 128, 384, false, 6);
  std::vector<double> exact1, abs1, exact5, abs5;
  grouped_gemm_reference(p, &exact1, &abs1, 1);
  const std::vector<uint16_t> out1 = d.out;
  d.out.assign(d.out.size(), kPoison);
  grouped_gemm_reference(p, &exact5, &abs5, 5);
  EXPECT_EQ(d.out, out1);
  EXPECT_EQ(exact5, exact1);
  EXPECT_EQ(abs5, abs1);
  expect_matches_naive(p, d.out);
  int checked = 0;
  for (int e = 0; e < p.num_experts; ++e) {
    for (int i = 0; i < p.counts[e]; ++i) {
      const int64_t row = p.offsets[e] + i;
      for (int n = 0; n < p.n; ++n) {
        double abs = 0;
        for (int k = 0; k < p.k; ++k) {
          const double a = e4m3_value(d.act8[row * p.k + k]) * d.act_scales[row * (p.k / 128) + k / 128];
          const double w = e4m3_value(d.w8[(static_cast<size_t>(e) * p.n + n) * p.k + k]) *
                           d.w_scales[(static_cast<size_t>(e) * (p.n / 128) + n / 128) * (p.k / 128) + k / 128];
          abs += std::fabs(a * w);
        }
        ASSERT_EQ(abs5[row * p.n + n], abs) << "expert " << e << " row " << i << " column " << n;
        ASSERT_GE(abs, std::fabs(exact5[row * p.n + n]));
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 0);
  EXPECT_THROW(grouped_gemm_reference(p, nullptr, nullptr, -1), Error);
}

// Problem `c` over masked rows [E, max_m, K] in `act`, writing `out`.
GroupedGemmProblem as_masked(GroupedGemmProblem c, int max_m, const void* act, void* out) {
  c.layout = GroupedLayout::kMasked;
  c.max_m = max_m;
  c.total_rows = 0;
  c.offsets = nullptr;
  c.act = act;
  c.out = out;
  return c;
}

TEST(GroupedGemmReference, MaskedLayoutEqualsContiguous) {
  Data d;
  GroupedGemmProblem c = make(d, GemmDtype::kBF16, 4, 16, 32, false, 3);
  grouped_gemm_reference(c);
  // The same rows laid out as [E, max_m, K].
  const int max_m = 9;
  std::vector<uint16_t> act(static_cast<size_t>(4) * max_m * 32, 0), out(static_cast<size_t>(4) * max_m * 16, kPoison);
  for (int e = 0; e < 4; ++e) {
    for (int i = 0; i < d.counts[e]; ++i) {
      std::copy_n(d.act16.begin() + (d.offsets[e] + i) * 32, 32, act.begin() + (e * max_m + i) * 32);
    }
  }
  const GroupedGemmProblem m = as_masked(c, max_m, act.data(), out.data());
  grouped_gemm_reference(m);
  expect_matches_naive(m, out);
  for (int e = 0; e < 4; ++e) {
    for (int i = 0; i < d.counts[e]; ++i) {
      for (int n = 0; n < 16; ++n) EXPECT_EQ(out[(e * max_m + i) * 16 + n], d.out[(d.offsets[e] + i) * 16 + n]);
    }
  }
}

// The same fp8 problem with its activation scales column-major (NOTE [activation scale layouts]),
// the padding between K blocks NaN: every output equals the row-major run's, bit for bit.
TEST(GroupedGemmReference, ColumnMajorActivationScalesEqualRowMajor) {
  Data d;
  GroupedGemmProblem c = make(d, GemmDtype::kFP8E4M3, 4, 128, 384, false, 5);
  grouped_gemm_reference(c);
  const int kb = c.k / 128;
  const float nan = std::nanf("");
  // Contiguous: [K/128, ld], ld past total_rows.
  const int64_t ld = c.total_rows + 3;
  std::vector<float> cm(static_cast<size_t>(kb) * ld, nan);
  for (int64_t r = 0; r < c.total_rows; ++r) {
    for (int b = 0; b < kb; ++b) cm[b * ld + r] = d.act_scales[r * kb + b];
  }
  GroupedGemmProblem t = c;
  std::vector<uint16_t> out(d.out.size(), kPoison);
  t.act_scales = cm.data();
  t.act_scale_layout = gemm::ScaleLayout::kColumnMajor;
  t.act_scales_ld = ld;
  t.out = out.data();
  grouped_gemm_reference(t);
  EXPECT_EQ(out, d.out);
  // Masked: rows as [E, max_m, K], scales as [E, K/128, ld], ld past max_m.
  const int max_m = 9, E = c.num_experts, K = c.k;
  const int64_t mld = max_m + 2;
  std::vector<uint8_t> act(static_cast<size_t>(E) * max_m * K, 0);
  std::vector<float> mcm(static_cast<size_t>(E) * kb * mld, nan);
  std::vector<uint16_t> mout(static_cast<size_t>(E) * max_m * c.n, kPoison);
  for (int e = 0; e < E; ++e) {
    for (int i = 0; i < d.counts[e]; ++i) {
      const int64_t src = d.offsets[e] + i;
      std::copy_n(d.act8.begin() + src * K, K, act.begin() + (int64_t{e} * max_m + i) * K);
      for (int b = 0; b < kb; ++b) mcm[(int64_t{e} * kb + b) * mld + i] = d.act_scales[src * kb + b];
    }
  }
  GroupedGemmProblem m = as_masked(t, max_m, act.data(), mout.data());
  m.act_scales = mcm.data();
  m.act_scales_ld = mld;
  grouped_gemm_reference(m);
  for (int e = 0; e < E; ++e) {
    for (int i = 0; i < d.counts[e]; ++i) {
      for (int n = 0; n < c.n; ++n) {
        ASSERT_EQ(mout[(int64_t{e} * max_m + i) * c.n + n], d.out[(d.offsets[e] + i) * c.n + n]) << "expert " << e;
      }
    }
  }
}

// The bound the reference states for kernels: fp32 accumulation per 128-wide K block, promoted
// with the block scales, then one bf16 rounding.
TEST(GroupedGemmReference, StatedErrorBoundCoversTheFp32BlockPromotionRecipe) {
  Data d;
  GroupedGemmProblem p = make(d, GemmDtype::kFP8E4M3, 2, 128, 1024, false, 4);
  std::vector<double> exact;
  grouped_gemm_reference(p, &exact);
  const auto* a8 = static_cast<const uint8_t*>(p.act);
  const auto* w8 = static_cast<const uint8_t*>(p.weights);
  for (int e = 0; e < p.num_experts; ++e) {
    for (int i = 0; i < p.counts[e]; ++i) {
      const int64_t row = p.offsets[e] + i;
      for (int n = 0; n < p.n; ++n) {
        float acc = 0.f;
        double magnitude = 0;
        for (int kb = 0; kb < p.k / 128; ++kb) {
          float block = 0.f;
          for (int k = kb * 128; k < (kb + 1) * 128; ++k) {
            const float prod = static_cast<float>(e4m3_value(a8[row * p.k + k])) *
                               static_cast<float>(e4m3_value(w8[(static_cast<size_t>(e) * p.n + n) * p.k + k]));
            block += prod;
          }
          const float scale = p.act_scales[row * (p.k / 128) + kb] * p.weight_scales[(e * (p.n / 128) + n / 128) * (p.k / 128) + kb];
          acc += block * scale;
          for (int k = kb * 128; k < (kb + 1) * 128; ++k) {
            magnitude += std::fabs(e4m3_value(a8[row * p.k + k]) * e4m3_value(w8[(static_cast<size_t>(e) * p.n + n) * p.k + k]) * scale);
          }
        }
        const double ref = exact[static_cast<size_t>(row) * p.n + n];
        const double gpu_like = bf16_bits_to_float(float_to_bf16_bits(acc));
        EXPECT_LE(std::fabs(gpu_like - ref), std::ldexp(std::fabs(ref), -8) + p.k * std::ldexp(magnitude, -23))
            << "row " << row << " column " << n;
      }
    }
  }
}

TEST(GroupedGemmReference, DoubleToBf16RoundsOnceToNearestEven) {
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u(-4.0, 4.0);
  for (int i = 0; i < 200000; ++i) {
    const double d = i < 4 ? std::ldexp(1.0 + (2 * i + 1) * std::ldexp(1.0, -8), 0) : u(rng);
    const uint16_t got = double_to_bf16_bits(d);
    // Brute force: the nearer of the two bf16 values around d (ties to the even code).
    const uint16_t lo = float_to_bf16_bits(static_cast<float>(d));
    double best = -1;
    uint16_t want = 0;
    for (int delta = -1; delta <= 1; ++delta) {
      const uint16_t cand = static_cast<uint16_t>(lo + delta);
      const double err = std::fabs(bf16_bits_to_float(cand) - d);
      if (best < 0 || err < best || (err == best && (cand & 1) == 0)) {
        best = err;
        want = cand;
      }
    }
    ASSERT_EQ(got, want) << "d = " << d;
  }
}

}  // namespace
}  // namespace symmoe::reference
