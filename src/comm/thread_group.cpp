#include "symmoe/comm/thread_group.hpp"

#include <cuda_runtime_api.h>
#include <sys/resource.h>
#include <unistd.h>

#include <condition_variable>
#include <cstring>
#include <exception>
#include <map>
#include <mutex>
#include <thread>

#include "symmoe/core/error.hpp"

namespace symmoe::comm {

// NOTE [thread hub protocol]: collective number `seq` (each rank counts its own calls) lives
// in ops[seq]. A rank deposits its payload, waits until all `size` ranks have deposited, copies
// the result out and leaves; the last rank to leave erases the op. Because an op is erased
// only after every rank left it, a fast rank can run ahead into seq+1 without touching seq.
// Descriptors are duplicated on deposit so that their owner may close its own right after the
// call; every reader duplicates again, and the last leaver closes the deposited copies.
struct ThreadHub::State {
  struct Op {
    const char* name = "";
    size_t bytes = 0;
    int first_rank = -1;
    std::vector<std::vector<unsigned char>> data;
    std::vector<int> fds;
    std::vector<bool> arrived;
    int num_arrived = 0;
    int num_left = 0;
  };

  explicit State(int n) : size(n), joined(static_cast<size_t>(n), false) {}

  int size;
  std::mutex mutex;
  std::condition_variable cv;
  std::map<uint64_t, Op> ops;
  std::vector<bool> joined;
  bool aborted = false;
  std::string abort_reason;

  void abort(const std::string& reason) {
    std::lock_guard lock(mutex);
    if (!aborted) {
      aborted = true;
      abort_reason = reason;
    }
    cv.notify_all();
  }
};

namespace {

std::string rank_list(const std::vector<bool>& arrived) {
  std::string out;
  for (size_t r = 0; r < arrived.size(); ++r) {
    if (!arrived[r]) out += detail::concat(out.empty() ? "" : ", ", r);
  }
  return "[" + out + "]";
}

class ThreadMember final : public Group {
 public:
  ThreadMember(std::shared_ptr<ThreadHub::State> state, int rank)
      : state_(std::move(state)), rank_(rank) {}

  int rank() const override { return rank_; }
  int size() const override { return state_->size; }
  int local_rank() const override { return rank_; }
  std::string kind() const override { return "threads"; }

  void all_gather(const void* send, void* recv, size_t bytes) override {
    run("all_gather", send, bytes, -1, [&](ThreadHub::State::Op& op) {
      auto* out = static_cast<unsigned char*>(recv);
      for (int r = 0; r < state_->size; ++r) {
        if (bytes > 0) std::memcpy(out + static_cast<size_t>(r) * bytes, op.data[r].data(), bytes);
      }
    });
  }

  void barrier() override {
    run("barrier", nullptr, 0, -1, [](ThreadHub::State::Op&) {});
  }

  std::vector<int> all_gather_fds(int fd) override {
    SYMMOE_CHECK(fd >= 0, "all_gather_fds on rank ", rank_, " got an invalid descriptor ", fd);
    std::vector<int> out(static_cast<size_t>(state_->size), -1);
    run("all_gather_fds", nullptr, 0, fd, [&](ThreadHub::State::Op& op) {
      for (int r = 0; r < state_->size; ++r) {
        out[r] = ::dup(op.fds[r]);
        SYMMOE_CHECK(out[r] >= 0, "dup of rank ", r, "'s descriptor failed on rank ", rank_, ": ",
                     std::strerror(errno), " (ranks as threads share one process's open-file "
                     "limit: raise it with ulimit -n)");
      }
    });
    return out;
  }

 private:
  template <class CopyOut>
  void run(const char* name, const void* send, size_t bytes, int fd, CopyOut&& copy_out) {
    const uint64_t seq = next_seq_++;
    ThreadHub::State& s = *state_;
    std::unique_lock lock(s.mutex);
    if (s.aborted) {
      SYMMOE_FAIL(name, " #", seq, " on rank ", rank_, " of ", s.size,
                  " cannot proceed: the group was aborted: ", s.abort_reason);
    }
    auto& op = s.ops[seq];
    if (op.arrived.empty()) {
      op.name = name;
      op.bytes = bytes;
      op.first_rank = rank_;
      op.data.resize(static_cast<size_t>(s.size));
      op.fds.assign(static_cast<size_t>(s.size), -1);
      op.arrived.assign(static_cast<size_t>(s.size), false);
    }
    if (std::strcmp(op.name, name) != 0 || op.bytes != bytes) {
      const std::string why = detail::concat(
          "collective #", seq, " mismatch: rank ", rank_, " called ", name, " with ", bytes,
          " bytes but rank ", op.first_rank, " called ", op.name, " with ", op.bytes,
          " bytes; every rank must issue the same collectives in the same order");
      lock.unlock();
      s.abort(why);
      SYMMOE_FAIL(why);
    }
    if (bytes > 0) {
      const auto* in = static_cast<const unsigned char*>(send);
      op.data[rank_].assign(in, in + bytes);
    }
    if (fd >= 0) {
      op.fds[rank_] = ::dup(fd);
      SYMMOE_CHECK(op.fds[rank_] >= 0, "dup of descriptor ", fd, " failed on rank ", rank_, ": ",
                   std::strerror(errno));
    }
    op.arrived[rank_] = true;
    ++op.num_arrived;
    s.cv.notify_all();

    const auto deadline = std::chrono::steady_clock::now() +
                          std::chrono::duration_cast<std::chrono::steady_clock::duration>(timeout());
    const bool complete = s.cv.wait_until(lock, deadline, [&] {
      return s.aborted || s.ops[seq].num_arrived == s.size;
    });
    auto& done = s.ops[seq];
    if (done.num_arrived != s.size) {
      std::string why;
      if (!complete) {
        why = detail::concat(name, " #", seq, " timed out on rank ", rank_, " of ", s.size,
                             " (threads) after ", timeout().count(), " s: ranks ",
                             rank_list(done.arrived),
                             " never arrived (bound: SYMMOE_BOOTSTRAP_TIMEOUT_S)");
        lock.unlock();
        s.abort(why);
      } else {
        why = detail::concat(name, " #", seq, " on rank ", rank_, " of ", s.size,
                             " stopped waiting for ranks ", rank_list(done.arrived),
                             ": the group was aborted: ", s.abort_reason);
      }
      SYMMOE_FAIL(why);
    }
    copy_out(done);
    if (++done.num_left == s.size) {
      for (int deposited : done.fds) {
        if (deposited >= 0) ::close(deposited);
      }
      s.ops.erase(seq);
    }
  }

  std::shared_ptr<ThreadHub::State> state_;
  int rank_;
  uint64_t next_seq_ = 0;
};

}  // namespace

ThreadHub::ThreadHub(int size) {
  SYMMOE_CHECK(size >= 1, "a thread group needs at least one rank, got ", size);
  state_ = std::make_shared<State>(size);
}

ThreadHub::~ThreadHub() = default;

int ThreadHub::size() const { return state_->size; }

std::unique_ptr<Group> ThreadHub::join(int rank) {
  SYMMOE_CHECK(rank >= 0 && rank < state_->size, "rank ", rank, " is outside the group of ",
               state_->size);
  std::lock_guard lock(state_->mutex);
  SYMMOE_CHECK(!state_->joined[rank], "rank ", rank, " joined the thread group twice");
  state_->joined[rank] = true;
  return std::make_unique<ThreadMember>(state_, rank);
}

void ThreadHub::abort(int rank, const std::string& reason) {
  state_->abort(detail::concat("rank ", rank, " failed: ", reason));
}

namespace {

// N ranks in one process hold up to N * N descriptors at once while they exchange buffer
// handles (every rank imports every peer's), e.g. 5184 for 72 ranks: lift the soft limit on
// open files to the hard limit, once.
void raise_descriptor_limit() {
  static std::once_flag once;
  std::call_once(once, [] {
    rlimit lim{};
    if (::getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur < lim.rlim_max) {
      lim.rlim_cur = lim.rlim_max;
      ::setrlimit(RLIMIT_NOFILE, &lim);
    }
  });
}

}  // namespace

void run_thread_ranks(int size, const std::vector<int>& devices,
                      const std::function<void(Group&)>& fn, double timeout_s) {
  raise_descriptor_limit();
  ThreadHub hub(size);
  std::mutex first_mutex;
  int first_rank = -1;
  std::string first_message;
  int num_failed = 0;

  std::vector<std::thread> threads;
  threads.reserve(static_cast<size_t>(size));
  for (int r = 0; r < size; ++r) {
    threads.emplace_back([&, r] {
      try {
        if (!devices.empty()) {
          const int device = devices[static_cast<size_t>(r) % devices.size()];
          SYMMOE_CUDA_CHECK(cudaSetDevice(device), "rank ", r, " device ", device);
        }
        auto group = hub.join(r);
        if (timeout_s > 0) group->set_timeout(std::chrono::duration<double>(timeout_s));
        fn(*group);
      } catch (const std::exception& e) {
        {
          std::lock_guard lock(first_mutex);
          ++num_failed;
          if (first_rank < 0) {
            first_rank = r;
            first_message = e.what();
          }
        }
        hub.abort(r, e.what());
      }
    });
  }
  for (auto& t : threads) t.join();
  if (first_rank >= 0) {
    SYMMOE_FAIL("rank ", first_rank, " of ", size, ": ", first_message,
                num_failed > 1 ? detail::concat(" (", num_failed, " ranks failed in all)") : "");
  }
}

}  // namespace symmoe::comm
