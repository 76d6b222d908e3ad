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

// Lexes the whole source. Errors go to `diags` (file name `file`); lexing goes on after an error
// so later lines are still checked.
std::vector<Token> lex(std::string_view source, const std::string& file, DiagnosticList& diags);

}  // namespace cas::pdl
