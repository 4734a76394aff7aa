// Runs N ranks as forked processes of this one, joined by a TCP group on 127.0.0.1: the
// multi-process path on a single machine without a launcher (doctor, tests).
//
// Call it before this process initializes CUDA: a child forked after CUDA initialization
// cannot use CUDA. Children end with _exit so that nothing of the parent's runs twice.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "symmoe/comm/group.hpp"

namespace symmoe::comm {

struct ForkedRank {
  int rank = 0;
  int exit_code = -1;      // what the rank's function returned (1 when it threw)
  bool timed_out = false;  // killed after the deadline
  bool started = true;     // false for ranks listed in `absent`
  std::string message;     // the exception text or a note the rank returned
};

// The rank's function returns an exit code (0 = success) and may leave a note in `message`.
using ForkedRankFn = std::function<int(Group& group, std::string* message)>;

// Forks `size` ranks except those in `absent` (to test missing peers). Each child builds its
// group with `bootstrap_timeout_s`; the parent waits at most `deadline_s` for all children and
// kills the rest. Never throws for a failing child: inspect the results.
std::vector<ForkedRank> fork_ranks(int size, const ForkedRankFn& fn, double bootstrap_timeout_s,
                                   double deadline_s, const std::vector<int>& absent = {});

// Exit code a child returns when it cannot run its check (e.g. no GPU): reported, not failed.
inline constexpr int kForkedRankSkipped = 77;

}  // namespace symmoe::comm
