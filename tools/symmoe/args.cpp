#include "args.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "symmoe/core/error.hpp"

namespace symmoe::cli {

Args::Args(const std::vector<std::string>& argv, const std::vector<std::string>& flags,
           const std::vector<std::string>& options) {
  auto is = [](const std::vector<std::string>& set, const std::string& n) {
    return std::find(set.begin(), set.end(), n) != set.end();
  };
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    SYMMOE_CHECK(a.rfind("--", 0) == 0, "unexpected argument '", a, "' (options start with --)");
    std::string name = a.substr(2);
    std::optional<std::string> inline_value;
    if (auto eq = name.find('='); eq != std::string::npos) {
      inline_value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    if (is(flags, name)) {
      SYMMOE_CHECK(!inline_value, "--", name, " takes no value");
      values_[name] = "1";
    } else if (is(options, name)) {
      if (inline_value) {
        values_[name] = *inline_value;
      } else {
        SYMMOE_CHECK(i + 1 < argv.size(), "--", name, " needs a value");
        values_[name] = argv[++i];
      }
    } else {
      std::string known;
      for (const auto& f : flags) known += " --" + f;
      for (const auto& o : options) known += " --" + o + " <value>";
      SYMMOE_FAIL("unknown option '", a, "'; this command takes:", known);
    }
  }
}

bool help_requested(const std::vector<std::string>& argv) {
  return std::any_of(argv.begin(), argv.end(), [](const std::string& a) { return a == "--help" || a == "-h"; });
}

int print_usage(const std::string& usage) {
  std::printf("%s\n", usage.c_str());
  return 0;
}

int usage_exit(const std::string& command, const std::exception& e, const std::string& usage) {
  std::fprintf(stderr, "symmoe %s: %s\n%s\n", command.c_str(), e.what(), usage.c_str());
  return 2;
}

bool Args::flag(const std::string& name) const { return values_.count(name) != 0; }

std::optional<std::string> Args::get(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end()) return std::nullopt;
  return it->second;
}

int64_t Args::get_int(const std::string& name, int64_t fallback, int64_t min, int64_t max) const {
  auto v = get(name);
  if (!v) return fallback;
  char* end = nullptr;
  errno = 0;
  const long long parsed = std::strtoll(v->c_str(), &end, 10);
  SYMMOE_CHECK(!v->empty() && *end == '\0' && errno == 0, "--", name, " '", *v,
               "' is not an integer");
  SYMMOE_CHECK(parsed >= min && parsed <= max, "--", name, " ", parsed, " must lie in [", min,
               ", ", max, "]");
  return parsed;
}

uint64_t parse_size(const std::string& option, const std::string& text) {
  char* end = nullptr;
  errno = 0;
  const double value = std::strtod(text.c_str(), &end);
  SYMMOE_CHECK(!text.empty() && errno == 0 && value > 0, "--", option, " '", text,
               "' is not a positive size");
  std::string suffix(end);
  double scale = 1;
  if (suffix == "K" || suffix == "KiB") scale = 1024.0;
  else if (suffix == "M" || suffix == "MiB") scale = 1024.0 * 1024;
  else if (suffix == "G" || suffix == "GiB") scale = 1024.0 * 1024 * 1024;
  else SYMMOE_CHECK(suffix.empty(), "--", option, " '", text, "': unknown suffix '", suffix,
                    "' (use K, M or G)");
  return static_cast<uint64_t>(value * scale);
}

uint64_t Args::get_size(const std::string& name, uint64_t fallback) const {
  auto v = get(name);
  return v ? parse_size(name, *v) : fallback;
}

std::vector<int> Args::get_int_list(const std::string& name) const {
  std::vector<int> out;
  auto v = get(name);
  if (!v) return out;
  std::stringstream ss(*v);
  std::string item;
  while (std::getline(ss, item, ',')) {
    char* end = nullptr;
    const long parsed = std::strtol(item.c_str(), &end, 10);
    SYMMOE_CHECK(!item.empty() && *end == '\0' && parsed >= 0, "--", name, " '", *v,
                 "' must be a comma-separated list of non-negative integers");
    out.push_back(static_cast<int>(parsed));
  }
  return out;
}

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> out;
  size_t at = 0;
  while (true) {
    const size_t comma = text.find(',', at);
    out.push_back(text.substr(at, comma == std::string::npos ? std::string::npos : comma - at));
    if (comma == std::string::npos) return out;
    at = comma + 1;
  }
}

}  // namespace symmoe::cli
