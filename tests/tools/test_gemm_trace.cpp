// The --trace summary of `symmoe bench gemm` (tools/symmoe/gemm_trace.cpp) on hand-made
// entries: times relative to the previous launch's last consumer end, spreads over CTAs,
// CTAs that never ran skipped, bad sizes rejected.
#include "symmoe/gemm/grouped_gemm.hpp"
#include "symmoe/core/error.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "../../tools/symmoe/gemm_trace.hpp"

namespace symmoe::cli {
namespace {

using namespace symmoe::gemm;

// One entry: milestones at base + offsets[i] ns (kTraceStart .. kTraceConsumerEnd), `items`.
void put(std::vector<uint64_t>& w, int launch, int ctas, int cta, int64_t base, const std::vector<int64_t>& off,
         uint64_t items) {
  uint64_t* e = &w[(size_t(launch) * ctas + cta) * kSwapAbTraceWords];
  for (int i = 0; i <= kTraceConsumerEnd; ++i) e[i] = static_cast<uint64_t>(base + off[i]);
  e[kTraceItems] = items;
  e[kTraceSm] = static_cast<uint64_t>(cta);
}

// The whitespace-separated tokens of `line` that are numbers as a whole.
std::vector<double> numbers(const std::string& line) {
  std::vector<double> v;
  std::istringstream in(line);
  for (std::string tok; in >> tok;) {
    char* end = nullptr;
    const double x = std::strtod(tok.c_str(), &end);
    if (end == tok.c_str() + tok.size()) v.push_back(x);
  }
  return v;
}

TEST(GemmTrace, TimesCountFromThePreviousLaunchsLastEnd) {
  const int ctas = 3;
  std::vector<uint64_t> w(2 * ctas * kSwapAbTraceWords, 0);
  // Launch 0 ends at 10'000 and 12'000 ns (the third CTA never ran); launch 1 is timed from 12'000.
  put(w, 0, ctas, 0, 0, {0, 100, 200, 300, 9'000, 10'000}, 5);
  put(w, 0, ctas, 1, 0, {0, 100, 200, 300, 11'000, 12'000}, 6);
  put(w, 1, ctas, 0, 12'000, {-2'000, 1'000, 1'500, 2'000, 30'000, 31'000}, 7);
  put(w, 1, ctas, 1, 12'000, {0, 1'000, 1'600, 3'000, 32'000, 35'000}, 6);
  const SwapAbTraceSummary sum = summarize_swapab_trace(w, 2, ctas);
  EXPECT_EQ(sum.launches, 1);
  EXPECT_DOUBLE_EQ(sum.us[kTraceStart].min, -2.0);
  EXPECT_DOUBLE_EQ(sum.us[kTraceWaitDone].max, 1.0);
  EXPECT_DOUBLE_EQ(sum.us[kTraceTablesDone].min, 1.5);
  EXPECT_DOUBLE_EQ(sum.us[kTraceProducerDone].max, 32.0);
  EXPECT_DOUBLE_EQ(sum.items.min, 6.0);
  // The printed lines carry the same numbers.
  const auto lines = sum.lines();
  ASSERT_EQ(lines.size(), 8u);
  EXPECT_NE(lines[0].find("mean of 1 launches"), std::string::npos) << lines[0];
  // CTA start: -2.0 and 0.0 us; the median of two is the upper one (bench_common's median).
  auto v = numbers(lines[1]);
  ASSERT_EQ(v.size(), 3u) << lines[1];
  EXPECT_DOUBLE_EQ(v[0], -2.0);
  EXPECT_DOUBLE_EQ(v[1], 0.0);
  EXPECT_DOUBLE_EQ(v[2], 0.0);
  v = numbers(lines[6]);  // consumer end: 31 and 35 us
  ASSERT_EQ(v.size(), 3u) << lines[6];
  EXPECT_DOUBLE_EQ(v[0], 31.0);
  EXPECT_DOUBLE_EQ(v[2], 35.0);
  v = numbers(lines[7]);  // items: 6 and 7
  ASSERT_EQ(v.size(), 3u) << lines[7];
  EXPECT_DOUBLE_EQ(v[0], 6.0);
  EXPECT_DOUBLE_EQ(v[2], 7.0);
}

TEST(GemmTrace, NothingRecordedSaysSo) {
  std::vector<uint64_t> w(2 * 4 * kSwapAbTraceWords, 0);
  const SwapAbTraceSummary sum = summarize_swapab_trace(w, 2, 4);
  EXPECT_EQ(sum.launches, 0);
  const auto lines = sum.lines();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("no complete launch pair"), std::string::npos);
}

TEST(GemmTrace, BadSizesAreNamed) {
  std::vector<uint64_t> w(kSwapAbTraceWords, 0);
  EXPECT_THROW(summarize_swapab_trace(w, 1, 1), Error);
  EXPECT_THROW(summarize_swapab_trace(w, 2, 1), Error);  // too few words for two launches
}

}  // namespace
}  // namespace symmoe::cli
