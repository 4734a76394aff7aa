// Runs under mpiexec -n 4: MPI group collectives and descriptor exchange (one host).
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include "symmoe/comm/group.hpp"
#include "symmoe/comm/mpi_group.hpp"

namespace symmoe::comm {
namespace {

std::unique_ptr<Group> g_group;

TEST(MpiGroup, AllGatherBarrierAndDescriptors) {
  Group& g = *g_group;
  ASSERT_EQ(g.kind(), "mpi");
  ASSERT_GE(g.size(), 2);
  for (int iter = 0; iter < 20; ++iter) {
    const int64_t mine = g.rank() * 1000 + iter;
    const auto all = g.all_gather_value(mine);
    for (int r = 0; r < g.size(); ++r) ASSERT_EQ(all[r], r * 1000 + iter);
    g.barrier();
  }
  const int fd = ::memfd_create("symmoe-mpi-test", MFD_CLOEXEC);
  ASSERT_GE(fd, 0);
  const int32_t tag = 7 + g.rank();
  ASSERT_EQ(::pwrite(fd, &tag, 4, 0), 4);
  auto fds = g.all_gather_fds(fd);
  ::close(fd);
  for (int r = 0; r < g.size(); ++r) {
    int32_t seen = -1;
    ASSERT_EQ(::pread(fds[r], &seen, 4, 0), 4);
    EXPECT_EQ(seen, 7 + r);
    ::close(fds[r]);
  }
}

}  // namespace
}  // namespace symmoe::comm

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  symmoe::comm::g_group = symmoe::comm::make_mpi_group(60);
  // Only rank 0 prints results; every rank's status decides the exit code.
  if (symmoe::comm::g_group->rank() != 0) {
    delete ::testing::UnitTest::GetInstance()->listeners().Release(
        ::testing::UnitTest::GetInstance()->listeners().default_result_printer());
  }
  const int rc = RUN_ALL_TESTS();
  const auto all = symmoe::comm::g_group->all_gather_value(rc);
  symmoe::comm::g_group.reset();
  for (int r : all) {
    if (r != 0) return 1;
  }
  return 0;
}
