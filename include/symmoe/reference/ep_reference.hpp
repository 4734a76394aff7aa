// CPU references of EP dispatch and combine (BF16), over every rank's data at once: the oracle
// for the GPU kernels and the CLI's backend where no GPU exists.
#pragma once

#include <cstdint>
#include <vector>

#include "symmoe/ep/routing.hpp"

namespace symmoe::reference {

// One source rank's input.
struct RankTokens {
  int num_tokens = 0;
  std::vector<uint16_t> x;          // [num_tokens, hidden] bf16 bits
  std::vector<int64_t> topk_idx;    // [num_tokens, top_k], -1 masks a slot
  std::vector<float> topk_weights;  // [num_tokens, top_k]
};

// NOTE [expert-major layout]: a receiving rank holds one segment per local expert; segment j
// starts at row segment_offset[j], holds segment_count[j] rows, and is padded with zero rows
// to a multiple of `alignment` (grouped-GEMM tiles). Rows are ordered by (source rank, token,
// top-k slot) ascending, so the layout is a pure function of the routing.
struct ExpertMajor {
  std::vector<int32_t> segment_offset;  // [experts_per_rank + 1]
  std::vector<int32_t> segment_count;   // [experts_per_rank]
  std::vector<uint16_t> rows;           // [segment_offset.back(), hidden] bf16 bits
  std::vector<int32_t> src_rank;        // per row, -1 on padding
  std::vector<int32_t> src_token;
  std::vector<int32_t> src_k;
  std::vector<float> weight;            // topk_weights of (src_token, src_k); 0 on padding
};

std::vector<ExpertMajor> dispatch_reference(const std::vector<RankTokens>& inputs,
                                            const ep::EpShape& shape, int alignment);

// y[r]: expert outputs in rank r's expert-major layout ([rows, hidden] bf16 bits). Returns each
// source rank's [num_tokens, hidden] bf16 result. Fixed reduction order, in fp32: each
// destination rank r first sums w[t,k] * y(row of (t,k)) over its slots k in ascending order,
// then the source adds those partial sums in ascending rank order; one rounding to bf16 at the
// end. Masked slots contribute nothing; a token routed nowhere gets zeros.
std::vector<std::vector<uint16_t>> combine_reference(const std::vector<std::vector<uint16_t>>& y,
                                                     const std::vector<ExpertMajor>& layouts,
                                                     const std::vector<RankTokens>& inputs,
                                                     const ep::EpShape& shape);

}  // namespace symmoe::reference
