// Symmetric buffers on a real GPU, ranks as threads ("virtual ranks", several per GPU).
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <mutex>
#include <random>

#include "support/env_guard.hpp"
#include "support/gpu.hpp"
#include "symmoe/comm/thread_group.hpp"
#include "symmoe/core/error.hpp"
#include "symmoe/core/log.hpp"
#include "symmoe/symm/peer_smoke.hpp"
#include "symmoe/symm/peer_validation.hpp"
#include "symmoe/symm/symmetric_buffer.hpp"

namespace symmoe::symm {
namespace {

SymmetricBufferOptions fd_options(size_t bytes) {
  SymmetricBufferOptions o;
  o.bytes_per_rank = bytes;
  o.handle_type = HandleType::kFd;
  return o;
}

TEST(SymmetricBufferGpu, EveryRankWritesAndReadsEveryPeer) {
  SYMMOE_SKIP_WITHOUT_GPU();
  std::mt19937 rng(7);
  for (int n : {2, 4, 8}) {
    for (size_t bytes : {size_t{8} * n, size_t{3} << 20, size_t{(5 << 20) + 4096 + 8 * 13}}) {
      comm::run_thread_ranks(n, {0}, [&](comm::Group& g) {
        auto buf = SymmetricBuffer::create(g, fd_options(bytes));
        ASSERT_EQ(buf->num_ranks(), n);
        ASSERT_GE(buf->mapped_bytes_per_rank(), bytes);
        for (int r = 0; r < n; ++r) {
          EXPECT_EQ(static_cast<char*>(buf->peer(r)) - static_cast<char*>(buf->local()),
                    static_cast<ptrdiff_t>(buf->mapped_bytes_per_rank()) * (r - g.rank()));
        }
        const SmokeReport report = run_peer_smoke(g, *buf);
        EXPECT_TRUE(report.ok()) << "rank " << g.rank() << ": " << report.first_mismatch;
        const uint64_t wps = smoke_words_per_slice(bytes, n);
        EXPECT_EQ(report.local_words_checked, wps * n);
        EXPECT_EQ(report.remote_words_checked, wps * n * n);
      }, 60);
    }
  }
}

TEST(SymmetricBufferGpu, AutoFallsBackToFdWithTheReasonLogged) {
  SYMMOE_SKIP_WITHOUT_GPU();
  std::mutex m;
  std::vector<std::string> logged;
  auto previous = log::set_sink([&](log::Level, const std::string& msg) {
    std::lock_guard lock(m);
    logged.push_back(msg);
  });
  const log::Level old_level = log::level();
  log::set_level(log::Level::kInfo);
  HandleType chosen = HandleType::kAuto;
  std::string reason;
  comm::run_thread_ranks(4, {0}, [&](comm::Group& g) {
    SymmetricBufferOptions o;
    o.bytes_per_rank = 1 << 20;
    o.handle_type = HandleType::kAuto;
    auto buf = SymmetricBuffer::create(g, o);
    EXPECT_TRUE(run_peer_smoke(g, *buf).ok());
    if (g.rank() == 0) {
      chosen = buf->handle_type();
      reason = buf->handle_reason();
    }
  });
  log::set_level(old_level);
  log::set_sink(previous);
  std::printf("auto resolved to %s: %s\n", handle_type_name(chosen), reason.c_str());
  if (chosen == HandleType::kFabric) {
    EXPECT_NE(reason.find("every rank created and exported a fabric handle"), std::string::npos);
    return;
  }
  ASSERT_EQ(chosen, HandleType::kFd);
  EXPECT_NE(reason.find("auto -> fd: fabric handles unavailable on 4 of 4 ranks"),
            std::string::npos) << reason;
  bool found = false;
  for (const auto& msg : logged) found |= msg.find("handle type auto -> fd") != std::string::npos;
  EXPECT_TRUE(found) << "the fallback must be logged once (rank 0)";
}

TEST(SymmetricBufferGpu, ExplicitFabricFailsClearlyWhereUnavailable) {
  SYMMOE_SKIP_WITHOUT_GPU();
  std::string message;
  try {
    comm::run_thread_ranks(2, {0}, [&](comm::Group& g) {
      SymmetricBufferOptions o;
      o.bytes_per_rank = 1 << 20;
      o.handle_type = HandleType::kFabric;
      auto buf = SymmetricBuffer::create(g, o);
    });
  } catch (const Error& e) {
    message = e.what();
  }
  if (message.empty()) GTEST_SKIP() << "fabric handles work on this machine";
  EXPECT_NE(message.find("SYMMOE_HANDLE_TYPE=fabric but fabric handles unavailable"),
            std::string::npos) << message;
}

TEST(SymmetricBufferGpu, InjectedNullPeerIsRejectedBeforeLaunchAndTheContextStaysUsable) {
  SYMMOE_SKIP_WITHOUT_GPU();
  std::vector<std::string> seen(4);
  comm::run_thread_ranks(4, {0}, [&](comm::Group& g) {
    auto buf = SymmetricBuffer::create(g, fd_options(1 << 20));
    device::PeerTable bad = buf->peer_table();
    const int victim = (g.rank() + 1) % 4;
    bad.offsets[victim] = -static_cast<int64_t>(bad.base);  // peer_base(victim) == 0
    try {
      launch_smoke_write(bad, buf->device(), 1024, nullptr);
    } catch (const Error& e) {
      seen[g.rank()] = e.what();
    }
    EXPECT_EQ(cudaGetLastError(), cudaSuccess) << "nothing may have been launched";
    g.barrier();
    // Normal work afterwards.
    EXPECT_TRUE(run_peer_smoke(g, *buf).ok());
  });
  for (int r = 0; r < 4; ++r) {
    const std::string expected = "Symmetric buffer of rank " + std::to_string((r + 1) % 4) +
                                 " (0x0) is not addressable from rank " + std::to_string(r);
    EXPECT_NE(seen[r].find(expected), std::string::npos) << seen[r];
    EXPECT_NE(seen[r].find("all 4 ranks must share one NVLink/P2P domain"), std::string::npos);
  }
}

TEST(SymmetricBufferGpu, UnmappedPeerIsRejectedByTheDriverProbe) {
  SYMMOE_SKIP_WITHOUT_GPU();
  std::string message;
  comm::run_thread_ranks(2, {0}, [&](comm::Group& g) {
    auto buf = SymmetricBuffer::create(g, fd_options(1 << 20));
    if (g.rank() == 0) {
      std::vector<void*> bases(buf->peer_bases().begin(), buf->peer_bases().end());
      bases[1] = reinterpret_cast<void*>(0x10000);  // non-null, mapped nowhere
      try {
        validate_peers(bases, 0, buf->device());
      } catch (const Error& e) {
        message = e.what();
      }
    }
    g.barrier();
  });
  EXPECT_NE(message.find("Symmetric buffer of rank 1 (0x10000) is not addressable from rank 0"),
            std::string::npos) << message;
  EXPECT_NE(message.find("CUDA_ERROR_INVALID_VALUE"), std::string::npos) << message;
}

TEST(SymmetricBufferGpu, ThousandCreateDestroyCyclesReturnAllMemory) {
  SYMMOE_SKIP_WITHOUT_GPU();
  constexpr int kRanks = 4;
  constexpr int kCycles = 1000;
  // The driver may grow its own bookkeeping by a page once; a leak of ours would lose at least
  // one buffer (4 MiB) per cycle. The library's own counters must return to zero exactly.
  constexpr size_t kDriverPage = 2 << 20;
  size_t free_before = 0, free_half = 0, free_after = 0, total = 0;
  comm::run_thread_ranks(kRanks, {0}, [&](comm::Group& g) {
    for (int i = 0; i < 10; ++i) {  // warm-up: driver pools settle
      auto warm = SymmetricBuffer::create(g, fd_options(4 << 20));
      g.barrier();
    }
    g.barrier();
    if (g.rank() == 0) cudaMemGetInfo(&free_before, &total);
    g.barrier();
    for (int i = 0; i < kCycles; ++i) {
      {
        auto buf = SymmetricBuffer::create(g, fd_options((4 << 20) + (i % 3) * 4096));
        if (g.rank() == 0 && i == 0) {
          const SymmetricMemoryStats live = symmetric_memory_stats();
          EXPECT_EQ(live.live_buffers, kRanks);
          EXPECT_EQ(live.imported_handles, kRanks * (kRanks - 1));
          EXPECT_EQ(live.mappings, kRanks * kRanks);
        }
        g.barrier();  // every rank done with it before anyone releases
      }
      if (i == kCycles / 2) {
        g.barrier();  // every rank released this cycle's buffer
        if (g.rank() == 0) cudaMemGetInfo(&free_half, &total);
      }
    }
    g.barrier();
    if (g.rank() == 0) cudaMemGetInfo(&free_after, &total);
  }, 120);
  const SymmetricMemoryStats s = symmetric_memory_stats();
  EXPECT_EQ(s.live_buffers, 0);
  EXPECT_EQ(s.allocations, 0);
  EXPECT_EQ(s.allocated_bytes, 0);
  EXPECT_EQ(s.imported_handles, 0);
  EXPECT_EQ(s.mappings, 0);
  EXPECT_EQ(s.reserved_bytes, 0);
  std::printf("free device memory: %zu before, %zu at cycle %d, %zu after %d cycles of %d ranks\n",
              free_before, free_half, kCycles / 2, free_after, kCycles, kRanks);
  EXPECT_GE(free_after + kDriverPage, free_before) << "device memory lost beyond one driver page";
  EXPECT_GE(free_after + kDriverPage, free_half) << "device memory shrinks with cycles: a leak";
}

}  // namespace
}  // namespace symmoe::symm
