#include "symmoe/core/log.hpp"

#include <atomic>
#include <cstdio>
#include <mutex>

#include "symmoe/core/env.hpp"

namespace symmoe::log {
namespace {

constexpr int kUnset = -1;
std::atomic<int> g_level{kUnset};
std::mutex g_sink_mutex;
Sink g_sink;

const char* tag(Level level) {
  switch (level) {
    case Level::kError: return "E";
    case Level::kWarn: return "W";
    case Level::kInfo: return "I";
    case Level::kDebug: return "D";
  }
  return "?";
}

Level level_from_env() {
  const std::string name = env::get_string("SYMMOE_LOG_LEVEL");
  if (name == "error") return Level::kError;
  if (name == "info") return Level::kInfo;
  if (name == "debug") return Level::kDebug;
  return Level::kWarn;
}

}  // namespace

Level level() {
  int current = g_level.load(std::memory_order_relaxed);
  if (current == kUnset) {
    current = static_cast<int>(level_from_env());
    g_level.store(current, std::memory_order_relaxed);
  }
  return static_cast<Level>(current);
}

void set_level(Level new_level) { g_level.store(static_cast<int>(new_level)); }

bool enabled(Level message_level) { return static_cast<int>(message_level) <= static_cast<int>(level()); }

Sink set_sink(Sink sink) {
  std::lock_guard lock(g_sink_mutex);
  Sink previous = std::move(g_sink);
  g_sink = std::move(sink);
  return previous;
}

void emit(Level message_level, const std::string& message) {
  std::lock_guard lock(g_sink_mutex);
  if (g_sink) {
    g_sink(message_level, message);
    return;
  }
  std::fprintf(stderr, "[symmoe %s] %s\n", tag(message_level), message.c_str());
}

}  // namespace symmoe::log
