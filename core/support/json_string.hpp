#pragma once
// A JSON string literal for any text: quotes and backslashes escaped, control characters as
// \u00XX, so a name holding a tab or a quote stays one string of a one-line JSON object. Bytes
// from 0x80 pass through (UTF-8 text stays as it is).
// Thread-safety: pure function.
#include <string>

namespace cas {

inline std::string jsonString(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (static_cast<unsigned char>(c) < 0x20) {
      static const char* hex = "0123456789abcdef";
      out += "\\u00";
      out += hex[(c >> 4) & 0xf];
      out += hex[c & 0xf];
      continue;
    }
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

}  // namespace cas
