#include "symmoe/symm/peer_table.hpp"

#include "symmoe/core/error.hpp"

namespace symmoe::symm {

device::PeerTable make_peer_table(std::span<void* const> bases, int rank) {
  const int n = static_cast<int>(bases.size());
  SYMMOE_CHECK(n >= 1 && n <= device::kMaxRanks, "a peer table holds 1..", device::kMaxRanks,
               " ranks (one NVL72 domain); got ", n);
  SYMMOE_CHECK(rank >= 0 && rank < n, "rank ", rank, " is outside the group of ", n);
  device::PeerTable table;
  table.rank = rank;
  table.num_ranks = n;
  table.base = reinterpret_cast<uint64_t>(bases[rank]);
  for (int r = 0; r < n; ++r) {
    table.offsets[r] =
        static_cast<int64_t>(reinterpret_cast<uint64_t>(bases[r]) - table.base);
  }
  return table;
}

}  // namespace symmoe::symm
