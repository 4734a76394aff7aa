#include "symmoe/ep/routing.hpp"

#include "symmoe/core/error.hpp"
#include "symmoe/device/peer_table.cuh"

namespace symmoe::ep {

void EpShape::validate() const {
  SYMMOE_CHECK(num_ranks >= 1 && num_ranks <= device::kMaxRanks, "EP group of ", num_ranks,
               " ranks: must be 1..", device::kMaxRanks);
  SYMMOE_CHECK(num_experts >= num_ranks && num_experts % num_ranks == 0, num_experts,
               " experts do not divide evenly over ", num_ranks, " ranks");
  SYMMOE_CHECK(top_k >= 1 && top_k <= num_experts, "top_k ", top_k, " must lie in [1, ",
               num_experts, "]");
  SYMMOE_CHECK(hidden >= 1, "hidden size ", hidden, " must be positive");
}

namespace {

template <class Id>
RoutingLayout compute(std::span<const Id> topk_idx, int num_tokens, const EpShape& s) {
  s.validate();
  SYMMOE_CHECK(num_tokens >= 0, "num_tokens ", num_tokens, " is negative");
  SYMMOE_CHECK(topk_idx.size() == static_cast<size_t>(num_tokens) * s.top_k, "topk_idx holds ",
               topk_idx.size(), " ids; [num_tokens=", num_tokens, ", top_k=", s.top_k,
               "] needs ", static_cast<size_t>(num_tokens) * s.top_k);
  RoutingLayout l;
  l.num_tokens = num_tokens;
  l.tokens_per_rank.assign(s.num_ranks, 0);
  l.tokens_per_expert.assign(s.num_experts, 0);
  l.token_in_rank.assign(static_cast<size_t>(num_tokens) * s.num_ranks, 0);
  for (int t = 0; t < num_tokens; ++t) {
    for (int k = 0; k < s.top_k; ++k) {
      const int64_t e = static_cast<int64_t>(topk_idx[static_cast<size_t>(t) * s.top_k + k]);
      if (e == -1) continue;
      if (e < 0 || e >= s.num_experts) {
        SYMMOE_FAIL("topk_idx[token ", t, ", k ", k, "] = ", e, " is out of range: expert ids "
                    "lie in [0, ", s.num_experts, ") or are -1 to mask the slot");
      }
      ++l.tokens_per_expert[e];
      uint8_t& in = l.token_in_rank[static_cast<size_t>(t) * s.num_ranks + s.rank_of(static_cast<int>(e))];
      if (!in) {
        in = 1;
        ++l.tokens_per_rank[s.rank_of(static_cast<int>(e))];
      }
    }
  }
  l.rank_prefix.assign(s.num_ranks + 1, 0);
  for (int r = 0; r < s.num_ranks; ++r) l.rank_prefix[r + 1] = l.rank_prefix[r] + l.tokens_per_rank[r];
  l.expert_prefix.assign(s.num_experts + 1, 0);
  for (int e = 0; e < s.num_experts; ++e) {
    l.expert_prefix[e + 1] = l.expert_prefix[e] + l.tokens_per_expert[e];
  }
  return l;
}

}  // namespace

RoutingLayout compute_routing_layout(std::span<const int64_t> topk_idx, int num_tokens,
                                     const EpShape& shape) {
  return compute(topk_idx, num_tokens, shape);
}

RoutingLayout compute_routing_layout(std::span<const int32_t> topk_idx, int num_tokens,
                                     const EpShape& shape) {
  return compute(topk_idx, num_tokens, shape);
}

}  // namespace symmoe::ep
