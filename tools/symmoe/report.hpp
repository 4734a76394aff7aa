// What a symmoe command found: printed as it goes, and kept for the JSON file.
#pragma once

#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace symmoe::cli {

class Report {
 public:
  explicit Report(std::string command);

  void section(const std::string& title);
  void line(const std::string& text);
  // A named fact (printed "  key: value"); numbers stay numbers in the JSON.
  void fact(const std::string& key, const std::string& value);
  void fact(const std::string& key, double value, const std::string& unit = "");
  // A number for the JSON only (for values a printed table already shows).
  void record(const std::string& key, double value, const std::string& unit = "");
  // A check that counts toward the verdict.
  void check(const std::string& name, bool ok, const std::string& detail);
  // A check that could not run here (not a failure).
  void skip(const std::string& name, const std::string& why);

  bool all_ok() const;
  int num_checks() const { return static_cast<int>(checks_.size()); }
  std::string to_json() const;
  // Writes the JSON; throws symmoe::Error when the file cannot be written.
  void write_json(const std::string& path) const;

 private:
  struct Fact {
    std::string section, key, text;
    bool numeric = false;
    double number = 0;
  };
  struct Check {
    std::string section, name, status, detail;
  };
  std::string command_;
  std::string commit_;  // SYMMOE_BUILD_COMMIT, else the commit stamped at build time
  std::string section_ = "general";
  std::vector<Fact> facts_;
  std::vector<Check> checks_;
};

std::string json_escape(const std::string& s);

}  // namespace symmoe::cli
