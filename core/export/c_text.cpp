#include "core/export/c_text.hpp"

#include <cctype>
#include <cmath>
#include <cstdio>

namespace cas::exports {

// A float as a C literal that reads back exactly.
std::string floatLiteral(float v) {
  if (std::isnan(v)) return "NAN";
  if (std::isinf(v)) return v > 0 ? "HUGE_VALF" : "-HUGE_VALF";
  char text[32];
  std::snprintf(text, sizeof text, "%.9g", double(v));
  std::string s = text;
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return s + "f";
}

std::string identifier(const std::string& name) {
  std::string s;
  for (char c : name) s += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) s.insert(0, "_");
  return s;
}

std::string upper(std::string s) {
  for (char& c : s) c = char(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// `text` with each "{NAME}" replaced by its value, for code written as a template.
std::string filled(std::string text, const std::vector<std::pair<std::string, std::string>>& values) {
  for (const auto& [name, value] : values) {
    const std::string key = "{" + name + "}";
    for (size_t at = text.find(key); at != std::string::npos; at = text.find(key, at + value.size())) text.replace(at, key.size(), value);
  }
  return text;
}

// Text for a C comment: names come from the project and the policy, and "*/" would end it.
std::string commentText(std::string text) {
  for (size_t at = text.find("*/"); at != std::string::npos; at = text.find("*/", at)) text.replace(at, 2, "* /");
  return text;
}

std::string staticArray(const std::string& name, const std::vector<float>& values, const std::string& what) {
  std::string s = "/* " + commentText(what) + " */\nstatic const float " + name + "[" + std::to_string(values.size()) + "] = {";
  for (size_t i = 0; i < values.size(); ++i) {
    s += i % 8 == 0 ? "\n  " : " ";
    s += floatLiteral(values[i]) + ",";
  }
  return s + "\n};\n";
}

}  // namespace cas::exports
