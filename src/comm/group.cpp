#include "symmoe/comm/group.hpp"

#include <cstdlib>

#include "symmoe/comm/mpi_group.hpp"
#include "symmoe/comm/tcp_group.hpp"
#include "symmoe/comm/thread_group.hpp"
#include "symmoe/core/env.hpp"

namespace symmoe::comm {

Group::Group() : timeout_(env::get_float("SYMMOE_BOOTSTRAP_TIMEOUT_S")) {}

namespace {

// A group of one rank, used when no launcher environment is present: the hub lives as long
// as its only member.
class SingleGroup final : public Group {
 public:
  SingleGroup() : hub_(std::make_unique<ThreadHub>(1)), member_(hub_->join(0)) {}
  int rank() const override { return 0; }
  int size() const override { return 1; }
  int local_rank() const override { return 0; }
  std::string kind() const override { return "single"; }
  void all_gather(const void* send, void* recv, size_t bytes) override {
    member_->all_gather(send, recv, bytes);
  }
  void barrier() override {}
  std::vector<int> all_gather_fds(int fd) override { return member_->all_gather_fds(fd); }

 private:
  std::unique_ptr<ThreadHub> hub_;
  std::unique_ptr<Group> member_;
};

}  // namespace

std::unique_ptr<Group> group_from_env() {
  if (std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr && mpi_available()) return make_mpi_group();
  if (std::getenv("WORLD_SIZE") != nullptr && std::getenv("RANK") != nullptr) {
    return make_tcp_group(TcpGroupConfig::from_env());
  }
  return std::make_unique<SingleGroup>();
}

}  // namespace symmoe::comm
