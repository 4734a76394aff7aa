#include "frame_io.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "symmoe/core/error.hpp"

namespace symmoe::comm::io {
namespace {

constexpr uint32_t kFrameMagic = 0x53594d4d;  // "SYMM"
// Bootstrap payloads are small (configuration records, handles); anything this large is a
// corrupted header or a stranger on the port.
constexpr uint64_t kMaxFrameBytes = uint64_t{1} << 32;

struct Header {
  uint32_t magic;
  uint32_t type;
  uint64_t seq;
  uint64_t bytes;
};

}  // namespace

bool write_frame(int fd, const Frame& frame, Clock::time_point deadline, std::string* why) {
  // One buffer, one send: a reader never sees a header without its payload for long.
  const Header h{kFrameMagic, frame.type, frame.seq, frame.payload.size()};
  std::vector<unsigned char> wire(sizeof(h) + frame.payload.size());
  std::memcpy(wire.data(), &h, sizeof(h));
  if (!frame.payload.empty()) {
    std::memcpy(wire.data() + sizeof(h), frame.payload.data(), frame.payload.size());
  }
  const IoStatus st = write_exact(fd, wire.data(), wire.size(), deadline, why);
  if (st != IoStatus::kOk && why != nullptr && why->empty()) *why = io_status_name(st);
  return st == IoStatus::kOk;
}

IoStatus read_frame(int fd, Frame* frame, Clock::time_point deadline, std::string* why) {
  Header h{};
  IoStatus st = read_exact(fd, &h, sizeof(h), deadline, why);
  if (st != IoStatus::kOk) return st;
  if (h.magic != kFrameMagic || h.bytes > kMaxFrameBytes) {
    if (why) *why = ::symmoe::detail::concat("malformed frame header (magic 0x", std::hex, h.magic,
                                             std::dec, ", ", h.bytes, " bytes)");
    return IoStatus::kError;
  }
  frame->type = h.type;
  frame->seq = h.seq;
  frame->payload.resize(h.bytes);
  // A frame that has begun is read to its end (the deadline may be "now" for a poll), so that
  // the stream never resumes mid-frame.
  const auto body_deadline = std::max(deadline, Clock::now() + std::chrono::seconds(10));
  if (h.bytes > 0) st = read_exact(fd, frame->payload.data(), h.bytes, body_deadline, why);
  if (st == IoStatus::kTimeout) st = IoStatus::kError;  // the stream is out of step now
  return st;
}

}  // namespace symmoe::comm::io
