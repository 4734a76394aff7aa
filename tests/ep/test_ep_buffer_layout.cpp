#include <gtest/gtest.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "support/error_text.hpp"
#include "symmoe/ep/ep_buffer.hpp"

namespace symmoe::ep {
namespace {

EpConfig deepseek(int max_tokens) {
  EpConfig c;
  c.num_experts = 256;
  c.top_k = 8;
  c.hidden = 7168;
  c.max_tokens_per_rank = max_tokens;
  return c;
}

TEST(EpBufferLayout, RegionsAreDisjointAlignedAndSizedForTheWorstCase) {
  for (auto payload : {device::EpPayload::kBF16, device::EpPayload::kFP8}) {
    EpConfig c = deepseek(128);
    c.payload = payload;
    const auto l = ep_buffer_layout(c, 8);
    // 8 ranks x 128 tokens x min(8, 32) pairs + 32 segments x 127 padding rows.
    EXPECT_EQ(l.recv_rows, 8u * 128 * 8 + 32 * 127);
    EXPECT_EQ(l.row_bytes, payload == device::EpPayload::kFP8 ? 7168u : 14336u);
    EXPECT_EQ(l.scales_per_row, payload == device::EpPayload::kFP8 ? 56u : 0u);
    const uint64_t pairs = 128 * 8;
    std::vector<std::pair<uint64_t, uint64_t>> regions = {
        {l.pad_offset, device::kSignalPadBytes},
        {l.control_offset, sizeof(device::EpControl)},
        {l.send_x_offset, 128 * l.row_bytes},
        {l.send_scales_offset, 128 * l.scales_per_row * 4},
        {l.send_topk_offset, pairs * 4},
        {l.send_weights_offset, pairs * 4},
        {l.send_pos_offset, pairs * 4},
        {l.expert_counts_offset, 256 * 4},
        {l.rank_counts_offset, 8 * 4},
        {l.rank_lists_offset, 8 * 128 * 4},
        {l.combine_row_offset, pairs * 4},
        {l.segment_offset_offset, 33 * 4},
        {l.segment_count_offset, 32 * 4},
        {l.recv_x_offset, l.recv_rows * l.row_bytes},
        {l.recv_scales_offset, l.recv_rows * l.scales_per_row * 4},
        {l.recv_weights_offset, l.recv_rows * 4},
        {l.recv_source_offset, l.recv_rows * 4},
        {l.expert_out_offset, l.recv_rows * 7168 * 2},
    };
    std::sort(regions.begin(), regions.end());
    for (size_t i = 0; i < regions.size(); ++i) {
      EXPECT_EQ(regions[i].first % 256, 0u) << "region " << i;
      if (i + 1 < regions.size()) {
        EXPECT_LE(regions[i].first + regions[i].second, regions[i + 1].first);
      }
    }
    EXPECT_LE(regions.back().first + regions.back().second, l.bytes_per_rank);
  }
}

TEST(EpBufferLayout, ACapacityReplacesTheWorstCase) {
  EpConfig c = deepseek(8192);
  c.recv_capacity_rows = 100000;
  EXPECT_EQ(ep_buffer_layout(c, 8).recv_rows, 100000u);
}

TEST(EpBufferLayout, BadConfigurationsAreNamed) {
  auto text = [](EpConfig c, int ranks) { return test::error_text([&] { ep_buffer_layout(c, ranks); }); };
  EpConfig c = deepseek(128);
  EXPECT_NE(text(c, 3).find("256 experts do not divide evenly over 3 ranks"), std::string::npos);
  c.hidden = 7170;
  EXPECT_NE(text(c, 8).find("hidden 7170 must be a multiple of 8"), std::string::npos);
  c.payload = device::EpPayload::kFP8;
  c.hidden = 7168 + 64;
  EXPECT_NE(text(c, 8).find("multiple of 128 for an fp8 payload"), std::string::npos);
  c = deepseek(0);
  EXPECT_NE(text(c, 8).find("max_tokens_per_rank 0 must be positive"), std::string::npos);
  c = deepseek(128);
  c.top_k = 33;
  EXPECT_NE(text(c, 8).find("top_k 33: dispatch supports at most 32"), std::string::npos);
  c = deepseek(128);
  c.num_experts = 2048;
  EXPECT_NE(text(c, 8).find("2048 experts: dispatch supports at most 1024"), std::string::npos);
  c = deepseek(128);
  c.alignment = 0;
  EXPECT_NE(text(c, 8).find("segment alignment 0"), std::string::npos);
  c = deepseek(1 << 22);
  c.num_experts = 576;
  EXPECT_NE(text(c, 72).find("exceed the 2^31 pairs"), std::string::npos);
}

}  // namespace
}  // namespace symmoe::ep
