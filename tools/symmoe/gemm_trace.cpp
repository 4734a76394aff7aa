// The timeline of NOTE [swap-AB trace]: where a launch's time goes at the boundary to the next
// (previous CTAs draining, the wait for the grid, table building, the first stage) and how
// evenly its CTAs end.
#include "gemm_trace.hpp"

#include <algorithm>
#include <cstdio>

#include "bench_common.hpp"
#include "symmoe/core/error.hpp"
#include "symmoe/gemm/grouped_gemm.hpp"

namespace symmoe::cli {

namespace {

TraceSpread spread(const std::vector<double>& v) {
  if (v.empty()) return {};
  const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  return TraceSpread{*lo, median(v), *hi};
}

void add(TraceSpread& sum, const TraceSpread& s) {
  sum.min += s.min;
  sum.med += s.med;
  sum.max += s.max;
}

void divide(TraceSpread& s, int n) {
  s.min /= n;
  s.med /= n;
  s.max /= n;
}

}  // namespace

SwapAbTraceSummary summarize_swapab_trace(const std::vector<uint64_t>& words, int launches, int ctas) {
  using gemm::kSwapAbTraceWords;
  SYMMOE_CHECK(launches >= 2 && ctas >= 1, "swap-AB trace: ", launches, " launches of ", ctas,
               " CTAs (needs at least 2 launches)");
  SYMMOE_CHECK(words.size() >= static_cast<size_t>(launches) * ctas * kSwapAbTraceWords,
               "swap-AB trace: ", words.size(), " words for ", launches, " launches of ", ctas, " CTAs");
  static_assert(gemm::kTraceConsumerEnd + 1 == SwapAbTraceSummary::kMilestones, "milestones are the first words");
  auto entry = [&](int launch, int cta) { return &words[(size_t(launch) * ctas + cta) * kSwapAbTraceWords]; };
  SwapAbTraceSummary out;
  for (int l = 1; l < launches; ++l) {
    uint64_t prev_end = 0;
    for (int c = 0; c < ctas; ++c) prev_end = std::max(prev_end, entry(l - 1, c)[gemm::kTraceConsumerEnd]);
    if (prev_end == 0) continue;
    std::array<std::vector<double>, SwapAbTraceSummary::kMilestones> t;
    std::vector<double> items;
    for (int c = 0; c < ctas; ++c) {
      const uint64_t* e = entry(l, c);
      if (e[gemm::kTraceStart] == 0) continue;
      for (int i = 0; i < SwapAbTraceSummary::kMilestones; ++i) {
        t[i].push_back((static_cast<double>(e[i]) - static_cast<double>(prev_end)) * 1e-3);
      }
      items.push_back(static_cast<double>(e[gemm::kTraceItems]));
    }
    if (items.empty()) continue;
    for (int i = 0; i < SwapAbTraceSummary::kMilestones; ++i) add(out.us[i], spread(t[i]));
    add(out.items, spread(items));
    ++out.launches;
  }
  if (out.launches > 0) {
    for (auto& s : out.us) divide(s, out.launches);
    divide(out.items, out.launches);
  }
  return out;
}

std::vector<std::string> SwapAbTraceSummary::lines() const {
  std::vector<std::string> out;
  if (launches == 0) {
    out.emplace_back("trace: no complete launch pair recorded");
    return out;
  }
  char buf[160];
  std::snprintf(buf, sizeof(buf),
                "trace: us from the previous launch's last CTA end, min / median / max over CTAs, mean of %d launches",
                launches);
  out.emplace_back(buf);
  for (int i = 0; i < kMilestones; ++i) {
    std::snprintf(buf, sizeof(buf), "  %-20s %8.2f %8.2f %8.2f", kNames[i], us[i].min, us[i].med, us[i].max);
    out.emplace_back(buf);
  }
  std::snprintf(buf, sizeof(buf), "  %-20s %8.1f %8.1f %8.1f", "items per CTA", items.min, items.med, items.max);
  out.emplace_back(buf);
  return out;
}

}  // namespace symmoe::cli
