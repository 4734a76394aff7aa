// Four processes on one GPU share a symmetric buffer through POSIX fds passed over Unix
// sockets. The ranks fork from this (CUDA-free) test process; each child then starts CUDA.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include "symmoe/comm/fork_ranks.hpp"
#include "symmoe/core/device_info.hpp"
#include "symmoe/core/error.hpp"
#include "symmoe/symm/peer_smoke.hpp"
#include "symmoe/symm/symmetric_buffer.hpp"

namespace symmoe::symm {
namespace {

TEST(SymmetricBufferMultiProcessGpu, FourProcessesExchangeFdsAndVerifyEveryPeer) {
  constexpr int kRanks = 4;
  const auto results = comm::fork_ranks(kRanks, [](comm::Group& g, std::string* msg) {
    const CudaStatus cuda = probe_cuda();
    if (cuda.device_count == 0) {
      *msg = cuda.reason;
      return comm::kForkedRankSkipped;
    }
    SYMMOE_CUDA_CHECK(cudaSetDevice(0));
    SymmetricBufferOptions o;
    o.bytes_per_rank = (6 << 20) + 8 * 5;
    o.handle_type = HandleType::kAuto;
    std::string summary;
    for (int round = 0; round < 3; ++round) {
      auto buf = SymmetricBuffer::create(g, o);
      if (buf->handle_type() != HandleType::kFd && buf->handle_type() != HandleType::kFabric) return 5;
      const SmokeReport r = run_peer_smoke(g, *buf);
      if (!r.ok()) {
        *msg = r.first_mismatch;
        return 1;
      }
      summary = std::string(handle_type_name(buf->handle_type())) + ": " +
                std::to_string(r.remote_words_checked) + " words read back from peers";
      g.barrier();
    }
    *msg = summary;
    return 0;
  }, 60, 240);
  int skipped = 0;
  for (const auto& r : results) skipped += r.exit_code == comm::kForkedRankSkipped;
  if (skipped == kRanks) GTEST_SKIP() << "no CUDA GPU: " << results[0].message;
  for (const auto& r : results) {
    EXPECT_EQ(r.exit_code, 0) << "rank " << r.rank << ": " << r.message;
    EXPECT_FALSE(r.timed_out) << "rank " << r.rank;
    std::printf("rank %d: %s\n", r.rank, r.message.c_str());
  }
}

}  // namespace
}  // namespace symmoe::symm
