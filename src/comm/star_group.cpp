#include "star_group.hpp"

#include <algorithm>
#include <cstring>

#include "symmoe/core/error.hpp"
#include "unix_fd_hub.hpp"

namespace symmoe::comm {

using ::symmoe::detail::concat;

namespace {
constexpr double kLeafGraceSeconds = 1.0;
}  // namespace

StarGroup::StarGroup(int rank, int size, int local_rank, std::string kind,
                     std::unique_ptr<StarLink> link, uint64_t nonce)
    : rank_(rank),
      size_(size),
      local_rank_(local_rank),
      kind_(std::move(kind)),
      link_(std::move(link)),
      nonce_(nonce) {}

StarGroup::~StarGroup() = default;

void StarGroup::check_usable(const char* name) const {
  if (!broken_.empty()) {
    SYMMOE_FAIL(name, " on rank ", rank_, " of ", size_, " (", kind_,
                ") refused: an earlier collective failed: ", broken_);
  }
}

void StarGroup::fail_root(const std::string& why) {
  broken_ = why;
  Frame abort{Frame::kAbort, 0, std::vector<unsigned char>(why.begin(), why.end())};
  const auto deadline = io::deadline_after(1.0);
  for (int r = 1; r < size_; ++r) {
    std::string ignored;
    link_->send(r, abort, deadline, &ignored);  // best effort: some peers are gone
  }
  SYMMOE_FAIL(why);
}

void StarGroup::all_gather(const void* send, void* recv, size_t bytes) {
  check_usable("all_gather");
  const uint64_t seq = next_seq_++;
  if (rank_ == 0) {
    gather_at_root(seq, "all_gather", send, recv, bytes);
  } else {
    gather_at_leaf(seq, "all_gather", send, recv, bytes);
  }
}

void StarGroup::barrier() {
  check_usable("barrier");
  const uint64_t seq = next_seq_++;
  unsigned char token = 1;
  std::vector<unsigned char> all(static_cast<size_t>(size_));
  if (rank_ == 0) {
    gather_at_root(seq, "barrier", &token, all.data(), 1);
  } else {
    gather_at_leaf(seq, "barrier", &token, all.data(), 1);
  }
}

void StarGroup::gather_at_root(uint64_t seq, const char* name, const void* send, void* recv,
                               size_t bytes) {
  auto* out = static_cast<unsigned char*>(recv);
  if (bytes > 0) std::memcpy(out, send, bytes);
  std::vector<int> pending;
  for (int r = 1; r < size_; ++r) pending.push_back(r);
  const auto deadline = io::deadline_after(timeout().count());
  const std::string where = concat(name, " #", seq, " (", kind_, " group of ", size_, ")");
  while (!pending.empty()) {
    Received got = link_->recv_any(pending, deadline);
    if (got.kind == Received::kTimeout) {
      std::string missing;
      for (int r : pending) missing += concat(missing.empty() ? "" : ", ", r);
      fail_root(concat(where, ": ranks [", missing, "] did not arrive within ",
                       timeout().count(), " s (bound: SYMMOE_BOOTSTRAP_TIMEOUT_S)"));
    }
    if (got.kind == Received::kClosed) {
      fail_root(concat(where, ": rank ", got.from, " closed its connection (", got.why,
                       "); the process probably exited or crashed"));
    }
    if (got.frame.type == Frame::kAbort) {
      fail_root(concat(where, ": rank ", got.from, " aborted: ",
                       std::string(got.frame.payload.begin(), got.frame.payload.end())));
    }
    if (got.frame.type != Frame::kData || got.frame.seq != seq ||
        got.frame.payload.size() != bytes) {
      fail_root(concat(where, ": rank ", got.from, " sent collective #", got.frame.seq, " with ",
                       got.frame.payload.size(), " bytes where #", seq, " with ", bytes,
                       " bytes was expected; every rank must issue the same collectives in "
                       "the same order"));
    }
    if (bytes > 0) {
      std::memcpy(out + static_cast<size_t>(got.from) * bytes, got.frame.payload.data(), bytes);
    }
    pending.erase(std::find(pending.begin(), pending.end(), got.from));
  }
  Frame result{Frame::kData, seq,
               std::vector<unsigned char>(out, out + static_cast<size_t>(size_) * bytes)};
  const auto send_deadline = io::deadline_after(timeout().count());
  for (int r = 1; r < size_; ++r) {
    std::string why;
    if (!link_->send(r, result, send_deadline, &why)) {
      fail_root(concat(where, ": could not return the result to rank ", r, ": ", why));
    }
  }
}

void StarGroup::gather_at_leaf(uint64_t seq, const char* name, const void* send, void* recv,
                               size_t bytes) {
  const std::string where = concat(name, " #", seq, " on rank ", rank_, " (", kind_,
                                   " group of ", size_, ")");
  const auto deadline = io::deadline_after(timeout().count() + kLeafGraceSeconds);
  const auto* in = static_cast<const unsigned char*>(send);
  Frame mine{Frame::kData, seq, std::vector<unsigned char>(in, in + bytes)};
  std::string why;
  // Rank 0 may already have given up on this collective (its verdict is waiting to be read) and
  // closed the connection: then the verdict, not the broken pipe, is the error to report.
  Received got = link_->recv_any({0}, io::Clock::now());
  const bool early = got.kind == Received::kFrame;
  if (!early && !link_->send(0, mine, deadline, &why)) {
    got = link_->recv_any({0}, io::deadline_after(kLeafGraceSeconds));
    if (got.kind != Received::kFrame || got.frame.type != Frame::kAbort) {
      broken_ = concat(where, ": cannot reach rank 0: ", why);
      SYMMOE_FAIL(broken_);
    }
  } else if (!early) {
    got = link_->recv_any({0}, deadline);
  }
  if (got.kind == Received::kTimeout) {
    broken_ = concat(where, ": rank 0 did not answer within ", timeout().count() + kLeafGraceSeconds,
                     " s (bound: SYMMOE_BOOTSTRAP_TIMEOUT_S + 1 s grace)");
  } else if (got.kind == Received::kClosed) {
    broken_ = concat(where, ": rank 0 closed its connection (", got.why,
                     "); the process probably exited or crashed");
  } else if (got.frame.type == Frame::kAbort) {
    broken_ = concat(where, " failed at rank 0: ",
                     std::string(got.frame.payload.begin(), got.frame.payload.end()));
  } else if (got.frame.type != Frame::kData || got.frame.seq != seq ||
             got.frame.payload.size() != static_cast<size_t>(size_) * bytes) {
    broken_ = concat(where, ": rank 0 answered collective #", got.frame.seq, " with ",
                     got.frame.payload.size(), " bytes; expected #", seq, " with ",
                     static_cast<size_t>(size_) * bytes);
  }
  if (!broken_.empty()) SYMMOE_FAIL(broken_);
  if (bytes > 0) std::memcpy(recv, got.frame.payload.data(), got.frame.payload.size());
}

std::vector<int> StarGroup::all_gather_fds(int fd) {
  check_usable("all_gather_fds");
  if (!fd_hub_) fd_hub_ = std::make_unique<UnixFdHub>(*this, nonce_);
  return fd_hub_->exchange(fd);
}

}  // namespace symmoe::comm
