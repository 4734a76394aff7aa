// Framed messages over a stream socket (private): header {magic, type, seq, bytes} + payload.
#pragma once

#include <string>

#include "socket_io.hpp"
#include "star_group.hpp"

namespace symmoe::comm::io {

bool write_frame(int fd, const Frame& frame, Clock::time_point deadline, std::string* why);

// kOk with `frame` filled, or why not (a malformed header counts as kError).
IoStatus read_frame(int fd, Frame* frame, Clock::time_point deadline, std::string* why);

}  // namespace symmoe::comm::io
