#include "symmoe/runtime/sm_budget.hpp"

#include "symmoe/core/env.hpp"
#include "symmoe/core/error.hpp"

namespace symmoe::runtime {
namespace {

thread_local bool t_has_override = false;
thread_local SmBudget t_override;

}  // namespace

// NOTE [SM90 reserve]: SM100+ reserves 2 SMs (clusters of 2 CTAs: one SM held by another
// stream must not keep a cluster from becoming resident). SM90 reserves 2 as well, from the
// H200 measurement (bench/RESULTS.md, "residency"): a cooperative one-block-per-SM grid
// launched while a side stream held 2 SMs did not deadlock but was held back until the whole
// grid fit, 1950 ms after launch, i.e. until the side kernel ended; with 2 SMs reserved the
// same grid finished in 0.26 ms while the side kernel still ran. 2 of 132 SMs (1.5 %) is the
// price; SYMMOE_RESERVED_SMS=0 takes every SM back where nothing else runs beside.
int default_reserved_sms(int cc_major) {
  SYMMOE_CHECK(cc_major >= 1, "compute capability major ", cc_major, " is not a GPU");
  return 2;
}

SmPlan plan_sms(int device_sms, int cc_major, SmBudget budget, bool clusters_of_two) {
  SYMMOE_CHECK(device_sms >= 1, "the device reports ", device_sms, " SMs");
  SYMMOE_CHECK(budget.num_sms >= 0, "num_sms ", budget.num_sms,
               " is negative (0 means every SM of the device)");
  SmPlan plan;
  plan.device_sms = device_sms;
  plan.requested = budget.num_sms == 0 ? device_sms : std::min(budget.num_sms, device_sms);
  plan.reserved = budget.reserved_sms < 0 ? default_reserved_sms(cc_major) : budget.reserved_sms;
  plan.even = clusters_of_two || cc_major >= 10;
  plan.usable = plan.requested - plan.reserved;
  if (plan.even) plan.usable -= plan.usable % 2;
  const int minimum = plan.even ? 2 : 1;
  SYMMOE_CHECK(plan.usable >= minimum, "SM budget leaves ", plan.usable, " of ", device_sms,
               " SMs (num_sms ", budget.num_sms, ", reserved ", plan.reserved,
               plan.even ? ", rounded down to even for 2-CTA clusters" : "",
               "); a launch needs at least ", minimum,
               ". Lower SYMMOE_RESERVED_SMS or raise SYMMOE_NUM_SMS");
  return plan;
}

SmBudget current_sm_budget() {
  if (t_has_override) return t_override;
  SmBudget b;
  b.num_sms = static_cast<int>(env::get_int("SYMMOE_NUM_SMS"));
  b.reserved_sms = static_cast<int>(env::get_int("SYMMOE_RESERVED_SMS"));
  return b;
}

ScopedSmBudget::ScopedSmBudget(SmBudget budget)
    : had_previous_(t_has_override), previous_(t_override) {
  t_has_override = true;
  t_override = budget;
}

ScopedSmBudget::~ScopedSmBudget() {
  t_has_override = had_previous_;
  t_override = previous_;
}

}  // namespace symmoe::runtime
