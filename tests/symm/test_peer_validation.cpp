// Pre-launch validation on synthetic pointer tables (no GPU needed: the probe is injected).
#include <gtest/gtest.h>

#include <atomic>
#include <functional>
#include <vector>

#include "support/env_guard.hpp"
#include "support/error_text.hpp"
#include "symmoe/core/error.hpp"
#include "symmoe/symm/peer_table.hpp"
#include "symmoe/symm/peer_validation.hpp"

namespace symmoe::symm {
namespace {

// Synthetic, distinct, never-dereferenced bases; `salt` keeps tests' cache keys apart.
std::vector<void*> fake_bases(int n, uint64_t salt) {
  std::vector<void*> v;
  for (int r = 0; r < n; ++r) v.push_back(reinterpret_cast<void*>((salt << 40) + (uint64_t(r) + 1) * 0x200000));
  return v;
}

struct CountingProbe {
  std::shared_ptr<std::atomic<int>> calls = std::make_shared<std::atomic<int>>(0);
  ProbeResult answer = ProbeResult::kAddressable;
  const void* invalid = nullptr;  // this pointer answers kInvalid
  PointerProbe fn() const {
    return [c = calls, a = answer, bad = invalid](const void* p, int, std::string* d) {
      ++*c;
      if (p == bad) {
        *d = "cuPointerGetAttribute returned CUDA_ERROR_INVALID_VALUE (1): invalid argument";
        return ProbeResult::kInvalid;
      }
      return a;
    };
  }
};

TEST(PeerValidation, NullPeerGivesTheExactMessage) {
  auto bases = fake_bases(16, 1);
  bases[8] = nullptr;
  CountingProbe probe;
  const std::string m = test::error_text([&] { validate_peers(bases, 3, 0, probe.fn()); });
  EXPECT_EQ(m.rfind("Symmetric buffer of rank 8 (0x0) is not addressable from rank 3 (device 0). "
                    "symmoe addresses peers directly, so all 16 ranks must share one NVLink/P2P "
                    "domain (on SM90 that is a single node); it cannot span nodes over RDMA.",
                    0),
            0u)
      << m;
  EXPECT_NE(m.find("SYMMOE_SKIP_PEER_CHECK=1"), std::string::npos);
  EXPECT_EQ(probe.calls->load(), 0) << "the null check runs before any driver query";
}

TEST(PeerValidation, TooManyRanks) {
  const auto bases = fake_bases(73, 2);
  const std::string m = test::error_text([&] { validate_peers(bases, 0, 0, CountingProbe{}.fn()); });
  EXPECT_NE(m.find("73 ranks exceeds the peer table's limit of 72"), std::string::npos) << m;
  EXPECT_THROW(make_peer_table(bases, 0), Error);
}

TEST(PeerValidation, SeventyTwoRanksAreFine) {
  const auto bases = fake_bases(72, 3);
  EXPECT_NO_THROW(validate_peers(bases, 71, 0, CountingProbe{}.fn()));
}

TEST(PeerValidation, DuplicateBases) {
  auto bases = fake_bases(8, 4);
  bases[5] = bases[2];
  const std::string m = test::error_text([&] { validate_peers(bases, 0, 0, CountingProbe{}.fn()); });
  EXPECT_NE(m.find("Symmetric buffers of ranks 2 and 5 share the base 0x"), std::string::npos) << m;
}

TEST(PeerValidation, RankOutOfRange) {
  const auto bases = fake_bases(4, 5);
  EXPECT_NE(test::error_text([&] { validate_peers(bases, 4, 0, CountingProbe{}.fn()); })
                .find("rank 4 is outside the group of 4 ranks"),
            std::string::npos);
}

TEST(PeerValidation, OnlyAnUnambiguousInvalidValueFails) {
  auto bases = fake_bases(4, 6);
  CountingProbe unknown;
  unknown.answer = ProbeResult::kUnknown;  // e.g. another driver error: not a failure
  EXPECT_NO_THROW(validate_peers(bases, 0, 0, unknown.fn()));

  CountingProbe invalid;
  auto other = fake_bases(4, 7);
  invalid.invalid = other[2];
  const std::string m = test::error_text([&] { validate_peers(other, 1, 0, invalid.fn()); });
  EXPECT_NE(m.find("Symmetric buffer of rank 2 (0x"), std::string::npos) << m;
  EXPECT_NE(m.find("is not addressable from rank 1 (device 0): cuPointerGetAttribute returned "
                   "CUDA_ERROR_INVALID_VALUE"),
            std::string::npos)
      << m;
}

TEST(PeerValidation, SuccessIsCachedPerDeviceAndPointerSet) {
  const auto bases = fake_bases(8, 8);
  CountingProbe probe;
  const auto before = validation_counters();
  validate_peers(bases, 0, 0, probe.fn());
  EXPECT_EQ(probe.calls->load(), 8);
  for (int i = 0; i < 1000; ++i) validate_peers(bases, 0, 0, probe.fn());
  EXPECT_EQ(probe.calls->load(), 8) << "cached checks must not query the driver";
  EXPECT_GE(validation_counters().cache_hits - before.cache_hits, 1000u);

  validate_peers(bases, 0, /*device=*/1, probe.fn());  // another device: checked again
  EXPECT_EQ(probe.calls->load(), 16);
  validate_peers(bases, 1, 0, probe.fn());  // another rank's view: checked again
  EXPECT_EQ(probe.calls->load(), 24);

  forget_validated(bases, 0);
  validate_peers(bases, 0, 0, probe.fn());
  EXPECT_EQ(probe.calls->load(), 32) << "a forgotten set is checked again";
}

TEST(PeerValidation, FailuresAreNotCached) {
  auto bases = fake_bases(4, 9);
  bases[1] = nullptr;
  EXPECT_THROW(validate_peers(bases, 0, 0, CountingProbe{}.fn()), Error);
  EXPECT_THROW(validate_peers(bases, 0, 0, CountingProbe{}.fn()), Error);
}

TEST(PeerValidation, SkipSwitchDisablesTheCheck) {
  auto bases = fake_bases(4, 10);
  bases[1] = nullptr;
  test::EnvGuard skip("SYMMOE_SKIP_PEER_CHECK", "1");
  EXPECT_NO_THROW(validate_peers(bases, 0, 0, CountingProbe{}.fn()));
}

TEST(PeerValidation, PeerTableCarriesTheBases) {
  auto bases = fake_bases(5, 11);
  const device::PeerTable t = make_peer_table(bases, 2);
  EXPECT_EQ(t.rank, 2);
  EXPECT_EQ(t.num_ranks, 5);
  for (int r = 0; r < 5; ++r) {
    EXPECT_EQ(t.peer_base(r), reinterpret_cast<uint64_t>(bases[r]));
    auto* local = reinterpret_cast<char*>(bases[2]) + 77;
    EXPECT_EQ(t.map(local, r), reinterpret_cast<char*>(bases[r]) + 77);
  }
  for (int r = 5; r < device::kMaxRanks; ++r) EXPECT_EQ(t.offsets[r], 0);

  // A table with a null peer (as a kernel would receive it) is rejected before launch.
  bases[4] = nullptr;
  const device::PeerTable bad = make_peer_table(bases, 2);
  const std::string m = test::error_text([&] { validate_peer_table(bad, 0, CountingProbe{}.fn()); });
  EXPECT_NE(m.find("Symmetric buffer of rank 4 (0x0) is not addressable from rank 2"),
            std::string::npos) << m;
}

}  // namespace
}  // namespace symmoe::symm
