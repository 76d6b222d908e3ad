#include "core/pdl/lexer.hpp"

#include <cctype>
#include <optional>

namespace cas::pdl {
namespace {

bool isNameStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool isNameChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Where the program starts: after a UTF-8 byte order mark (some editors save one), which is no
// part of it; line 1's columns count from there, as an editor shows them.
size_t programStart(std::string_view src) { return src.starts_with("\xEF\xBB\xBF") ? 3 : 0; }

}  // namespace

std::vector<Token> lex(std::string_view src, const std::string& file, DiagnosticList& diags, bool* stopped) {
  std::vector<Token> out;
  // An error is held back until a different one comes, so that repeats on its line are counted.
  std::optional<Diagnostic> held;
  int repeats = 0, reported = 0;
  auto release = [&] {
    if (!held) return;
    if (repeats > 0) held->message += " (" + std::to_string(repeats + 1) + " times on this line)";
    diags.add(std::move(*held));
    held.reset();
    repeats = 0;
    ++reported;
  };
  auto error = [&](int line, int col, std::string message) {
    if (held && held->location.line == line && held->message == message) {
      ++repeats;
      return;
    }
    release();
    held = Diagnostic{Severity::Error, {file, line, col}, std::move(message), {}};
  };
  if (src.size() > kMaxSourceBytes) {
    error(1, 1, "the file is larger than 1 MiB; PDL programs are limited to that size");
    release();
    out.push_back({Tok::End, "", {1, 1}});
    return out;
  }
  std::vector<int> indents = {0};
  int depth = 0;  // bracket nesting: newlines inside brackets continue the line
  int line = 1;
  size_t i = programStart(src), lineStart = i;
  bool atLineStart = true;
  std::vector<Pos> brackets;

  while (i < src.size()) {
    if (reported >= kMaxErrorsPerFile) {  // what is held now would be one error too many: stop there
      diags.error(held ? held->location : SourceLocation{file, line, int(i - lineStart) + 1}, "too many errors; stopping here");
      if (stopped) *stopped = true;
      out.push_back({Tok::End, "", {line, 1}});
      return out;
    }
    if (atLineStart && depth == 0) {
      // Measure indentation; skip blank and comment-only lines entirely.
      size_t j = i;
      int width = 0;
      bool tab = false;
      while (j < src.size() && (src[j] == ' ' || src[j] == '\t')) {
        tab |= src[j] == '\t';
        ++width;
        ++j;
      }
      if (j >= src.size()) break;
      if (src[j] == '\n' || src[j] == '\r' || src[j] == '#') {
        while (j < src.size() && src[j] != '\n') ++j;
        i = j < src.size() ? j + 1 : j;
        lineStart = i;
        ++line;
        continue;
      }
      atLineStart = false;
      if (tab) error(line, 1, "tabs are not allowed in indentation; indent with spaces");
      const Pos pos{line, width + 1};
      if (width > indents.back()) {
        indents.push_back(width);
        out.push_back({Tok::Indent, "", pos});
      } else {
        while (width < indents.back()) {
          indents.pop_back();
          out.push_back({Tok::Dedent, "", pos});
        }
        if (width != indents.back()) {
          error(line, width + 1, "this line's indentation matches no enclosing block");
          indents.push_back(width);
        }
      }
      i = j;
      continue;
    }
    const char c = src[i];
    const int col = int(i - lineStart) + 1;
    if (c == '\n') {
      if (depth == 0 && !out.empty() && out.back().kind != Tok::Newline) out.push_back({Tok::Newline, "", {line, col}});
      ++line;
      ++i;
      lineStart = i;
      atLineStart = true;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\r') {
      ++i;
      continue;
    }
    if (c == '#') {
      while (i < src.size() && src[i] != '\n') ++i;
      continue;
    }
    if (c == '\\' && i + 1 < src.size() && src[i + 1] == '\n') {
      i += 2;
      lineStart = i;
      ++line;
      continue;
    }
    if (isNameStart(c)) {
      size_t j = i;
      while (j < src.size() && isNameChar(src[j])) ++j;
      out.push_back({Tok::Name, std::string(src.substr(i, j - i)), {line, col}});
      i = j;
      continue;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) || (c == '.' && i + 1 < src.size() && std::isdigit(static_cast<unsigned char>(src[i + 1])))) {
      size_t j = i;
      bool isFloat = false;
      while (j < src.size() && std::isdigit(static_cast<unsigned char>(src[j]))) ++j;
      if (j < src.size() && src[j] == '.') {
        isFloat = true;
        ++j;
        while (j < src.size() && std::isdigit(static_cast<unsigned char>(src[j]))) ++j;
      }
      if (j < src.size() && (src[j] == 'e' || src[j] == 'E')) {
        size_t k = j + 1;
        if (k < src.size() && (src[k] == '+' || src[k] == '-')) ++k;
        if (k < src.size() && std::isdigit(static_cast<unsigned char>(src[k]))) {
          isFloat = true;
          j = k;
          while (j < src.size() && std::isdigit(static_cast<unsigned char>(src[j]))) ++j;
        }
      }
      // A letter, or a second '.' ("1.2.3", "1..2"), right after a number makes it malformed.
      if (j < src.size() && (isNameStart(src[j]) || (isFloat && src[j] == '.'))) {
        size_t k = j;
        while (k < src.size() && (isNameChar(src[k]) || src[k] == '.')) ++k;
        error(line, col, "'" + std::string(src.substr(i, k - i)) + "' is not a valid number");
        out.push_back({Tok::Int, "0", {line, col}});  // stands in for it, so the parser reports nothing more here
        i = k;
        continue;
      }
      out.push_back({isFloat ? Tok::Float : Tok::Int, std::string(src.substr(i, j - i)), {line, col}});
      i = j;
      continue;
    }
    if (c == '\'' || c == '"') {
      size_t j = i + 1;
      std::string text;
      bool closed = false;
      while (j < src.size() && src[j] != '\n') {
        if (src[j] == '\\' && j + 1 < src.size() && src[j + 1] != '\n') {
          text += src[j + 1];
          j += 2;
          continue;
        }
        if (src[j] == c) {
          closed = true;
          break;
        }
        text += src[j++];
      }
      if (!closed) {
        error(line, col, "this string is not closed before the end of the line");
        i = j;
        continue;
      }
      out.push_back({Tok::String, text, {line, col}});
      i = j + 1;
      continue;
    }
    static const char* twoChar[] = {"==", "!=", "<=", ">=", "**"};
    bool matched = false;
    for (const char* op : twoChar)
      if (src.substr(i, 2) == op) {
        out.push_back({Tok::Op, op, {line, col}});
        i += 2;
        matched = true;
        break;
      }
    if (matched) continue;
    if (std::string_view("+-*/()[],:=.@<>").find(c) != std::string_view::npos) {
      if (c == '(' || c == '[') {
        ++depth;
        brackets.push_back({line, col});
      } else if (c == ')' || c == ']') {
        if (depth == 0) {
          error(line, col, std::string("'") + c + "' has no matching opening bracket");
          ++i;
          continue;
        }
        --depth;
        brackets.pop_back();
      }
      out.push_back({Tok::Op, std::string(1, c), {line, col}});
      ++i;
      continue;
    }
    if (static_cast<unsigned char>(c) >= 0x80) {
      error(line, col, "non-ASCII characters are allowed only in comments and strings");
      while (i < src.size() && static_cast<unsigned char>(src[i]) >= 0x80) ++i;
      continue;
    }
    error(line, col, std::string("unexpected character '") + c + "'");
    ++i;
  }
  if (depth > 0) error(brackets.back().line, brackets.back().column, "this bracket is never closed");
  release();
  if (!out.empty() && out.back().kind != Tok::Newline) out.push_back({Tok::Newline, "", {line, 1}});
  while (indents.size() > 1) {
    indents.pop_back();
    out.push_back({Tok::Dedent, "", {line, 1}});
  }
  out.push_back({Tok::End, "", {line, 1}});
  return out;
}

}  // namespace cas::pdl
