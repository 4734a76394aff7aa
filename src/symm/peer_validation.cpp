#include "symmoe/symm/peer_validation.hpp"

#include <atomic>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>
#include <vector>

#include "symmoe/core/cuda_driver.hpp"
#include "symmoe/core/env.hpp"
#include "symmoe/core/error.hpp"

namespace symmoe::symm {
namespace {

struct Entry {
  int device;
  int rank;
  std::vector<uint64_t> bases;
};

struct Cache {
  std::shared_mutex mutex;
  std::unordered_multimap<uint64_t, Entry> entries;
  std::atomic<uint64_t> full_checks{0};
  std::atomic<uint64_t> cache_hits{0};
  std::atomic<uint64_t> skipped{0};
};

Cache& cache() {
  static Cache instance;
  return instance;
}

uint64_t key_of(const uint64_t* bases, int n, int rank, int device) {
  uint64_t h = 0xcbf29ce484222325ull ^ (static_cast<uint64_t>(device) << 32) ^
               static_cast<uint64_t>(rank);
  for (int i = 0; i < n; ++i) {
    h ^= bases[i] + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
  }
  return h ^ static_cast<uint64_t>(n);
}

bool matches(const Entry& e, const uint64_t* bases, int n, int rank, int device) {
  if (e.device != device || e.rank != rank || e.bases.size() != static_cast<size_t>(n)) {
    return false;
  }
  for (int i = 0; i < n; ++i) {
    if (e.bases[i] != bases[i]) return false;
  }
  return true;
}

// Caller holds c.mutex (shared or exclusive).
bool cached_locked(Cache& c, uint64_t key, const uint64_t* bases, int n, int rank, int device) {
  auto [lo, hi] = c.entries.equal_range(key);
  for (auto it = lo; it != hi; ++it) {
    if (matches(it->second, bases, n, rank, device)) return true;
  }
  return false;
}

bool cached(uint64_t key, const uint64_t* bases, int n, int rank, int device) {
  Cache& c = cache();
  std::shared_lock lock(c.mutex);
  return cached_locked(c, key, bases, n, rank, device);
}

std::string hex(uint64_t v) { return detail::concat("0x", std::hex, v); }

std::string constraint(int n) {
  return detail::concat("symmoe addresses peers directly, so all ", n,
                        " ranks must share one NVLink/P2P domain (on SM90 that is a single "
                        "node); it cannot span nodes over RDMA. "
                        "[SYMMOE_SKIP_PEER_CHECK=1 disables this check]");
}

void validate(const uint64_t* bases, int n, int rank, int device, const PointerProbe& probe) {
  Cache& c = cache();
  const uint64_t key = key_of(bases, n, rank, device);
  if (n >= 1 && n <= device::kMaxRanks && cached(key, bases, n, rank, device)) {
    c.cache_hits.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  if (env::get_bool("SYMMOE_SKIP_PEER_CHECK")) {
    c.skipped.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  c.full_checks.fetch_add(1, std::memory_order_relaxed);

  SYMMOE_CHECK(n >= 1 && n <= device::kMaxRanks, "an expert-parallel group of ", n,
               " ranks exceeds the peer table's limit of ", device::kMaxRanks,
               " ranks (one NVL72 NVLink domain)");
  SYMMOE_CHECK(rank >= 0 && rank < n, "rank ", rank, " is outside the group of ", n, " ranks");
  for (int r = 0; r < n; ++r) {
    if (bases[r] == 0) {
      SYMMOE_FAIL("Symmetric buffer of rank ", r, " (0x0) is not addressable from rank ", rank,
                  " (device ", device, "). ", constraint(n));
    }
  }
  for (int r = 0; r < n; ++r) {
    for (int q = r + 1; q < n; ++q) {
      if (bases[r] == bases[q]) {
        SYMMOE_FAIL("Symmetric buffers of ranks ", r, " and ", q, " share the base ",
                    hex(bases[r]), " as seen from rank ", rank, " of ", n,
                    "; every rank must map a distinct peer buffer");
      }
    }
  }
  for (int r = 0; r < n; ++r) {
    std::string detail_text;
    const ProbeResult result =
        probe(reinterpret_cast<const void*>(bases[r]), device, &detail_text);
    if (result == ProbeResult::kInvalid) {
      SYMMOE_FAIL("Symmetric buffer of rank ", r, " (", hex(bases[r]),
                  ") is not addressable from rank ", rank, " (device ", device, "): ",
                  detail_text, ". ", constraint(n));
    }
  }

  std::unique_lock lock(c.mutex);
  if (!cached_locked(c, key, bases, n, rank, device)) {
    c.entries.emplace(key, Entry{device, rank, std::vector<uint64_t>(bases, bases + n)});
  }
}

}  // namespace

ProbeResult driver_pointer_probe(const void* ptr, int device, std::string* detail_text) {
  (void)device;  // the driver answers for the calling thread's current context
  std::string why;
  if (!driver_available(&why)) {
    if (detail_text) *detail_text = "no CUDA driver to ask: " + why;
    return ProbeResult::kUnknown;
  }
  int ordinal = -1;
  const CUresult rc = driver().cuPointerGetAttribute(
      &ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
      static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(ptr)));
  if (rc == CUDA_SUCCESS) return ProbeResult::kAddressable;
  if (detail_text) {
    *detail_text = "cuPointerGetAttribute returned " + detail::cuda_driver_error_text(rc);
  }
  return rc == CUDA_ERROR_INVALID_VALUE ? ProbeResult::kInvalid : ProbeResult::kUnknown;
}

void validate_peers(std::span<void* const> bases, int rank, int device,
                    const PointerProbe& probe) {
  SYMMOE_CHECK(bases.size() <= static_cast<size_t>(device::kMaxRanks) && !bases.empty(),
               "an expert-parallel group of ", bases.size(),
               " ranks exceeds the peer table's limit of ", device::kMaxRanks,
               " ranks (one NVL72 NVLink domain)");
  uint64_t raw[device::kMaxRanks];
  for (size_t r = 0; r < bases.size(); ++r) raw[r] = reinterpret_cast<uint64_t>(bases[r]);
  validate(raw, static_cast<int>(bases.size()), rank, device, probe);
}

void validate_peer_table(const device::PeerTable& table, int device, const PointerProbe& probe) {
  const int n = table.num_ranks;
  SYMMOE_CHECK(n >= 1 && n <= device::kMaxRanks, "peer table with ", n,
               " ranks: must hold 1..", device::kMaxRanks);
  uint64_t raw[device::kMaxRanks];
  for (int r = 0; r < n; ++r) raw[r] = table.peer_base(r);
  validate(raw, n, table.rank, device, probe);
}

void forget_validated(std::span<void* const> bases, int device) {
  Cache& c = cache();
  std::unique_lock lock(c.mutex);
  for (auto it = c.entries.begin(); it != c.entries.end();) {
    const Entry& e = it->second;
    bool same = e.device == device && e.bases.size() == bases.size();
    for (size_t i = 0; same && i < bases.size(); ++i) {
      same = e.bases[i] == reinterpret_cast<uint64_t>(bases[i]);
    }
    it = same ? c.entries.erase(it) : std::next(it);
  }
}

ValidationCounters validation_counters() {
  Cache& c = cache();
  return {c.full_checks.load(), c.cache_hits.load(), c.skipped.load()};
}

}  // namespace symmoe::symm
