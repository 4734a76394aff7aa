#include <gtest/gtest.h>

#include <functional>

#include "support/env_guard.hpp"
#include "symmoe/core/error.hpp"
#include "symmoe/runtime/sm_budget.hpp"
#include "symmoe/symm/buffer_config.hpp"

namespace symmoe::runtime {
namespace {

constexpr int kH200Sms = 132;
constexpr int kB200Sms = 148;

TEST(SmBudget, ReserveZeroUsesEverySm) {
  const SmPlan p = plan_sms(kH200Sms, 9, {0, 0});
  EXPECT_EQ(p.usable, kH200Sms);
  EXPECT_EQ(p.reserved, 0);
  EXPECT_FALSE(p.even);
}

TEST(SmBudget, ArchitectureDefaults) {
  EXPECT_EQ(default_reserved_sms(9), 2);
  EXPECT_EQ(default_reserved_sms(10), 2);
  EXPECT_EQ(plan_sms(kH200Sms, 9, {0, -1}).usable, 130);
  EXPECT_EQ(plan_sms(kB200Sms, 10, {0, -1}).usable, 146);
}

TEST(SmBudget, OddReserveRoundsDownToEvenOnlyForClusters) {
  EXPECT_EQ(plan_sms(kH200Sms, 9, {0, 3}).usable, 129);          // SM90, no clusters
  EXPECT_EQ(plan_sms(kH200Sms, 9, {0, 3}, true).usable, 128);    // SM90 with 2-CTA clusters
  const SmPlan b = plan_sms(kB200Sms, 10, {0, 3});                // SM100 always even
  EXPECT_EQ(b.usable, 144);
  EXPECT_TRUE(b.even);
  EXPECT_EQ(plan_sms(kB200Sms, 10, {0, 2}).usable, 146);
}

TEST(SmBudget, NumSmsIsClampedToTheDevice) {
  EXPECT_EQ(plan_sms(kH200Sms, 9, {1000, 0}).usable, kH200Sms);
  EXPECT_EQ(plan_sms(kH200Sms, 9, {64, 2}).usable, 62);
  EXPECT_EQ(plan_sms(kH200Sms, 9, {64, 2}).requested, 64);
}

TEST(SmBudget, ReserveLargerThanTheDeviceIsAnError) {
  try {
    plan_sms(kH200Sms, 9, {0, 200});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("SM budget leaves -68 of 132 SMs"), std::string::npos) << m;
    EXPECT_NE(m.find("reserved 200"), std::string::npos) << m;
  }
  EXPECT_THROW(plan_sms(kH200Sms, 9, {0, 132}), Error);
  EXPECT_NO_THROW(plan_sms(kH200Sms, 9, {0, 131}));
  EXPECT_THROW(plan_sms(kB200Sms, 10, {0, 147}), Error);  // one SM left: no 2-CTA cluster fits
  EXPECT_THROW(plan_sms(kH200Sms, 9, {-1, 0}), Error);
  EXPECT_THROW(plan_sms(0, 9, {0, 0}), Error);
}

TEST(SmBudget, ScopedOverrideRestoresEvenWhenTheCallThrows) {
  test::EnvGuard n("SYMMOE_NUM_SMS", std::nullopt);
  test::EnvGuard r("SYMMOE_RESERVED_SMS", std::nullopt);
  EXPECT_EQ(current_sm_budget().reserved_sms, -1);
  auto fused_call = [] {
    ScopedSmBudget scope({0, 6});
    EXPECT_EQ(current_sm_budget().reserved_sms, 6);
    SYMMOE_FAIL("launch setup failed");
  };
  EXPECT_THROW(fused_call(), Error);
  EXPECT_EQ(current_sm_budget().reserved_sms, -1) << "the override must not leak";
  {
    ScopedSmBudget outer({100, 4});
    {
      ScopedSmBudget inner({0, 0});
      EXPECT_EQ(current_sm_budget().num_sms, 0);
      EXPECT_EQ(current_sm_budget().reserved_sms, 0);
    }
    EXPECT_EQ(current_sm_budget().num_sms, 100);
    EXPECT_EQ(current_sm_budget().reserved_sms, 4);
  }
  EXPECT_EQ(current_sm_budget().num_sms, 0);
}

TEST(SmBudget, EnvironmentSetsTheProcessDefault) {
  test::EnvGuard n("SYMMOE_NUM_SMS", "96");
  test::EnvGuard r("SYMMOE_RESERVED_SMS", "0");
  EXPECT_EQ(current_sm_budget().num_sms, 96);
  EXPECT_EQ(current_sm_budget().reserved_sms, 0);
  test::EnvGuard bad("SYMMOE_RESERVED_SMS", "-5");
  EXPECT_THROW(current_sm_budget(), Error);
}

TEST(SmBudget, BufferConfigurationDoesNotDependOnTheBudget) {
  symm::BufferConfig a, b;
  {
    ScopedSmBudget s({0, 0});
    a = symm::make_buffer_config(0, 8, 1 << 20, "ep", 7, 0);
  }
  {
    ScopedSmBudget s({64, 10});
    b = symm::make_buffer_config(0, 8, 1 << 20, "ep", 7, 0);
  }
  EXPECT_EQ(std::memcmp(&a, &b, sizeof(a)), 0);
}

}  // namespace
}  // namespace symmoe::runtime
