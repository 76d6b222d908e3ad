#pragma once
// The tuning registry: every tunable parameter is declared once, here (parameters.cpp), with its
// name, type, range, default, help text and whether a running engine applies it live (at the
// next safe point) or only on restart. project.toml's [search], [train] and [runtime] sections,
// the CLI's `--set key=value` and the studio's tuning panel are all checked against it.
// Thread-safety: the registry is immutable after construction and may be read from any thread;
// a ParameterSet is a plain value (copy it across threads, do not share it).
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace cas::params {

enum class ParamType { Int, Float, Bool, Choice };

using ParamValue = std::variant<std::int64_t, double, bool, std::string>;

struct ParameterSpec {
  std::string name;  // "section.key", e.g. "search.c_puct"
  ParamType type = ParamType::Float;
  double min = 0;  // inclusive bounds for Int and Float
  double max = 0;
  std::vector<std::string> choices;  // allowed values for Choice
  ParamValue defaultValue;
  std::string help;
  bool live = false;  // true: applies mid-run; false: takes effect when a run (re)starts

  std::string section() const { return name.substr(0, name.find('.')); }
  std::string key() const { return name.substr(name.find('.') + 1); }
};

class ParameterRegistry {
 public:
  static const ParameterRegistry& standard();

  const ParameterSpec* find(std::string_view name) const;
  const std::vector<ParameterSpec>& all() const { return specs_; }
  std::vector<std::string> sections() const;
  std::vector<const ParameterSpec*> inSection(std::string_view section) const;

 private:
  explicit ParameterRegistry(std::vector<ParameterSpec> specs) : specs_(std::move(specs)) {}
  std::vector<ParameterSpec> specs_;
};

const char* typeName(ParamType t);

// "a number in [0, 100]", "an integer in [1, 100000]", "true or false", "one of: puct, gumbel".
std::string describeRange(const ParameterSpec& spec);

std::string formatValue(const ParamValue& v);

// nullopt when `value` fits the spec; otherwise a sentence naming the parameter and its range.
// `written`, when given, is the value as the user wrote it ("1e3", "0x7fffffff"): an out-of-range
// sentence quotes it so, not the value formatted again.
std::optional<std::string> checkValue(const ParameterSpec& spec, const ParamValue& value, std::string_view written = {});

// Parses text (as given to --set or typed in the studio) into a value of the spec's type and
// checks it: the text is read as a TOML value and converted as in project.toml
// (parameter_toml.hpp), a choice is the word itself. On failure returns nullopt and fills `error`
// with a sentence naming the parameter and its range.
std::optional<ParamValue> parseValue(const ParameterSpec& spec, std::string_view text, std::string* error);

// The resolved values of every registry parameter, defaults where not set.
class ParameterSet {
 public:
  ParameterSet();  // all defaults of the standard registry

  // Validates and stores; returns an error sentence on failure and leaves the set unchanged.
  std::optional<std::string> set(std::string_view name, const ParamValue& value);
  // Parses "key=value" as given on a command line.
  std::optional<std::string> assign(std::string_view keyEqualsValue);

  const ParamValue& get(std::string_view name) const;
  std::int64_t getInt(std::string_view name) const { return std::get<std::int64_t>(get(name)); }
  double getFloat(std::string_view name) const { return std::get<double>(get(name)); }
  bool getBool(std::string_view name) const { return std::get<bool>(get(name)); }
  const std::string& getChoice(std::string_view name) const { return std::get<std::string>(get(name)); }

  bool isDefault(std::string_view name) const;
  const std::map<std::string, ParamValue, std::less<>>& values() const { return values_; }

 private:
  std::map<std::string, ParamValue, std::less<>> values_;
};

}  // namespace cas::params
