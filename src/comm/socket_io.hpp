// Deadline-bounded socket primitives shared by the TCP group and the Unix fd hub (private).
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

namespace symmoe::comm::io {

using Clock = std::chrono::steady_clock;

enum class IoStatus { kOk, kClosed, kTimeout, kError };

const char* io_status_name(IoStatus status);

// Milliseconds left until `deadline` for poll(): >= 0, capped to int.
int poll_ms_left(Clock::time_point deadline);

// Reads/writes exactly n bytes or reports why not (errno text in `why` for kError).
IoStatus read_exact(int fd, void* buf, size_t n, Clock::time_point deadline, std::string* why);
IoStatus write_exact(int fd, const void* buf, size_t n, Clock::time_point deadline,
                     std::string* why);

// Waits until one of `fds` is readable (or closed). Returns its index, -1 on timeout.
int poll_readable(const std::vector<int>& fds, Clock::time_point deadline);

// One message carrying `payload` and up to 253 descriptors (SCM_RIGHTS) over a Unix socket,
// and its receiving side; the received descriptors belong to the caller.
IoStatus send_with_fds(int sock, const void* payload, size_t bytes, const std::vector<int>& fds,
                       Clock::time_point deadline, std::string* why);
IoStatus recv_with_fds(int sock, void* payload, size_t bytes, size_t max_fds,
                       std::vector<int>* fds, Clock::time_point deadline, std::string* why);

Clock::time_point deadline_after(double seconds);

}  // namespace symmoe::comm::io
