#include <gtest/gtest.h>

#include "symmoe/comm/thread_group.hpp"
#include "symmoe/core/error.hpp"
#include "symmoe/device/smoke_pattern.cuh"
#include "symmoe/reference/host_symmetric_heap.hpp"

namespace symmoe::reference {
namespace {

TEST(HostSymmetricHeap, SmokePatternAcrossThreadRanks) {
  for (int n : {1, 2, 5, 8}) {
    comm::run_thread_ranks(n, {}, [n](comm::Group& g) {
      HostSymmetricHeap heap(g, 64 * 1024 + 8 * g.size());
      const auto report = run_host_peer_smoke(g, heap);
      EXPECT_TRUE(report.ok()) << report.first_mismatch;
      const uint64_t wps = symm::smoke_words_per_slice(heap.bytes_per_rank(), n);
      EXPECT_EQ(report.words_written, wps * n);
      EXPECT_EQ(report.local_words_checked, wps * n);
      EXPECT_EQ(report.remote_words_checked, wps * n * n);
    });
  }
}

TEST(HostSymmetricHeap, PeersSeeEachOthersWrites) {
  comm::run_thread_ranks(3, {}, [](comm::Group& g) {
    HostSymmetricHeap heap(g, 4096);
    const device::PeerTable t = heap.peer_table();
    auto* mine = reinterpret_cast<int*>(t.base);
    // Every rank writes its id into slot [rank] of the next rank's buffer.
    t.map(mine, (g.rank() + 1) % 3)[g.rank()] = 100 + g.rank();
    g.barrier();
    const int prev = (g.rank() + 2) % 3;
    EXPECT_EQ(mine[prev], 100 + prev);
    g.barrier();
  });
}

TEST(HostSymmetricHeap, InjectedNullPeerIsRejected) {
  std::vector<std::string> seen(2);
  comm::run_thread_ranks(2, {}, [&](comm::Group& g) {
    HostSymmetricHeap heap(g, 4096);
    device::PeerTable bad = heap.peer_table();
    bad.offsets[1 - g.rank()] = -static_cast<int64_t>(bad.base);
    try {
      run_host_peer_smoke(g, heap, &bad);
    } catch (const Error& e) {
      seen[g.rank()] = e.what();
    }
  });
  EXPECT_NE(seen[0].find("Symmetric buffer of rank 1 (0x0) is not addressable from rank 0"),
            std::string::npos) << seen[0];
  EXPECT_NE(seen[1].find("Symmetric buffer of rank 0 (0x0) is not addressable from rank 1"),
            std::string::npos) << seen[1];
}

TEST(SmokePattern, WordsIdentifyWriterAndOwnerAndNeverEqualPoison) {
  for (uint32_t w = 0; w < 72; w += 7) {
    for (uint32_t o = 0; o < 72; o += 5) {
      for (uint64_t i : {0ull, 1ull, 12345ull, (1ull << 40) + 3}) {
        const uint64_t word = device::smoke_word(w, o, i);
        EXPECT_EQ(device::smoke_word_writer(word), w);
        EXPECT_EQ(device::smoke_word_owner(word), o);
        EXPECT_NE(word, device::kSmokePoison);
      }
    }
  }
  EXPECT_NE(device::smoke_word(1, 2, 3), device::smoke_word(2, 1, 3));
  EXPECT_NE(device::smoke_word(1, 2, 3), device::smoke_word(1, 2, 4));
}

TEST(SmokePattern, MismatchDescriptionNamesPosition) {
  device::SmokeCheck c;
  c.mismatches = 3;
  c.first_position = (uint64_t{4} << 56) | (uint64_t{2} << 48) | 17;
  c.first_value = device::kSmokePoison;
  const std::string m = symm::describe_smoke_mismatch(c, 100);
  EXPECT_NE(m.find("3 mismatching words; first: word 17 of slice 2 (written by rank 2) in rank "
                   "4's buffer holds poison (never written)"),
            std::string::npos) << m;
  c.first_value = device::smoke_word(3, 4, 17);
  EXPECT_NE(symm::describe_smoke_mismatch(c, 100).find("a word of writer 3 for owner 4"),
            std::string::npos);
}

}  // namespace
}  // namespace symmoe::reference
