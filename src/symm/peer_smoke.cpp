#include <cuda_runtime_api.h>

#include "symmoe/comm/agreement.hpp"
#include "symmoe/core/cuda_handles.hpp"
#include "symmoe/core/error.hpp"
#include "symmoe/device/smoke_pattern.cuh"
#include "symmoe/symm/peer_smoke.hpp"

namespace symmoe::symm {

uint64_t smoke_words_per_slice(size_t bytes_per_rank, int num_ranks) {
  SYMMOE_CHECK(num_ranks >= 1, "num_ranks must be >= 1");
  return bytes_per_rank / sizeof(uint64_t) / static_cast<uint64_t>(num_ranks);
}

std::string describe_smoke_mismatch(const device::SmokeCheck& c, uint64_t words_per_slice) {
  if (c.mismatches == 0) return "";
  const auto owner = static_cast<uint32_t>(c.first_position >> 56);
  const auto writer = static_cast<uint32_t>((c.first_position >> 48) & 0xFF);
  const uint64_t word = c.first_position & 0xFFFFFFFFFFFFull;
  std::string found;
  if (c.first_value == device::kSmokePoison) {
    found = "poison (never written)";
  } else {
    found = detail::concat("0x", std::hex, c.first_value, std::dec, " (a word of writer ",
                           device::smoke_word_writer(c.first_value), " for owner ",
                           device::smoke_word_owner(c.first_value), ")");
  }
  return detail::concat(c.mismatches, " mismatching words; first: word ", word, " of slice ",
                        writer, " (written by rank ", writer, ") in rank ", owner,
                        "'s buffer holds ", found, ", expected 0x", std::hex,
                        device::smoke_word(writer, owner, word), std::dec, " (", words_per_slice,
                        " words per slice)");
}

namespace {

// Owns the stream, events and result block of one rank's smoke run.
struct SmokeResources {
  Stream stream;
  Event start, mid, stop, read_start;
  device::SmokeCheck* result = nullptr;
  SmokeResources() {
    SYMMOE_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&result), 2 * sizeof(device::SmokeCheck)));
  }
  ~SmokeResources() {
    cudaStreamSynchronize(stream);
    if (result) cudaFree(result);
  }
};

}  // namespace

SmokeReport run_peer_smoke(comm::Group& group, const SymmetricBuffer& buffer,
                           const device::PeerTable* table_override) {
  const device::PeerTable table = table_override ? *table_override : buffer.peer_table();
  const int n = buffer.num_ranks();
  const int dev = buffer.device();
  const uint64_t wps = smoke_words_per_slice(buffer.bytes_per_rank(), n);
  SYMMOE_CHECK(wps > 0, "a smoke test over ", n, " ranks needs at least ", 8 * n,
               " bytes per rank; the buffer has ", buffer.bytes_per_rank());

  SmokeReport report;
  SmokeResources res;
  const device::SmokeCheck init[2] = {};
  std::string local;
  try {
    SYMMOE_CUDA_CHECK(cudaMemcpyAsync(res.result, init, sizeof(init), cudaMemcpyHostToDevice,
                                      res.stream));
    launch_smoke_poison(table, dev, wps, res.stream);
    SYMMOE_CUDA_CHECK(cudaStreamSynchronize(res.stream));
  } catch (const std::exception& e) {
    local = e.what();
  }
  comm::require_all_ok(group, local, "peer smoke test: poisoning");  // all poisoned before writes

  try {
    res.start.record(res.stream);
    launch_smoke_write(table, dev, wps, res.stream);
    res.mid.record(res.stream);
    SYMMOE_CUDA_CHECK(cudaStreamSynchronize(res.stream));
  } catch (const std::exception& e) {
    local = e.what();
  }
  comm::require_all_ok(group, local, "peer smoke test: writing into peers");  // all writes done

  device::SmokeCheck checks[2];
  try {
    launch_smoke_verify(table, dev, wps, false, res.result, res.stream);
    res.read_start.record(res.stream);
    launch_smoke_verify(table, dev, wps, true, res.result + 1, res.stream);
    res.stop.record(res.stream);
    SYMMOE_CUDA_CHECK(cudaMemcpyAsync(checks, res.result, sizeof(checks), cudaMemcpyDeviceToHost,
                                      res.stream));
    SYMMOE_CUDA_CHECK(cudaStreamSynchronize(res.stream));
    report.write_ms = res.mid.since(res.start);
    report.remote_read_ms = res.stop.since(res.read_start);
  } catch (const std::exception& e) {
    local = e.what();
  }
  // Nobody leaves (and perhaps frees the buffer) while a peer still reads it.
  comm::require_all_ok(group, local, "peer smoke test: verifying");

  report.words_written = wps * n;
  report.local_words_checked = checks[0].words;
  report.remote_words_checked = checks[1].words;
  report.mismatches = checks[0].mismatches + checks[1].mismatches;
  report.first_mismatch = checks[0].mismatches
                              ? describe_smoke_mismatch(checks[0], wps)
                              : describe_smoke_mismatch(checks[1], wps);
  return report;
}

}  // namespace symmoe::symm
