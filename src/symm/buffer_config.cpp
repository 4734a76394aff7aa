#include "symmoe/symm/buffer_config.hpp"

#include <cstring>
#include <sstream>

#include "symmoe/core/error.hpp"
#include "symmoe/symm/handle_type.hpp"
#include "symmoe/version.hpp"

namespace symmoe::symm {
namespace {

constexpr uint32_t kPackedVersion =
    (SYMMOE_VERSION_MAJOR << 20) | (SYMMOE_VERSION_MINOR << 10) | SYMMOE_VERSION_PATCH;

std::string show(const BufferConfig& c) {
  std::ostringstream os;
  os << "{layout '" << std::string(c.layout_name, strnlen(c.layout_name, sizeof(c.layout_name)))
     << "', bytes_per_rank " << c.bytes_per_rank << ", layout digest 0x" << std::hex
     << c.layout_digest << std::dec << ", ranks " << c.num_ranks << ", handle "
     << (c.handle_request >= 0 && c.handle_request <= 2
             ? handle_type_name(static_cast<HandleType>(c.handle_request))
             : "?")
     << ", version 0x" << std::hex << c.version << std::dec << "}";
  return os.str();
}

bool same(const BufferConfig& a, const BufferConfig& b) {
  return a.magic == b.magic && a.version == b.version && a.num_ranks == b.num_ranks &&
         a.bytes_per_rank == b.bytes_per_rank && a.layout_digest == b.layout_digest &&
         a.handle_request == b.handle_request &&
         std::memcmp(a.layout_name, b.layout_name, sizeof(a.layout_name)) == 0;
}

}  // namespace

uint64_t layout_digest(std::string_view name, std::span<const uint64_t> params) {
  uint64_t h = 0xcbf29ce484222325ull;
  auto mix = [&](const void* data, size_t n) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < n; ++i) {
      h ^= p[i];
      h *= 0x100000001b3ull;
    }
  };
  mix(name.data(), name.size());
  const uint64_t count = params.size();
  mix(&count, sizeof(count));
  for (uint64_t p : params) mix(&p, sizeof(p));
  return h;
}

BufferConfig make_buffer_config(int rank, int num_ranks, uint64_t bytes_per_rank,
                                std::string_view layout_name, uint64_t digest,
                                int handle_request) {
  SYMMOE_CHECK(layout_name.size() < sizeof(BufferConfig::layout_name), "layout name '",
               layout_name, "' is longer than ", sizeof(BufferConfig::layout_name) - 1,
               " characters");
  BufferConfig c;
  c.magic = kBufferConfigMagic;
  c.version = kPackedVersion;
  c.rank = rank;
  c.num_ranks = num_ranks;
  c.bytes_per_rank = bytes_per_rank;
  c.layout_digest = digest;
  c.handle_request = handle_request;
  std::memcpy(c.layout_name, layout_name.data(), layout_name.size());
  return c;
}

void check_config_agreement(std::span<const BufferConfig> all, int my_rank) {
  SYMMOE_CHECK(my_rank >= 0 && static_cast<size_t>(my_rank) < all.size(), "rank ", my_rank,
               " outside ", all.size(), " configuration records");
  // Every record is compared with rank 0's, so every rank reports the same pair.
  const BufferConfig& reference = all[0];
  for (size_t r = 0; r < all.size(); ++r) {
    const BufferConfig& other = all[r];
    if (other.magic != kBufferConfigMagic) {
      SYMMOE_FAIL("rank ", r, " sent a configuration record with magic 0x", std::hex, other.magic,
                  std::dec, " (seen from rank ", my_rank,
                  "): it runs another protocol or symmoe version");
    }
    if (other.rank != static_cast<int32_t>(r)) {
      SYMMOE_FAIL("configuration record ", r, " claims rank ", other.rank,
                  ": the group delivered records out of order");
    }
    if (!same(reference, other)) {
      SYMMOE_FAIL("symmetric buffer configuration differs between ranks: rank 0 has ",
                  show(reference), " but rank ", r, " has ", show(other), " (seen from rank ",
                  my_rank,
                  "); every rank must create the buffer with the same size, layout and handle "
                  "type");
    }
  }
}

void agree_on_config(comm::Group& group, const BufferConfig& mine) {
  const auto all = group.all_gather_value(mine);
  check_config_agreement(all, group.rank());
}

}  // namespace symmoe::symm
