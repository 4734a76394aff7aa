#include <cstdio>

#include "symmoe/comm/thread_group.hpp"
#include "symmoe/symm/peer_table.hpp"
#include "symmoe/version.hpp"

int main() {
  int sum = 0;
  symmoe::comm::run_thread_ranks(3, {}, [&](symmoe::comm::Group& g) {
    const auto all = g.all_gather_value(g.rank() + 1);
    if (g.rank() == 0) sum = all[0] + all[1] + all[2];
  });
  std::printf("consumer of symmoe %s: all_gather sum %d\n", symmoe::kVersion, sum);
  return sum == 6 ? 0 : 1;
}
