#include <gtest/gtest.h>

#include <vector>

#include "support/error_text.hpp"
#include "symmoe/gemm/grouped_gemm_problem.hpp"

namespace symmoe::gemm {
namespace {

alignas(16) uint8_t g_act[64], g_w[64], g_out[64];
float g_scales[4];
int32_t g_offsets[4] = {0, 8, 8, 40}, g_counts[4] = {8, 0, 30, 1};

GroupedGemmProblem fp8_problem() {
  GroupedGemmProblem p;
  p.dtype = GemmDtype::kFP8E4M3;
  p.num_experts = 4;
  p.n = 256;
  p.k = 7168;
  p.total_rows = 64;
  p.act = g_act;
  p.act_scales = g_scales;
  p.weights = g_w;
  p.weight_scales = g_scales;
  p.offsets = g_offsets;
  p.counts = g_counts;
  p.out = g_out;
  return p;
}

std::string text(const GroupedGemmProblem& p) { return test::error_text([&] { validate_problem(p); }); }

TEST(GroupedGemmProblem, AValidFp8ProblemPassesAndCountsItsFlops) {
  const GroupedGemmProblem p = fp8_problem();
  EXPECT_EQ(text(p), "<no error>");
  EXPECT_EQ(p.rows(), 64);
  EXPECT_DOUBLE_EQ(p.flops(g_counts), 2.0 * 39 * 256 * 7168);
}

TEST(GroupedGemmProblem, ShapeAndDtypeRulesAreNamed) {
  GroupedGemmProblem p = fp8_problem();
  p.k = 7168 + 64;
  EXPECT_NE(text(p).find("fp8 grouped GEMM: K = 7232 must be a multiple of 128"), std::string::npos);
  p = fp8_problem();
  p.n = 200;
  EXPECT_NE(text(p).find("N = 200 must be a multiple of 128"), std::string::npos);
  p = fp8_problem();
  p.weight_scales = nullptr;
  EXPECT_NE(text(p).find("needs act_scales [rows, K/128] and weight_scales"), std::string::npos);
  p = fp8_problem();
  p.dtype = GemmDtype::kBF16;
  EXPECT_NE(text(p).find("bf16 grouped GEMM takes no scales"), std::string::npos);
  p.act_scales = p.weight_scales = nullptr;
  p.k = 100;
  EXPECT_NE(text(p).find("must be multiples of 8"), std::string::npos);
  p = fp8_problem();
  p.act = g_act + 4;
  EXPECT_NE(text(p).find("must be 16-byte aligned"), std::string::npos);
  p = fp8_problem();
  p.offsets = nullptr;
  EXPECT_NE(text(p).find("contiguous grouped GEMM needs offsets"), std::string::npos);
  p = fp8_problem();
  p.layout = GroupedLayout::kMasked;
  EXPECT_NE(text(p).find("max_m 0 must be positive"), std::string::npos);
  p.max_m = 16;
  EXPECT_NE(text(p).find("masked grouped GEMM takes no offsets"), std::string::npos);
  p.offsets = nullptr;
  EXPECT_EQ(text(p), "<no error>");
  EXPECT_EQ(p.rows(), 64);
}

TEST(GroupedGemmProblem, ActivationScaleLayoutsHaveTheirStridesAndLeadingDimension) {
  GroupedGemmProblem p = fp8_problem();  // 64 rows, K / 128 = 56
  ScaleStrides s = p.act_scale_strides();
  EXPECT_EQ(s.index(3, 10, 5), 10 * 56 + 5);
  p.act_scales_ld = 64;
  EXPECT_NE(text(p).find("act_scales_ld = 64 is for column-major activation scales"), std::string::npos);
  p.act_scale_layout = ScaleLayout::kColumnMajor;
  EXPECT_EQ(text(p), "<no error>");
  p.act_scales_ld = 63;
  EXPECT_NE(text(p).find("column-major act_scales_ld = 63 is less than total_rows = 64"), std::string::npos);
  p.act_scales_ld = 0;  // ld = total_rows
  EXPECT_EQ(text(p), "<no error>");
  EXPECT_EQ(p.act_scale_strides().index(3, 10, 5), 5 * 64 + 10);
  p.act_scales_ld = 68;
  EXPECT_EQ(p.act_scale_strides().index(3, 10, 5), 5 * 68 + 10);
  // Masked, [E, K/128, ld]: expert 2's row 3 (act row 2 * 16 + 3) at K block 5.
  p.layout = GroupedLayout::kMasked;
  p.offsets = nullptr;
  p.max_m = 16;
  p.act_scales_ld = 15;
  EXPECT_NE(text(p).find("column-major act_scales_ld = 15 is less than max_m = 16"), std::string::npos);
  p.act_scales_ld = 20;
  EXPECT_EQ(text(p), "<no error>");
  EXPECT_EQ(p.act_scale_strides().index(2, 2 * 16 + 3, 5), (2 * 56 + 5) * 20 + 3);
  p.act_scales_ld = 0;
  EXPECT_EQ(p.act_scale_strides().index(2, 2 * 16 + 3, 5), (2 * 56 + 5) * 16 + 3);
  p.dtype = GemmDtype::kBF16;
  p.act_scales = p.weight_scales = nullptr;
  EXPECT_NE(text(p).find("bf16 grouped GEMM takes no scales (act_scale_layout"), std::string::npos);
}

TEST(GroupedGemmProblem, RowTablesAreCheckedPerExpert) {
  GroupedGemmProblem p = fp8_problem();
  auto tables = [&](std::vector<int32_t> o, std::vector<int32_t> c) {
    return test::error_text([&] { validate_row_tables(p, o.data(), c.data()); });
  };
  EXPECT_EQ(tables({0, 8, 8, 40}, {8, 0, 30, 1}), "<no error>");
  EXPECT_NE(tables({0, 8, 8, 40}, {8, -1, 30, 1}).find("counts[1] = -1 is negative"), std::string::npos);
  EXPECT_NE(tables({0, 8, 8, 60}, {8, 0, 30, 5}).find("expert 3: rows [60, 65) leave the 64 rows"), std::string::npos);
  EXPECT_NE(tables({0, 4, 8, 40}, {8, 1, 30, 1}).find("experts 0 and 1 overlap"), std::string::npos);
  p.layout = GroupedLayout::kMasked;
  p.max_m = 16;
  EXPECT_NE(tables({}, {8, 0, 17, 1}).find("counts[2] = 17 exceeds max_m = 16"), std::string::npos);
}

}  // namespace
}  // namespace symmoe::gemm
