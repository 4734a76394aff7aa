#include "symmoe/comm/agreement.hpp"

#include <array>
#include <cstring>

#include "symmoe/core/error.hpp"

namespace symmoe::comm {

std::vector<std::string> gather_errors(Group& group, const std::string& local_error) {
  std::array<char, kMaxAgreementMessage> mine{};
  std::strncpy(mine.data(), local_error.c_str(), mine.size() - 1);
  auto all = group.all_gather_value(mine);
  std::vector<std::string> out;
  out.reserve(all.size());
  for (const auto& m : all) out.emplace_back(m.data());
  return out;
}

void require_all_ok(Group& group, const std::string& local_error, const std::string& step) {
  const auto errors = gather_errors(group, local_error);
  std::string text;
  int failed = 0;
  for (size_t r = 0; r < errors.size(); ++r) {
    if (errors[r].empty()) continue;
    ++failed;
    text += detail::concat("\n  rank ", r, ": ", errors[r]);
  }
  if (failed > 0) {
    SYMMOE_FAIL(step, " failed on ", failed, " of ", group.size(), " ranks (seen from rank ",
                group.rank(), "):", text);
  }
}

}  // namespace symmoe::comm
