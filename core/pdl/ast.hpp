#pragma once
// The PDL syntax tree, as the parser builds it. Every node carries its 1-based line and column.
// Thread-safety: plain values.
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace cas::pdl {

struct Pos {
  int line = 0, column = 0;
};

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

struct Keyword {
  std::string name;
  Pos pos;
  ExprPtr value;
};

struct Expr {
  enum class Kind { Name, Int, Float, String, Bool, None, Tuple, Call, Attribute, Index, Binary, Unary, Compare, And, Or, Not };
  Kind kind;
  Pos pos;
  std::string text;            // Name: identifier; String: contents; Binary/Unary/Compare: operator; Attribute: member
  std::int64_t intValue = 0;   // Int, Bool
  double floatValue = 0;       // Float
  std::vector<ExprPtr> items;  // Tuple items; Call positional args; Binary/Compare/And/Or operands; Unary/Not operand
  std::vector<Keyword> keywords;  // Call keyword args
  ExprPtr target;              // Call callee; Attribute object; Index object (items[0] is the index)
};

struct Stmt;
using Block = std::vector<std::unique_ptr<Stmt>>;

struct Stmt {
  enum class Kind { Assign, Return, For, If, Pass, Expression };
  Kind kind;
  Pos pos;
  std::vector<std::pair<std::string, Pos>> targets;  // Assign: names (several: tuple unpacking); For: loop variable
  ExprPtr value;  // Assign/Return/Expression value; For iterable; If condition
  Block body;     // For body, If then-branch
  Block orElse;   // If else-branch (an elif is a nested If)
};

struct Decorator {
  std::string name;  // "parallel", "precision"
  Pos pos;
  std::vector<ExprPtr> args;
  std::vector<Keyword> keywords;
};

struct Function {
  std::string name;
  Pos pos;
  std::vector<std::pair<std::string, Pos>> params;
  std::vector<Decorator> decorators;
  Block body;
};

struct ConstDecl {
  std::string name;
  Pos pos;
  ExprPtr value;
};

struct Module {
  std::vector<ConstDecl> consts;
  std::vector<Function> functions;
};

}  // namespace cas::pdl
