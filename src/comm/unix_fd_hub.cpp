#include "unix_fd_hub.hpp"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include "socket_io.hpp"
#include "symmoe/comm/agreement.hpp"
#include "symmoe/core/error.hpp"

namespace symmoe::comm {

using ::symmoe::detail::concat;

namespace {

constexpr uint32_t kHelloMagic = 0x53594d46;  // "SYMF"

struct Hello {
  uint32_t magic;
  int32_t rank;
  uint64_t nonce;
};

// Fixed-size message that travels with every descriptor batch.
struct Slot {
  uint64_t seq;
  int32_t aborted;  // 1: `reason` explains why rank 0 gave up; no descriptors attached
  int32_t count;    // descriptors attached
  char reason[256];
};

sockaddr_un socket_name(uint64_t nonce, socklen_t* len) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const std::string name = concat("symmoe-fd-", std::hex, nonce);
  // Abstract namespace: leading NUL, no file to clean up.
  std::memcpy(addr.sun_path + 1, name.data(), name.size());
  *len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  return addr;
}

}  // namespace

UnixFdHub::UnixFdHub(Group& group, uint64_t nonce) : group_(group) {
  const int size = group.size();
  const int rank = group.rank();
  socklen_t len = 0;
  const sockaddr_un addr = socket_name(nonce, &len);
  conns_.assign(static_cast<size_t>(rank == 0 ? size : 1), -1);

  std::string error;
  if (rank == 0) {
    listen_fd_ = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (listen_fd_ < 0 || ::bind(listen_fd_, reinterpret_cast<const sockaddr*>(&addr), len) != 0 ||
        ::listen(listen_fd_, size) != 0) {
      error = concat("cannot listen on the descriptor socket: ", std::strerror(errno));
    }
  }
  require_all_ok(group, error, "opening rank 0's descriptor socket");

  const auto deadline = io::deadline_after(group.timeout().count());
  if (rank != 0) {
    for (;;) {
      int s = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
      if (s >= 0 && ::connect(s, reinterpret_cast<const sockaddr*>(&addr), len) == 0) {
        conns_[0] = s;
        break;
      }
      const int err = errno;
      if (s >= 0) ::close(s);
      if (io::Clock::now() >= deadline) {
        error = concat("cannot reach rank 0's descriptor socket: ", std::strerror(err),
                       ". Passing descriptors needs every rank on one host; across hosts use "
                       "SYMMOE_HANDLE_TYPE=fabric");
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (conns_[0] >= 0) {
      Hello hello{kHelloMagic, rank, nonce};
      std::string why;
      if (io::write_exact(conns_[0], &hello, sizeof(hello), deadline, &why) != io::IoStatus::kOk) {
        error = concat("cannot greet rank 0 on the descriptor socket: ", why);
      }
    }
  } else {
    int connected = 0;
    while (connected < size - 1 && error.empty()) {
      if (io::poll_readable({listen_fd_}, deadline) < 0) {
        std::string missing;
        for (int r = 1; r < size; ++r) {
          if (conns_[r] < 0) missing += concat(missing.empty() ? "" : ", ", r);
        }
        error = concat("ranks [", missing, "] did not connect to the descriptor socket within ",
                       group.timeout().count(), " s");
        break;
      }
      const int s = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (s < 0) continue;
      Hello hello{};
      std::string why;
      if (io::read_exact(s, &hello, sizeof(hello), deadline, &why) != io::IoStatus::kOk ||
          hello.magic != kHelloMagic || hello.nonce != nonce || hello.rank <= 0 ||
          hello.rank >= size || conns_[hello.rank] >= 0) {
        ::close(s);  // a stranger or a duplicate: not one of ours
        continue;
      }
      conns_[hello.rank] = s;
      ++connected;
    }
  }
  require_all_ok(group, error, "connecting the descriptor exchange");
}

UnixFdHub::~UnixFdHub() {
  for (int s : conns_) {
    if (s >= 0) ::close(s);
  }
  if (listen_fd_ >= 0) ::close(listen_fd_);
}

std::vector<int> UnixFdHub::exchange(int fd) {
  SYMMOE_CHECK(fd >= 0, "all_gather_fds on rank ", group_.rank(), " got an invalid descriptor ",
               fd);
  return group_.rank() == 0 ? exchange_at_root(fd) : exchange_at_leaf(fd);
}

std::vector<int> UnixFdHub::exchange_at_root(int fd) {
  const int size = group_.size();
  const uint64_t seq = seq_++;
  std::vector<int> fds(static_cast<size_t>(size), -1);
  fds[0] = ::dup(fd);
  auto close_all = [&] {
    for (int& f : fds) {
      if (f >= 0) ::close(f);
      f = -1;
    }
  };
  auto fail = [&](const std::string& why) {
    close_all();
    Slot abort{};
    abort.seq = seq;
    abort.aborted = 1;
    std::strncpy(abort.reason, why.c_str(), sizeof(abort.reason) - 1);
    const auto d = io::deadline_after(1.0);
    for (int r = 1; r < size; ++r) {
      std::string ignored;
      if (conns_[r] >= 0) io::send_with_fds(conns_[r], &abort, sizeof(abort), {}, d, &ignored);
    }
    SYMMOE_FAIL("descriptor exchange #", seq, " (group of ", size, "): ", why);
  };

  const auto deadline = io::deadline_after(group_.timeout().count());
  std::vector<int> pending;
  for (int r = 1; r < size; ++r) pending.push_back(r);
  while (!pending.empty()) {
    std::vector<int> socks;
    for (int r : pending) socks.push_back(conns_[r]);
    const int idx = io::poll_readable(socks, deadline);
    if (idx < 0) {
      std::string missing;
      for (int r : pending) missing += concat(missing.empty() ? "" : ", ", r);
      fail(concat("ranks [", missing, "] sent no descriptor within ", group_.timeout().count(),
                  " s (bound: SYMMOE_BOOTSTRAP_TIMEOUT_S)"));
    }
    const int r = pending[idx];
    Slot slot{};
    std::vector<int> got;
    std::string why;
    const io::IoStatus st =
        io::recv_with_fds(conns_[r], &slot, sizeof(slot), 1, &got, deadline, &why);
    if (st != io::IoStatus::kOk) {
      fail(concat("rank ", r, ": ", io::io_status_name(st), why.empty() ? "" : ": ", why));
    }
    if (slot.seq != seq || got.size() != 1) {
      for (int g : got) ::close(g);
      fail(concat("rank ", r, " sent exchange #", slot.seq, " with ", got.size(),
                  " descriptors; expected #", seq, " with 1"));
    }
    fds[r] = got[0];
    pending.erase(pending.begin() + idx);
  }
  Slot result{};
  result.seq = seq;
  result.count = size;
  const auto send_deadline = io::deadline_after(group_.timeout().count());
  for (int r = 1; r < size; ++r) {
    std::string why;
    const io::IoStatus st =
        io::send_with_fds(conns_[r], &result, sizeof(result), fds, send_deadline, &why);
    if (st != io::IoStatus::kOk) {
      fail(concat("cannot send descriptors to rank ", r, ": ", io::io_status_name(st), " ", why));
    }
  }
  return fds;
}

std::vector<int> UnixFdHub::exchange_at_leaf(int fd) {
  const int size = group_.size();
  const int rank = group_.rank();
  const uint64_t seq = seq_++;
  // One grace second longer than rank 0, whose verdict then arrives first.
  const auto deadline = io::deadline_after(group_.timeout().count() + 1.0);
  Slot mine{};
  mine.seq = seq;
  mine.count = 1;
  std::string why;
  io::IoStatus st = io::send_with_fds(conns_[0], &mine, sizeof(mine), {fd}, deadline, &why);
  if (st != io::IoStatus::kOk) {
    SYMMOE_FAIL("descriptor exchange #", seq, " on rank ", rank, ": cannot send to rank 0: ",
                io::io_status_name(st), " ", why);
  }
  Slot result{};
  std::vector<int> fds;
  st = io::recv_with_fds(conns_[0], &result, sizeof(result), static_cast<size_t>(size), &fds,
                         deadline, &why);
  if (st != io::IoStatus::kOk) {
    SYMMOE_FAIL("descriptor exchange #", seq, " on rank ", rank, ": no answer from rank 0: ",
                io::io_status_name(st), " ", why);
  }
  if (result.aborted != 0) {
    for (int f : fds) ::close(f);
    SYMMOE_FAIL("descriptor exchange #", seq, " on rank ", rank, " failed at rank 0: ",
                std::string(result.reason));
  }
  if (result.seq != seq || fds.size() != static_cast<size_t>(size)) {
    for (int f : fds) ::close(f);
    SYMMOE_FAIL("descriptor exchange #", seq, " on rank ", rank, ": rank 0 answered #",
                result.seq, " with ", fds.size(), " descriptors; expected ", size);
  }
  return fds;
}

}  // namespace symmoe::comm
