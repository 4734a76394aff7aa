#include "symmoe/reference/ep_reference.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "symmoe/core/bf16.hpp"
#include "symmoe/core/error.hpp"
#include "symmoe/device/fp8_block_quant.cuh"

namespace symmoe::reference {

namespace {

void check_inputs(const std::vector<RankTokens>& inputs, const ep::EpShape& s) {
  s.validate();
  SYMMOE_CHECK(inputs.size() == static_cast<size_t>(s.num_ranks), inputs.size(),
               " rank inputs for a group of ", s.num_ranks);
  for (size_t r = 0; r < inputs.size(); ++r) {
    const RankTokens& in = inputs[r];
    const size_t t = static_cast<size_t>(in.num_tokens);
    SYMMOE_CHECK(in.x.size() == t * s.hidden, "rank ", r, ": x holds ", in.x.size(),
                 " values; [", t, ", ", s.hidden, "] needs ", t * s.hidden);
    SYMMOE_CHECK(in.topk_weights.size() == t * s.top_k, "rank ", r, ": topk_weights holds ",
                 in.topk_weights.size(), " values; [", t, ", ", s.top_k, "] needs ", t * s.top_k);
    // Range checks of the ids, with the token and slot named.
    ep::compute_routing_layout(std::span<const int64_t>(in.topk_idx), in.num_tokens, s);
  }
}

}  // namespace

void quantize_fp8_blocks(const std::vector<uint16_t>& x, int num_tokens, int hidden,
                         std::vector<uint8_t>& q, std::vector<float>& scales) {
  constexpr int kBlock = device::kFp8BlockElems;
  SYMMOE_CHECK(hidden % kBlock == 0, "hidden ", hidden, " is not a multiple of ", kBlock);
  SYMMOE_CHECK(x.size() == static_cast<size_t>(num_tokens) * hidden, "x holds ", x.size(),
               " values for [", num_tokens, ", ", hidden, "]");
  q.assign(x.size(), 0);
  scales.assign(static_cast<size_t>(num_tokens) * (hidden / kBlock), 0.f);
  for (size_t b = 0; b < scales.size(); ++b) {
    float amax = 0.f;
    for (int i = 0; i < kBlock; ++i) amax = std::max(amax, std::fabs(bf16_bits_to_float(x[b * kBlock + i])));
    const float scale = device::fp8_block_scale(amax);
    scales[b] = scale;
    for (int i = 0; i < kBlock; ++i) {
      q[b * kBlock + i] = device::fp8_e4m3_from_float(bf16_bits_to_float(x[b * kBlock + i]) / scale);
    }
  }
}

std::vector<ExpertMajor> dispatch_reference(const std::vector<RankTokens>& inputs,
                                            const ep::EpShape& s, int alignment,
                                            device::EpPayload payload) {
  check_inputs(inputs, s);
  SYMMOE_CHECK(alignment >= 1, "segment alignment ", alignment, " must be positive");
  const bool fp8 = payload == device::EpPayload::kFP8;
  const int spr = fp8 ? s.hidden / device::kFp8BlockElems : 0;
  // FP8 rows of every source: given, or quantized from its bf16 rows.
  std::vector<std::vector<uint8_t>> q(s.num_ranks);
  std::vector<std::vector<float>> qs(s.num_ranks);
  for (int r = 0; fp8 && r < s.num_ranks; ++r) {
    const RankTokens& in = inputs[r];
    if (!in.x_fp8.empty()) {
      SYMMOE_CHECK(in.x_fp8.size() == in.x.size() && in.x_scales.size() == static_cast<size_t>(in.num_tokens) * spr,
                   "rank ", r, ": fp8 input and scales do not match [", in.num_tokens, ", ", s.hidden, "]");
      q[r] = in.x_fp8;
      qs[r] = in.x_scales;
    } else {
      quantize_fp8_blocks(in.x, in.num_tokens, s.hidden, q[r], qs[r]);
    }
  }
  const int epr = s.experts_per_rank();
  std::vector<ExpertMajor> out(s.num_ranks);
  for (int dst = 0; dst < s.num_ranks; ++dst) {
    ExpertMajor& m = out[dst];
    m.segment_count.assign(epr, 0);
    // Rows per local expert, in (source rank, token, slot) order.
    std::vector<std::vector<std::tuple<int, int, int>>> members(epr);
    for (int src = 0; src < s.num_ranks; ++src) {
      const RankTokens& in = inputs[src];
      for (int t = 0; t < in.num_tokens; ++t) {
        for (int k = 0; k < s.top_k; ++k) {
          const int64_t e = in.topk_idx[static_cast<size_t>(t) * s.top_k + k];
          if (e < 0 || s.rank_of(static_cast<int>(e)) != dst) continue;
          members[e % epr].emplace_back(src, t, k);
        }
      }
    }
    m.segment_offset.assign(epr + 1, 0);
    for (int j = 0; j < epr; ++j) {
      m.segment_count[j] = static_cast<int32_t>(members[j].size());
      const int padded = (m.segment_count[j] + alignment - 1) / alignment * alignment;
      m.segment_offset[j + 1] = m.segment_offset[j] + padded;
    }
    const size_t rows = static_cast<size_t>(m.segment_offset[epr]);
    if (fp8) {
      m.rows_fp8.assign(rows * s.hidden, 0);
      m.scales.assign(rows * spr, 0.f);
    } else {
      m.rows.assign(rows * s.hidden, 0);
    }
    m.src_rank.assign(rows, -1);
    m.src_token.assign(rows, -1);
    m.src_k.assign(rows, -1);
    m.weight.assign(rows, 0.f);
    for (int j = 0; j < epr; ++j) {
      for (size_t i = 0; i < members[j].size(); ++i) {
        const auto [src, t, k] = members[j][i];
        const size_t row = static_cast<size_t>(m.segment_offset[j]) + i;
        const RankTokens& in = inputs[src];
        if (fp8) {
          std::copy_n(q[src].begin() + static_cast<size_t>(t) * s.hidden, s.hidden,
                      m.rows_fp8.begin() + row * s.hidden);
          std::copy_n(qs[src].begin() + static_cast<size_t>(t) * spr, spr, m.scales.begin() + row * spr);
        } else {
          std::copy_n(in.x.begin() + static_cast<size_t>(t) * s.hidden, s.hidden,
                      m.rows.begin() + row * s.hidden);
        }
        m.src_rank[row] = src;
        m.src_token[row] = t;
        m.src_k[row] = k;
        m.weight[row] = in.topk_weights[static_cast<size_t>(t) * s.top_k + k];
      }
    }
  }
  return out;
}

std::vector<std::vector<uint16_t>> combine_reference(const std::vector<std::vector<uint16_t>>& y,
                                                     const std::vector<ExpertMajor>& layouts,
                                                     const std::vector<RankTokens>& inputs,
                                                     const ep::EpShape& s) {
  check_inputs(inputs, s);
  SYMMOE_CHECK(y.size() == layouts.size() && layouts.size() == static_cast<size_t>(s.num_ranks),
               "one expert output and one layout per rank");
  // (source rank, token, slot) -> (destination rank, row)
  std::map<std::tuple<int, int, int>, std::pair<int, size_t>> where;
  for (int dst = 0; dst < s.num_ranks; ++dst) {
    const ExpertMajor& m = layouts[dst];
    SYMMOE_CHECK(y[dst].size() == m.src_rank.size() * s.hidden, "rank ", dst, ": expert output holds ",
                 y[dst].size(), " values; its layout has ", m.src_rank.size(), " rows of ", s.hidden);
    for (size_t row = 0; row < m.src_rank.size(); ++row) {
      if (m.src_rank[row] >= 0) where[{m.src_rank[row], m.src_token[row], m.src_k[row]}] = {dst, row};
    }
  }
  std::vector<std::vector<uint16_t>> out(s.num_ranks);
  std::vector<float> acc(s.hidden);
  for (int src = 0; src < s.num_ranks; ++src) {
    const RankTokens& in = inputs[src];
    out[src].assign(static_cast<size_t>(in.num_tokens) * s.hidden, 0);
    for (int t = 0; t < in.num_tokens; ++t) {
      std::fill(acc.begin(), acc.end(), 0.f);
      for (int k = 0; k < s.top_k; ++k) {
        const int64_t e = in.topk_idx[static_cast<size_t>(t) * s.top_k + k];
        if (e < 0) continue;
        const auto [rank, row] = where.at({src, t, k});
        const float w = in.topk_weights[static_cast<size_t>(t) * s.top_k + k];
        const uint16_t* yr = y[rank].data() + row * s.hidden;
        for (int h = 0; h < s.hidden; ++h) acc[h] = std::fma(w, bf16_bits_to_float(yr[h]), acc[h]);
      }
      for (int h = 0; h < s.hidden; ++h) {
        out[src][static_cast<size_t>(t) * s.hidden + h] = float_to_bf16_bits(acc[h]);
      }
    }
  }
  return out;
}

}  // namespace symmoe::reference
