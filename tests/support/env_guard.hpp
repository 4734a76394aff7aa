// Sets (or unsets) an environment variable for one scope and restores it after.
#pragma once

#include <optional>
#include <string>

namespace symmoe::test {

class EnvGuard {
 public:
  EnvGuard(std::string name, std::optional<std::string> value);
  ~EnvGuard();
  EnvGuard(const EnvGuard&) = delete;
  EnvGuard& operator=(const EnvGuard&) = delete;

 private:
  std::string name_;
  std::optional<std::string> previous_;
};

}  // namespace symmoe::test
