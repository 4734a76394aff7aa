#include "support/ep_inputs.hpp"

#include <random>
#include <set>

#include "symmoe/core/bf16.hpp"

namespace symmoe::test {

std::vector<reference::RankTokens> make_ep_inputs(const ep::EpShape& s,
                                                  const std::vector<int>& tokens_per_rank,
                                                  const EpInputOptions& o) {
  std::mt19937_64 rng(o.seed);
  std::uniform_real_distribution<float> d(-2.f, 2.f);
  const int epr = s.experts_per_rank();
  std::vector<reference::RankTokens> in(s.num_ranks);
  for (int r = 0; r < s.num_ranks; ++r) {
    reference::RankTokens& x = in[r];
    x.num_tokens = tokens_per_rank[r % tokens_per_rank.size()];
    x.x.resize(static_cast<size_t>(x.num_tokens) * s.hidden);
    for (int t = 0; t < x.num_tokens; ++t) {
      uint16_t* row = x.x.data() + static_cast<size_t>(t) * s.hidden;
      for (int h = 0; h < s.hidden; ++h) {
        row[h] = float_to_bf16_bits(o.integer_values ? static_cast<float>(static_cast<int>(rng() % 9) - 4) : d(rng));
      }
      if (s.hidden >= 3) {
        row[0] = float_to_bf16_bits(static_cast<float>(r));
        row[1] = float_to_bf16_bits(static_cast<float>(t / 256));
        row[2] = float_to_bf16_bits(static_cast<float>(t % 256));
      }
    }
    x.topk_idx.resize(static_cast<size_t>(x.num_tokens) * s.top_k);
    x.topk_weights.resize(x.topk_idx.size());
    for (int t = 0; t < x.num_tokens; ++t) {
      std::set<int64_t> used;
      for (int k = 0; k < s.top_k; ++k) {
        int64_t e = 0;
        for (int tries = 0;; ++tries) {
          e = static_cast<int64_t>(rng() % s.num_experts);
          const bool idle = o.idle_rank >= 0 && e / epr == o.idle_rank;
          if (!idle && (!o.distinct_experts || used.count(e) == 0)) break;
          if (tries > 1000) {  // not enough experts left: mask the slot
            e = -1;
            break;
          }
        }
        if (e >= 0) used.insert(e);
        const bool masked = o.mask_one_in > 0 && rng() % o.mask_one_in == 0;
        x.topk_idx[static_cast<size_t>(t) * s.top_k + k] = masked ? -1 : e;
        x.topk_weights[static_cast<size_t>(t) * s.top_k + k] = o.unit_weights ? 1.f : d(rng) * 0.5f;
      }
    }
  }
  return in;
}

}  // namespace symmoe::test
