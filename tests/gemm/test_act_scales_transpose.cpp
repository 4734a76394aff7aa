// NOTE [activation scale transpose]: sizing and the checks made before any launch (CPU).
#include <gtest/gtest.h>

#include <string>

#include "support/error_text.hpp"
#include "symmoe/gemm/act_scales_transpose.hpp"

namespace symmoe::gemm {
namespace {

alignas(16) uint8_t g_act[64], g_w[64], g_out[64];
alignas(16) float g_scales[64], g_dst[64];
int32_t g_offsets[3] = {0, 10, 10}, g_counts[3] = {10, 0, 20};

GroupedGemmProblem fp8_problem(GroupedLayout layout) {
  GroupedGemmProblem p;
  p.dtype = GemmDtype::kFP8E4M3;
  p.layout = layout;
  p.num_experts = 3;
  p.n = 256;
  p.k = 7168;  // 56 K blocks
  if (layout == GroupedLayout::kContiguous) {
    p.total_rows = 30;
    p.offsets = g_offsets;
  } else {
    p.max_m = 13;
  }
  p.act = g_act;
  p.act_scales = g_scales;
  p.weights = g_w;
  p.weight_scales = g_scales;
  p.counts = g_counts;
  p.out = g_out;
  return p;
}

std::string text(const GroupedGemmProblem& p, float* out, size_t capacity) {
  return test::error_text([&] { transpose_act_scales(p, out, capacity, nullptr); });
}

TEST(ActScalesTranspose, LeadingDimensionIsTheRowsRoundedUpToFourFloats) {
  const GroupedGemmProblem c = fp8_problem(GroupedLayout::kContiguous);
  EXPECT_EQ(column_major_act_scales_ld(c), 32);  // 30 rows
  EXPECT_EQ(column_major_act_scales_floats(c), 56u * 32);
  const GroupedGemmProblem m = fp8_problem(GroupedLayout::kMasked);
  EXPECT_EQ(column_major_act_scales_ld(m), 16);  // max_m 13
  EXPECT_EQ(column_major_act_scales_floats(m), 3u * 56 * 16);
  GroupedGemmProblem four = c;
  four.total_rows = 32;
  EXPECT_EQ(column_major_act_scales_ld(four), 32);
}

TEST(ActScalesTranspose, BadCallsAreNamedBeforeLaunch) {
  const GroupedGemmProblem p = fp8_problem(GroupedLayout::kContiguous);
  const size_t need = column_major_act_scales_floats(p);
  GroupedGemmProblem q = p;
  q.dtype = GemmDtype::kBF16;
  q.act_scales = q.weight_scales = nullptr;
  EXPECT_NE(text(q, g_dst, need).find("the problem is bf16"), std::string::npos);
  q = p;
  q.act_scale_layout = ScaleLayout::kColumnMajor;
  EXPECT_NE(text(q, g_dst, need).find("column-major already"), std::string::npos);
  EXPECT_NE(text(p, nullptr, need).find("out is null"), std::string::npos);
  EXPECT_NE(text(p, g_dst + 1, need).find("must be 16-byte aligned"), std::string::npos);
  EXPECT_NE(text(p, g_dst, need - 1).find(std::to_string(need) + " needed"), std::string::npos);
  EXPECT_NE(text(p, g_scales + 4, need).find("overlaps the activation scales"), std::string::npos);
  q = p;
  q.k = 7168 + 64;  // the problem's own rules come first
  EXPECT_NE(text(q, g_dst, need).find("must be a multiple of 128"), std::string::npos);
}

}  // namespace
}  // namespace symmoe::gemm
