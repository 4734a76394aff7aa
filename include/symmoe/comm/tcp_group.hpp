// Ranks as processes connected through a TCP rendezvous served by rank 0 (torchrun style).
#pragma once

#include <memory>
#include <string>

#include "symmoe/comm/group.hpp"

namespace symmoe::comm {

struct TcpGroupConfig {
  int rank = 0;
  int size = 1;
  int local_rank = 0;
  std::string master_addr = "127.0.0.1";
  int master_port = 29500;
  double timeout_s = 0;  // <= 0: SYMMOE_BOOTSTRAP_TIMEOUT_S

  // RANK, WORLD_SIZE, LOCAL_RANK (default RANK), MASTER_ADDR, MASTER_PORT; a missing or
  // malformed variable is an error that names it.
  static TcpGroupConfig from_env();
};

// Blocks until every rank has connected (bounded by the timeout; the error names the ranks
// that never arrived).
std::unique_ptr<Group> make_tcp_group(const TcpGroupConfig& config);

}  // namespace symmoe::comm
