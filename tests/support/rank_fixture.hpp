// Per-rank GPU state of the protocol tests: a symmetric buffer with a signal pad at offset 0,
// a device runtime (status block, grid words, eager-loaded kernels) and a non-blocking stream.
#pragma once

#include <memory>

#include "symmoe/comm/group.hpp"
#include "symmoe/core/cuda_handles.hpp"
#include "symmoe/runtime/device_runtime.hpp"
#include "symmoe/symm/symmetric_buffer.hpp"

namespace symmoe::test {

struct RankFixture {
  explicit RankFixture(comm::Group& group, size_t bytes = 64 * 1024);
  std::unique_ptr<symm::SymmetricBuffer> buffer;
  runtime::DeviceRuntime rt;
  Stream stream;
};

}  // namespace symmoe::test
