#include "core/support/printable.hpp"

#include <algorithm>
#include <cstdio>
#include <utility>

namespace cas {

size_t validUtf8Length(std::string_view s, size_t pos) {
  const auto b = static_cast<unsigned char>(s[pos]);
  size_t n = 0;
  unsigned min = 0;
  if (b < 0x80) return 1;
  if (b >= 0xC2 && b <= 0xDF) n = 2, min = 0x80;
  else if (b >= 0xE0 && b <= 0xEF) n = 3, min = 0x800;
  else if (b >= 0xF0 && b <= 0xF4) n = 4, min = 0x10000;
  else return 0;
  if (pos + n > s.size()) return 0;
  unsigned code = b & (0x7F >> n);
  for (size_t i = 1; i < n; ++i) {
    const auto c = static_cast<unsigned char>(s[pos + i]);
    if ((c & 0xC0) != 0x80) return 0;
    code = (code << 6) | (c & 0x3F);
  }
  if (code < min || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return 0;
  return n;
}

namespace {

// Length of the valid UTF-8 sequence at `pos` that prints as itself, or 0 when the bytes there
// are not one or encode a C1 control (0x9B is a CSI on many terminals).
size_t utf8Length(std::string_view s, size_t pos) {
  if (static_cast<unsigned char>(s[pos]) < 0x80) return 0;
  const size_t n = validUtf8Length(s, pos);
  if (n == 2 && static_cast<unsigned char>(s[pos]) == 0xC2 && static_cast<unsigned char>(s[pos + 1]) <= 0x9F) return 0;
  return n;
}

// The code point of the valid UTF-8 sequence of `n` bytes at `pos`.
char32_t codePoint(std::string_view s, size_t pos, size_t n) {
  char32_t code = static_cast<unsigned char>(s[pos]) & (0x7F >> n);
  for (size_t i = 1; i < n; ++i) code = (code << 6) | (static_cast<unsigned char>(s[pos + i]) & 0x3F);
  return code;
}

// Unicode's format characters (Cf), and the line and paragraph separators (U+2028, U+2029), which
// break a line as a newline does.
bool formatCharacter(char32_t c) {
  static constexpr std::pair<char32_t, char32_t> kRanges[] = {
      {0x00AD, 0x00AD},   {0x0600, 0x0605},   {0x061C, 0x061C},   {0x06DD, 0x06DD},   {0x070F, 0x070F},  {0x180E, 0x180E},
      {0x200B, 0x200F},   {0x2028, 0x202E},   {0x2060, 0x2064},   {0x2066, 0x206F},   {0xFEFF, 0xFEFF},  {0xFFF9, 0xFFFB},
      {0x110BD, 0x110BD}, {0x1BCA0, 0x1BCA3}, {0x1D173, 0x1D17A}, {0xE0001, 0xE0001}, {0xE0020, 0xE007F}};
  for (const auto& [first, last] : kRanges)
    if (c >= first && c <= last) return true;
  return false;
}

std::string escapeByte(unsigned char c) {
  switch (c) {
    case '\n': return "\\n";
    case '\r': return "\\r";
    case '\t': return "\\t";
    default: {
      char b[8];
      std::snprintf(b, sizeof b, "\\x%02x", c);
      return b;
    }
  }
}

// A format character as \u202e (or \U000e0001 beyond the first plane).
std::string escapeFormat(char32_t c) {
  char b[16];
  std::snprintf(b, sizeof b, c > 0xFFFF ? "\\U%08x" : "\\u%04x", static_cast<unsigned>(c));
  return b;
}

}  // namespace

// The cells a terminal gives a printable character: two for the East Asian wide and fullwidth
// ranges (CJK, Hangul, fullwidth forms, emoji), none for a combining mark, else one, so that a
// caret under a source line stands under the character it names.
size_t terminalColumns(char32_t c) {
  struct Range {
    char32_t first, last;
  };
  static const Range kCombining[] = {{0x0300, 0x036F}, {0x1AB0, 0x1AFF}, {0x1DC0, 0x1DFF}, {0x20D0, 0x20FF}, {0xFE20, 0xFE2F}};
  static const Range kWide[] = {{0x1100, 0x115F},   {0x2E80, 0x303E},   {0x3041, 0x33FF},   {0x3400, 0x4DBF}, {0x4E00, 0x9FFF},
                                {0xA000, 0xA4CF},   {0xAC00, 0xD7A3},   {0xF900, 0xFAFF},   {0xFE30, 0xFE4F}, {0xFF00, 0xFF60},
                                {0xFFE0, 0xFFE6},   {0x1F300, 0x1F64F}, {0x1F900, 0x1F9FF}, {0x20000, 0x2FFFD}, {0x30000, 0x3FFFD}};
  auto in = [c](const auto& ranges) { return std::any_of(std::begin(ranges), std::end(ranges), [c](const Range& r) { return c >= r.first && c <= r.last; }); };
  return in(kCombining) ? 0 : in(kWide) ? 2 : 1;
}

char32_t formatCharacterAt(std::string_view text, size_t pos) {
  const size_t n = pos < text.size() ? utf8Length(text, pos) : 0;
  const char32_t c = n ? codePoint(text, pos, n) : 0;
  return formatCharacter(c) ? c : 0;
}

PrintedUnit printedUnit(std::string_view text, size_t pos, Keep keep) {
  const auto c = static_cast<unsigned char>(text[pos]);
  if (c == '\t' && keep != Keep::Nothing) return {1, 1, false};
  if (c == '\n' && keep == Keep::TabsAndNewlines) return {1, 0, false};
  if (c < 0x20 || c == 0x7F) return {1, escapeByte(c).size(), true};
  if (c < 0x80) return {1, 1, false};
  if (const size_t n = utf8Length(text, pos)) {
    const char32_t code = codePoint(text, pos, n);
    return formatCharacter(code) ? PrintedUnit{n, 6, true} : PrintedUnit{n, terminalColumns(code), false};
  }
  // Not UTF-8, or an encoded C1 control: each byte is escaped on its own.
  return {1, 4, true};
}

std::string printable(std::string_view text, Keep keep) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const PrintedUnit unit = printedUnit(text, i, keep);
    if (unit.escaped && unit.bytes > 1) out += escapeFormat(codePoint(text, i, unit.bytes));
    else if (unit.escaped) out += escapeByte(static_cast<unsigned char>(text[i]));
    else out.append(text.substr(i, unit.bytes));
    i += unit.bytes;
  }
  return out;
}

std::string printableQuoting(std::string_view message, std::string_view value) {
  std::string out;
  size_t from = 0;
  for (size_t at = value.empty() ? std::string_view::npos : message.find(value); at != std::string_view::npos; at = message.find(value, from)) {
    out += printable(message.substr(from, at - from)) + quoteValue(value);
    from = at + value.size();
  }
  return out + printable(message.substr(from));
}

std::string quoteValue(std::string_view text, size_t max) {
  if (text.size() <= max) return "'" + printable(text) + "'";
  size_t cut = max;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;  // not inside a UTF-8 sequence
  return "'" + printable(text.substr(0, cut)) + "... (" + std::to_string(text.size()) + " bytes)'";
}

std::string quoteShape(const std::vector<std::int64_t>& shape, size_t maxDims) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size() && i < maxDims; ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  if (shape.size() > maxDims) out += ", ... (" + std::to_string(shape.size()) + " dims)";
  return out + "]";
}

}  // namespace cas
