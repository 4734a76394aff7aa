#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <set>

#include "symmoe/core/bf16.hpp"
#include "symmoe/core/error.hpp"
#include "support/ep_inputs.hpp"
#include "symmoe/device/fp8_block_quant.cuh"
#include "symmoe/reference/ep_reference.hpp"

namespace symmoe::reference {
namespace {

std::vector<RankTokens> random_inputs(const ep::EpShape& s, std::vector<int> tokens, uint64_t seed,
                                      bool integer_values, bool unit_weights) {
  test::EpInputOptions o;
  o.seed = seed;
  o.integer_values = integer_values;
  o.unit_weights = unit_weights;
  return test::make_ep_inputs(s, tokens, o);
}

// Random bf16 expert outputs in every rank's receive layout.
std::vector<std::vector<uint16_t>> random_outputs(const std::vector<ExpertMajor>& layouts, std::mt19937& rng) {
  std::vector<std::vector<uint16_t>> y;
  std::uniform_real_distribution<float> d(-1.f, 1.f);
  for (const auto& m : layouts) {
    std::vector<uint16_t> v(m.rows.size());
    for (auto& b : v) b = float_to_bf16_bits(d(rng));
    y.push_back(std::move(v));
  }
  return y;
}

TEST(EpReference, DispatchPlacesEveryRoutedTokenOnceInItsExpertSegment) {
  const ep::EpShape s{4, 16, 4, 32};
  const auto in = random_inputs(s, {5, 0, 64, 1}, 9, false, false);  // a rank with no tokens
  const auto out = dispatch_reference(in, s, 8);
  size_t routed = 0, placed = 0;
  for (const auto& x : in) for (int64_t e : x.topk_idx) routed += e >= 0;
  for (int dst = 0; dst < s.num_ranks; ++dst) {
    const ExpertMajor& m = out[dst];
    for (int j = 0; j < s.experts_per_rank(); ++j) {
      EXPECT_EQ((m.segment_offset[j + 1] - m.segment_offset[j]) % 8, 0);
      EXPECT_LE(m.segment_count[j], m.segment_offset[j + 1] - m.segment_offset[j]);
      std::tuple<int, int, int> prev{-1, -1, -1};
      for (int i = 0; i < m.segment_offset[j + 1] - m.segment_offset[j]; ++i) {
        const size_t row = m.segment_offset[j] + i;
        if (i >= m.segment_count[j]) {  // padding
          EXPECT_EQ(m.src_rank[row], -1);
          for (int h = 0; h < s.hidden; ++h) EXPECT_EQ(m.rows[row * s.hidden + h], 0);
          continue;
        }
        ++placed;
        const int src = m.src_rank[row], t = m.src_token[row], k = m.src_k[row];
        const std::tuple<int, int, int> key{src, t, k};
        EXPECT_LT(prev, key) << "rows are ordered by (source rank, token, slot)";
        prev = key;
        EXPECT_EQ(in[src].topk_idx[t * s.top_k + k], dst * s.experts_per_rank() + j);
        EXPECT_EQ(m.weight[row], in[src].topk_weights[t * s.top_k + k]);
        for (int h = 0; h < s.hidden; ++h) {
          ASSERT_EQ(m.rows[row * s.hidden + h], in[src].x[static_cast<size_t>(t) * s.hidden + h]);
        }
      }
    }
  }
  EXPECT_EQ(placed, routed);
}

TEST(EpReference, CombineOfIdentityExpertsWithUnitWeightsCountsTheSlots) {
  const ep::EpShape s{4, 16, 4, 16};
  const auto in = random_inputs(s, {33, 7}, 10, true, true);
  const auto layouts = dispatch_reference(in, s, 4);
  std::vector<std::vector<uint16_t>> y;
  for (const auto& m : layouts) y.push_back(m.rows);  // identity experts
  const auto out = combine_reference(y, layouts, in, s);
  for (int r = 0; r < s.num_ranks; ++r) {
    for (int t = 0; t < in[r].num_tokens; ++t) {
      int slots = 0;
      for (int k = 0; k < s.top_k; ++k) slots += in[r].topk_idx[t * s.top_k + k] >= 0;
      for (int h = 0; h < s.hidden; ++h) {
        const float x = bf16_bits_to_float(in[r].x[static_cast<size_t>(t) * s.hidden + h]);
        EXPECT_EQ(bf16_bits_to_float(out[r][static_cast<size_t>(t) * s.hidden + h]), x * slots);
      }
    }
  }
}

TEST(EpReference, CombineMatchesAWeightedSumInDoublePrecision) {
  std::mt19937 rng(11);
  const ep::EpShape s{2, 8, 4, 64};
  const auto in = random_inputs(s, {40, 23}, 11, false, false);
  const auto layouts = dispatch_reference(in, s, 16);
  const auto y = random_outputs(layouts, rng);
  const auto out = combine_reference(y, layouts, in, s);
  for (int r = 0; r < s.num_ranks; ++r) {
    for (int t = 0; t < in[r].num_tokens; ++t) {
      for (int h = 0; h < s.hidden; ++h) {
        double ref = 0;
        for (int dst = 0; dst < s.num_ranks; ++dst) {
          const ExpertMajor& m = layouts[dst];
          for (size_t row = 0; row < m.src_rank.size(); ++row) {
            if (m.src_rank[row] == r && m.src_token[row] == t) {
              ref += static_cast<double>(m.weight[row]) * bf16_bits_to_float(y[dst][row * s.hidden + h]);
            }
          }
        }
        const float got = bf16_bits_to_float(out[r][static_cast<size_t>(t) * s.hidden + h]);
        EXPECT_NEAR(got, ref, std::abs(ref) * 1e-2 + 1e-3) << "rank " << r << " token " << t;
      }
    }
  }
}

TEST(EpReference, CombineSumsSlotsInAscendingKWithFusedMultiplyAdd) {
  std::mt19937 rng(12);
  const ep::EpShape s{4, 32, 8, 24};
  const auto in = random_inputs(s, {17, 3, 0, 9}, 12, false, false);
  const auto layouts = dispatch_reference(in, s, 4);
  const auto y = random_outputs(layouts, rng);
  const auto out = combine_reference(y, layouts, in, s);
  // Brute force: find each pair's row by scanning the layouts, then the pinned order.
  for (int r = 0; r < s.num_ranks; ++r) {
    for (int t = 0; t < in[r].num_tokens; ++t) {
      std::vector<float> acc(s.hidden, 0.f);
      for (int k = 0; k < s.top_k; ++k) {
        if (in[r].topk_idx[t * s.top_k + k] < 0) continue;
        for (int dst = 0; dst < s.num_ranks; ++dst) {
          const ExpertMajor& m = layouts[dst];
          for (size_t row = 0; row < m.src_rank.size(); ++row) {
            if (m.src_rank[row] != r || m.src_token[row] != t || m.src_k[row] != k) continue;
            for (int h = 0; h < s.hidden; ++h) {
              acc[h] = std::fma(m.weight[row], bf16_bits_to_float(y[dst][row * s.hidden + h]), acc[h]);
            }
          }
        }
      }
      for (int h = 0; h < s.hidden; ++h) {
        ASSERT_EQ(out[r][static_cast<size_t>(t) * s.hidden + h], float_to_bf16_bits(acc[h]))
            << "rank " << r << " token " << t << " element " << h;
      }
    }
  }
}

TEST(EpReference, Fp8BlockQuantizationRoundTripsWithinE4M3Precision) {
  const ep::EpShape s{1, 4, 2, 256};
  auto in = random_inputs(s, {6}, 13, false, false);
  // An all-zero block keeps scale 1 and zero codes.
  std::fill_n(in[0].x.begin() + 128, 128, uint16_t{0});
  std::vector<uint8_t> q;
  std::vector<float> scales;
  quantize_fp8_blocks(in[0].x, 6, 256, q, scales);
  ASSERT_EQ(scales.size(), 12u);
  EXPECT_EQ(scales[1], 1.f);
  for (size_t b = 0; b < scales.size(); ++b) {
    float amax = 0.f;
    for (int i = 0; i < 128; ++i) amax = std::max(amax, std::fabs(bf16_bits_to_float(in[0].x[b * 128 + i])));
    for (int i = 0; i < 128; ++i) {
      const float x = bf16_bits_to_float(in[0].x[b * 128 + i]);
      const float back = device::fp8_e4m3_to_float(q[b * 128 + i]) * scales[b];
      // e4m3 keeps 3 mantissa bits: relative error <= 2^-4, plus the subnormal step near 0.
      EXPECT_LE(std::fabs(back - x), std::fabs(x) / 16 + amax / 448 * 0.0020f + 1e-7f) << b << "," << i;
    }
  }
}

TEST(EpReference, Fp8DispatchCarriesCodesAndScalesOfTheirSourceRow) {
  const ep::EpShape s{2, 8, 3, 256};
  auto in = random_inputs(s, {9, 4}, 14, false, false);
  const auto out = dispatch_reference(in, s, 16, device::EpPayload::kFP8);
  for (int dst = 0; dst < 2; ++dst) {
    const ExpertMajor& m = out[dst];
    EXPECT_TRUE(m.rows.empty());
    for (size_t row = 0; row < m.src_rank.size(); ++row) {
      if (m.src_rank[row] < 0) continue;
      std::vector<uint8_t> q;
      std::vector<float> sc;
      const RankTokens& src = in[m.src_rank[row]];
      std::vector<uint16_t> x(src.x.begin() + m.src_token[row] * 256, src.x.begin() + (m.src_token[row] + 1) * 256);
      quantize_fp8_blocks(x, 1, 256, q, sc);
      ASSERT_TRUE(std::equal(q.begin(), q.end(), m.rows_fp8.begin() + row * 256));
      ASSERT_EQ(m.scales[row * 2], sc[0]);
      ASSERT_EQ(m.scales[row * 2 + 1], sc[1]);
    }
  }
}

TEST(EpReference, BadInputsAreNamed) {
  const ep::EpShape s{2, 4, 2, 4};
  std::vector<RankTokens> in(2);
  in[0] = {1, std::vector<uint16_t>(4), {0, 9}, {1.f, 1.f}};
  in[1] = {0, {}, {}, {}};
  EXPECT_THROW(dispatch_reference(in, s, 1), Error);
  in[0].topk_idx = {0, 1};
  in[0].x.pop_back();
  EXPECT_THROW(dispatch_reference(in, s, 1), Error);
}

}  // namespace
}  // namespace symmoe::reference
