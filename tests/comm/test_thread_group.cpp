#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <random>
#include <thread>

#include "symmoe/comm/thread_group.hpp"
#include "symmoe/core/error.hpp"

namespace symmoe::comm {
namespace {

using Clock = std::chrono::steady_clock;

TEST(ThreadGroup, AllGatherOfRandomPayloadsManyTimes) {
  for (int n : {1, 2, 3, 8, 17}) {
    run_thread_ranks(n, {}, [n](Group& g) {
      EXPECT_EQ(g.size(), n);
      EXPECT_EQ(g.kind(), "threads");
      std::mt19937_64 rng(1234 + g.rank());
      for (int iter = 0; iter < 200; ++iter) {
        const size_t bytes = 1 + (iter * 37) % 97;  // same on every rank
        std::vector<unsigned char> mine(bytes);
        for (size_t i = 0; i < bytes; ++i) mine[i] = static_cast<unsigned char>(g.rank() * 31 + iter + i);
        std::vector<unsigned char> all(bytes * n, 0xEE);
        g.all_gather(mine.data(), all.data(), bytes);
        for (int r = 0; r < n; ++r) {
          for (size_t i = 0; i < bytes; ++i) {
            ASSERT_EQ(all[r * bytes + i], static_cast<unsigned char>(r * 31 + iter + i));
          }
        }
        if (rng() % 3 == 0) std::this_thread::yield();  // vary who arrives first
      }
    });
  }
}

TEST(ThreadGroup, BarrierOrdersWrites) {
  constexpr int kRanks = 6;
  std::vector<std::atomic<int>> slots(kRanks);
  run_thread_ranks(kRanks, {}, [&](Group& g) {
    for (int iter = 1; iter <= 100; ++iter) {
      slots[g.rank()].store(iter);
      g.barrier();
      for (int r = 0; r < kRanks; ++r) ASSERT_EQ(slots[r].load(), iter);
      g.barrier();
    }
  });
}

TEST(ThreadGroup, DescriptorsReachEveryRank) {
  constexpr int kRanks = 5;
  run_thread_ranks(kRanks, {}, [](Group& g) {
    const int fd = ::memfd_create("symmoe-test", MFD_CLOEXEC);
    ASSERT_GE(fd, 0);
    const int32_t tag = 1000 + g.rank();
    ASSERT_EQ(::pwrite(fd, &tag, sizeof(tag), 0), static_cast<ssize_t>(sizeof(tag)));
    std::vector<int> fds = g.all_gather_fds(fd);
    ::close(fd);  // the group duplicated what it needed
    ASSERT_EQ(fds.size(), static_cast<size_t>(kRanks));
    for (int r = 0; r < kRanks; ++r) {
      int32_t seen = 0;
      ASSERT_EQ(::pread(fds[r], &seen, sizeof(seen), 0), static_cast<ssize_t>(sizeof(seen)));
      EXPECT_EQ(seen, 1000 + r);
      ::close(fds[r]);
    }
  });
}

TEST(ThreadGroup, MissingRankTimesOutNamingIt) {
  ThreadHub hub(4);
  std::vector<std::string> errors(3);
  std::vector<double> seconds(3);
  std::vector<std::thread> threads;
  for (int r = 0; r < 3; ++r) {  // rank 3 never joins
    threads.emplace_back([&, r] {
      auto g = hub.join(r);
      g->set_timeout(std::chrono::duration<double>(0.5));
      const auto start = Clock::now();
      try {
        g->barrier();
      } catch (const Error& e) {
        errors[r] = e.what();
      }
      seconds[r] = std::chrono::duration<double>(Clock::now() - start).count();
    });
  }
  for (auto& t : threads) t.join();
  for (int r = 0; r < 3; ++r) {
    EXPECT_NE(errors[r].find("ranks [3]"), std::string::npos) << errors[r];
    EXPECT_LT(seconds[r], 1.5) << "rank " << r << " waited too long";
  }
}

TEST(ThreadGroup, FailingRankReleasesPeersAtOnce) {
  const auto start = Clock::now();
  std::string message;
  try {
    run_thread_ranks(4, {}, [](Group& g) {
      if (g.rank() == 2) SYMMOE_FAIL("rank two broke");
      g.barrier();
    }, /*timeout_s=*/30);
  } catch (const Error& e) {
    message = e.what();
  }
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - start).count(), 5.0);
  EXPECT_NE(message.find("rank 2 of 4: rank two broke"), std::string::npos) << message;
}

TEST(ThreadGroup, MismatchedCollectivesAreNamed) {
  std::string message;
  try {
    run_thread_ranks(2, {}, [](Group& g) {
      if (g.rank() == 0) {
        int v = 1;
        std::vector<int> all(2);
        g.all_gather(&v, all.data(), sizeof(v));
      } else {
        g.barrier();
      }
    }, 5);
  } catch (const Error& e) {
    message = e.what();
  }
  EXPECT_NE(message.find("mismatch"), std::string::npos) << message;
  EXPECT_NE(message.find("same collectives in the same order"), std::string::npos) << message;
}

TEST(ThreadGroup, JoinTwiceOrOutOfRangeIsAnError) {
  ThreadHub hub(2);
  auto a = hub.join(0);
  EXPECT_THROW(hub.join(0), Error);
  EXPECT_THROW(hub.join(2), Error);
  EXPECT_THROW(ThreadHub(0), Error);
}

}  // namespace
}  // namespace symmoe::comm
