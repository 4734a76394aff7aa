// Runs with CUDA_MODULE_LOADING=LAZY (see tests/CMakeLists.txt). Rank 0 spins in one kernel
// until rank 1, on another stream, signals from a different kernel. Without eager loading the
// second kernel's load could wait for the spinning one; DeviceRuntime loads every kernel first.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <thread>

#include "support/gpu.hpp"
#include "support/rank_fixture.hpp"
#include "symmoe/comm/thread_group.hpp"
#include "symmoe/runtime/barrier_kernels.hpp"

namespace symmoe::runtime {
namespace {

TEST(EagerLoadingGpu, TwoStreamSpinReleaseUnderLazyLoading) {
  SYMMOE_SKIP_WITHOUT_GPU();
  const char* mode = std::getenv("CUDA_MODULE_LOADING");
  std::printf("CUDA_MODULE_LOADING=%s\n", mode ? mode : "(unset)");
  std::vector<double> seconds(2);
  comm::run_thread_ranks(2, {0}, [&](comm::Group& g) {
    test::RankFixture f(g);
    EXPECT_GE(f.rt.num_kernels_loaded(), 7);
    const device::PeerTable peers = f.buffer->peer_table();
    g.barrier();
    const auto start = std::chrono::steady_clock::now();
    if (g.rank() == 0) {
      launch_cross_rank_barriers(f.rt, f.buffer->peer_table(), f.buffer->bytes_per_rank(), 0, 1, 0,
                                 f.stream, /*timeout_s=*/10);
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));  // rank 0 is spinning now
      launch_grid_barriers(f.rt, {4, 0}, 1, 0, f.stream, &peers,
                           f.buffer->bytes_per_rank(), 0, 10);
    }
    auto failure = f.rt.take_failure(f.stream);
    EXPECT_FALSE(failure.has_value()) << failure.value_or("");
    seconds[g.rank()] = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    g.barrier();
  });
  std::printf("spin release took %.3f s (rank 0), %.3f s (rank 1)\n", seconds[0], seconds[1]);
  EXPECT_LT(seconds[0], 1.0);
}

}  // namespace
}  // namespace symmoe::runtime
