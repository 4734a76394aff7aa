// Leveled logging to stderr (or a sink installed by a host application or a test).
// The level comes from SYMMOE_LOG_LEVEL unless set_level() overrides it.
#pragma once

#include <functional>
#include <string>

#include "symmoe/core/error.hpp"

namespace symmoe::log {

enum class Level { kError = 0, kWarn = 1, kInfo = 2, kDebug = 3 };

Level level();
void set_level(Level level);
bool enabled(Level level);

using Sink = std::function<void(Level, const std::string&)>;
// Replaces the sink; returns the previous one. An empty sink restores stderr.
Sink set_sink(Sink sink);

void emit(Level level, const std::string& message);

}  // namespace symmoe::log

#define SYMMOE_LOG(lvl, ...)                                                   \
  do {                                                                         \
    if (::symmoe::log::enabled(lvl))                                           \
      ::symmoe::log::emit(lvl, ::symmoe::detail::concat(__VA_ARGS__));         \
  } while (0)
#define SYMMOE_LOG_ERROR(...) SYMMOE_LOG(::symmoe::log::Level::kError, __VA_ARGS__)
#define SYMMOE_LOG_WARN(...) SYMMOE_LOG(::symmoe::log::Level::kWarn, __VA_ARGS__)
#define SYMMOE_LOG_INFO(...) SYMMOE_LOG(::symmoe::log::Level::kInfo, __VA_ARGS__)
#define SYMMOE_LOG_DEBUG(...) SYMMOE_LOG(::symmoe::log::Level::kDebug, __VA_ARGS__)
