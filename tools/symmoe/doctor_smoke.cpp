#include "doctor_smoke.hpp"

#include <cuda_runtime_api.h>

#include <mutex>
#include <sstream>

#include "symmoe/comm/thread_group.hpp"
#include "symmoe/core/device_info.hpp"
#include "symmoe/core/error.hpp"
#include "symmoe/reference/host_symmetric_heap.hpp"
#include "symmoe/symm/peer_smoke.hpp"
#include "symmoe/symm/symmetric_buffer.hpp"

namespace symmoe::cli {

using ::symmoe::detail::concat;

namespace {

struct RankOutcome {
  symm::SmokeReport smoke;
  std::string handle;
  size_t mapped = 0;
  size_t reserved = 0;
};

std::string summarize(const std::vector<RankOutcome>& outcomes) {
  uint64_t written = 0, local = 0, remote = 0, bad = 0;
  for (const auto& o : outcomes) {
    written += o.smoke.words_written;
    local += o.smoke.local_words_checked;
    remote += o.smoke.remote_words_checked;
    bad += o.smoke.mismatches;
  }
  return concat(written, " words written into peers, ", local, " checked locally, ", remote,
                " read back from peers, ", bad, " mismatches");
}

void report_outcomes(Report& report, const std::vector<RankOutcome>& outcomes, bool gpu) {
  const RankOutcome& r0 = outcomes.front();
  if (gpu) {
    report.fact("handle type", r0.handle);
    report.fact("symmetric memory", static_cast<double>(r0.mapped) / (1 << 20), "MiB_per_rank");
    report.fact("virtual range", static_cast<double>(r0.reserved) / (1 << 20), "MiB_per_rank");
  }
  bool ok = true;
  std::string first;
  double worst_write_ms = 0;
  for (size_t r = 0; r < outcomes.size(); ++r) {
    const auto& s = outcomes[r].smoke;
    worst_write_ms = std::max(worst_write_ms, s.write_ms);
    if (!s.ok()) {
      ok = false;
      if (first.empty()) first = concat("rank ", r, ": ", s.first_mismatch);
    }
  }
  report.check("peer write/read pattern", ok, ok ? summarize(outcomes) : first);
  report.fact("slowest write", worst_write_ms, "ms");
}

}  // namespace

void smoke_gpu_threads(Report& report, const SmokeOptions& o) {
  report.section(concat("smoke test: ", o.ranks, " virtual ranks (threads), GPU symmetric buffer"));
  std::ostringstream devs;
  for (size_t i = 0; i < o.devices.size(); ++i) devs << (i ? "," : "") << o.devices[i];
  report.fact("devices", devs.str());
  report.fact("bytes per rank", static_cast<double>(o.bytes_per_rank));
  std::vector<RankOutcome> outcomes(static_cast<size_t>(o.ranks));
  try {
    comm::run_thread_ranks(o.ranks, o.devices, [&](comm::Group& g) {
      auto buf = symm::SymmetricBuffer::create(g, symm::SymmetricBufferOptions::from_env(o.bytes_per_rank));
      RankOutcome& out = outcomes[g.rank()];
      out.handle = concat(symm::handle_type_name(buf->handle_type()), " (", buf->handle_reason(), ")");
      out.mapped = buf->mapped_bytes_per_rank();
      out.reserved = buf->reserved_virtual_bytes();
      out.smoke = symm::run_peer_smoke(g, *buf);
      g.barrier();
    }, o.timeout_s);
    report.check("create, exchange, map and validate", true,
                 concat(o.ranks, " ranks created one buffer"));
    report_outcomes(report, outcomes, true);
  } catch (const std::exception& e) {
    report.check("create, exchange, map and validate", false, e.what());
  }
}

void smoke_host_threads(Report& report, const SmokeOptions& o) {
  report.section(concat("smoke test: ", o.ranks,
                        " virtual ranks (threads), host symmetric heap (memfd + fd passing)"));
  std::vector<RankOutcome> outcomes(static_cast<size_t>(o.ranks));
  try {
    comm::run_thread_ranks(o.ranks, {}, [&](comm::Group& g) {
      reference::HostSymmetricHeap heap(g, o.bytes_per_rank);
      outcomes[g.rank()].smoke = reference::run_host_peer_smoke(g, heap);
    }, o.timeout_s);
    report.check("group collectives and descriptor exchange", true,
                 concat(o.ranks, " thread ranks shared memfds"));
    report_outcomes(report, outcomes, false);
  } catch (const std::exception& e) {
    report.check("group collectives and descriptor exchange", false, e.what());
  }
}

std::vector<comm::ForkedRank> smoke_processes_fork(const SmokeOptions& o) {
  const uint64_t bytes = o.bytes_per_rank;
  return comm::fork_ranks(
      o.ranks,
      [bytes](comm::Group& g, std::string* message) {
        const CudaStatus cuda = probe_cuda();
        symm::SmokeReport smoke;
        std::string mode;
        if (cuda.device_count > 0) {
          SYMMOE_CUDA_CHECK(cudaSetDevice(g.local_rank() % cuda.device_count));
          auto buf = symm::SymmetricBuffer::create(g, symm::SymmetricBufferOptions::from_env(bytes));
          smoke = symm::run_peer_smoke(g, *buf);
          mode = concat("gpu ", current_device(), ", handle ",
                        symm::handle_type_name(buf->handle_type()));
          g.barrier();
        } else {
          reference::HostSymmetricHeap heap(g, bytes);
          smoke = reference::run_host_peer_smoke(g, heap);
          mode = "host heap (no GPU)";
        }
        *message = smoke.ok() ? concat(mode, ": ", smoke.words_written, " words written, ",
                                       smoke.local_words_checked + smoke.remote_words_checked,
                                       " checked, 0 mismatches")
                              : concat(mode, ": ", smoke.first_mismatch);
        return smoke.ok() ? 0 : 1;
      },
      o.timeout_s, o.timeout_s * 2 + 30);
}

void report_process_smoke(Report& report, const SmokeOptions& o,
                          const std::vector<comm::ForkedRank>& results) {
  report.section(concat("smoke test: ", o.ranks, " processes (TCP rendezvous, fds over Unix sockets)"));
  bool ok = true;
  std::string first;
  for (const auto& r : results) {
    const bool good = r.exit_code == 0 && !r.timed_out;
    report.line(concat("rank ", r.rank, ": ",
                       r.timed_out ? "killed after the deadline" : (good ? "ok" : "failed"), " - ",
                       r.message));
    if (!good && first.empty()) {
      ok = false;
      first = concat("rank ", r.rank, ": ", r.timed_out ? "timed out" : r.message);
    }
  }
  report.check("multi-process peer write/read", ok, ok ? concat(o.ranks, " processes agree") : first);
}

void check_null_peer_rejected(Report& report, bool gpu, const SmokeOptions& o) {
  report.section("pre-launch peer validation");
  std::string message;
  try {
    comm::run_thread_ranks(2, o.devices, [&](comm::Group& g) {
      std::unique_ptr<symm::SymmetricBuffer> buf;
      std::unique_ptr<reference::HostSymmetricHeap> heap;
      device::PeerTable bad;
      if (gpu) {
        buf = symm::SymmetricBuffer::create(g, symm::SymmetricBufferOptions::from_env(1 << 20));
        bad = buf->peer_table();
      } else {
        heap = std::make_unique<reference::HostSymmetricHeap>(g, 1 << 20);
        bad = heap->peer_table();
      }
      const int victim = 1 - g.rank();
      bad.offsets[victim] = -static_cast<int64_t>(bad.base);  // peer base 0x0
      try {
        if (gpu) {
          symm::launch_smoke_write(bad, buf->device(), 16, nullptr);
        } else {
          reference::run_host_peer_smoke(g, *heap, &bad);
        }
      } catch (const Error& e) {
        if (g.rank() == 0) message = e.what();
      }
      g.barrier();
    }, o.timeout_s);
  } catch (const std::exception& e) {
    report.check("null peer rejected before launch", false, e.what());
    return;
  }
  const bool ok = message.find("Symmetric buffer of rank 1 (0x0) is not addressable from rank 0") !=
                  std::string::npos;
  report.check("null peer rejected before launch", ok,
               ok ? message.substr(0, message.find(". ")) : "no error was raised: " + message);
}

}  // namespace symmoe::cli
