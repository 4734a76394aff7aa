// Passing file descriptors between the processes of one host (private).
#pragma once

#include <cstdint>
#include <vector>

#include "symmoe/comm/group.hpp"

namespace symmoe::comm {

// NOTE [fd hub]: rank 0 listens on an abstract Unix seqpacket socket named after the group's
// nonce; every other rank connects once and announces its rank. An exchange is a star: each
// rank sends rank 0 its descriptor (SCM_RIGHTS), rank 0 sends every rank all `size`
// descriptors in one message. Rank 0 reports a failure (missing rank, wrong sequence) to every
// connected rank in the same message slot, so every rank fails naming the culprit.
class UnixFdHub {
 public:
  // Collective over `group` (its all_gather carries the set-up verdicts).
  UnixFdHub(Group& group, uint64_t nonce);
  ~UnixFdHub();
  UnixFdHub(const UnixFdHub&) = delete;
  UnixFdHub& operator=(const UnixFdHub&) = delete;

  std::vector<int> exchange(int fd);

 private:
  std::vector<int> exchange_at_root(int fd);
  std::vector<int> exchange_at_leaf(int fd);

  Group& group_;
  int listen_fd_ = -1;
  std::vector<int> conns_;  // rank 0: one per rank (index 0 unused); others: conns_[0]
  uint64_t seq_ = 0;
};

}  // namespace symmoe::comm
