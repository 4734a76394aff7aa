// How many SMs a launch with a grid-wide barrier may use (seed report: reserve SMs so that a
// kernel on another stream cannot keep part of the grid from becoming resident).
#pragma once

namespace symmoe::runtime {

// A per-call budget. num_sms = 0 means "every SM of the device"; reserved_sms < 0 means the
// architecture's default (default_reserved_sms). Never part of any buffer's size, layout or
// cache key: buffers are sized from ranks, tokens and model shapes only.
struct SmBudget {
  int num_sms = 0;
  int reserved_sms = -1;
};

// SM100 and newer: 2 (clusters of 2 CTAs; one SM may be held by another stream).
// SM90: see NOTE [SM90 reserve] in sm_budget.cpp for the measurement behind the choice.
int default_reserved_sms(int cc_major);

struct SmPlan {
  int device_sms = 0;
  int requested = 0;  // num_sms after defaulting and clamping to the device
  int reserved = 0;   // after defaulting
  int usable = 0;     // what the launch may use
  bool even = false;  // rounded down to even (2-CTA clusters)
};

// usable = min(num_sms or device_sms, device_sms) - reserved, rounded down to even when
// `clusters_of_two` (always on SM100+). Throws symmoe::Error when nothing usable remains or an
// input is negative, naming the device's SM count and the budget.
SmPlan plan_sms(int device_sms, int cc_major, SmBudget budget, bool clusters_of_two = false);

// The budget in force on this thread: the innermost ScopedSmBudget, else SYMMOE_NUM_SMS and
// SYMMOE_RESERVED_SMS.
SmBudget current_sm_budget();

// Overrides the budget for the calling thread until destroyed (also when the scope is left by
// an exception); nests.
class ScopedSmBudget {
 public:
  explicit ScopedSmBudget(SmBudget budget);
  ~ScopedSmBudget();
  ScopedSmBudget(const ScopedSmBudget&) = delete;
  ScopedSmBudget& operator=(const ScopedSmBudget&) = delete;

 private:
  bool had_previous_;
  SmBudget previous_;
};

}  // namespace symmoe::runtime
