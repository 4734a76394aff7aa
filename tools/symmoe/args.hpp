// Minimal command-line parsing for the symmoe tool: --flag, --key value, --key=value.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace symmoe::cli {

class Args {
 public:
  // `flags` take no value; `options` take one. Unknown arguments are errors.
  Args(const std::vector<std::string>& argv, const std::vector<std::string>& flags,
       const std::vector<std::string>& options);

  bool flag(const std::string& name) const;
  std::optional<std::string> get(const std::string& name) const;
  int64_t get_int(const std::string& name, int64_t fallback, int64_t min, int64_t max) const;
  // Sizes accept K/M/G suffixes (powers of 1024).
  uint64_t get_size(const std::string& name, uint64_t fallback) const;
  std::vector<int> get_int_list(const std::string& name) const;  // "0,1,2"

 private:
  std::map<std::string, std::string> values_;
};

uint64_t parse_size(const std::string& option, const std::string& text);

// Every command's parser starts with `if (help_requested(argv)) return print_usage(usage);`:
// --help or -h anywhere in argv (also where an option's value would be) prints the usage alone,
// to stdout, and exits 0, whatever else argv holds. usage_exit prints a parse error with the
// usage, to stderr, and returns 2; `command` as in "symmoe <command>: <error>".
bool help_requested(const std::vector<std::string>& argv);
int print_usage(const std::string& usage);
int usage_exit(const std::string& command, const std::exception& e, const std::string& usage);
// What an option parser returns when the command is to run; else the exit code (usage_exit's).
inline constexpr int kParsed = -1;

// "a,b,,c" -> {"a", "b", "", "c"} (empty items kept, for the caller's check to name).
std::vector<std::string> split_commas(const std::string& text);

}  // namespace symmoe::cli
