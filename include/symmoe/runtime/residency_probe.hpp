// Does a grid-synchronized launch survive another stream holding SMs? Reproduces the report
// behind the SM budget: a side stream keeps `held_sms` SMs busy for `hold_s` seconds while a
// persistent, cooperative grid (one block per SM) launches under `budget`.
#pragma once

#include <string>

#include "symmoe/runtime/device_runtime.hpp"
#include "symmoe/runtime/sm_budget.hpp"

namespace symmoe::runtime {

struct ResidencyReport {
  int grid = 0;                 // blocks launched (one per usable SM)
  int usable_sms = 0;
  double grid_ms = 0;           // launch -> grid finished (device events)
  bool side_still_running = false;  // the side kernel had not finished when the grid did
  std::string failure;          // the grid's timeout text, if it gave up
};

// Uses its own streams; leaves `rt` ready for new work.
ResidencyReport probe_residency(DeviceRuntime& rt, SmBudget budget, int held_sms, double hold_s,
                                double timeout_s, int iterations = 100);

}  // namespace symmoe::runtime
