// Group: the bootstrap collectives every rank of an expert-parallel group shares.
//
// Used only off the data path (buffer creation, configuration checks, fd exchange); kernels
// never wait on it. Every call is bounded by timeout() and fails with a symmoe::Error that
// names the missing or failed rank, the collective and its sequence number.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

namespace symmoe::comm {

class Group {
 public:
  virtual ~Group() = default;

  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Rank among the processes of this host (device selection); equals rank() for thread groups.
  virtual int local_rank() const = 0;
  // "threads", "tcp", "mpi": how ranks are connected.
  virtual std::string kind() const = 0;

  // recv holds size() * bytes, rank-major; every rank must pass the same `bytes`.
  virtual void all_gather(const void* send, void* recv, size_t bytes) = 0;
  virtual void barrier() = 0;

  // Every rank contributes one open file descriptor (not consumed). Returns size() descriptors,
  // rank-major, each owned (to be closed) by the caller; the caller's own entry is a duplicate.
  // Needs every rank on one host.
  virtual std::vector<int> all_gather_fds(int fd) = 0;

  std::chrono::duration<double> timeout() const { return timeout_; }
  void set_timeout(std::chrono::duration<double> timeout) { timeout_ = timeout; }

  template <class T>
  std::vector<T> all_gather_value(const T& value) {
    static_assert(std::is_trivially_copyable_v<T>, "all_gather_value needs a trivially copyable T");
    std::vector<T> out(static_cast<size_t>(size()));
    all_gather(&value, out.data(), sizeof(T));
    return out;
  }

 protected:
  Group();

 private:
  std::chrono::duration<double> timeout_;  // from SYMMOE_BOOTSTRAP_TIMEOUT_S
};

// The group this process belongs to, from its environment:
//   OMPI_COMM_WORLD_* (mpirun)   -> MPI group (when symmoe was built with MPI)
//   RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT (torchrun style) -> TCP rendezvous group
//   neither                      -> a group of one rank
std::unique_ptr<Group> group_from_env();

}  // namespace symmoe::comm
