#include "report.hpp"

#include <fstream>
#include <iomanip>
#include <sstream>

#include <unistd.h>

#include "symmoe/core/device_info.hpp"
#include "symmoe/core/env.hpp"
#include "symmoe/core/error.hpp"
#include "symmoe/version.hpp"
#include "symmoe_commit.h"  // generated at build time: SYMMOE_GIT_COMMIT

namespace symmoe::cli {

std::string json_escape(const std::string& s) {
  std::ostringstream os;
  for (unsigned char c : s) {
    switch (c) {
      case '"': os << "\\\""; break;
      case '\\': os << "\\\\"; break;
      case '\n': os << "\\n"; break;
      case '\t': os << "\\t"; break;
      default:
        if (c < 0x20) os << "\\u" << std::hex << std::setw(4) << std::setfill('0') << int(c)
                         << std::dec << std::setfill(' ');
        else os << c;
    }
  }
  return os.str();
}

Report::Report(std::string command) : command_(std::move(command)) {
  commit_ = env::get_string("SYMMOE_BUILD_COMMIT");
  if (commit_.empty()) commit_ = SYMMOE_GIT_COMMIT;
}

namespace {

// Host name and GPU 0. Called only when a JSON file is written: it initializes CUDA, which
// must not happen before the doctor forks its process ranks.
std::string describe_machine() {
  char host[256] = {};
  ::gethostname(host, sizeof(host) - 1);
  std::string machine = host;
  if (probe_cuda().device_count > 0) {
    const DeviceInfo d = query_device(0);
    machine += detail::concat(", ", d.name, " (", d.arch, ", ", d.num_sms, " SMs)");
  } else {
    machine += ", no GPU";
  }
  return machine;
}

}  // namespace

void Report::section(const std::string& title) {
  section_ = title;
  std::printf("\n== %s\n", title.c_str());
  std::fflush(stdout);
}

void Report::line(const std::string& text) {
  std::printf("  %s\n", text.c_str());
  std::fflush(stdout);
}

void Report::fact(const std::string& key, const std::string& value) {
  facts_.push_back({section_, key, value});
  std::printf("  %-22s %s\n", (key + ":").c_str(), value.c_str());
  std::fflush(stdout);
}

void Report::fact(const std::string& key, double value, const std::string& unit) {
  record(key, value, unit);
  std::printf("  %-22s %s\n", (key + ":").c_str(), facts_.back().text.c_str());
  std::fflush(stdout);
}

void Report::record(const std::string& key, double value, const std::string& unit) {
  std::ostringstream os;
  os << std::setprecision(6) << value << (unit.empty() ? "" : " " + unit);
  facts_.push_back({section_, key + (unit.empty() ? "" : "_" + unit), os.str(), true, value});
}

void Report::check(const std::string& name, bool ok, const std::string& detail) {
  checks_.push_back({section_, name, ok ? "pass" : "FAIL", detail});
  std::printf("  [%s] %s%s%s\n", ok ? "pass" : "FAIL", name.c_str(), detail.empty() ? "" : ": ",
              detail.c_str());
  std::fflush(stdout);
}

void Report::skip(const std::string& name, const std::string& why) {
  checks_.push_back({section_, name, "skip", why});
  std::printf("  [skip] %s: %s\n", name.c_str(), why.c_str());
  std::fflush(stdout);
}

bool Report::all_ok() const {
  for (const auto& c : checks_) {
    if (c.status == "FAIL") return false;
  }
  return true;
}

std::string Report::to_json() const {
  std::ostringstream os;
  os << "{\n  \"tool\": \"symmoe\",\n  \"version\": \"" << kVersion << "\",\n  \"command\": \""
     << json_escape(command_) << "\",\n  \"commit\": \"" << json_escape(commit_)
     << "\",\n  \"machine\": \"" << json_escape(describe_machine()) << "\",\n  \"verdict\": \"" << (all_ok() ? "pass" : "fail")
     << "\",\n  \"facts\": [";
  for (size_t i = 0; i < facts_.size(); ++i) {
    const Fact& f = facts_[i];
    os << (i ? "," : "") << "\n    {\"section\": \"" << json_escape(f.section) << "\", \"key\": \""
       << json_escape(f.key) << "\", \"value\": ";
    if (f.numeric) {
      os << std::setprecision(9) << f.number;
    } else {
      os << "\"" << json_escape(f.text) << "\"";
    }
    os << "}";
  }
  os << "\n  ],\n  \"checks\": [";
  for (size_t i = 0; i < checks_.size(); ++i) {
    const Check& c = checks_[i];
    os << (i ? "," : "") << "\n    {\"section\": \"" << json_escape(c.section) << "\", \"name\": \""
       << json_escape(c.name) << "\", \"status\": \"" << c.status << "\", \"detail\": \""
       << json_escape(c.detail) << "\"}";
  }
  os << "\n  ]\n}\n";
  return os.str();
}

void Report::write_json(const std::string& path) const {
  std::ofstream out(path);
  SYMMOE_CHECK(out.good(), "cannot open '", path, "' for writing");
  out << to_json();
  SYMMOE_CHECK(out.good(), "writing '", path, "' failed");
}

}  // namespace symmoe::cli
