#include "core/pdl/parser.hpp"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <set>

namespace cas::pdl {
namespace {

const std::set<std::string> kKeywords = {"def", "return", "const", "for", "in", "if", "elif", "else", "pass",
                                         "and", "or", "not", "True", "False", "None", "while", "import", "class",
                                         "lambda", "from", "with", "yield", "global"};

struct SyntaxError {};  // unwinds to the statement level, where parsing resynchronises

class Parser {
 public:
  Parser(const std::vector<Token>& t, const std::string& file, DiagnosticList& d) : toks_(t), file_(file), diags_(d) {}

  Module module() {
    Module m;
    while (!at(Tok::End)) {
      if (diags_.errorCount() >= kMaxErrorsPerFile) break;
      try {
        if (at(Tok::Newline)) {
          next();
        } else if (at(Tok::Indent)) {
          fail(peek(), "unexpected indentation");
        } else if (at(Tok::Dedent)) {
          next();
        } else if (isName("const")) {
          m.consts.push_back(constDecl());
        } else if (isOp("@") || isName("def")) {
          m.functions.push_back(function());
        } else {
          fail(peek(), "expected 'def' or 'const' at the top level, got " + describe(peek()));
        }
      } catch (const SyntaxError&) {
        skipLine();
      }
    }
    if (diags_.errorCount() >= kMaxErrorsPerFile) diags_.error({file_, peek().pos.line, peek().pos.column}, "too many errors; stopping here");
    return m;
  }

 private:
  const Token& peek(size_t ahead = 0) const { return toks_[std::min(pos_ + ahead, toks_.size() - 1)]; }
  bool at(Tok k) const { return peek().kind == k; }
  bool isOp(const char* op, size_t ahead = 0) const { return peek(ahead).kind == Tok::Op && peek(ahead).text == op; }
  bool isName(const char* name) const { return at(Tok::Name) && peek().text == name; }
  const Token& next() {
    const Token& t = peek();
    if (pos_ < toks_.size() - 1) ++pos_;
    return t;
  }

  static std::string describe(const Token& t) {
    switch (t.kind) {
      case Tok::Name: return "'" + t.text + "'";
      case Tok::Int: case Tok::Float: return "the number " + t.text;
      case Tok::String: return "a string";
      case Tok::Op: return "'" + t.text + "'";
      case Tok::Newline: return "the end of the line";
      case Tok::Indent: return "an indented line";
      case Tok::Dedent: return "the end of the block";
      case Tok::End: return "the end of the file";
    }
    return "a token";
  }

  [[noreturn]] void fail(const Token& at, const std::string& message) {
    diags_.error({file_, at.pos.line, at.pos.column}, message);
    throw SyntaxError{};
  }

  void expectOp(const char* op, const std::string& context) {
    if (!isOp(op)) fail(peek(), "expected '" + std::string(op) + "' " + context + ", got " + describe(peek()));
    next();
  }

  std::pair<std::string, Pos> expectName(const std::string& what) {
    if (!at(Tok::Name)) fail(peek(), "expected " + what + ", got " + describe(peek()));
    if (kKeywords.count(peek().text))
      fail(peek(), "'" + peek().text + "' is a keyword and cannot be used as " + what.substr(0, what.find(" after ")));
    const Token& t = next();
    return {t.text, t.pos};
  }

  void expectNewline() {
    if (!at(Tok::Newline) && !at(Tok::End)) fail(peek(), "expected the end of the line, got " + describe(peek()));
    if (at(Tok::Newline)) next();
  }

  void skipLine() {
    // Skip the rest of this logical line and any block indented under it.
    int depth = 0;
    while (!at(Tok::End)) {
      if (at(Tok::Indent)) ++depth;
      if (at(Tok::Dedent)) {
        if (depth == 0) return;
        next();
        if (--depth == 0) return;  // the block under the bad line is skipped; what follows is parsed again
        continue;
      }
      const bool newline = at(Tok::Newline);
      next();
      if (newline && depth == 0 && !at(Tok::Indent)) return;
    }
  }

  static std::string nestingMessage() {
    return "this is nested too deeply (more than " + std::to_string(kMaxNesting) +
           " levels of blocks, brackets, calls and operators); split it into smaller statements";
  }

  static std::string expressionDepthMessage() {
    return "this expression is too deep (more than " + std::to_string(kMaxExpressionDepth) +
           " levels of operators and calls, each applied to the result of the one before, with the brackets and blocks around them); "
           "split it into smaller statements";
  }

  struct DepthGuard {
    Parser& p;
    DepthGuard(Parser& parser, const Token& at) : p(parser) {
      if (++p.depth_ > kMaxNesting || p.depth_ + p.chained_ > kMaxExpressionDepth) {
        --p.depth_;  // the destructor will not run for a constructor that throws
        p.fail(at, p.depth_ + 1 > kMaxNesting ? nestingMessage() : expressionDepthMessage());
      }
    }
    ~DepthGuard() { --p.depth_; }
  };

  ConstDecl constDecl() {
    const Token& kw = next();
    ConstDecl c;
    auto [name, pos] = expectName("a constant name after 'const'");
    c.name = name;
    c.pos = pos;
    expectOp("=", "after the constant's name");
    c.value = expr();
    expectNewline();
    (void)kw;
    return c;
  }

  Function function() {
    Function f;
    while (isOp("@")) {
      const Token& at = next();
      Decorator d;
      d.pos = at.pos;
      d.name = expectName("a decorator name after '@'").first;
      if (isOp("(")) arguments(d.args, d.keywords);
      expectNewline();
      f.decorators.push_back(std::move(d));
    }
    if (!isName("def")) fail(peek(), "expected 'def' after the decorators, got " + describe(peek()));
    const Token& def = next();
    f.pos = def.pos;
    auto [name, pos] = expectName("a function name after 'def'");
    f.name = name;
    f.pos = pos;
    expectOp("(", "after the function's name");
    while (!isOp(")")) {
      const Token& at = peek();
      f.params.push_back(expectName("a parameter name"));
      for (size_t k = 0; k + 1 < f.params.size(); ++k)
        if (f.params[k].first == f.params.back().first) fail(at, "the parameter '" + at.text + "' is named twice");
      if (isOp("=")) fail(peek(), "parameters cannot have default values in PDL");
      if (!isOp(",")) break;
      next();
    }
    expectOp(")", "to close the parameter list");
    expectOp(":", "after the function's parameters");
    f.body = block("the function '" + f.name + "'");
    return f;
  }

  Block block(const std::string& owner) {
    DepthGuard guard(*this, peek());
    if (!at(Tok::Newline))
      fail(peek(), "expected a new line after ':', got " + describe(peek()) + "; the body of " + owner + " goes on the following lines, indented");
    next();
    if (!at(Tok::Indent)) fail(peek(), "expected an indented block for " + owner);
    next();
    Block b;
    while (!at(Tok::Dedent) && !at(Tok::End)) {
      if (diags_.errorCount() >= kMaxErrorsPerFile) break;
      try {
        b.push_back(statement());
      } catch (const SyntaxError&) {
        skipLine();
      }
    }
    if (at(Tok::Dedent)) next();
    return b;
  }

  std::unique_ptr<Stmt> statement() {
    auto s = std::make_unique<Stmt>();
    s->pos = peek().pos;
    if (at(Tok::Indent)) fail(peek(), "unexpected indentation");
    if (isName("return")) {
      next();
      s->kind = Stmt::Kind::Return;
      if (!at(Tok::Newline)) s->value = exprList();
      expectNewline();
    } else if (isName("pass")) {
      next();
      s->kind = Stmt::Kind::Pass;
      expectNewline();
    } else if (isName("for")) {
      next();
      s->kind = Stmt::Kind::For;
      s->targets.push_back(expectName("a loop variable after 'for'"));
      if (!isName("in")) fail(peek(), "expected 'in' after the loop variable, got " + describe(peek()));
      next();
      s->value = expr();
      expectOp(":", "after the loop's range");
      s->body = block("the loop");
    } else if (isName("if")) {
      return ifStatement();
    } else if (isName("elif") || isName("else")) {
      fail(peek(), "'" + peek().text + "' without a matching 'if'");
    } else if (isName("def")) {
      fail(peek(), "functions must be defined at the top level, not inside another function");
    } else if (isName("while")) {
      fail(peek(), "PDL has no 'while' loops; use 'for i in range(N)', which is unrolled at compile time");
    } else if (at(Tok::Name) && (isOp("=", 1) || isOp(",", 1))) {
      s->kind = Stmt::Kind::Assign;
      s->targets.push_back(expectName("a variable name"));
      while (isOp(",")) {
        next();
        s->targets.push_back(expectName("a variable name"));
      }
      expectOp("=", "after the names to assign");
      s->value = exprList();
      expectNewline();
    } else {
      s->kind = Stmt::Kind::Expression;
      s->value = exprList();
      if (isOp("=")) {
        diags_.error({file_, s->pos.line, s->pos.column}, "only plain names can be assigned to");
        throw SyntaxError{};
      }
      expectNewline();
    }
    return s;
  }

  std::unique_ptr<Stmt> ifStatement() {
    auto s = std::make_unique<Stmt>();
    s->kind = Stmt::Kind::If;
    s->pos = next().pos;
    s->value = expr();
    expectOp(":", "after the condition");
    s->body = block("the 'if'");
    if (isName("elif")) {
      s->orElse.push_back(ifStatement());
    } else if (isName("else")) {
      next();
      expectOp(":", "after 'else'");
      s->orElse = block("the 'else'");
    }
    return s;
  }

  ExprPtr make(Expr::Kind kind, Pos pos) {
    auto e = std::make_unique<Expr>();
    e->kind = kind;
    e->pos = pos;
    return e;
  }

  ExprPtr exprList() {
    ExprPtr first = expr();
    if (!isOp(",")) return first;
    ExprPtr t = make(Expr::Kind::Tuple, first->pos);
    t->items.push_back(std::move(first));
    while (isOp(",")) {
      next();
      if (at(Tok::Newline) || isOp(")")) break;
      t->items.push_back(expr());
    }
    return t;
  }

  ExprPtr expr() {
    DepthGuard guard(*this, peek());
    return orExpr();
  }

  // A chain `a + b + c ...` is parsed in a loop, not by recursion, but builds a left-nested tree as
  // deep as the chain is long, which the compiler walks recursively: chains count against the
  // bound on an expression's depth (kMaxExpressionDepth, with the nesting around them), not
  // against kMaxNesting. Operands parsed later in the chain sit that much deeper, so the chain
  // raises chained_ until the chain ends (ChainDepth restores it).
  struct ChainDepth {
    Parser& p;
    int added = 0;
    explicit ChainDepth(Parser& parser) : p(parser) {}
    ~ChainDepth() { p.chained_ -= added; }
  };
  void deepen(ChainDepth& chain) {
    ++chain.added;
    if (++chained_ + depth_ > kMaxExpressionDepth) fail(peek(), expressionDepthMessage());
  }

  ExprPtr orExpr() {
    ChainDepth chain(*this);
    ExprPtr left = andExpr();
    while (isName("or")) {
      deepen(chain);
      ExprPtr e = make(Expr::Kind::Or, next().pos);
      e->items.push_back(std::move(left));
      e->items.push_back(andExpr());
      left = std::move(e);
    }
    return left;
  }

  ExprPtr andExpr() {
    ChainDepth chain(*this);
    ExprPtr left = notExpr();
    while (isName("and")) {
      deepen(chain);
      ExprPtr e = make(Expr::Kind::And, next().pos);
      e->items.push_back(std::move(left));
      e->items.push_back(notExpr());
      left = std::move(e);
    }
    return left;
  }

  ExprPtr notExpr() {
    if (isName("not")) {
      DepthGuard guard(*this, peek());
      ExprPtr e = make(Expr::Kind::Not, next().pos);
      e->items.push_back(notExpr());
      return e;
    }
    return comparison();
  }

  ExprPtr comparison() {
    ExprPtr left = arith();
    for (const char* op : {"==", "!=", "<", ">", "<=", ">="}) {
      if (!isOp(op)) continue;
      ExprPtr e = make(Expr::Kind::Compare, peek().pos);
      e->text = next().text;
      e->items.push_back(std::move(left));
      e->items.push_back(arith());
      for (const char* again : {"==", "!=", "<", ">", "<=", ">="})
        if (isOp(again)) fail(peek(), "comparisons cannot be chained; combine them with 'and'");
      return e;
    }
    return left;
  }

  ExprPtr arith() {
    ChainDepth chain(*this);
    ExprPtr left = term();
    while (isOp("+") || isOp("-")) {
      deepen(chain);
      ExprPtr e = make(Expr::Kind::Binary, peek().pos);
      e->text = next().text;
      e->items.push_back(std::move(left));
      e->items.push_back(term());
      left = std::move(e);
    }
    return left;
  }

  ExprPtr term() {
    ChainDepth chain(*this);
    ExprPtr left = unary();
    while (isOp("*") || isOp("/")) {
      deepen(chain);
      ExprPtr e = make(Expr::Kind::Binary, peek().pos);
      e->text = next().text;
      e->items.push_back(std::move(left));
      e->items.push_back(unary());
      left = std::move(e);
    }
    if (isOp("**")) fail(peek(), "PDL has no '**' operator; multiply, or use exp and log");
    return left;
  }

  ExprPtr unary() {
    if (isOp("-") || isOp("+")) {
      DepthGuard guard(*this, peek());
      ExprPtr e = make(Expr::Kind::Unary, peek().pos);
      e->text = next().text;
      e->items.push_back(unary());
      return e;
    }
    return postfix();
  }

  ExprPtr postfix() {
    ChainDepth chain(*this);
    ExprPtr e = atom();
    for (;;) {
      if (isOp("(") || isOp("[") || isOp(".")) deepen(chain);
      if (isOp("(")) {
        ExprPtr call = make(Expr::Kind::Call, e->pos);
        call->target = std::move(e);
        arguments(call->items, call->keywords);
        e = std::move(call);
      } else if (isOp("[")) {
        ExprPtr index = make(Expr::Kind::Index, peek().pos);
        next();
        index->target = std::move(e);
        index->items.push_back(expr());
        expectOp("]", "to close the index");
        e = std::move(index);
      } else if (isOp(".")) {
        next();
        ExprPtr attr = make(Expr::Kind::Attribute, e->pos);
        attr->text = expectName("a name after '.'").first;
        attr->target = std::move(e);
        e = std::move(attr);
      } else {
        return e;
      }
    }
  }

  void arguments(std::vector<ExprPtr>& positional, std::vector<Keyword>& keywords) {
    DepthGuard guard(*this, peek());
    expectOp("(", "to open the arguments");
    while (!isOp(")")) {
      if (at(Tok::Name) && isOp("=", 1)) {
        Keyword k;
        k.name = peek().text;
        k.pos = next().pos;
        next();
        for (const Keyword& other : keywords)
          if (other.name == k.name) fail(toks_[pos_ - 2], "the keyword argument '" + k.name + "' is given twice");
        k.value = expr();
        keywords.push_back(std::move(k));
      } else {
        if (!keywords.empty()) fail(peek(), "a positional argument cannot follow keyword arguments");
        positional.push_back(expr());
      }
      if (!isOp(",")) break;
      next();
    }
    expectOp(")", "to close the arguments");
  }

  ExprPtr atom() {
    const Token& t = peek();
    switch (t.kind) {
      case Tok::Int: {
        next();
        ExprPtr e = make(Expr::Kind::Int, t.pos);
        auto [p, ec] = std::from_chars(t.text.data(), t.text.data() + t.text.size(), e->intValue);
        if (ec != std::errc() || p != t.text.data() + t.text.size())
          fail(t, "the integer " + t.text + " is too large (the limit is 9223372036854775807)");
        return e;
      }
      case Tok::Float: {
        next();
        ExprPtr e = make(Expr::Kind::Float, t.pos);
        e->floatValue = std::strtod(t.text.c_str(), nullptr);
        if (!std::isfinite(e->floatValue)) fail(t, "the number " + t.text + " is too large");
        return e;
      }
      case Tok::String: {
        next();
        ExprPtr e = make(Expr::Kind::String, t.pos);
        e->text = t.text;
        return e;
      }
      case Tok::Name: {
        if (t.text == "True" || t.text == "False") {
          next();
          ExprPtr e = make(Expr::Kind::Bool, t.pos);
          e->intValue = t.text == "True";
          return e;
        }
        if (t.text == "None") {
          next();
          return make(Expr::Kind::None, t.pos);
        }
        if (kKeywords.count(t.text)) fail(t, "expected an expression, got the keyword '" + t.text + "'");
        next();
        ExprPtr e = make(Expr::Kind::Name, t.pos);
        e->text = t.text;
        return e;
      }
      case Tok::Op:
        if (t.text == "(") {
          next();
          if (isOp(")")) {
            next();
            return make(Expr::Kind::Tuple, t.pos);
          }
          ExprPtr inner = exprList();
          expectOp(")", "to close the parenthesis opened at " + std::to_string(t.pos.line) + ":" + std::to_string(t.pos.column));
          if (inner->kind == Expr::Kind::Tuple) inner->pos = t.pos;  // a tuple in brackets starts at its '('
          return inner;
        }
        break;
      default: break;
    }
    // `x += 1` and `a // b` reach here at their second character; name the operator instead.
    if (t.kind == Tok::Op && pos_ > 0 && toks_[pos_ - 1].kind == Tok::Op && toks_[pos_ - 1].pos.line == t.pos.line &&
        toks_[pos_ - 1].pos.column + 1 == t.pos.column) {
      const Token& op = toks_[pos_ - 1];
      if (t.text == "=" && (op.text == "+" || op.text == "-" || op.text == "*" || op.text == "/"))
        fail(op, "PDL has no '" + op.text + "=' operator; write 'x = x " + op.text + " ...'");
      if (t.text == "/" && op.text == "/") fail(op, "PDL has no '//' operator; use '/', which does not round");
    }
    fail(t, "expected an expression, got " + describe(t));
  }

  const std::vector<Token>& toks_;
  const std::string& file_;
  DiagnosticList& diags_;
  size_t pos_ = 0;
  int depth_ = 0;    // blocks, brackets, calls and unary operators open (kMaxNesting)
  int chained_ = 0;  // levels that chains of binary operators, calls and indexes add (ChainDepth)
};

}  // namespace

Module parse(const std::vector<Token>& tokens, const std::string& file, DiagnosticList& diags) {
  return Parser(tokens, file, diags).module();
}

const std::set<std::string>& reservedWords() { return kKeywords; }

}  // namespace cas::pdl
