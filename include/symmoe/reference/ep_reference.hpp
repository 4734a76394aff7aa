// CPU references of EP dispatch and combine (BF16), over every rank's data at once: the oracle
// for the GPU kernels and the CLI's backend where no GPU exists.
#pragma once

#include <cstdint>
#include <vector>

#include "symmoe/device/ep_buffer_layout.cuh"
#include "symmoe/ep/routing.hpp"

namespace symmoe::reference {

// One source rank's input.
struct RankTokens {
  int num_tokens = 0;
  std::vector<uint16_t> x;          // [num_tokens, hidden] bf16 bits
  std::vector<int64_t> topk_idx;    // [num_tokens, top_k], -1 masks a slot
  std::vector<float> topk_weights;  // [num_tokens, top_k]
  // FP8 input (optional): when x_fp8 is non-empty an fp8 dispatch sends it and x_scales as
  // they are; otherwise an fp8 dispatch quantizes x (quantize_fp8_blocks).
  std::vector<uint8_t> x_fp8;       // [num_tokens, hidden] e4m3
  std::vector<float> x_scales;      // [num_tokens, hidden / 128]
};

// BF16 rows -> e4m3 + one scale per 1x128 block, as NOTE [fp8 block scale] defines.
void quantize_fp8_blocks(const std::vector<uint16_t>& x, int num_tokens, int hidden,
                         std::vector<uint8_t>& q, std::vector<float>& scales);

// NOTE [expert-major layout]: a receiving rank holds one segment per local expert; segment j
// starts at row segment_offset[j], holds segment_count[j] rows, and is padded with zero rows
// to a multiple of `alignment` (grouped-GEMM tiles). Rows are ordered by (source rank, token,
// top-k slot) ascending, so the layout is a pure function of the routing. Padding rows are
// zero here; the device leaves them unwritten (consumers use segment_count).
struct ExpertMajor {
  std::vector<int32_t> segment_offset;  // [experts_per_rank + 1]
  std::vector<int32_t> segment_count;   // [experts_per_rank]
  std::vector<uint16_t> rows;           // bf16 payload: [segment_offset.back(), hidden] bf16 bits
  std::vector<uint8_t> rows_fp8;        // fp8 payload: [segment_offset.back(), hidden] e4m3
  std::vector<float> scales;            // fp8 payload: [segment_offset.back(), hidden / 128]
  std::vector<int32_t> src_rank;        // per row, -1 on padding
  std::vector<int32_t> src_token;
  std::vector<int32_t> src_k;
  std::vector<float> weight;            // topk_weights of (src_token, src_k); 0 on padding
};

std::vector<ExpertMajor> dispatch_reference(const std::vector<RankTokens>& inputs,
                                            const ep::EpShape& shape, int alignment,
                                            device::EpPayload payload = device::EpPayload::kBF16);

// y[r]: expert outputs in rank r's expert-major layout ([rows, hidden] bf16 bits). Returns each
// source rank's [num_tokens, hidden] bf16 result, in the order NOTE [combine order] fixes:
// acc = 0; for k ascending over unmasked slots, acc = fma(w[t,k], y(row of (t,k)), acc) in
// fp32; one rounding to bf16 at the end. A token routed nowhere gets zeros.
std::vector<std::vector<uint16_t>> combine_reference(const std::vector<std::vector<uint16_t>>& y,
                                                     const std::vector<ExpertMajor>& layouts,
                                                     const std::vector<RankTokens>& inputs,
                                                     const ep::EpShape& shape);

}  // namespace symmoe::reference
