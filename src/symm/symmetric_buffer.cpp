#include "symmoe/symm/symmetric_buffer.hpp"

#include <cuda_runtime_api.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <functional>

#include "symmoe/comm/agreement.hpp"
#include "symmoe/core/cuda_driver.hpp"
#include "symmoe/core/cuda_handles.hpp"
#include "symmoe/core/device_info.hpp"
#include "symmoe/core/error.hpp"
#include "symmoe/core/log.hpp"
#include "symmoe/symm/buffer_config.hpp"
#include "symmoe/symm/handle_table.hpp"
#include "symmoe/symm/peer_table.hpp"
#include "symmoe/symm/peer_validation.hpp"
#include "vmm.hpp"

namespace symmoe::symm {

using ::symmoe::detail::concat;

namespace {

// Runs a local step; returns "" or what it threw, so that the group can agree on the outcome.
std::string capture(const std::function<void()>& step) {
  try {
    step();
    return "";
  } catch (const std::exception& e) {
    return e.what();
  }
}

size_t round_up(size_t v, size_t g) { return (v + g - 1) / g * g; }

struct Counters {
  std::atomic<int64_t> live_buffers{0}, allocations{0}, allocated_bytes{0}, imported{0},
      mappings{0}, reserved_bytes{0};
};
Counters& counters() {
  static Counters c;
  return c;
}

// Largest granularity over the group for `type` (a rank that cannot query reports 0 and its
// error through `local_error`).
size_t agreed_stride(comm::Group& group, size_t bytes, int device, CUmemAllocationHandleType type,
                     std::string* local_error) {
  uint64_t g = 0;
  *local_error = capture([&] { g = vmm::granularity(device, type); });
  const auto all = group.all_gather_value(g);
  const uint64_t g_max = *std::max_element(all.begin(), all.end());
  return g_max == 0 ? 0 : round_up(bytes, g_max);
}

}  // namespace

SymmetricBufferOptions SymmetricBufferOptions::from_env(size_t bytes_per_rank) {
  SymmetricBufferOptions o;
  o.bytes_per_rank = bytes_per_rank;
  o.handle_type = handle_type_from_env();
  return o;
}

std::unique_ptr<SymmetricBuffer> SymmetricBuffer::create(comm::Group& group,
                                                         const SymmetricBufferOptions& options) {
  const int n = group.size();
  const int rank = group.rank();
  SYMMOE_CHECK(options.bytes_per_rank > 0, "a symmetric buffer needs bytes_per_rank > 0");
  SYMMOE_CHECK(n <= device::kMaxRanks, "a symmetric buffer spans at most ", device::kMaxRanks,
               " ranks (one NVL72 domain); the group has ", n);

  // 1. Every rank must ask for the same buffer.
  const BufferConfig mine = make_buffer_config(
      rank, n, options.bytes_per_rank, options.layout_name,
      layout_digest(options.layout_name, options.layout_params),
      static_cast<int>(options.handle_type));
  agree_on_config(group, mine);

  std::unique_ptr<SymmetricBuffer> buf(new SymmetricBuffer());
  buf->rank_ = rank;
  buf->num_ranks_ = n;
  buf->bytes_per_rank_ = options.bytes_per_rank;
  buf->handles_.assign(static_cast<size_t>(n), 0);
  buf->mapped_.assign(static_cast<size_t>(n), false);
  buf->bases_.assign(static_cast<size_t>(n), nullptr);

  DeviceInfo info;
  std::string err = capture([&] {
    buf->device_ = current_device();
    info = query_device(buf->device_);
    SYMMOE_CHECK(info.vmm_supported, "device ", buf->device_, " (", info.name,
                 ") does not support CUDA virtual memory management");
  });
  comm::require_all_ok(group, err, "symmetric buffer: device check");
  const int dev = buf->device_;
  const DriverApi& cu = driver();
  CUmemGenericAllocationHandle own = 0;

  // 2. Fabric handles, where asked for (or allowed by auto) and every rank can make one.
  bool use_fabric = false;
  CUmemFabricHandle own_fabric{};
  if (options.handle_type != HandleType::kFd) {
    std::string local;
    const size_t stride = agreed_stride(group, options.bytes_per_rank, dev,
                                        CU_MEM_HANDLE_TYPE_FABRIC, &local);
    if (local.empty() && !info.fabric_supported) {
      local = "device attribute HANDLE_TYPE_FABRIC_SUPPORTED is 0";
    }
    if (local.empty()) local = vmm::try_create(stride, dev, CU_MEM_HANDLE_TYPE_FABRIC, &own);
    if (local.empty()) local = vmm::try_export_fabric(own, &own_fabric);
    const auto errors = comm::gather_errors(group, local);
    int failed = 0;
    int first = -1;
    for (int r = 0; r < n; ++r) {
      if (!errors[r].empty()) {
        ++failed;
        if (first < 0) first = r;
      }
    }
    if (failed == 0) {
      use_fabric = true;
      buf->stride_ = stride;
      buf->handle_type_ = HandleType::kFabric;
      buf->handle_reason_ = options.handle_type == HandleType::kFabric
                                ? "fabric requested"
                                : "auto: every rank created and exported a fabric handle";
    } else {
      if (own != 0) cu.cuMemRelease(own);
      own = 0;
      const std::string why = concat("fabric handles unavailable on ", failed, " of ", n,
                                     " ranks (rank ", first, ": ", errors[first], ")");
      if (options.handle_type == HandleType::kFabric) {
        SYMMOE_FAIL("symmetric buffer: SYMMOE_HANDLE_TYPE=fabric but ", why,
                    "; fabric handles need an NVLink/IMEX domain with an IMEX channel. Use "
                    "'auto' or 'fd' for ranks on one host");
      }
      buf->handle_reason_ = "auto -> fd: " + why + "; POSIX fds serve ranks on one host";
      if (rank == 0) SYMMOE_LOG_INFO("symmetric buffer (", n, " ranks): handle type ",
                                     buf->handle_reason_);
    }
  }

  // 3. POSIX file descriptors otherwise.
  int own_fd = -1;
  if (!use_fabric) {
    std::string local;
    buf->stride_ = agreed_stride(group, options.bytes_per_rank, dev,
                                 CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, &local);
    if (local.empty()) {
      local = vmm::try_create(buf->stride_, dev, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, &own);
    }
    if (local.empty()) local = vmm::try_export_fd(own, &own_fd);
    if (!local.empty() && own != 0) {
      cu.cuMemRelease(own);
      own = 0;
    }
    comm::require_all_ok(group, local, "symmetric buffer: creating and exporting POSIX-fd memory");
    buf->handle_type_ = HandleType::kFd;
    if (buf->handle_reason_.empty()) buf->handle_reason_ = "fd requested";
  }
  buf->handles_[rank] = own;
  counters().allocations += 1;
  counters().allocated_bytes += static_cast<int64_t>(buf->stride_);
  counters().live_buffers += 1;

  // 4. Exchange and import the peers' handles.
  std::string local;
  if (use_fabric) {
    static_assert(sizeof(CUmemFabricHandle) == kFabricHandleBytes);
    const auto fabrics = group.all_gather_value(own_fabric);
    std::vector<uint8_t> raw(fabrics.size() * kFabricHandleBytes);
    std::memcpy(raw.data(), fabrics.data(), raw.size());
    const ShareableHandleTable table = make_fabric_table(raw, fabrics.size());
    local = capture([&] { check_handle_table(table, n); });
    for (int r = 0; r < n && local.empty(); ++r) {
      if (r == rank) continue;
      CUmemGenericAllocationHandle h = 0;
      CUmemFabricHandle handle{};
      std::memcpy(&handle, fabric_at(table, r), kFabricHandleBytes);
      local = vmm::try_import_fabric(handle, &h);
      if (local.empty()) {
        buf->handles_[r] = h;
        counters().imported += 1;
      } else {
        local = concat("importing rank ", r, "'s fabric handle: ", local);
      }
    }
  } else {
    std::vector<int> fds = group.all_gather_fds(own_fd);
    ::close(own_fd);
    const ShareableHandleTable table = make_fd_table(fds);
    local = capture([&] { check_handle_table(table, n); });
    for (int r = 0; r < n; ++r) {
      if (r != rank && local.empty()) {
        CUmemGenericAllocationHandle h = 0;
        local = vmm::try_import_fd(fd_at(table, r), &h);
        if (local.empty()) {
          buf->handles_[r] = h;
          counters().imported += 1;
        } else {
          local = concat("importing rank ", r, "'s descriptor: ", local);
        }
      }
      ::close(fds[r]);
    }
  }
  comm::require_all_ok(group, local, "symmetric buffer: importing peer allocations");

  // 5. Map every allocation into one range and grant this device access.
  local = capture([&] {
    CUdeviceptr va = 0;
    SYMMOE_CU_CHECK(cu.cuMemAddressReserve(&va, buf->stride_ * n, 0, 0, 0),
                    "reserving ", buf->stride_ * n, " bytes of address space");
    buf->va_ = va;
    counters().reserved_bytes += static_cast<int64_t>(buf->stride_ * n);
    for (int r = 0; r < n; ++r) {
      SYMMOE_CU_CHECK(cu.cuMemMap(va + buf->stride_ * r, buf->stride_, 0, buf->handles_[r], 0),
                      "mapping rank ", r, "'s allocation");
      buf->mapped_[r] = true;
      counters().mappings += 1;
      buf->bases_[r] = reinterpret_cast<void*>(va + buf->stride_ * r);
    }
    CUmemAccessDesc access{};
    access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    access.location.id = dev;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    SYMMOE_CU_CHECK(cu.cuMemSetAccess(va, buf->stride_ * n, &access, 1),
                    "granting device ", dev, " read/write access to all ", n,
                    " ranks' allocations (every pair of devices needs peer access: NVLink/P2P)");
    // Zeroed before any rank returns (the final agreement below orders it), so peers may
    // write into this buffer as soon as create() returns on their side.
    Stream stream;
    SYMMOE_CUDA_CHECK(cudaMemsetAsync(buf->local(), 0, buf->stride_, stream), "zeroing ",
                      buf->stride_, " bytes");
    SYMMOE_CUDA_CHECK(cudaStreamSynchronize(stream));
  });
  comm::require_all_ok(group, local, "symmetric buffer: mapping peer allocations");

  // 6. Validate every peer before anything launches on the buffer.
  local = capture([&] { buf->validate(); });
  comm::require_all_ok(group, local, "symmetric buffer: validating peer mappings");
  SYMMOE_LOG_DEBUG("symmetric buffer rank ", rank, "/", n, ": ", buf->stride_,
                   " bytes per rank mapped at 0x", std::hex, buf->va_, std::dec, " (",
                   handle_type_name(buf->handle_type_), ")");
  return buf;
}

SymmetricBuffer::~SymmetricBuffer() { release(); }

void SymmetricBuffer::release() noexcept {
  if (num_ranks_ == 0 || !driver_available()) return;
  const DriverApi& cu = driver();
  Counters& c = counters();
  if (mapped_.size() == bases_.size()) forget_validated(bases_, device_);
  for (int r = 0; r < num_ranks_; ++r) {
    if (mapped_[r]) {
      cu.cuMemUnmap(va_ + stride_ * r, stride_);
      c.mappings -= 1;
    }
    mapped_[r] = false;
  }
  if (va_ != 0) {
    cu.cuMemAddressFree(va_, stride_ * num_ranks_);
    c.reserved_bytes -= static_cast<int64_t>(stride_ * num_ranks_);
  }
  va_ = 0;
  for (int r = 0; r < num_ranks_; ++r) {
    if (handles_[r] == 0) continue;
    cu.cuMemRelease(handles_[r]);
    if (r == rank_) {
      c.allocations -= 1;
      c.allocated_bytes -= static_cast<int64_t>(stride_);
      c.live_buffers -= 1;
    } else {
      c.imported -= 1;
    }
    handles_[r] = 0;
  }
}

SymmetricMemoryStats symmetric_memory_stats() {
  const Counters& c = counters();
  return {c.live_buffers.load(), c.allocations.load(), c.allocated_bytes.load(),
          c.imported.load(), c.mappings.load(), c.reserved_bytes.load()};
}

void* SymmetricBuffer::peer(int r) const {
  SYMMOE_CHECK(r >= 0 && r < num_ranks_, "peer rank ", r, " is outside the group of ", num_ranks_);
  return bases_[r];
}

device::PeerTable SymmetricBuffer::peer_table() const { return make_peer_table(bases_, rank_); }

void SymmetricBuffer::validate() const { validate_peers(bases_, rank_, device_); }

}  // namespace symmoe::symm
