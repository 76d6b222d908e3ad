#include "core/project/project_file_edit.hpp"

#include <cctype>

#include "core/params/parameter_toml.hpp"
#include "core/support/toml_parse.hpp"

namespace cas::project {
namespace {

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// The table a line opens ("search" for "[search]  # comment"); empty when it opens none. An
// array of tables ("[[x]]") counts as a table of another name, so keys are not looked for there.
std::optional<std::string> tableOpened(std::string_view line) {
  line = trimmed(line);
  if (line.empty() || line.front() != '[') return std::nullopt;
  if (line.size() > 1 && line[1] == '[') return std::string("[[array]]");
  const size_t close = line.find(']');
  if (close == std::string_view::npos) return std::nullopt;
  return std::string(trimmed(line.substr(1, close - 1)));
}

// Where the value of `key = value  # comment` starts and ends (the comment and the end of line
// excluded); nullopt when the line does not assign `key`.
std::optional<std::pair<size_t, size_t>> valueSpan(std::string_view line, std::string_view key) {
  const size_t start = line.find_first_not_of(" \t");
  if (start == std::string_view::npos || line.substr(start, key.size()) != key) return std::nullopt;
  size_t i = start + key.size();
  while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
  if (i >= line.size() || line[i] != '=') return std::nullopt;
  ++i;
  const size_t valueStart = i;
  char quote = 0;
  for (; i < line.size(); ++i) {
    const char c = line[i];
    if (quote) {
      if (c == '\\' && quote == '"') ++i;
      else if (c == quote) quote = 0;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '#') {
      break;
    }
  }
  size_t valueEnd = i;
  while (valueEnd > valueStart && (line[valueEnd - 1] == ' ' || line[valueEnd - 1] == '\t' || line[valueEnd - 1] == '\r')) --valueEnd;
  return std::pair{valueStart, valueEnd};
}

void assign(std::vector<std::string>& lines, const std::string& section, const std::string& key, const std::string& value) {
  std::string current;  // the table of the line being read; "" before the first header
  std::optional<size_t> lastOfSection;  // the last non-blank line of [section]
  for (size_t n = 0; n < lines.size(); ++n) {
    if (auto table = tableOpened(lines[n])) {
      current = *table;
      if (current == section) lastOfSection = n;
      continue;
    }
    if (current != section) continue;
    if (!trimmed(lines[n]).empty()) lastOfSection = n;
    if (auto span = valueSpan(lines[n], key)) {
      const std::string& line = lines[n];
      std::string rest = line.substr(span->second);
      lines[n] = line.substr(0, span->first) + " " + value + (trimmed(rest).empty() ? std::string() : rest);
      return;
    }
  }
  if (lastOfSection) {
    lines.insert(lines.begin() + std::ptrdiff_t(*lastOfSection + 1), key + " = " + value);
    return;
  }
  if (!lines.empty() && !trimmed(lines.back()).empty()) lines.emplace_back();
  lines.push_back("[" + section + "]");
  lines.push_back(key + " = " + value);
}

}  // namespace

std::string tomlValueText(const params::ParameterSpec& spec, const params::ParamValue& value) {
  if (spec.type == params::ParamType::Choice) {
    std::string out = "\"";
    for (char c : std::get<std::string>(value)) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
    return out + "\"";
  }
  std::string s = params::formatValue(value);
  if (spec.type == params::ParamType::Float && s.find_first_of(".eEn") == std::string::npos) s += ".0";
  return s;
}

std::optional<std::string> withParameterValues(std::string_view text, const std::vector<ParameterAssignment>& assignments, std::string* error) {
  std::vector<std::string> lines;
  for (size_t start = 0; start <= text.size();) {
    const size_t end = text.find('\n', start);
    if (end == std::string_view::npos) {
      if (start < text.size()) lines.emplace_back(text.substr(start));
      break;
    }
    lines.emplace_back(text.substr(start, end - start));
    start = end + 1;
  }
  for (const ParameterAssignment& a : assignments) {
    const params::ParameterSpec* spec = params::ParameterRegistry::standard().find(a.name);
    if (!spec) {
      if (error) *error = "unknown parameter '" + a.name + "'";
      return std::nullopt;
    }
    assign(lines, spec->section(), spec->key(), tomlValueText(*spec, a.value));
  }
  std::string out;
  for (const std::string& line : lines) out += line + "\n";
  // Read back: the text must still parse, and hold each value written.
  try {
    const toml::table root = parseToml(out, "project.toml");
    for (const ParameterAssignment& a : assignments) {
      const params::ParameterSpec& spec = *params::ParameterRegistry::standard().find(a.name);
      const toml::node* node = root[spec.section()][spec.key()].node();
      std::string problem;
      const auto value = node ? params::valueFromToml(spec, *node, &problem) : std::nullopt;
      if (!value || params::formatValue(*value) != params::formatValue(a.value)) {
        if (error)
          *error = "project.toml cannot take " + a.name + " = " + params::formatValue(a.value) +
                   " in place (the file defines it in a way this edit does not handle); set it by hand";
        return std::nullopt;
      }
    }
  } catch (const toml::parse_error& e) {
    if (error) *error = "project.toml would not parse after the edit (" + std::string(e.description()) + "); set the values by hand";
    return std::nullopt;
  }
  return out;
}

}  // namespace cas::project
