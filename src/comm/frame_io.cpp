#include "frame_io.hpp"

#include <cstdint>

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
  const Header h{kFrameMagic, frame.type, frame.seq, frame.payload.size()};
  IoStatus st = write_exact(fd, &h, sizeof(h), deadline, why);
  if (st == IoStatus::kOk && !frame.payload.empty()) {
    st = write_exact(fd, frame.payload.data(), frame.payload.size(), deadline, why);
  }
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
  if (h.bytes > 0) st = read_exact(fd, frame->payload.data(), h.bytes, deadline, why);
  return st;
}

}  // namespace symmoe::comm::io
