#include <gtest/gtest.h>

#include "symmoe/comm/thread_group.hpp"
#include "symmoe/core/error.hpp"
#include "symmoe/symm/buffer_config.hpp"
#include "symmoe/symm/handle_type.hpp"

namespace symmoe::symm {
namespace {

TEST(BufferConfig, DigestDependsOnNameAndEveryParameter) {
  const uint64_t a[] = {7168, 256, 8};
  const uint64_t b[] = {7168, 256, 9};
  const uint64_t c[] = {7168, 256};
  EXPECT_EQ(layout_digest("ep", a), layout_digest("ep", a));
  EXPECT_NE(layout_digest("ep", a), layout_digest("ep", b));
  EXPECT_NE(layout_digest("ep", a), layout_digest("ep", c));
  EXPECT_NE(layout_digest("ep", a), layout_digest("moe", a));
}

TEST(BufferConfig, MismatchNamesBothRanksAndBothRecords) {
  std::vector<BufferConfig> all;
  for (int r = 0; r < 4; ++r) {
    all.push_back(make_buffer_config(r, 4, r == 2 ? 2048 : 1024, "ep", 0xabc, 0));
  }
  for (int me = 0; me < 4; ++me) {
    try {
      check_config_agreement(all, me);
      FAIL() << "expected a mismatch";
    } catch (const Error& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find("configuration differs between ranks: rank 0 has {layout 'ep', "
                       "bytes_per_rank 1024"),
                std::string::npos) << m;
      EXPECT_NE(m.find("but rank 2 has {layout 'ep', bytes_per_rank 2048"), std::string::npos) << m;
    }
  }
}

TEST(BufferConfig, DigestAndHandleMismatchesAreCaught) {
  std::vector<BufferConfig> digest = {make_buffer_config(0, 2, 64, "ep", 1, 0),
                                      make_buffer_config(1, 2, 64, "ep", 2, 0)};
  EXPECT_THROW(check_config_agreement(digest, 0), Error);
  std::vector<BufferConfig> handle = {make_buffer_config(0, 2, 64, "ep", 1, 0),
                                      make_buffer_config(1, 2, 64, "ep", 1, 1)};
  EXPECT_THROW(check_config_agreement(handle, 1), Error);
  std::vector<BufferConfig> same = {make_buffer_config(0, 2, 64, "ep", 1, 1),
                                    make_buffer_config(1, 2, 64, "ep", 1, 1)};
  EXPECT_NO_THROW(check_config_agreement(same, 1));
}

TEST(BufferConfig, ForeignRecordIsRejected) {
  std::vector<BufferConfig> all = {make_buffer_config(0, 2, 64, "ep", 1, 0), BufferConfig{}};
  all[1].rank = 1;
  try {
    check_config_agreement(all, 0);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("rank 1 sent a configuration record with magic 0x0"),
              std::string::npos) << e.what();
  }
}

TEST(BufferConfig, AgreementOverAGroupFailsOnEveryRank) {
  std::vector<std::string> seen(3);
  comm::run_thread_ranks(3, {}, [&](comm::Group& g) {
    const uint64_t params[] = {static_cast<uint64_t>(g.rank() == 1 ? 5 : 4)};
    try {
      agree_on_config(g, make_buffer_config(g.rank(), 3, 4096, "raw", layout_digest("raw", params), 0));
    } catch (const Error& e) {
      seen[g.rank()] = e.what();
    }
  });
  for (const auto& m : seen) {
    EXPECT_NE(m.find("rank 0 has {layout 'raw', bytes_per_rank 4096, layout digest 0x"),
              std::string::npos) << m;
    EXPECT_NE(m.find("but rank 1 has"), std::string::npos) << m;
  }
}

TEST(BufferConfig, LongLayoutNameIsRejected) {
  EXPECT_THROW(make_buffer_config(0, 1, 1, std::string(60, 'x'), 0, 0), Error);
}

TEST(HandleType, ParseAndName) {
  EXPECT_EQ(parse_handle_type("auto"), HandleType::kAuto);
  EXPECT_EQ(parse_handle_type("fd"), HandleType::kFd);
  EXPECT_EQ(parse_handle_type("fabric"), HandleType::kFabric);
  EXPECT_STREQ(handle_type_name(HandleType::kFabric), "fabric");
  EXPECT_THROW(parse_handle_type("ipc"), Error);
}

}  // namespace
}  // namespace symmoe::symm
