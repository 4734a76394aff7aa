// Host side of the status block: the text a failed kernel turns into (no GPU needed).
#include <gtest/gtest.h>

#include <cstring>
#include <set>

#include "symmoe/runtime/device_runtime.hpp"
#include "symmoe/runtime/kernel_registry.hpp"

namespace symmoe::runtime {
namespace {

device::StatusBlock timeout_record(const char* site, int rank, int peer, uint64_t expected,
                                   uint64_t seen) {
  device::StatusBlock s{};
  s.code = static_cast<uint32_t>(device::StatusCode::kTimeout);
  s.abort = 1;
  s.tag = 5;
  s.rank = rank;
  s.peer = peer;
  s.sm = 17;
  s.thread = 3;
  s.expected = expected;
  s.seen = seen;
  s.waited_ns = 2'000'100'000;
  s.timeout_ns = 2'000'000'000;
  std::strncpy(s.site, site, sizeof(s.site) - 1);
  std::strncpy(s.kernel, "cross_rank_barrier_loop", sizeof(s.kernel) - 1);
  return s;
}

TEST(DeviceStatus, BarrierTimeoutNamesRankPeerAndValues) {
  const std::string m = describe_status(timeout_record("cross_rank_barrier", 2, 3, 12, 11));
  EXPECT_NE(m.find("kernel cross_rank_barrier_loop on rank 2 (SM 17, block 0, thread 3) timed "
                   "out after 2.0001 s in cross_rank_barrier (tag 5) for rank 3: expected its "
                   "epoch >= 12, saw 11"),
            std::string::npos) << m;
  EXPECT_NE(m.find("SYMMOE_WAIT_TIMEOUT_S"), std::string::npos);
}

TEST(DeviceStatus, GridSyncTimeoutCountsBlocks) {
  const std::string m = describe_status(timeout_record("grid_sync", 0, -1, 132, 131));
  EXPECT_NE(m.find("grid_sync (tag 5): 131 of 132 blocks arrived"), std::string::npos) << m;
  EXPECT_NE(m.find("SYMMOE_RESERVED_SMS"), std::string::npos) << m;
}

TEST(DeviceStatus, GroupedGemmRowTablesNameTheExpert) {
  device::StatusBlock s = timeout_record("grouped_gemm_rows", -1, -1, 64, 65);
  s.code = static_cast<uint32_t>(device::StatusCode::kInvalidInput);
  s.tag = 3;
  EXPECT_EQ(describe_status(s), "grouped GEMM: expert 3 has counts = 65, outside [0, max_m = 64]; that "
                                "expert's output was not computed");
  s.peer = 40;  // contiguous layout: the segment's offset
  s.expected = 100;
  EXPECT_EQ(describe_status(s), "grouped GEMM: expert 3 has counts = 65 rows from offset 40, which leaves "
                                "the 100 rows of the activations; that expert's output was not computed");
}

TEST(DeviceStatus, OkIsEmpty) {
  device::StatusBlock s{};
  EXPECT_EQ(describe_status(s), "");
}

TEST(DeviceStatus, TimeoutFromEnvironmentOrArgument) {
  EXPECT_EQ(wait_timeout_ns(2.5), 2'500'000'000ull);
  EXPECT_GT(wait_timeout_ns(0), 0ull);
}

TEST(KernelRegistry, ListsEveryKernelOnce) {
  const auto kernels = all_kernels();
  ASSERT_GE(kernels.size(), 7u);
  std::set<std::string> names;
  std::set<const void*> fns;
  for (const auto& k : kernels) {
    names.insert(k.name);
    fns.insert(k.function);
    EXPECT_NE(k.function, nullptr) << k.name;
  }
  EXPECT_EQ(names.size(), kernels.size());
  EXPECT_EQ(fns.size(), kernels.size());
}

}  // namespace
}  // namespace symmoe::runtime
