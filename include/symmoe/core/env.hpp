// Typed registry of every SYMMOE_* environment variable.
//
// Each variable is declared once (src/core/env.cpp) with its name, type, default and
// description. Reading an unregistered name, or a value that does not parse as the declared
// type, is a symmoe::Error naming the variable, the value and what was expected.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace symmoe::env {

enum class Type { kBool, kInt, kFloat, kString, kChoice };

struct Var {
  std::string name;
  Type type;
  std::string default_value;
  std::string description;
  std::vector<std::string> choices;  // kChoice only
  double min_value = 0;              // kInt / kFloat: inclusive bounds
  double max_value = 0;
};

const char* type_name(Type type);

// All registered variables, sorted by name.
const std::vector<Var>& registry();

// The declaration of `name`; throws when it is not registered.
const Var& lookup(std::string_view name);

// The raw value from the process environment, if set (and non-empty).
std::optional<std::string> raw(std::string_view name);

// Typed readers: the environment value if set, else the default; validated every call.
bool get_bool(std::string_view name);
int64_t get_int(std::string_view name);
double get_float(std::string_view name);
std::string get_string(std::string_view name);  // kString and kChoice

// Parsers used by the readers (exposed for tests): `value` as seen in variable `var`.
bool parse_bool(const Var& var, const std::string& value);
int64_t parse_int(const Var& var, const std::string& value);
double parse_float(const Var& var, const std::string& value);
std::string parse_choice(const Var& var, const std::string& value);

// SYMMOE_* names present in the environment that the registry does not know (typos).
std::vector<std::string> unknown_in_environment();

// A printable table: name, type, default, current value (or "-"), description.
std::string describe();

}  // namespace symmoe::env
