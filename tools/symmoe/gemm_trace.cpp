// The timeline of NOTE [swap-AB trace]: where a launch's time goes at the boundary to the next
// (previous CTAs draining, the wait for the grid, table building, the first stage) and how
// evenly its CTAs end.
#include "gemm_trace.hpp"

#include <algorithm>
#include <array>
#include <cstdio>

#include "bench_common.hpp"
#include "symmoe/core/error.hpp"
#include "symmoe/gemm/grouped_gemm.hpp"

namespace symmoe::cli {

namespace {

struct Spread {
  double min = 0, med = 0, max = 0;
};

Spread spread(std::vector<double> v) {
  if (v.empty()) return {};
  std::sort(v.begin(), v.end());
  return Spread{v.front(), median(v), v.back()};
}

}  // namespace

std::vector<std::string> summarize_swapab_trace(const std::vector<uint64_t>& words, int launches, int ctas) {
  using gemm::kSwapAbTraceWords;
  SYMMOE_CHECK(launches >= 2 && ctas >= 1, "swap-AB trace: ", launches, " launches of ", ctas,
               " CTAs (needs at least 2 launches)");
  SYMMOE_CHECK(words.size() >= static_cast<size_t>(launches) * ctas * kSwapAbTraceWords,
               "swap-AB trace: ", words.size(), " words for ", launches, " launches of ", ctas, " CTAs");
  auto entry = [&](int launch, int cta) { return &words[(size_t(launch) * ctas + cta) * kSwapAbTraceWords]; };
  constexpr std::array<int, 6> kEvents = {gemm::kTraceStart,      gemm::kTraceWaitDone,     gemm::kTraceTablesDone,
                                          gemm::kTraceFirstStage, gemm::kTraceProducerDone, gemm::kTraceConsumerEnd};
  constexpr std::array<const char*, 6> kNames = {"CTA start", "grid wait returned", "row tables built",
                                                 "first stage seen", "producer done", "consumer end"};
  std::array<Spread, 6> sum{};
  Spread items_sum{};
  int used = 0;
  for (int l = 1; l < launches; ++l) {
    uint64_t prev_end = 0;
    for (int c = 0; c < ctas; ++c) prev_end = std::max(prev_end, entry(l - 1, c)[gemm::kTraceConsumerEnd]);
    if (prev_end == 0) continue;
    std::array<std::vector<double>, 6> t;
    std::vector<double> items;
    for (int c = 0; c < ctas; ++c) {
      const uint64_t* e = entry(l, c);
      if (e[gemm::kTraceStart] == 0) continue;
      for (size_t i = 0; i < kEvents.size(); ++i) {
        t[i].push_back((static_cast<double>(e[kEvents[i]]) - static_cast<double>(prev_end)) * 1e-3);
      }
      items.push_back(static_cast<double>(e[gemm::kTraceItems]));
    }
    if (items.empty()) continue;
    for (size_t i = 0; i < kEvents.size(); ++i) {
      const Spread s = spread(t[i]);
      sum[i].min += s.min;
      sum[i].med += s.med;
      sum[i].max += s.max;
    }
    const Spread si = spread(items);
    items_sum.min += si.min;
    items_sum.med += si.med;
    items_sum.max += si.max;
    ++used;
  }
  std::vector<std::string> lines;
  if (used == 0) {
    lines.emplace_back("trace: no complete launch pair recorded");
    return lines;
  }
  char buf[160];
  std::snprintf(buf, sizeof(buf), "trace: us from the previous launch's last CTA end, min / median / max over CTAs, "
                "mean of %d launches", used);
  lines.emplace_back(buf);
  for (size_t i = 0; i < kEvents.size(); ++i) {
    std::snprintf(buf, sizeof(buf), "  %-20s %8.2f %8.2f %8.2f", kNames[i], sum[i].min / used, sum[i].med / used,
                  sum[i].max / used);
    lines.emplace_back(buf);
  }
  std::snprintf(buf, sizeof(buf), "  %-20s %8.1f %8.1f %8.1f", "items per CTA", items_sum.min / used,
                items_sum.med / used, items_sum.max / used);
  lines.emplace_back(buf);
  return lines;
}

}  // namespace symmoe::cli
