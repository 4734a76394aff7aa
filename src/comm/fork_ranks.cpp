#include "symmoe/comm/fork_ranks.hpp"

#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

#include "symmoe/comm/tcp_group.hpp"
#include "symmoe/core/error.hpp"

namespace symmoe::comm {
namespace {

constexpr size_t kMaxMessage = 8192;

int free_tcp_port() {
  const int s = ::socket(AF_INET, SOCK_STREAM, 0);
  SYMMOE_CHECK(s >= 0, "socket: ", std::strerror(errno));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  const bool ok = ::bind(s, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
                  ::getsockname(s, reinterpret_cast<sockaddr*>(&addr), &len) == 0;
  const int err = errno;
  ::close(s);
  SYMMOE_CHECK(ok, "cannot find a free TCP port on 127.0.0.1: ", std::strerror(err));
  return ntohs(addr.sin_port);
}

[[noreturn]] void child_main(int rank, int size, int port, double bootstrap_timeout_s,
                             const ForkedRankFn& fn, int pipe_fd) {
  int code = 1;
  std::string message;
  try {
    TcpGroupConfig config;
    config.rank = rank;
    config.size = size;
    config.local_rank = rank;
    config.master_addr = "127.0.0.1";
    config.master_port = port;
    config.timeout_s = bootstrap_timeout_s;
    auto group = make_tcp_group(config);
    code = fn(*group, &message);
  } catch (const std::exception& e) {
    code = 1;
    message = e.what();
  }
  if (message.size() > kMaxMessage) message.resize(kMaxMessage);
  size_t done = 0;
  while (done < message.size()) {
    const ssize_t put = ::write(pipe_fd, message.data() + done, message.size() - done);
    if (put <= 0) break;
    done += static_cast<size_t>(put);
  }
  ::close(pipe_fd);
  ::_exit(code);
}

}  // namespace

std::vector<ForkedRank> fork_ranks(int size, const ForkedRankFn& fn, double bootstrap_timeout_s,
                                   double deadline_s, const std::vector<int>& absent) {
  SYMMOE_CHECK(size >= 1, "fork_ranks needs at least one rank, got ", size);
  const int port = free_tcp_port();
  std::vector<ForkedRank> results(static_cast<size_t>(size));
  std::vector<pid_t> pids(static_cast<size_t>(size), -1);
  std::vector<int> pipes(static_cast<size_t>(size), -1);
  for (int r = 0; r < size; ++r) {
    results[r].rank = r;
    if (std::find(absent.begin(), absent.end(), r) != absent.end()) {
      results[r].started = false;
      continue;
    }
    int fds[2];
    SYMMOE_CHECK(::pipe(fds) == 0, "pipe: ", std::strerror(errno));
    std::fflush(nullptr);
    const pid_t pid = ::fork();
    SYMMOE_CHECK(pid >= 0, "fork of rank ", r, " failed: ", std::strerror(errno));
    if (pid == 0) {
      ::close(fds[0]);
      child_main(r, size, port, bootstrap_timeout_s, fn, fds[1]);
    }
    ::close(fds[1]);
    pids[r] = pid;
    pipes[r] = fds[0];
  }

  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                            std::chrono::duration<double>(deadline_s));
  int running = 0;
  for (pid_t p : pids) running += p > 0;
  while (running > 0) {
    for (int r = 0; r < size; ++r) {
      if (pids[r] <= 0) continue;
      int status = 0;
      const pid_t done = ::waitpid(pids[r], &status, WNOHANG);
      if (done == pids[r]) {
        results[r].exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        pids[r] = -1;
        --running;
      }
    }
    if (running == 0) break;
    if (std::chrono::steady_clock::now() >= deadline) {
      for (int r = 0; r < size; ++r) {
        if (pids[r] <= 0) continue;
        ::kill(pids[r], SIGKILL);
        ::waitpid(pids[r], nullptr, 0);
        results[r].timed_out = true;
        pids[r] = -1;
      }
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  for (int r = 0; r < size; ++r) {
    if (pipes[r] < 0) continue;
    char buf[1024];
    ssize_t got;
    while ((got = ::read(pipes[r], buf, sizeof(buf))) > 0) results[r].message.append(buf, got);
    ::close(pipes[r]);
  }
  return results;
}

}  // namespace symmoe::comm
