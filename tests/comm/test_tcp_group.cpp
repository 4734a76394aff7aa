// Process groups: ranks forked from this test process, joined by the TCP rendezvous, passing
// descriptors over Unix sockets. No CUDA here (children fork from a CUDA-free parent).
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <chrono>

#include "support/env_guard.hpp"
#include "symmoe/comm/fork_ranks.hpp"
#include "symmoe/comm/tcp_group.hpp"
#include "symmoe/core/error.hpp"

namespace symmoe::comm {
namespace {

using Clock = std::chrono::steady_clock;

TEST(TcpGroup, CollectivesAndDescriptorsAcrossProcesses) {
  constexpr int kRanks = 4;
  const auto results = fork_ranks(kRanks, [](Group& g, std::string* msg) {
    if (g.kind() != "tcp" || g.size() != kRanks) {
      *msg = "wrong group";
      return 1;
    }
    for (int iter = 0; iter < 50; ++iter) {
      const uint64_t mine = (uint64_t(g.rank()) << 32) | iter;
      const auto all = g.all_gather_value(mine);
      for (int r = 0; r < kRanks; ++r) {
        if (all[r] != ((uint64_t(r) << 32) | iter)) {
          *msg = "all_gather returned a wrong word";
          return 1;
        }
      }
      g.barrier();
    }
    for (int round = 0; round < 3; ++round) {
      const int fd = ::memfd_create("symmoe-tcp-test", MFD_CLOEXEC);
      const int32_t tag = 100 * round + g.rank();
      if (fd < 0 || ::pwrite(fd, &tag, 4, 0) != 4) return 2;
      auto fds = g.all_gather_fds(fd);
      ::close(fd);
      for (int r = 0; r < kRanks; ++r) {
        int32_t seen = -1;
        if (::pread(fds[r], &seen, 4, 0) != 4 || seen != 100 * round + r) {
          *msg = "descriptor of rank " + std::to_string(r) + " carries " + std::to_string(seen);
          return 3;
        }
        ::close(fds[r]);
      }
    }
    return 0;
  }, 20, 60);
  for (const auto& r : results) {
    EXPECT_EQ(r.exit_code, 0) << "rank " << r.rank << ": " << r.message;
    EXPECT_FALSE(r.timed_out);
  }
}

TEST(TcpGroup, MissingRankIsNamedWithinTheTimeout) {
  const auto start = Clock::now();
  const auto results = fork_ranks(4, [](Group&, std::string*) { return 0; },
                                  /*bootstrap_timeout_s=*/1.0, /*deadline_s=*/30, /*absent=*/{3});
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  EXPECT_LT(seconds, 6.0);
  ASSERT_FALSE(results[3].started);
  for (int r = 0; r < 3; ++r) {
    EXPECT_EQ(results[r].exit_code, 1) << results[r].message;
    EXPECT_FALSE(results[r].timed_out);
    EXPECT_NE(results[r].message.find("ranks [3] did not connect"), std::string::npos)
        << "rank " << r << ": " << results[r].message;
  }
}

TEST(TcpGroup, RankDyingMidBootstrapIsNamed) {
  const auto results = fork_ranks(3, [](Group& g, std::string*) {
    g.barrier();
    if (g.rank() == 2) ::_exit(9);  // dies between collectives
    g.barrier();
    return 0;
  }, 5.0, 30);
  EXPECT_EQ(results[2].exit_code, 9);
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(results[r].exit_code, 1);
    EXPECT_NE(results[r].message.find("rank 2 closed its connection"), std::string::npos)
        << "rank " << r << ": " << results[r].message;
  }
}

TEST(TcpGroup, UnreachableRootIsReported) {
  TcpGroupConfig c;
  c.rank = 1;
  c.size = 2;
  c.master_port = 1;  // nothing listens there
  c.timeout_s = 0.3;
  try {
    make_tcp_group(c);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("could not reach rank 0's rendezvous at 127.0.0.1:1"),
              std::string::npos) << e.what();
  }
}

TEST(TcpGroup, ConfigFromEnvNamesMissingVariables) {
  test::EnvGuard a("RANK", std::nullopt);
  test::EnvGuard b("WORLD_SIZE", "2");
  try {
    TcpGroupConfig::from_env();
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("needs environment variable RANK"), std::string::npos);
  }
  test::EnvGuard c("RANK", "1");
  test::EnvGuard d("MASTER_PORT", "29512");
  test::EnvGuard e("MASTER_ADDR", "localhost");
  test::EnvGuard f("LOCAL_RANK", std::nullopt);
  const TcpGroupConfig cfg = TcpGroupConfig::from_env();
  EXPECT_EQ(cfg.rank, 1);
  EXPECT_EQ(cfg.size, 2);
  EXPECT_EQ(cfg.local_rank, 1);
  EXPECT_EQ(cfg.master_addr, "localhost");
  EXPECT_EQ(cfg.master_port, 29512);
  test::EnvGuard g("WORLD_SIZE", "two");
  EXPECT_THROW(TcpGroupConfig::from_env(), Error);
}

}  // namespace
}  // namespace symmoe::comm
