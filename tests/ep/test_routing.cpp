#include <gtest/gtest.h>

#include <random>
#include <set>

#include "support/error_text.hpp"
#include "symmoe/ep/routing.hpp"

namespace symmoe::ep {
namespace {

std::vector<int64_t> random_topk(int tokens, const EpShape& s, std::mt19937& rng, double mask_p) {
  std::vector<int64_t> ids(static_cast<size_t>(tokens) * s.top_k);
  std::bernoulli_distribution mask(mask_p);
  for (int t = 0; t < tokens; ++t) {
    std::set<int64_t> used;
    for (int k = 0; k < s.top_k; ++k) {
      int64_t e;
      do e = rng() % s.num_experts; while (used.count(e));
      used.insert(e);
      ids[static_cast<size_t>(t) * s.top_k + k] = mask(rng) ? -1 : e;
    }
  }
  return ids;
}

TEST(Routing, MatchesBruteForceOnRandomRoutings) {
  std::mt19937 rng(5);
  for (const EpShape s : {EpShape{8, 256, 8, 16}, EpShape{4, 128, 8, 16}, EpShape{3, 9, 2, 4},
                          EpShape{1, 4, 4, 8}}) {
    for (int tokens : {0, 1, 7, 300}) {
      const auto ids = random_topk(tokens, s, rng, 0.15);
      const RoutingLayout l = compute_routing_layout(std::span<const int64_t>(ids), tokens, s);
      std::vector<int> per_rank(s.num_ranks, 0), per_expert(s.num_experts, 0);
      for (int t = 0; t < tokens; ++t) {
        std::set<int> ranks;
        for (int k = 0; k < s.top_k; ++k) {
          const int64_t e = ids[static_cast<size_t>(t) * s.top_k + k];
          if (e < 0) continue;
          ++per_expert[e];
          ranks.insert(static_cast<int>(e) / s.experts_per_rank());
        }
        for (int r = 0; r < s.num_ranks; ++r) {
          EXPECT_EQ(l.token_in_rank[static_cast<size_t>(t) * s.num_ranks + r], ranks.count(r) ? 1 : 0);
        }
        for (int r : ranks) ++per_rank[r];
      }
      for (int r = 0; r < s.num_ranks; ++r) {
        EXPECT_EQ(l.tokens_per_rank[r], per_rank[r]);
        EXPECT_EQ(l.rank_prefix[r + 1] - l.rank_prefix[r], per_rank[r]);
      }
      for (int e = 0; e < s.num_experts; ++e) {
        EXPECT_EQ(l.tokens_per_expert[e], per_expert[e]);
        EXPECT_EQ(l.expert_prefix[e + 1] - l.expert_prefix[e], per_expert[e]);
      }
      // int32 ids give the same layout.
      std::vector<int32_t> ids32(ids.begin(), ids.end());
      const RoutingLayout l32 = compute_routing_layout(std::span<const int32_t>(ids32), tokens, s);
      EXPECT_EQ(l32.tokens_per_expert, l.tokens_per_expert);
      EXPECT_EQ(l32.token_in_rank, l.token_in_rank);
    }
  }
}

TEST(Routing, NamedErrors) {
  const EpShape s{4, 16, 2, 8};
  const std::vector<int64_t> bad = {0, 1, 2, 16};
  EXPECT_NE(test::error_text([&] { compute_routing_layout(std::span<const int64_t>(bad), 2, s); })
                .find("topk_idx[token 1, k 1] = 16 is out of range: expert ids lie in [0, 16) or "
                      "are -1 to mask the slot"),
            std::string::npos);
  const std::vector<int64_t> negative = {0, -2};
  EXPECT_THROW(compute_routing_layout(std::span<const int64_t>(negative), 1, s), Error);
  EXPECT_NE(test::error_text([&] { compute_routing_layout(std::span<const int64_t>(bad), 3, s); })
                .find("topk_idx holds 4 ids; [num_tokens=3, top_k=2] needs 6"),
            std::string::npos);
  EXPECT_THROW((EpShape{3, 16, 2, 8}.validate()), Error);   // 16 experts over 3 ranks
  EXPECT_THROW((EpShape{73, 146, 2, 8}.validate()), Error);  // more than 72 ranks
  EXPECT_THROW((EpShape{4, 16, 17, 8}.validate()), Error);   // top_k > experts
}

}  // namespace
}  // namespace symmoe::ep
