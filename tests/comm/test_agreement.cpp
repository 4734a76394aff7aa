#include <gtest/gtest.h>

#include "symmoe/comm/agreement.hpp"
#include "symmoe/comm/thread_group.hpp"
#include "symmoe/core/error.hpp"

namespace symmoe::comm {
namespace {

TEST(Agreement, EveryRankSeesEveryFailure) {
  std::vector<std::string> seen(4);
  run_thread_ranks(4, {}, [&](Group& g) {
    const std::string mine = g.rank() % 2 ? "odd rank " + std::to_string(g.rank()) : "";
    try {
      require_all_ok(g, mine, "step X");
    } catch (const Error& e) {
      seen[g.rank()] = e.what();
    }
  });
  for (int r = 0; r < 4; ++r) {
    EXPECT_NE(seen[r].find("step X failed on 2 of 4 ranks"), std::string::npos) << seen[r];
    EXPECT_NE(seen[r].find("rank 1: odd rank 1"), std::string::npos) << seen[r];
    EXPECT_NE(seen[r].find("rank 3: odd rank 3"), std::string::npos) << seen[r];
  }
}

TEST(Agreement, AllOkPassesAndLongMessagesAreCut) {
  run_thread_ranks(3, {}, [](Group& g) {
    EXPECT_NO_THROW(require_all_ok(g, "", "fine"));
    const auto errors = gather_errors(g, std::string(1000, 'x'));
    for (const auto& e : errors) EXPECT_EQ(e.size(), kMaxAgreementMessage - 1);
  });
}

}  // namespace
}  // namespace symmoe::comm
