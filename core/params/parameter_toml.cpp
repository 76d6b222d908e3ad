#include "core/params/parameter_toml.hpp"

#include "core/support/printable.hpp"

#include "core/support/toml_parse.hpp"

namespace cas::params {

std::string tomlTypeName(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::string: return "a string";
    case toml::node_type::integer: return "an integer";
    case toml::node_type::floating_point: return "a number";
    case toml::node_type::boolean: return "a boolean";
    case toml::node_type::table: return "a table";
    case toml::node_type::array: return "an array";
    default: return "a date or time";
  }
}

// The bare token a number or boolean node was written as in `document` (the node's line and
// column, in characters, to the next space, comma, bracket or comment); empty when there is no
// document, or the token is not short.
std::string_view writtenAs(std::string_view document, const toml::node& n) {
  if (document.empty() || !(n.is_number() || n.is_boolean())) return {};
  const size_t pos = tomlOffset(document, n.source().begin);
  if (pos == std::string_view::npos) return {};
  const size_t end = document.find_first_of(" \t\r\n,]}#", pos);
  const std::string_view token = document.substr(pos, end == std::string_view::npos ? std::string_view::npos : end - pos);
  return token.size() <= 64 ? token : std::string_view();
}

std::optional<ParamValue> valueFromToml(const ParameterSpec& spec, const toml::node& n, std::string* error, std::string_view document) {
  std::optional<ParamValue> value;
  switch (spec.type) {
    case ParamType::Int:
      if (auto v = n.value_exact<std::int64_t>()) value = *v;
      break;
    case ParamType::Float:
      if (auto v = n.value_exact<double>()) value = *v;
      else if (auto i = n.value_exact<std::int64_t>()) value = static_cast<double>(*i);
      break;
    case ParamType::Bool:
      if (auto v = n.value_exact<bool>()) value = *v;
      break;
    case ParamType::Choice:
      if (auto v = n.value_exact<std::string>()) value = *v;
      break;
  }
  if (!value) {
    if (error) *error = spec.name + " must be " + describeRange(spec) + ", got " + tomlTypeName(n);
    return std::nullopt;
  }
  if (auto problem = checkValue(spec, *value, writtenAs(document, n))) {
    if (error) *error = *problem;
    return std::nullopt;
  }
  return value;
}

// Text from --set or the studio is read as the TOML value it spells ("2.5", "true", "1e3"), and
// a choice as the word itself ("gumbel"), then converted like a value in project.toml.
std::optional<ParamValue> parseValue(const ParameterSpec& spec, std::string_view text, std::string* error) {
  if (spec.type == ParamType::Choice) {
    const ParamValue value = std::string(text);
    if (auto problem = checkValue(spec, value)) {
      if (error) *error = *problem;
      return std::nullopt;
    }
    return value;
  }
  auto notValid = [&]() -> std::optional<ParamValue> {
    if (error) *error = spec.name + ": " + quoteValue(text) + " is not valid: expected " + describeRange(spec);
    return std::nullopt;
  };
  // One line holding one value: nothing else can ride along into the parsed document.
  if (text.empty() || text.find_first_of("\r\n") != std::string_view::npos) return notValid();
  const std::string line = "value = " + std::string(text);
  toml::table document;
  try {
    document = parseToml(line, "--set");
  } catch (const toml::parse_error& e) {
    // A number the reader cannot hold (a 1000-digit decimal) gets the reader's reason, as the
    // same value in project.toml does; other text is simply not a value of the parameter's type.
    const bool numeral = text.find_first_not_of("0123456789+-._eE") == std::string_view::npos;
    if (numeral && error) {
      *error = spec.name + ": " + quoteValue(text) + " is not valid (" + std::string(e.description()) + "): expected " + describeRange(spec);
      return std::nullopt;
    }
    return notValid();
  }
  const toml::node* node = document.get("value");
  if (!node || document.size() != 1) return notValid();
  return valueFromToml(spec, *node, error, line);
}

}  // namespace cas::params
