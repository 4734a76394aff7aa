// Collective success checks: every rank learns whether any rank failed a local step, and why.
#pragma once

#include <string>
#include <vector>

#include "symmoe/comm/group.hpp"

namespace symmoe::comm {

// Longest per-rank message carried by the agreement collectives (longer ones are cut).
inline constexpr size_t kMaxAgreementMessage = 384;

// Collective. Each rank passes its local error ("" = success). Returns every rank's message,
// rank-major, without throwing.
std::vector<std::string> gather_errors(Group& group, const std::string& local_error);

// Collective. Throws a symmoe::Error on every rank if any rank reported an error; the message
// names each failing rank and its reason, prefixed by `step`.
void require_all_ok(Group& group, const std::string& local_error, const std::string& step);

}  // namespace symmoe::comm
