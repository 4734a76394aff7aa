#include "symmoe/comm/mpi_group.hpp"

#include "symmoe/core/error.hpp"

#ifdef SYMMOE_WITH_MPI
#include <mpi.h>

#include <cstdlib>
#include <cstring>
#include <random>
#include <thread>

#include "star_group.hpp"
#include "symmoe/core/env.hpp"
#endif

namespace symmoe::comm {

#ifdef SYMMOE_WITH_MPI
namespace {

constexpr int kTag = 0x5e3d;

struct WireHeader {
  uint32_t type;
  uint32_t pad;
  uint64_t seq;
};

std::string mpi_error_text(int code) {
  char text[MPI_MAX_ERROR_STRING] = {};
  int len = 0;
  MPI_Error_string(code, text, &len);
  return detail::concat("MPI error ", code, ": ", text);
}

#define SYMMOE_MPI_CHECK(expr)                                                 \
  do {                                                                         \
    const int symmoe_mpi_rc_ = (expr);                                         \
    SYMMOE_CHECK(symmoe_mpi_rc_ == MPI_SUCCESS, #expr, " failed: ",            \
                 mpi_error_text(symmoe_mpi_rc_));                              \
  } while (0)

// Point-to-point messages without blocking calls, so that every wait keeps its deadline.
class MpiLink final : public StarLink {
 public:
  explicit MpiLink(MPI_Comm comm) : comm_(comm) {}
  ~MpiLink() override { MPI_Comm_free(&comm_); }

  bool send(int peer, const Frame& frame, io::Clock::time_point deadline,
            std::string* why) override {
    auto buffer = std::make_unique<std::vector<unsigned char>>(sizeof(WireHeader) +
                                                               frame.payload.size());
    const WireHeader h{frame.type, 0, frame.seq};
    std::memcpy(buffer->data(), &h, sizeof(h));
    if (!frame.payload.empty()) {
      std::memcpy(buffer->data() + sizeof(h), frame.payload.data(), frame.payload.size());
    }
    MPI_Request req{};
    int rc = MPI_Isend(buffer->data(), static_cast<int>(buffer->size()), MPI_BYTE, peer, kTag,
                       comm_, &req);
    if (rc != MPI_SUCCESS) {
      *why = mpi_error_text(rc);
      return false;
    }
    for (;;) {
      int done = 0;
      MPI_Test(&req, &done, MPI_STATUS_IGNORE);
      if (done) return true;
      if (io::Clock::now() >= deadline) {
        MPI_Cancel(&req);
        MPI_Request_free(&req);
        abandoned_.push_back(std::move(buffer));  // MPI may still read it
        *why = "MPI send did not complete before the deadline";
        return false;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }

  Received recv_any(const std::vector<int>& from, io::Clock::time_point deadline) override {
    Received out;
    for (;;) {
      for (int r : from) {
        int flag = 0;
        MPI_Status st{};
        MPI_Iprobe(r, kTag, comm_, &flag, &st);
        if (!flag) continue;
        int count = 0;
        MPI_Get_count(&st, MPI_BYTE, &count);
        std::vector<unsigned char> buffer(static_cast<size_t>(count));
        MPI_Recv(buffer.data(), count, MPI_BYTE, r, kTag, comm_, MPI_STATUS_IGNORE);
        out.from = r;
        if (buffer.size() < sizeof(WireHeader)) {
          out.kind = Received::kClosed;
          out.why = "malformed MPI message";
          return out;
        }
        WireHeader h{};
        std::memcpy(&h, buffer.data(), sizeof(h));
        out.kind = Received::kFrame;
        out.frame.type = h.type;
        out.frame.seq = h.seq;
        out.frame.payload.assign(buffer.begin() + sizeof(h), buffer.end());
        return out;
      }
      if (io::Clock::now() >= deadline) {
        out.kind = Received::kTimeout;
        return out;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }

 private:
  MPI_Comm comm_;
  std::vector<std::unique_ptr<std::vector<unsigned char>>> abandoned_;
};

void finalize_mpi_at_exit() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

}  // namespace

bool mpi_available() { return true; }

std::unique_ptr<Group> make_mpi_group(double timeout_s) {
  int initialized = 0;
  SYMMOE_MPI_CHECK(MPI_Initialized(&initialized));
  if (!initialized) {
    int provided = 0;
    SYMMOE_MPI_CHECK(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided));
    std::atexit(finalize_mpi_at_exit);
  }
  MPI_Comm comm{};
  SYMMOE_MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
  int rank = 0, size = 0;
  SYMMOE_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  SYMMOE_MPI_CHECK(MPI_Comm_size(comm, &size));
  MPI_Comm node{};
  SYMMOE_MPI_CHECK(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node));
  int local_rank = 0;
  SYMMOE_MPI_CHECK(MPI_Comm_rank(node, &local_rank));
  MPI_Comm_free(&node);

  uint64_t nonce = 0;
  if (rank == 0) {
    std::random_device rd;
    nonce = (static_cast<uint64_t>(rd()) << 32) ^ rd() ^
            static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  }
  SYMMOE_MPI_CHECK(MPI_Bcast(&nonce, 1, MPI_UINT64_T, 0, comm));
  auto group = std::make_unique<StarGroup>(rank, size, local_rank, "mpi",
                                           std::make_unique<MpiLink>(comm), nonce);
  if (timeout_s > 0) group->set_timeout(std::chrono::duration<double>(timeout_s));
  return group;
}

#else

bool mpi_available() { return false; }

std::unique_ptr<Group> make_mpi_group(double) {
  SYMMOE_FAIL("symmoe was built without MPI; rebuild with MPI found (libopenmpi-dev) or launch "
              "with torchrun-style RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT");
}

#endif

}  // namespace symmoe::comm
