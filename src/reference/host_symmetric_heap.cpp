#include "symmoe/reference/host_symmetric_heap.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "symmoe/comm/agreement.hpp"
#include "symmoe/core/error.hpp"
#include "symmoe/device/smoke_pattern.cuh"
#include "symmoe/symm/peer_table.hpp"
#include "symmoe/symm/peer_validation.hpp"

namespace symmoe::reference {

using ::symmoe::detail::concat;

HostSymmetricHeap::HostSymmetricHeap(comm::Group& group, size_t bytes_per_rank)
    : bytes_(bytes_per_rank), rank_(group.rank()) {
  SYMMOE_CHECK(bytes_per_rank > 0, "a host symmetric heap needs bytes_per_rank > 0");
  const int n = group.size();
  const auto sizes = group.all_gather_value(static_cast<uint64_t>(bytes_per_rank));
  for (int r = 0; r < n; ++r) {
    SYMMOE_CHECK(sizes[r] == bytes_per_rank, "host heap size differs: rank ", r, " asks for ",
                 sizes[r], " bytes, rank ", rank_, " for ", bytes_per_rank);
  }
  std::string local;
  int own = ::memfd_create("symmoe-host-heap", MFD_CLOEXEC);
  if (own < 0 || ::ftruncate(own, static_cast<off_t>(bytes_per_rank)) != 0) {
    local = concat("memfd of ", bytes_per_rank, " bytes: ", std::strerror(errno));
  }
  comm::require_all_ok(group, local, "host symmetric heap: creating the memfd");

  std::vector<int> fds = group.all_gather_fds(own);
  ::close(own);
  bases_.assign(static_cast<size_t>(n), nullptr);
  for (int r = 0; r < n; ++r) {
    void* p = ::mmap(nullptr, bytes_per_rank, PROT_READ | PROT_WRITE, MAP_SHARED, fds[r], 0);
    if (p == MAP_FAILED) {
      if (local.empty()) local = concat("mmap of rank ", r, "'s memfd: ", std::strerror(errno));
    } else {
      bases_[r] = p;
    }
    ::close(fds[r]);
  }
  if (local.empty()) std::memset(bases_[rank_], 0, bytes_per_rank);
  comm::require_all_ok(group, local, "host symmetric heap: mapping peers");
}

HostSymmetricHeap::~HostSymmetricHeap() {
  for (void* p : bases_) {
    if (p != nullptr) ::munmap(p, bytes_);
  }
}

device::PeerTable HostSymmetricHeap::peer_table() const {
  return symm::make_peer_table(bases_, rank_);
}

namespace {

// Host memory: null and duplicate checks apply; there is no driver to ask.
symm::ProbeResult host_probe(const void*, int, std::string*) {
  return symm::ProbeResult::kAddressable;
}

// Counts mismatches of one owner's buffer (read through the table) into `check`.
void verify_owner(const device::PeerTable& t, int owner, uint64_t wps, device::SmokeCheck* check) {
  const auto* buf = t.map(reinterpret_cast<const uint64_t*>(t.base), owner);
  for (int writer = 0; writer < t.num_ranks; ++writer) {
    for (uint64_t w = 0; w < wps; ++w) {
      const uint64_t found = buf[writer * wps + w];
      ++check->words;
      if (found == device::smoke_word(writer, owner, w)) continue;
      ++check->mismatches;
      const unsigned long long pos = (static_cast<unsigned long long>(owner) << 56) |
                                     (static_cast<unsigned long long>(writer) << 48) | w;
      if (pos < check->first_position) {
        check->first_position = pos;
        check->first_value = found;
      }
    }
  }
}

constexpr int kHostDevice = -1;  // validation cache key for host memory

}  // namespace

symm::SmokeReport run_host_peer_smoke(comm::Group& group, const HostSymmetricHeap& heap,
                                      const device::PeerTable* table_override) {
  const device::PeerTable t = table_override ? *table_override : heap.peer_table();
  const uint64_t wps = symm::smoke_words_per_slice(heap.bytes_per_rank(), heap.num_ranks());
  SYMMOE_CHECK(wps > 0, "the host heap is too small for a smoke test over ", heap.num_ranks(),
               " ranks");
  symm::validate_peer_table(t, kHostDevice, host_probe);

  auto* local = reinterpret_cast<uint64_t*>(t.base);
  for (uint64_t i = 0; i < wps * t.num_ranks; ++i) local[i] = device::kSmokePoison;
  group.barrier();  // every buffer poisoned before anyone writes

  const auto start = std::chrono::steady_clock::now();
  uint64_t* my_slice = local + t.rank * wps;
  for (int owner = 0; owner < t.num_ranks; ++owner) {
    uint64_t* dst = t.map(my_slice, owner);
    for (uint64_t w = 0; w < wps; ++w) dst[w] = device::smoke_word(t.rank, owner, w);
  }
  const auto mid = std::chrono::steady_clock::now();
  group.barrier();  // every write landed

  device::SmokeCheck local_check, remote_check;
  verify_owner(t, t.rank, wps, &local_check);
  const auto read_start = std::chrono::steady_clock::now();
  for (int owner = 0; owner < t.num_ranks; ++owner) verify_owner(t, owner, wps, &remote_check);
  const auto stop = std::chrono::steady_clock::now();
  group.barrier();  // nobody unmaps while a peer still reads

  symm::SmokeReport report;
  report.words_written = wps * t.num_ranks;
  report.local_words_checked = local_check.words;
  report.remote_words_checked = remote_check.words;
  report.mismatches = local_check.mismatches + remote_check.mismatches;
  report.first_mismatch = local_check.mismatches
                              ? symm::describe_smoke_mismatch(local_check, wps)
                              : symm::describe_smoke_mismatch(remote_check, wps);
  report.write_ms = std::chrono::duration<double, std::milli>(mid - start).count();
  report.remote_read_ms = std::chrono::duration<double, std::milli>(stop - read_start).count();
  return report;
}

}  // namespace symmoe::reference
