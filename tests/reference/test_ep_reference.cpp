#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <set>

#include "symmoe/core/bf16.hpp"
#include "symmoe/core/error.hpp"
#include "symmoe/reference/ep_reference.hpp"

namespace symmoe::reference {
namespace {

std::vector<RankTokens> random_inputs(const ep::EpShape& s, std::vector<int> tokens, std::mt19937& rng,
                                      bool integer_values, bool unit_weights) {
  std::vector<RankTokens> in(s.num_ranks);
  std::uniform_real_distribution<float> d(-2.f, 2.f);
  for (int r = 0; r < s.num_ranks; ++r) {
    RankTokens& x = in[r];
    x.num_tokens = tokens[r % tokens.size()];
    x.x.resize(static_cast<size_t>(x.num_tokens) * s.hidden);
    for (auto& v : x.x) v = float_to_bf16_bits(integer_values ? static_cast<float>(rng() % 9) - 4.f : d(rng));
    x.topk_idx.resize(static_cast<size_t>(x.num_tokens) * s.top_k);
    x.topk_weights.resize(x.topk_idx.size());
    for (int t = 0; t < x.num_tokens; ++t) {
      std::set<int64_t> used;
      for (int k = 0; k < s.top_k; ++k) {
        int64_t e;
        do e = rng() % s.num_experts; while (used.count(e));
        used.insert(e);
        x.topk_idx[static_cast<size_t>(t) * s.top_k + k] = rng() % 7 == 0 ? -1 : e;
        x.topk_weights[static_cast<size_t>(t) * s.top_k + k] = unit_weights ? 1.f : d(rng) * 0.5f;
      }
    }
  }
  return in;
}

TEST(EpReference, DispatchPlacesEveryRoutedTokenOnceInItsExpertSegment) {
  std::mt19937 rng(9);
  const ep::EpShape s{4, 16, 4, 32};
  const auto in = random_inputs(s, {5, 0, 64, 1}, rng, false, false);  // a rank with no tokens
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
  std::mt19937 rng(10);
  const ep::EpShape s{4, 16, 4, 16};
  const auto in = random_inputs(s, {33, 7}, rng, true, true);
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
  const auto in = random_inputs(s, {40, 23}, rng, false, false);
  const auto layouts = dispatch_reference(in, s, 16);
  std::vector<std::vector<uint16_t>> y;
  std::uniform_real_distribution<float> d(-1.f, 1.f);
  for (const auto& m : layouts) {
    std::vector<uint16_t> v(m.rows.size());
    for (auto& b : v) b = float_to_bf16_bits(d(rng));
    y.push_back(v);
  }
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
