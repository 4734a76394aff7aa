// Cross-rank barriers between virtual ranks (threads, one GPU), with bounded waits.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "support/gpu.hpp"
#include "support/rank_fixture.hpp"
#include "symmoe/comm/thread_group.hpp"
#include "symmoe/core/device_info.hpp"
#include "symmoe/core/error.hpp"
#include "symmoe/runtime/barrier_kernels.hpp"

namespace symmoe::runtime {
namespace {

using Clock = std::chrono::steady_clock;
using test::RankFixture;

device::SignalPad read_pad(const RankFixture& f) {
  device::SignalPad pad{};
  SYMMOE_CUDA_CHECK(cudaMemcpyAsync(&pad, f.buffer->local(), sizeof(pad), cudaMemcpyDeviceToHost,
                                    f.stream));
  SYMMOE_CUDA_CHECK(cudaStreamSynchronize(f.stream));
  return pad;
}

void launch(RankFixture& f, int count, double timeout_s = 0) {
  launch_cross_rank_barriers(f.rt, f.buffer->peer_table(), f.buffer->bytes_per_rank(), 0, count,
                             /*tag=*/7, f.stream, timeout_s);
}

TEST(CrossRankBarrierGpu, TenThousandBackToBackWithoutLostOrDoubledSignals) {
  SYMMOE_SKIP_WITHOUT_GPU();
  for (int n : {2, 4, 8}) {
    comm::run_thread_ranks(n, {0}, [n](comm::Group& g) {
      RankFixture f(g);
      g.barrier();
      const auto start = Clock::now();
      launch(f, 10000);
      auto failure = f.rt.take_failure(f.stream);
      const double us = std::chrono::duration<double, std::micro>(Clock::now() - start).count();
      ASSERT_FALSE(failure.has_value()) << *failure;
      launch(f, 5000);  // epochs carry over between launches: nothing to reset
      failure = f.rt.take_failure(f.stream);
      ASSERT_FALSE(failure.has_value()) << *failure;
      const device::SignalPad pad = read_pad(f);
      EXPECT_EQ(pad.epoch, 15000u);
      for (int r = 0; r < n; ++r) EXPECT_EQ(pad.arrived[r], 15000u) << "signal from rank " << r;
      for (int r = n; r < device::kMaxRanks; ++r) EXPECT_EQ(pad.arrived[r], 0u);
      if (g.rank() == 0) std::printf("%d ranks: 10000 barriers in %.0f us\n", n, us);
      g.barrier();
    }, 120);
  }
}

TEST(CrossRankBarrierGpu, UpToSeventyTwoRanks) {
  SYMMOE_SKIP_WITHOUT_GPU();
  // More ranks than a warp and up to a full NVL72 domain: every thread of the barrier block
  // serves one peer or more.
  for (int n : {33, 72}) {
    comm::run_thread_ranks(n, {0}, [n](comm::Group& g) {
      RankFixture f(g, 4096);
      g.barrier();
      launch(f, 1000);
      auto failure = f.rt.take_failure(f.stream);
      ASSERT_FALSE(failure.has_value()) << *failure;
      const device::SignalPad pad = read_pad(f);
      EXPECT_EQ(pad.epoch, 1000u);
      for (int r = 0; r < n; ++r) EXPECT_EQ(pad.arrived[r], 1000u) << "signal from rank " << r;
      g.barrier();
    }, 120);
  }
}

TEST(CrossRankBarrierGpu, MissingRankIsNamedWithinTheDeadlineAndWorkContinues) {
  SYMMOE_SKIP_WITHOUT_GPU();
  constexpr int kRanks = 4;
  constexpr double kTimeout = 2.0;
  std::vector<std::string> failures(kRanks);
  std::vector<double> seconds(kRanks, 0);
  comm::run_thread_ranks(kRanks, {0}, [&](comm::Group& g) {
    RankFixture f(g);
    g.barrier();
    if (g.rank() != 3) {  // rank 3 never arrives
      const auto start = Clock::now();
      launch(f, 1, kTimeout);
      failures[g.rank()] = f.rt.take_failure(f.stream).value_or("");
      seconds[g.rank()] = std::chrono::duration<double>(Clock::now() - start).count();
    }
    // The process goes on: clear the pads and run normal barriers with everyone.
    reset_signal_pads(g, *f.buffer, 0, f.stream);
    launch(f, 100);
    auto again = f.rt.take_failure(f.stream);
    EXPECT_FALSE(again.has_value()) << "rank " << g.rank() << ": " << again.value_or("");
    g.barrier();
  }, 120);
  for (int r = 0; r < 3; ++r) {
    EXPECT_NE(failures[r].find("cross_rank_barrier (tag 7) for rank 3"), std::string::npos)
        << "rank " << r << ": " << failures[r];
    EXPECT_NE(failures[r].find("on rank " + std::to_string(r)), std::string::npos) << failures[r];
    EXPECT_NE(failures[r].find("expected its epoch >= 1, saw 0"), std::string::npos) << failures[r];
    EXPECT_LT(seconds[r], kTimeout + 1.0) << "rank " << r;
    EXPECT_GE(seconds[r], kTimeout * 0.9) << "rank " << r;
    std::printf("rank %d gave up after %.2f s: %s\n", r, seconds[r], failures[r].c_str());
  }
}

TEST(CrossRankBarrierGpu, RankTwoSecondsLateStillSucceeds) {
  SYMMOE_SKIP_WITHOUT_GPU();
  std::vector<double> seconds(4, 0);
  comm::run_thread_ranks(4, {0}, [&](comm::Group& g) {
    RankFixture f(g);
    g.barrier();
    const auto start = Clock::now();
    if (g.rank() == 3) std::this_thread::sleep_for(std::chrono::seconds(2));
    launch(f, 10, /*timeout_s=*/30);
    auto failure = f.rt.take_failure(f.stream);
    EXPECT_FALSE(failure.has_value()) << failure.value_or("");
    seconds[g.rank()] = std::chrono::duration<double>(Clock::now() - start).count();
    g.barrier();
  }, 120);
  for (int r = 0; r < 3; ++r) EXPECT_GE(seconds[r], 1.9) << "rank " << r << " did not wait";
}

TEST(CrossRankBarrierGpu, PersistentGridsWithCrossRankRounds) {
  SYMMOE_SKIP_WITHOUT_GPU();
  constexpr int kRanks = 4;
  comm::run_thread_ranks(kRanks, {0}, [&](comm::Group& g) {
    RankFixture f(g);
    int sms = 0;
    SYMMOE_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    // Virtual ranks share the GPU: each gets its slice so that every grid is resident at once.
    const SmBudget slice{(sms - 4) / kRanks, 0};
    const device::PeerTable peers = f.buffer->peer_table();
    g.barrier();
    // One block per SM (shared memory), so that all ranks' grids fit on the GPU together.
    const size_t one_per_sm = static_cast<size_t>(query_device(0).smem_per_block_optin / 2 + 1024);
    const GridLaunch gl = launch_grid_barriers(f.rt, slice, 500, one_per_sm, f.stream,
                                               &peers, f.buffer->bytes_per_rank(), 0);
    auto failure = f.rt.take_failure(f.stream);
    EXPECT_FALSE(failure.has_value()) << failure.value_or("");
    EXPECT_EQ(read_pad(f).epoch, 500u);
    EXPECT_EQ(gl.grid, gl.sms.usable);
    g.barrier();
  }, 120);
}

TEST(CrossRankBarrierGpu, BadPadOffsetIsRejectedBeforeLaunch) {
  SYMMOE_SKIP_WITHOUT_GPU();
  comm::run_thread_ranks(2, {0}, [](comm::Group& g) {
    RankFixture f(g, 4096);
    EXPECT_THROW(launch_cross_rank_barriers(f.rt, f.buffer->peer_table(), 4096, 64, 1, 0, f.stream),
                 Error);
    EXPECT_THROW(launch_cross_rank_barriers(f.rt, f.buffer->peer_table(), 4096, 4096, 1, 0, f.stream),
                 Error);
    device::PeerTable bad = f.buffer->peer_table();
    bad.offsets[1 - g.rank()] = -static_cast<int64_t>(bad.base);
    EXPECT_THROW(launch_cross_rank_barriers(f.rt, bad, 4096, 0, 1, 0, f.stream), Error);
    g.barrier();
  });
}

}  // namespace
}  // namespace symmoe::runtime
