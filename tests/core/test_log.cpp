#include <gtest/gtest.h>

#include <vector>

#include "symmoe/core/log.hpp"

namespace symmoe {
namespace {

TEST(Log, SinkReceivesMessagesAtOrAboveTheLevel) {
  std::vector<std::pair<log::Level, std::string>> seen;
  auto previous = log::set_sink([&](log::Level l, const std::string& m) { seen.emplace_back(l, m); });
  const log::Level old_level = log::level();
  log::set_level(log::Level::kInfo);
  SYMMOE_LOG_INFO("handle ", 42);
  SYMMOE_LOG_DEBUG("hidden");
  SYMMOE_LOG_ERROR("bad");
  log::set_level(old_level);
  log::set_sink(previous);
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].first, log::Level::kInfo);
  EXPECT_EQ(seen[0].second, "handle 42");
  EXPECT_EQ(seen[1].first, log::Level::kError);
}

}  // namespace
}  // namespace symmoe
