// The rows of one expert, read from the caller's device-resident row tables and checked there:
// shared by every grouped GEMM kernel (CUTLASS argument builder, fp8 decode kernel). Private.
#pragma once

#include <cstdint>

#include "symmoe/device/status.cuh"
#include "sm90_grouped_gemm_launch.hpp"

namespace symmoe::gemm::sm90 {

struct GroupRows {
  int64_t row0;  // first row of the expert in act / out
  int count;     // rows; 0 when the tables are invalid (nothing is computed for that expert)
};

// Invalid row tables (negative count, count > max_m, a segment leaving the rows) are recorded
// in the status block when `report` (site "grouped_gemm_rows": tag = expert, seen = count,
// expected = limit, peer = offset or -1 for the masked layout) and give count 0, so no launch
// reads or writes outside the caller's tensors.
SYMMOE_DEVICE GroupRows resolve_group_rows(const GroupSource& src, int e, device::StatusBlock* status, bool report,
                                           const char* kernel) {
  const int64_t m = src.counts[e];
  int64_t row0 = 0, limit = 0;
  bool ok = m >= 0;
  if (src.offsets == nullptr) {
    row0 = static_cast<int64_t>(e) * src.max_m;
    limit = src.max_m;
    ok = ok && m <= src.max_m;
  } else {
    row0 = src.offsets[e];
    limit = src.total_rows;
    ok = ok && row0 >= 0 && row0 + m <= src.total_rows;
  }
  if (ok) return GroupRows{row0, static_cast<int>(m)};
  if (report) {
    const device::WaitContext ctx{status, 0, kernel};
    device::record_failure(ctx, device::StatusCode::kInvalidInput,
                           device::WaitSite{"grouped_gemm_rows", static_cast<uint32_t>(e), -1,
                                            src.offsets == nullptr ? -1 : static_cast<int32_t>(row0)},
                           static_cast<uint64_t>(limit), static_cast<uint64_t>(m));
  }
  return GroupRows{0, 0};
}

}  // namespace symmoe::gemm::sm90
