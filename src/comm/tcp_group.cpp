#include "symmoe/comm/tcp_group.hpp"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <random>
#include <thread>

#include "frame_io.hpp"
#include "star_group.hpp"
#include "symmoe/core/env.hpp"
#include "symmoe/core/error.hpp"

namespace symmoe::comm {

using ::symmoe::detail::concat;

namespace {

struct HelloPayload {
  int32_t rank;
  int32_t size;
};

int env_int(const char* name, bool required, int fallback) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') {
    SYMMOE_CHECK(!required, "the process group needs environment variable ", name,
                 " (torchrun style: RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT)");
    return fallback;
  }
  char* end = nullptr;
  errno = 0;
  const long parsed = std::strtol(value, &end, 10);
  SYMMOE_CHECK(*end == '\0' && errno == 0 && parsed >= 0 && parsed <= 1'000'000, name, "='",
               value, "' is not a non-negative integer");
  return static_cast<int>(parsed);
}

void set_nodelay(int fd) {
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

class TcpLink final : public StarLink {
 public:
  explicit TcpLink(std::vector<int> socks) : socks_(std::move(socks)) {}
  ~TcpLink() override {
    for (int s : socks_) {
      if (s >= 0) ::close(s);
    }
  }

  bool send(int peer, const Frame& frame, io::Clock::time_point deadline,
            std::string* why) override {
    const int s = socks_.at(static_cast<size_t>(peer));
    if (s < 0) {
      *why = "no connection";
      return false;
    }
    return io::write_frame(s, frame, deadline, why);
  }

  Received recv_any(const std::vector<int>& from, io::Clock::time_point deadline) override {
    std::vector<int> fds;
    for (int r : from) fds.push_back(socks_.at(static_cast<size_t>(r)));
    Received out;
    const int idx = io::poll_readable(fds, deadline);
    if (idx < 0) {
      out.kind = Received::kTimeout;
      return out;
    }
    out.from = from[static_cast<size_t>(idx)];
    // Readable means a frame has started (or the peer closed): give its header a moment even
    // when the caller only polls.
    const auto frame_deadline = std::max(deadline, io::Clock::now() + std::chrono::seconds(10));
    const io::IoStatus st = io::read_frame(fds[static_cast<size_t>(idx)], &out.frame,
                                           frame_deadline, &out.why);
    if (st == io::IoStatus::kOk) {
      out.kind = Received::kFrame;
    } else if (st == io::IoStatus::kTimeout) {
      out.kind = Received::kTimeout;
    } else {
      out.kind = Received::kClosed;
      if (out.why.empty()) out.why = io::io_status_name(st);
      ::close(socks_[static_cast<size_t>(out.from)]);
      socks_[static_cast<size_t>(out.from)] = -1;
    }
    return out;
  }

 private:
  std::vector<int> socks_;  // rank 0: one per rank (index 0 unused); others: [rank 0]
};

uint64_t make_nonce() {
  std::random_device rd;
  const uint64_t t = static_cast<uint64_t>(
      std::chrono::high_resolution_clock::now().time_since_epoch().count());
  return (static_cast<uint64_t>(rd()) << 32) ^ rd() ^ t ^ (static_cast<uint64_t>(::getpid()) << 17);
}

std::unique_ptr<Group> rendezvous_root(const TcpGroupConfig& c, double timeout_s) {
  const int lfd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  SYMMOE_CHECK(lfd >= 0, "rank 0 cannot create the rendezvous socket: ", std::strerror(errno));
  int one = 1;
  ::setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_ANY);
  addr.sin_port = htons(static_cast<uint16_t>(c.master_port));
  if (::bind(lfd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::listen(lfd, c.size) != 0) {
    const int err = errno;
    ::close(lfd);
    SYMMOE_FAIL("rank 0 cannot serve the rendezvous on port ", c.master_port, ": ",
                std::strerror(err), " (MASTER_PORT must be free on rank 0's host)");
  }

  std::vector<int> socks(static_cast<size_t>(c.size), -1);
  const auto deadline = io::deadline_after(timeout_s);
  auto abort_all = [&](const std::string& why) {
    Frame abort{Frame::kAbort, 0, std::vector<unsigned char>(why.begin(), why.end())};
    const auto d = io::deadline_after(1.0);
    for (int s : socks) {
      std::string ignored;
      if (s >= 0) io::write_frame(s, abort, d, &ignored);
    }
    for (int s : socks) {
      if (s >= 0) ::close(s);
    }
    ::close(lfd);
    SYMMOE_FAIL(why);
  };

  int joined = 0;
  while (joined < c.size - 1) {
    if (io::poll_readable({lfd}, deadline) < 0) {
      std::string missing;
      for (int r = 1; r < c.size; ++r) {
        if (socks[r] < 0) missing += concat(missing.empty() ? "" : ", ", r);
      }
      abort_all(concat("rendezvous at port ", c.master_port, " (group of ", c.size, "): ranks [",
                       missing, "] did not connect within ", timeout_s,
                       " s (bound: SYMMOE_BOOTSTRAP_TIMEOUT_S)"));
    }
    const int s = ::accept4(lfd, nullptr, nullptr, SOCK_CLOEXEC);
    if (s < 0) continue;
    set_nodelay(s);
    Frame hello;
    std::string why;
    if (io::read_frame(s, &hello, deadline, &why) != io::IoStatus::kOk ||
        hello.type != Frame::kHello || hello.payload.size() != sizeof(HelloPayload)) {
      ::close(s);  // not a symmoe rank
      continue;
    }
    HelloPayload h{};
    std::memcpy(&h, hello.payload.data(), sizeof(h));
    std::string reject;
    if (h.size != c.size) {
      reject = concat("rank ", h.rank, " says WORLD_SIZE=", h.size, " but rank 0 has ", c.size);
    } else if (h.rank <= 0 || h.rank >= c.size) {
      reject = concat("a process claims rank ", h.rank, ", outside 1..", c.size - 1);
    } else if (socks[h.rank] >= 0) {
      reject = concat("two processes claim rank ", h.rank);
    }
    if (!reject.empty()) {
      socks[0] = s;  // so that the offender hears the reason too
      abort_all("rendezvous: " + reject);
    }
    socks[h.rank] = s;
    ++joined;
  }
  ::close(lfd);

  const uint64_t nonce = make_nonce();
  Frame welcome{Frame::kWelcome, 0, std::vector<unsigned char>(sizeof(nonce))};
  std::memcpy(welcome.payload.data(), &nonce, sizeof(nonce));
  for (int r = 1; r < c.size; ++r) {
    std::string why;
    if (!io::write_frame(socks[r], welcome, deadline, &why)) {
      abort_all(concat("rendezvous: rank ", r, " vanished before the welcome: ", why));
    }
  }
  return std::make_unique<StarGroup>(0, c.size, c.local_rank, "tcp",
                                     std::make_unique<TcpLink>(std::move(socks)), nonce);
}

std::unique_ptr<Group> rendezvous_leaf(const TcpGroupConfig& c, double timeout_s) {
  const auto deadline = io::deadline_after(timeout_s + 1.0);
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const std::string port = std::to_string(c.master_port);
  const int gai = ::getaddrinfo(c.master_addr.c_str(), port.c_str(), &hints, &found);
  SYMMOE_CHECK(gai == 0 && found != nullptr, "rank ", c.rank, " cannot resolve MASTER_ADDR='",
               c.master_addr, "': ", ::gai_strerror(gai));

  int s = -1;
  int last_err = 0;
  while (s < 0) {
    s = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s >= 0 && ::connect(s, found->ai_addr, found->ai_addrlen) == 0) break;
    last_err = errno;
    if (s >= 0) ::close(s);
    s = -1;
    if (io::Clock::now() >= deadline) {
      ::freeaddrinfo(found);
      SYMMOE_FAIL("rank ", c.rank, " could not reach rank 0's rendezvous at ", c.master_addr, ":",
                  c.master_port, " within ", timeout_s + 1.0, " s: ", std::strerror(last_err),
                  " (is rank 0 running, and are MASTER_ADDR/MASTER_PORT the same on every rank?)");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ::freeaddrinfo(found);
  set_nodelay(s);

  const HelloPayload h{c.rank, c.size};
  Frame hello{Frame::kHello, 0, std::vector<unsigned char>(sizeof(h))};
  std::memcpy(hello.payload.data(), &h, sizeof(h));
  std::string why;
  Frame answer;
  io::IoStatus st = io::IoStatus::kError;
  if (io::write_frame(s, hello, deadline, &why)) st = io::read_frame(s, &answer, deadline, &why);
  if (st != io::IoStatus::kOk || answer.type != Frame::kWelcome ||
      answer.payload.size() != sizeof(uint64_t)) {
    ::close(s);
    if (st == io::IoStatus::kOk && answer.type == Frame::kAbort) {
      SYMMOE_FAIL("rank ", c.rank, ": rendezvous failed at rank 0: ",
                  std::string(answer.payload.begin(), answer.payload.end()));
    }
    SYMMOE_FAIL("rank ", c.rank, ": rendezvous with rank 0 at ", c.master_addr, ":",
                c.master_port, " did not complete within ", timeout_s + 1.0, " s: ",
                st == io::IoStatus::kOk ? "unexpected answer" : io::io_status_name(st),
                why.empty() ? "" : " ", why);
  }
  uint64_t nonce = 0;
  std::memcpy(&nonce, answer.payload.data(), sizeof(nonce));
  return std::make_unique<StarGroup>(c.rank, c.size, c.local_rank, "tcp",
                                     std::make_unique<TcpLink>(std::vector<int>{s}), nonce);
}

}  // namespace

TcpGroupConfig TcpGroupConfig::from_env() {
  TcpGroupConfig c;
  c.rank = env_int("RANK", true, 0);
  c.size = env_int("WORLD_SIZE", true, 1);
  c.local_rank = env_int("LOCAL_RANK", false, c.rank);
  const char* addr = std::getenv("MASTER_ADDR");
  c.master_addr = addr != nullptr && *addr != '\0' ? addr : "127.0.0.1";
  c.master_port = env_int("MASTER_PORT", true, 0);
  return c;
}

std::unique_ptr<Group> make_tcp_group(const TcpGroupConfig& c) {
  SYMMOE_CHECK(c.size >= 1, "WORLD_SIZE must be >= 1, got ", c.size);
  SYMMOE_CHECK(c.rank >= 0 && c.rank < c.size, "RANK=", c.rank, " is outside [0, WORLD_SIZE=",
               c.size, ")");
  SYMMOE_CHECK(c.master_port > 0 && c.master_port < 65536, "MASTER_PORT=", c.master_port,
               " is not a TCP port");
  double timeout_s = c.timeout_s;
  std::unique_ptr<Group> group;
  if (timeout_s <= 0) timeout_s = env::get_float("SYMMOE_BOOTSTRAP_TIMEOUT_S");
  group = c.rank == 0 ? rendezvous_root(c, timeout_s) : rendezvous_leaf(c, timeout_s);
  group->set_timeout(std::chrono::duration<double>(timeout_s));
  return group;
}

}  // namespace symmoe::comm
