// `symmoe bench gemm --trace`: the swap-AB kernel's per-CTA milestones (NOTE [swap-AB trace])
// over the launches of one graph, summarised relative to the previous launch's end.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace symmoe::cli {

struct TraceSpread {
  double min = 0, med = 0, max = 0;
};

// For launches 1 .. n - 1 of a graph: each milestone's time over the CTAs (min / median / max)
// in microseconds from the previous launch's last consumer end, and the items per CTA,
// averaged over those launches (`launches` of them; 0: no launch pair had entries).
struct SwapAbTraceSummary {
  static constexpr int kMilestones = 6;  // kTraceStart .. kTraceConsumerEnd
  static constexpr std::array<const char*, kMilestones> kNames = {
      "CTA start", "grid wait returned", "row tables built", "first stage seen", "producer done", "consumer end"};
  static constexpr std::array<const char*, kMilestones> kKeys = {"cta_start", "grid_wait",     "tables_built",
                                                                 "first_stage", "producer_done", "consumer_end"};
  int launches = 0;
  std::array<TraceSpread, kMilestones> us{};
  TraceSpread items{};
  // One header line, then a line per milestone and one for the items.
  std::vector<std::string> lines() const;
};

// What `launches` consecutive launches of `ctas` CTAs each wrote (launch i's entries at
// words[i * ctas * kSwapAbTraceWords ..]). Entries with no start time (CTAs that never ran)
// are skipped. Needs launches >= 2 and the words for all of them.
SwapAbTraceSummary summarize_swapab_trace(const std::vector<uint64_t>& words, int launches, int ctas);

}  // namespace symmoe::cli
