// Random EP inputs for the reference and GPU tests: routings with masked slots, ranks that
// send or receive nothing, and self-identifying rows.
#pragma once

#include <cstdint>
#include <vector>

#include "symmoe/reference/ep_reference.hpp"

namespace symmoe::test {

struct EpInputOptions {
  uint64_t seed = 1;
  int mask_one_in = 7;         // a slot is -1 with probability 1 / mask_one_in (0: never)
  bool unit_weights = false;
  bool integer_values = false; // rows hold small integers (exact sums)
  int idle_rank = -1;          // no token routes to this rank's experts (>= 0)
  bool distinct_experts = true;
};

// NOTE [self-identifying rows]: element 0 of row t of rank r holds r, element 1 holds t / 256
// and element 2 holds t % 256 (all exact in bf16); the rest is random.
std::vector<reference::RankTokens> make_ep_inputs(const ep::EpShape& shape,
                                                  const std::vector<int>& tokens_per_rank,
                                                  const EpInputOptions& options);

}  // namespace symmoe::test
