// `symmoe bench gemm --trace`: the swap-AB kernel's per-CTA milestones (NOTE [swap-AB trace])
// over the launches of one graph, summarised relative to the previous launch's end.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace symmoe::cli {

// What `launches` consecutive launches of `ctas` CTAs each wrote (launch i's entries at
// words[i * ctas * kSwapAbTraceWords ..]), as one line per milestone: for launches 1 .. n - 1,
// the time of each milestone over the CTAs (min / median / max) in microseconds from the
// previous launch's last consumer end, averaged over those launches. Entries with no start
// time (CTAs that never ran) are skipped. Needs launches >= 2.
std::vector<std::string> summarize_swapab_trace(const std::vector<uint64_t>& words, int launches, int ctas);

}  // namespace symmoe::cli
