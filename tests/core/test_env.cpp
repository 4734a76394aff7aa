#include <gtest/gtest.h>

#include <algorithm>
#include <functional>

#include "support/env_guard.hpp"
#include "symmoe/core/env.hpp"
#include "support/error_text.hpp"
#include "symmoe/core/error.hpp"

namespace symmoe {
namespace {

using test::EnvGuard;

TEST(Env, RegistryIsSortedAndTyped) {
  const auto& vars = env::registry();
  ASSERT_FALSE(vars.empty());
  for (size_t i = 1; i < vars.size(); ++i) EXPECT_LT(vars[i - 1].name, vars[i].name);
  for (const auto& v : vars) {
    EXPECT_EQ(v.name.rfind("SYMMOE_", 0), 0u) << v.name;
    EXPECT_FALSE(v.description.empty()) << v.name;
  }
}

TEST(Env, DefaultsApplyWhenUnset) {
  EnvGuard a("SYMMOE_SKIP_PEER_CHECK", std::nullopt);
  EnvGuard b("SYMMOE_HANDLE_TYPE", std::nullopt);
  EnvGuard c("SYMMOE_BOOTSTRAP_TIMEOUT_S", std::nullopt);
  EXPECT_FALSE(env::get_bool("SYMMOE_SKIP_PEER_CHECK"));
  EXPECT_EQ(env::get_string("SYMMOE_HANDLE_TYPE"), "auto");
  EXPECT_DOUBLE_EQ(env::get_float("SYMMOE_BOOTSTRAP_TIMEOUT_S"), 120.0);
}

TEST(Env, BoolSpellings) {
  for (const char* yes : {"1", "true", "TRUE", "yes", "on", " On "}) {
    EnvGuard g("SYMMOE_SKIP_PEER_CHECK", yes);
    EXPECT_TRUE(env::get_bool("SYMMOE_SKIP_PEER_CHECK")) << yes;
  }
  for (const char* no : {"0", "false", "No", "off"}) {
    EnvGuard g("SYMMOE_SKIP_PEER_CHECK", no);
    EXPECT_FALSE(env::get_bool("SYMMOE_SKIP_PEER_CHECK")) << no;
  }
}

TEST(Env, BadBoolIsAnErrorNamingVariableAndValue) {
  EnvGuard g("SYMMOE_SKIP_PEER_CHECK", "maybe");
  const std::string m = test::error_text([] { env::get_bool("SYMMOE_SKIP_PEER_CHECK"); });
  EXPECT_NE(m.find("SYMMOE_SKIP_PEER_CHECK='maybe' is not a valid bool"), std::string::npos) << m;
}

TEST(Env, FloatParsingAndRange) {
  {
    EnvGuard g("SYMMOE_BOOTSTRAP_TIMEOUT_S", "2.5");
    EXPECT_DOUBLE_EQ(env::get_float("SYMMOE_BOOTSTRAP_TIMEOUT_S"), 2.5);
  }
  {
    EnvGuard g("SYMMOE_BOOTSTRAP_TIMEOUT_S", "ten");
    const std::string m = test::error_text([] { env::get_float("SYMMOE_BOOTSTRAP_TIMEOUT_S"); });
    EXPECT_NE(m.find("SYMMOE_BOOTSTRAP_TIMEOUT_S='ten' is not a valid finite number"),
              std::string::npos) << m;
  }
  {
    EnvGuard g("SYMMOE_BOOTSTRAP_TIMEOUT_S", "-1");
    const std::string m = test::error_text([] { env::get_float("SYMMOE_BOOTSTRAP_TIMEOUT_S"); });
    EXPECT_NE(m.find("SYMMOE_BOOTSTRAP_TIMEOUT_S=-1 is out of range"), std::string::npos) << m;
  }
  {
    EnvGuard g("SYMMOE_BOOTSTRAP_TIMEOUT_S", "nan");
    EXPECT_THROW(env::get_float("SYMMOE_BOOTSTRAP_TIMEOUT_S"), Error);
  }
}

TEST(Env, IntParsing) {
  env::Var v{"SYMMOE_TEST_INT", env::Type::kInt, "3", "test", {}, -2, 10};
  EXPECT_EQ(env::parse_int(v, " 7 "), 7);
  EXPECT_EQ(env::parse_int(v, "-2"), -2);
  EXPECT_THROW(env::parse_int(v, "11"), Error);
  EXPECT_THROW(env::parse_int(v, "4x"), Error);
  EXPECT_THROW(env::parse_int(v, ""), Error);
  EXPECT_THROW(env::parse_int(v, "99999999999999999999999"), Error);
}

TEST(Env, ChoiceIsCaseInsensitiveAndChecked) {
  {
    EnvGuard g("SYMMOE_HANDLE_TYPE", "FD");
    EXPECT_EQ(env::get_string("SYMMOE_HANDLE_TYPE"), "fd");
  }
  EnvGuard g("SYMMOE_HANDLE_TYPE", "ipc");
  const std::string m = test::error_text([] { env::get_string("SYMMOE_HANDLE_TYPE"); });
  EXPECT_NE(m.find("SYMMOE_HANDLE_TYPE='ipc' is not one of: auto, fd, fabric"), std::string::npos)
      << m;
}

TEST(Env, UnregisteredNameIsAnError) {
  const std::string m = test::error_text([] { env::get_bool("SYMMOE_NOT_A_VARIABLE"); });
  EXPECT_NE(m.find("SYMMOE_NOT_A_VARIABLE is not in the SYMMOE_* registry"), std::string::npos)
      << m;
}

TEST(Env, WrongAccessorIsAnError) {
  const std::string m = test::error_text([] { env::get_int("SYMMOE_HANDLE_TYPE"); });
  EXPECT_NE(m.find("SYMMOE_HANDLE_TYPE is registered as choice"), std::string::npos) << m;
}

TEST(Env, UnknownVariablesAreReportedAsTypos) {
  EnvGuard g("SYMMOE_SKIP_PEER_CHEKC", "1");
  const auto unknown = env::unknown_in_environment();
  EXPECT_NE(std::find(unknown.begin(), unknown.end(), "SYMMOE_SKIP_PEER_CHEKC"), unknown.end());
  EXPECT_NE(env::describe().find("SYMMOE_SKIP_PEER_CHEKC is set but is not a symmoe variable"),
            std::string::npos);
}

TEST(Env, DescribeListsEveryVariableWithItsValue) {
  EnvGuard g("SYMMOE_LOG_LEVEL", "debug");
  const std::string table = env::describe();
  for (const auto& v : env::registry()) EXPECT_NE(table.find(v.name), std::string::npos) << v.name;
  EXPECT_NE(table.find("debug"), std::string::npos);
}

}  // namespace
}  // namespace symmoe
