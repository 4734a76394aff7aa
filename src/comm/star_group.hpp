// A Group whose collectives run through rank 0 (private). Transports (TCP, MPI) only move
// framed messages between rank 0 and every other rank; the collective logic, the bounds and
// the error messages live once, here.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "socket_io.hpp"
#include "symmoe/comm/group.hpp"

namespace symmoe::comm {

class UnixFdHub;

struct Frame {
  enum Type : uint32_t { kHello = 1, kWelcome = 2, kData = 3, kAbort = 4 };
  uint32_t type = kData;
  uint64_t seq = 0;
  std::vector<unsigned char> payload;
};

struct Received {
  enum Kind { kFrame, kClosed, kTimeout } kind = kTimeout;
  int from = -1;
  Frame frame;
  std::string why;  // for kClosed: what the transport saw
};

// Rank 0 talks to every rank; every other rank talks to rank 0 only.
class StarLink {
 public:
  virtual ~StarLink() = default;
  // Returns false (with `why`) when the peer cannot be reached before the deadline.
  virtual bool send(int peer, const Frame& frame, io::Clock::time_point deadline,
                    std::string* why) = 0;
  // The next frame from any rank in `from`.
  virtual Received recv_any(const std::vector<int>& from, io::Clock::time_point deadline) = 0;
};

// NOTE [star collectives]: collective #seq: every rank but 0 sends kData(seq, payload) to rank
// 0; rank 0 waits for all of them (bounded), then sends the rank-major concatenation back. When
// rank 0 sees a timeout, a closed connection or a mismatch it sends kAbort(reason) to every
// rank still connected, so that every rank fails with the same message naming the culprit.
// Non-root ranks wait for rank 0 one grace second longer than the bound, so that rank 0's
// verdict reaches them first.
class StarGroup : public Group {
 public:
  StarGroup(int rank, int size, int local_rank, std::string kind, std::unique_ptr<StarLink> link,
            uint64_t nonce);
  ~StarGroup() override;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int local_rank() const override { return local_rank_; }
  std::string kind() const override { return kind_; }

  void all_gather(const void* send, void* recv, size_t bytes) override;
  void barrier() override;
  std::vector<int> all_gather_fds(int fd) override;

 private:
  void gather_at_root(uint64_t seq, const char* name, const void* send, void* recv, size_t bytes);
  void gather_at_leaf(uint64_t seq, const char* name, const void* send, void* recv, size_t bytes);
  [[noreturn]] void fail_root(const std::string& why);
  void check_usable(const char* name) const;

  int rank_;
  int size_;
  int local_rank_;
  std::string kind_;
  std::unique_ptr<StarLink> link_;
  uint64_t nonce_;
  uint64_t next_seq_ = 0;
  std::string broken_;  // non-empty once a collective failed
  std::unique_ptr<UnixFdHub> fd_hub_;
};

}  // namespace symmoe::comm
