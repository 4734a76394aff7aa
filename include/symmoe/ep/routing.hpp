// Routing layout of one source rank: from top-k expert ids to how many tokens go to each rank
// and each expert (host reference; the device version reports bad ids via the status block).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace symmoe::ep {

struct EpShape {
  int num_ranks = 1;
  int num_experts = 1;  // global; experts_per_rank = num_experts / num_ranks
  int top_k = 1;
  int hidden = 1;

  int experts_per_rank() const { return num_experts / num_ranks; }
  int rank_of(int expert) const { return expert / experts_per_rank(); }
  // Throws when ranks, experts or top_k are out of range or experts do not divide by ranks.
  void validate() const;
};

// NOTE [routing layout]: a top-k entry of -1 is masked (sends nothing). A token goes to a rank
// once, however many of its top-k experts live there: tokens_per_rank counts distinct tokens,
// tokens_per_expert counts (token, expert) pairs. Prefix arrays have one more entry than their
// counts. token_in_rank[t * num_ranks + r] is 1 when token t goes to rank r.
struct RoutingLayout {
  int num_tokens = 0;
  std::vector<int32_t> tokens_per_rank;
  std::vector<int32_t> tokens_per_expert;
  std::vector<int32_t> rank_prefix;
  std::vector<int32_t> expert_prefix;
  std::vector<uint8_t> token_in_rank;
};

// topk_idx is [num_tokens, top_k], row-major. An id outside [0, num_experts) other than -1 is a
// symmoe::Error naming the token, the slot and the value.
RoutingLayout compute_routing_layout(std::span<const int64_t> topk_idx, int num_tokens,
                                     const EpShape& shape);
RoutingLayout compute_routing_layout(std::span<const int32_t> topk_idx, int num_tokens,
                                     const EpShape& shape);

}  // namespace symmoe::ep
