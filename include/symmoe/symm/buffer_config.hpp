// The configuration record every rank all-gathers before creating a symmetric buffer: ranks
// that disagree on size, layout or handle type must fail on the host, naming each other.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "symmoe/comm/group.hpp"

namespace symmoe::symm {

struct BufferConfig {
  uint32_t magic = 0;    // kBufferConfigMagic: catches a peer running another protocol
  uint32_t version = 0;  // symmoe's version, packed
  int32_t rank = 0;
  int32_t num_ranks = 0;
  uint64_t bytes_per_rank = 0;
  uint64_t layout_digest = 0;
  int32_t handle_request = 0;  // HandleType as requested
  char layout_name[44] = {};
};

inline constexpr uint32_t kBufferConfigMagic = 0x53594d42;  // "SYMB"

// FNV-1a over the layout name and its parameters (sizes, counts, alignments).
uint64_t layout_digest(std::string_view name, std::span<const uint64_t> params);

BufferConfig make_buffer_config(int rank, int num_ranks, uint64_t bytes_per_rank,
                                std::string_view layout_name, uint64_t digest,
                                int handle_request);

// Throws a symmoe::Error if any record differs from this rank's in any field but `rank`; the
// message shows both records and names both ranks.
void check_config_agreement(std::span<const BufferConfig> all, int my_rank);

// Collective: all-gathers `mine` and checks agreement (the same error on every rank).
void agree_on_config(comm::Group& group, const BufferConfig& mine);

}  // namespace symmoe::symm
