#include "socket_io.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>

#include "symmoe/core/error.hpp"

namespace symmoe::comm::io {

// Linux caps SCM_RIGHTS at 253 descriptors per message; 72 ranks fit.
constexpr size_t kMaxFdsPerMessage = 253;

const char* io_status_name(IoStatus status) {
  switch (status) {
    case IoStatus::kOk: return "ok";
    case IoStatus::kClosed: return "connection closed by peer";
    case IoStatus::kTimeout: return "timed out";
    case IoStatus::kError: return "socket error";
  }
  return "?";
}

Clock::time_point deadline_after(double seconds) {
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(
                            std::chrono::duration<double>(seconds));
}

int poll_ms_left(Clock::time_point deadline) {
  const auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return static_cast<int>(std::clamp<long long>(left, 0, INT_MAX));
}

namespace {

// Waits for `events` on fd; kOk when ready.
IoStatus wait_fd(int fd, short events, Clock::time_point deadline, std::string* why) {
  for (;;) {
    pollfd p{fd, events, 0};
    const int rc = ::poll(&p, 1, poll_ms_left(deadline));
    if (rc > 0) {
      if (p.revents & (events | POLLHUP)) return IoStatus::kOk;
      if (p.revents & (POLLERR | POLLNVAL)) {
        if (why) *why = "poll reported an error on the socket";
        return IoStatus::kError;
      }
      return IoStatus::kOk;
    }
    if (rc == 0) return IoStatus::kTimeout;
    if (errno == EINTR) continue;
    if (why) *why = std::strerror(errno);
    return IoStatus::kError;
  }
}

}  // namespace

IoStatus read_exact(int fd, void* buf, size_t n, Clock::time_point deadline, std::string* why) {
  auto* p = static_cast<char*>(buf);
  size_t done = 0;
  while (done < n) {
    IoStatus ready = wait_fd(fd, POLLIN, deadline, why);
    if (ready != IoStatus::kOk) return ready;
    const ssize_t got = ::recv(fd, p + done, n - done, 0);
    if (got == 0) return IoStatus::kClosed;
    if (got < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      if (errno == ECONNRESET) return IoStatus::kClosed;
      if (why) *why = std::strerror(errno);
      return IoStatus::kError;
    }
    done += static_cast<size_t>(got);
  }
  return IoStatus::kOk;
}

IoStatus write_exact(int fd, const void* buf, size_t n, Clock::time_point deadline,
                     std::string* why) {
  const auto* p = static_cast<const char*>(buf);
  size_t done = 0;
  while (done < n) {
    IoStatus ready = wait_fd(fd, POLLOUT, deadline, why);
    if (ready != IoStatus::kOk) return ready;
    const ssize_t put = ::send(fd, p + done, n - done, MSG_NOSIGNAL);
    if (put < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      if (errno == EPIPE || errno == ECONNRESET) return IoStatus::kClosed;
      if (why) *why = std::strerror(errno);
      return IoStatus::kError;
    }
    done += static_cast<size_t>(put);
  }
  return IoStatus::kOk;
}

int poll_readable(const std::vector<int>& fds, Clock::time_point deadline) {
  std::vector<pollfd> polls(fds.size());
  for (size_t i = 0; i < fds.size(); ++i) polls[i] = pollfd{fds[i], POLLIN, 0};
  for (;;) {
    const int rc = ::poll(polls.data(), polls.size(), poll_ms_left(deadline));
    if (rc == 0) return -1;
    if (rc < 0) {
      if (errno == EINTR) continue;
      SYMMOE_FAIL("poll over ", fds.size(), " bootstrap sockets failed: ", std::strerror(errno));
    }
    for (size_t i = 0; i < polls.size(); ++i) {
      if (polls[i].revents != 0) return static_cast<int>(i);
    }
  }
}

IoStatus send_with_fds(int sock, const void* payload, size_t bytes, const std::vector<int>& fds,
                       Clock::time_point deadline, std::string* why) {
  SYMMOE_CHECK(fds.size() <= kMaxFdsPerMessage, "cannot pass ", fds.size(),
               " descriptors in one message (limit ", kMaxFdsPerMessage, ")");
  SYMMOE_CHECK(bytes > 0, "a descriptor message needs a payload");
  IoStatus ready = wait_fd(sock, POLLOUT, deadline, why);
  if (ready != IoStatus::kOk) return ready;
  iovec iov{const_cast<void*>(payload), bytes};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  std::vector<char> control(CMSG_SPACE(sizeof(int) * std::max<size_t>(fds.size(), 1)));
  if (!fds.empty()) {
    msg.msg_control = control.data();
    msg.msg_controllen = CMSG_SPACE(sizeof(int) * fds.size());
    cmsghdr* cmsg = CMSG_FIRSTHDR(&msg);
    cmsg->cmsg_level = SOL_SOCKET;
    cmsg->cmsg_type = SCM_RIGHTS;
    cmsg->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
    std::memcpy(CMSG_DATA(cmsg), fds.data(), sizeof(int) * fds.size());
  }
  for (;;) {
    const ssize_t put = ::sendmsg(sock, &msg, MSG_NOSIGNAL);
    if (put == static_cast<ssize_t>(bytes)) return IoStatus::kOk;
    if (put < 0 && errno == EINTR) continue;
    if (put < 0 && (errno == EPIPE || errno == ECONNRESET)) return IoStatus::kClosed;
    if (why) *why = put < 0 ? std::strerror(errno) : "short sendmsg";
    return IoStatus::kError;
  }
}

IoStatus recv_with_fds(int sock, void* payload, size_t bytes, size_t max_fds,
                       std::vector<int>* fds, Clock::time_point deadline, std::string* why) {
  fds->clear();
  IoStatus ready = wait_fd(sock, POLLIN, deadline, why);
  if (ready != IoStatus::kOk) return ready;
  iovec iov{payload, bytes};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  std::vector<char> control(CMSG_SPACE(sizeof(int) * std::max<size_t>(max_fds, 1)));
  msg.msg_control = control.data();
  msg.msg_controllen = control.size();
  ssize_t got;
  do {
    got = ::recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
  } while (got < 0 && errno == EINTR);
  if (got == 0) return IoStatus::kClosed;
  if (got < 0) {
    if (errno == ECONNRESET) return IoStatus::kClosed;
    if (why) *why = std::strerror(errno);
    return IoStatus::kError;
  }
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
      const size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
      const auto* data = reinterpret_cast<const int*>(CMSG_DATA(c));
      fds->insert(fds->end(), data, data + n);
    }
  }
  if (msg.msg_flags & MSG_CTRUNC) {
    for (int fd : *fds) ::close(fd);
    fds->clear();
    if (why) *why = "descriptor list truncated";
    return IoStatus::kError;
  }
  if (static_cast<size_t>(got) != bytes) {
    // Payloads are a few bytes; a short datagram-sized read means a protocol error.
    for (int fd : *fds) ::close(fd);
    fds->clear();
    if (why) *why = ::symmoe::detail::concat("short message: ", got, " of ", bytes, " bytes");
    return IoStatus::kError;
  }
  return IoStatus::kOk;
}

}  // namespace symmoe::comm::io
