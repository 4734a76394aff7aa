// What every benchmark of the symmoe tool shares: the median, and the same-run copy ceiling.
#pragma once

#include <vector>

namespace symmoe::cli {

double median(std::vector<double> v);

// A 1 GiB cudaMemcpyAsync device-to-device copy on the current device, counted as bytes read
// + bytes written per second (GB/s), median of `reps` after two warm-ups.
double d2d_copy_gbps(int reps);

}  // namespace symmoe::cli
