#include "core/support/toml_parse.hpp"

#include <string>
#include <vector>

#include "core/support/printable.hpp"

namespace cas {
namespace {

bool nonAscii(char c) { return static_cast<unsigned char>(c) >= 0x80; }

std::string hexByte(char c) {
  static const char* const kDigits = "0123456789ABCDEF";
  const auto b = static_cast<unsigned char>(c);
  return std::string("0x") + kDigits[b >> 4] + kDigits[b & 15];
}

// The most levels of nesting accepted: the parts of a dotted key, under its table header or
// inline table, and arrays. toml++ recurses once per level (a 70 KB dotted key of 35,000 parts
// overflows the stack); a project file uses three.
constexpr int kMaxDepth = 64;
const std::string kTooDeep = "more than " + std::to_string(kMaxDepth) +
                            " levels of nesting (the parts of a dotted key, tables and arrays); project.toml and a run's config.toml need three";

// Walks the text as TOML's lexer would, far enough to know whether each byte is in a comment, a
// string of which kind, an unquoted value, or between tokens; throws at the first byte that would
// reach the bug, or at the first key part, table or array nested deeper than kMaxDepth. Only the
// text before the parser's first error matters (it stops there), so on malformed text the walk
// may part from the parser's after that point.
class Screen {
 public:
  Screen(std::string_view text, std::string source) : text_(text), path_(std::make_shared<const std::string>(std::move(source))) {}

  void run() {
    if (text_.substr(0, 3) == "\xEF\xBB\xBF") i_ = lineStart_ = 3;  // a UTF-8 byte order mark, which the parser skips
    while (i_ < text_.size()) {
      const char c = text_[i_];
      if (c == '#') skipTo('\n');
      else if (text_.substr(i_, 3) == "\"\"\"") multiLineBasic();
      else if (text_.substr(i_, 3) == "'''") multiLineLiteral();
      else if (c == '"' || c == '\'') quoted(c);
      else if (nonAscii(c)) failNonAscii("a non-ASCII character outside a string or comment is not valid TOML; put it inside a quoted string");
      else if (expectValue_ && !isSpace(c) && !structural(c)) bareValue();
      else punctuation(c);
    }
  }

 private:
  static bool isSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }
  static bool structural(char c) { return c == '=' || c == '[' || c == ']' || c == '{' || c == '}' || c == ','; }

  // Whether a value (after '=', or '[' or ',' in an array) or a key comes next: the parser scans
  // an unquoted value (a number, a date, true, ...) to a value terminator, a key by its segments.
  void punctuation(char c) {
    const char open = open_.empty() ? 0 : open_.back();
    if (c == '=' && open != 'h') {
      expectValue_ = true;
      valueDepth_ = base() + keyParts_;  // the depth of the value: its key's
      keyParts_ = 0;
    } else if (c == '[') {
      const bool array = expectValue_;
      open_.push_back(array ? '[' : 'h');  // an array, or a table header's [ or [[
      levels_.push_back(array ? valueDepth_ + 1 : 0);
      if (array) {
        deeper(valueDepth_ + 1);
        valueDepth_ += 1;  // its elements
      }
      keyParts_ = 0;
    } else if (c == '{') {
      open_.push_back('{');
      levels_.push_back(valueDepth_);  // its keys nest under the key it is the value of
      expectValue_ = false;
      keyParts_ = 0;
    } else if ((c == ']' || c == '}') && !open_.empty()) {
      if (open == 'h') header_ = keyParts_ > 0 ? keyParts_ : header_;
      open_.pop_back();
      levels_.pop_back();
      expectValue_ = false;
      keyParts_ = 0;
    } else if (c == ',') {
      expectValue_ = open == '[';
      if (open == '[') valueDepth_ = levels_.back();
      keyParts_ = 0;
    } else if (c == '\n' && open != '[') {
      open_.clear();  // only an array goes on past its line; the parser stops at any other
      levels_.clear();
      expectValue_ = false;
      keyParts_ = 0;
    } else if (c == '.' && !expectValue_) {
      countKeyPart();  // the dot starts the key's next part
    } else if (!expectValue_ && !isSpace(c) && keyParts_ == 0 && c != ']' && c != '}') {
      countKeyPart();  // a bare key's first character
    }
    step();
  }

  // The depth the keys here start from: the table header's, or the inline table's.
  int base() const {
    if (open_.empty()) return header_;
    return open_.back() == 'h' ? 0 : levels_.back();
  }
  void countKeyPart() {
    ++keyParts_;
    deeper(base() + keyParts_);
  }
  void deeper(int depth) {
    if (depth > kMaxDepth) fail(kTooDeep.c_str());
  }

  // An unquoted value, which the parser reads up to whitespace, ']', '}', ',' or '#', classifying
  // every character on the way: a quote inside it starts no string.
  // A space and a digit carry the value on: the parser reads a date and a time so
  // ("1979-05-27 07:32:00"; it decides by the characters other than '_'), and in valid TOML a
  // value is never followed by a space and a digit otherwise.
  void bareValue() {
    while (i_ < text_.size() && !isSpace(text_[i_]) && text_[i_] != ']' && text_[i_] != '}' && text_[i_] != ',' && text_[i_] != '#') {
      if (nonAscii(text_[i_]))
        failNonAscii("a non-ASCII character in an unquoted value is not valid TOML (a quote inside a value starts no string); "
                     "put the whole value in quotes");
      step();
      if (i_ + 1 < text_.size() && text_[i_] == ' ' && text_[i_ + 1] >= '0' && text_[i_ + 1] <= '9') step();
    }
    expectValue_ = false;
  }
  // Every byte passes here: a non-ASCII one starts a UTF-8 character (checked whole) or
  // continues one.
  void step() {
    if (pending_ > 0) {
      --pending_;
    } else if (nonAscii(text_[i_])) {
      const size_t n = validUtf8Length(text_, i_);
      if (n == 0) failNotUtf8();
      pending_ = int(n) - 1;
    }
    if (text_[i_] == '\n') {
      ++line_;
      lineStart_ = i_ + 1;
    }
    ++i_;
  }
  void skipTo(char end) {
    while (i_ < text_.size() && text_[i_] != end) step();
  }
  // A run of `quote` of at least three closes a multi-line string (TOML allows up to two more).
  bool closes(char quote) {
    size_t n = 0;
    while (i_ + n < text_.size() && text_[i_ + n] == quote) ++n;
    if (n < 3) return false;
    for (size_t k = 0; k < n; ++k) step();
    return true;
  }
  // A single-line string: a value, or where a key is read, a quoted key part ("a".b.c has three
  // parts, as a.b.c has).
  void quoted(char quote) {
    if (!expectValue_ && keyParts_ == 0) countKeyPart();
    singleLine(quote, quote == '"');
  }
  void singleLine(char quote, bool escapes) {
    step();
    while (i_ < text_.size() && text_[i_] != '\n') {
      if (text_[i_] == quote) {
        step();
        return;
      }
      if (escapes && text_[i_] == '\\') step();
      if (i_ < text_.size() && text_[i_] != '\n') step();
    }
  }
  void multiLineLiteral() {
    for (int k = 0; k < 3; ++k) step();
    while (i_ < text_.size() && !closes('\'')) step();
  }
  void multiLineBasic() {
    for (int k = 0; k < 3; ++k) step();
    while (i_ < text_.size() && !closes('"')) {
      if (text_[i_] != '\\') {
        step();
        continue;
      }
      step();
      if (i_ >= text_.size()) return;
      if (nonAscii(text_[i_])) fail("a backslash followed by a non-ASCII character is not a valid escape in a TOML string");
      if (text_[i_] != ' ' && text_[i_] != '\t' && text_[i_] != '\r' && text_[i_] != '\n') {
        step();  // an ordinary escape: \" \\ \n \u00e9 ...
        continue;
      }
      // A line-ending backslash: the whitespace and line breaks after it are trimmed.
      while (i_ < text_.size() && (text_[i_] == ' ' || text_[i_] == '\t' || text_[i_] == '\r' || text_[i_] == '\n')) step();
      if (i_ < text_.size() && nonAscii(text_[i_]))
        fail("a multi-line string cannot go on with a non-ASCII character right after a line-ending backslash; "
             "end the previous line without the backslash, or write the character as \\uXXXX");
    }
  }
  [[noreturn]] void failNotUtf8() { fail(("the byte " + hexByte(text_[i_]) + " is not UTF-8 text; TOML files are UTF-8: save the file as UTF-8").c_str()); }
  // A non-ASCII character where TOML allows none: `why`, or when the bytes are no character at
  // all, that (quoting it would not help).
  [[noreturn]] void failNonAscii(const char* why) {
    if (validUtf8Length(text_, i_) == 0) failNotUtf8();
    fail(why);
  }
  [[noreturn]] void fail(const char* why) {
    int column = 1;  // in characters, as toml++ counts them
    for (size_t k = lineStart_; k < i_; ++k) column += (static_cast<unsigned char>(text_[k]) & 0xC0) != 0x80;
    const toml::source_position at{toml::source_index(line_), toml::source_index(column)};
    throw toml::parse_error(why, toml::source_region{at, at, path_});
  }

  std::string_view text_;
  toml::source_path_ptr path_;
  size_t i_ = 0, lineStart_ = 0;
  int line_ = 1;
  std::vector<char> open_;    // brackets open here: '[' an array, '{' an inline table, 'h' a table header
  std::vector<int> levels_;   // for each: the depth of what it holds (an array's elements, an inline table's keys)
  bool expectValue_ = false;  // a value, not a key, starts at the next token
  int keyParts_ = 0;          // the parts of the key being read
  int header_ = 0;            // the parts of the last table header: the keys below it nest under it
  int valueDepth_ = 0;        // the depth of the value being read
  int pending_ = 0;           // continuation bytes of the current UTF-8 character still to come
};

}  // namespace

toml::table parseToml(std::string_view text, std::string source) {
  Screen(text, source).run();
  return toml::parse(text, std::move(source));
}

size_t tomlOffset(std::string_view text, toml::source_position at) {
  size_t pos = 0;
  for (toml::source_index line = 1; line < at.line; ++line) {
    pos = text.find('\n', pos);
    if (pos == std::string_view::npos) return pos;
    ++pos;
  }
  for (toml::source_index column = 1; column < at.column && pos < text.size(); ++column)
    do ++pos;  // one character: its lead byte and continuation bytes
    while (pos < text.size() && (static_cast<unsigned char>(text[pos]) & 0xC0) == 0x80);
  return pos;
}

SourceLocation tomlLocation(const std::string& file, std::string_view text, toml::source_position at) {
  const size_t offset = tomlOffset(text, at);
  if (offset == std::string_view::npos || at.column == 0) return {file, int(at.line), int(at.column)};
  const size_t lineStart = offset == 0 ? 0 : text.rfind('\n', offset - 1) + 1;  // npos + 1 is 0
  return {file, int(at.line), int(offset - lineStart + 1)};
}

}  // namespace cas
