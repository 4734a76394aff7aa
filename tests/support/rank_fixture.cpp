#include "support/rank_fixture.hpp"

namespace symmoe::test {

namespace {
symm::SymmetricBufferOptions fd_options(size_t bytes) {
  symm::SymmetricBufferOptions o;
  o.bytes_per_rank = bytes;
  o.handle_type = symm::HandleType::kFd;
  return o;
}
}  // namespace

RankFixture::RankFixture(comm::Group& group, size_t bytes)
    : buffer(symm::SymmetricBuffer::create(group, fd_options(bytes))), rt(buffer->device()) {}

}  // namespace symmoe::test
