// N ranks as threads of one process ("virtual ranks"); several may share one GPU.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "symmoe/comm/group.hpp"

namespace symmoe::comm {

// Shared state of an in-process group. Each rank's thread calls join(rank) once and uses the
// returned Group; abort() lets a failing rank release every peer waiting on it at once.
class ThreadHub {
 public:
  explicit ThreadHub(int size);
  ~ThreadHub();
  ThreadHub(const ThreadHub&) = delete;
  ThreadHub& operator=(const ThreadHub&) = delete;

  int size() const;
  std::unique_ptr<Group> join(int rank);
  void abort(int rank, const std::string& reason);

  struct State;

 private:
  std::shared_ptr<State> state_;
};

// Runs fn on `size` threads, one rank each. If devices is non-empty, rank r first makes
// devices[r % devices.size()] current. A rank that throws aborts the hub (its peers fail at
// once); after every thread ends, the first failure is rethrown as "rank r: <message>".
// `timeout` <= 0 keeps the default bootstrap timeout. Raises the process's soft limit on open
// files to its hard limit (N ranks exchanging descriptors hold up to N * N at once).
void run_thread_ranks(int size, const std::vector<int>& devices,
                      const std::function<void(Group&)>& fn, double timeout_s = 0);

}  // namespace symmoe::comm
