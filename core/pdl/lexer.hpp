#pragma once
// PDL's lexer: Python-style tokens with INDENT/DEDENT from leading spaces, NEWLINE at the end of
// each logical line (newlines inside brackets are ignored), comments from '#'.
// Thread-safety: plain function.
#include <string>
#include <string_view>
#include <vector>

#include "core/pdl/ast.hpp"
#include "core/support/diagnostic.hpp"

namespace cas::pdl {

enum class Tok { Name, Int, Float, String, Op, Newline, Indent, Dedent, End };

struct Token {
  Tok kind;
  std::string text;  // identifier, operator, string contents or number spelling
  Pos pos;
};

inline constexpr std::size_t kMaxSourceBytes = 1 << 20;
// Errors reported for one file by the lexer and the parser together (then "too many errors;
// stopping here"), so a file of garbage gives a screenful, not one error per byte.
inline constexpr int kMaxErrorsPerFile = 20;

// Lexes the whole source. Errors go to `diags` (file name `file`); lexing goes on after an error
// so later lines are still checked, until kMaxErrorsPerFile errors: then the token list ends
// there (with End) and `*stopped` is set. The same error repeated on one line ("unexpected
// character '$'" 40,000 times) is reported once, with the count.
std::vector<Token> lex(std::string_view source, const std::string& file, DiagnosticList& diags, bool* stopped = nullptr);

}  // namespace cas::pdl
