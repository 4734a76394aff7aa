#include "support/env_guard.hpp"

#include <cstdlib>

namespace symmoe::test {

EnvGuard::EnvGuard(std::string name, std::optional<std::string> value) : name_(std::move(name)) {
  if (const char* old = std::getenv(name_.c_str())) previous_ = old;
  if (value) ::setenv(name_.c_str(), value->c_str(), 1);
  else ::unsetenv(name_.c_str());
}

EnvGuard::~EnvGuard() {
  if (previous_) ::setenv(name_.c_str(), previous_->c_str(), 1);
  else ::unsetenv(name_.c_str());
}

}  // namespace symmoe::test
