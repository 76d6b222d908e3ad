#pragma once
// PDL's recursive-descent parser. On a syntax error it reports, skips to the next line and goes
// on, so one pass finds the independent errors. Nesting depth is bounded (kMaxNesting: blocks,
// brackets, calls and unary operators, which the parser recurses on), and so is the depth of an
// expression's tree (kMaxExpressionDepth: that nesting plus chains such as `a + b + c`, which the
// parser reads in a loop but the compiler walks recursively), so no input can exhaust the stack.
#include <set>
#include <string>

#include "core/pdl/ast.hpp"
#include "core/pdl/lexer.hpp"

namespace cas::pdl {

inline constexpr int kMaxNesting = 100;
inline constexpr int kMaxExpressionDepth = 400;

Module parse(const std::vector<Token>& tokens, const std::string& file, DiagnosticList& diags);

// Words that cannot be names (keywords, and Python's that PDL reserves), for editors.
const std::set<std::string>& reservedWords();

}  // namespace cas::pdl
