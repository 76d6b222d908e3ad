#include "widgets/editor/pdl_completion.hpp"

#include <QRegularExpression>
#include <QSet>

#include <vector>

#include "core/pdl/compiler.hpp"

namespace cas::widgets::pdl_completion {

namespace {

// The statement words PDL has (the parser reserves a few more of Python's, which are errors, so
// they are not offered).
const QStringList kStatementWords = {QStringLiteral("def"),  QStringLiteral("return"), QStringLiteral("const"), QStringLiteral("for"),
                                     QStringLiteral("in"),   QStringLiteral("if"),     QStringLiteral("elif"),  QStringLiteral("else"),
                                     QStringLiteral("pass"), QStringLiteral("and"),    QStringLiteral("or"),    QStringLiteral("not"),
                                     QStringLiteral("True"), QStringLiteral("False"),  QStringLiteral("None")};
const QStringList kEnvironmentWords = {QStringLiteral("action_dim"), QStringLiteral("obs_shape"), QStringLiteral("range"), QStringLiteral("cuda")};

bool isIdentifierChar(QChar c) { return c.isLetterOrNumber() || c == u'_'; }

const pdl::BuiltinSignature* findBuiltin(const QString& name) {
  static const std::vector<pdl::BuiltinSignature> table = pdl::builtinSignatures();
  for (const auto& b : table)
    if (name == QLatin1String(b.name.c_str())) return &b;
  return nullptr;
}

QStringList builtinNames() {
  QStringList out;
  for (const auto& b : pdl::builtinSignatures()) out << QString::fromStdString(b.name);
  return out;
}

// Where the scan of the text before the cursor ended up.
struct Scan {
  int innermostOpen = -1;  // index of the innermost unclosed '(' or '['
  bool inStringOrComment = false;
};

// The statement the cursor is in starts at or after the last line that begins in column 0 with
// code (a def, const or decorator line), so the scan starts there; this bounds it on big files.
int statementStart(const QString& text) {
  for (int i = text.size() - 1; i > 0; --i)
    if (text[i - 1] == u'\n' && !text[i].isSpace() && text[i] != u'#') return i;
  return 0;
}

Scan scan(const QString& text, int from) {
  Scan s;
  std::vector<int> open;
  for (int i = from; i < text.size(); ++i) {
    const QChar c = text[i];
    if (c == u'#') {
      while (i < text.size() && text[i] != u'\n') ++i;
      if (i == text.size()) s.inStringOrComment = true;
    } else if (c == u'\'' || c == u'"') {
      ++i;
      while (i < text.size() && text[i] != c && text[i] != u'\n') i += text[i] == u'\\' ? 2 : 1;
      if (i >= text.size()) s.inStringOrComment = true;
    } else if (c == u'(' || c == u'[') {
      open.push_back(i);
    } else if ((c == u')' || c == u']') && !open.empty()) {
      open.pop_back();
    }
  }
  if (!open.empty()) s.innermostOpen = open.back();
  return s;
}

// The identifier that ends just before `end` (spaces skipped), and where it starts.
QString identifierBefore(const QString& text, int end, int* start) {
  int i = end;
  while (i > 0 && text[i - 1] == u' ') --i;
  const int stop = i;
  while (i > 0 && isIdentifierChar(text[i - 1])) --i;
  *start = i;
  return text.mid(i, stop - i);
}

// The callee of the call whose '(' is at `open`, without a `cuda.` prefix.
QString calleeBefore(const QString& text, int open) {
  int start = 0;
  return identifierBefore(text, open, &start);
}

// The arguments already written in the call opened at `open` (the one being typed not counted).
struct GivenArguments {
  int positional = 0;
  QSet<QString> keywords;
};

GivenArguments givenArguments(const QString& text, int open) {
  static const QRegularExpression keyword(QStringLiteral("^\\s*([A-Za-z_]\\w*)\\s*=(?!=)"));
  // Only the call's own level counts: nested brackets and strings are blanked first.
  QString level = text.mid(open + 1);
  int depth = 0;
  for (int i = 0; i < level.size(); ++i) {
    const QChar c = level[i];
    if (c == u'\'' || c == u'"') {
      int j = i + 1;
      while (j < level.size() && level[j] != c) ++j;
      for (int k = i; k <= j && k < level.size(); ++k) level[k] = u' ';
      i = j;
      continue;
    }
    if (c == u'(' || c == u'[') ++depth;
    if (depth > 0) level[i] = u' ';
    if (c == u')' || c == u']') --depth;
  }
  GivenArguments given;
  QStringList arguments = level.split(u',');
  arguments.removeLast();
  for (const QString& a : arguments) {
    const QRegularExpressionMatch m = keyword.match(a);
    if (m.hasMatch()) given.keywords.insert(m.captured(1));
    else ++given.positional;
  }
  return given;
}

void appendMatching(QStringList& out, QSet<QString>& seen, const QStringList& candidates, const QString& prefix) {
  for (const QString& c : candidates)
    if (c.startsWith(prefix) && c != prefix && !seen.contains(c)) {
      seen.insert(c);
      out << c;
    }
}

}  // namespace

QString enclosingBuiltin(const QString& textBeforeCursor) {
  const Scan s = scan(textBeforeCursor, statementStart(textBeforeCursor));
  if (s.inStringOrComment || s.innermostOpen < 0 || textBeforeCursor[s.innermostOpen] != u'(') return {};
  const QString callee = calleeBefore(textBeforeCursor, s.innermostOpen);
  return findBuiltin(callee) ? callee : QString();
}

Completions completionsAt(const QString& textBeforeCursor, const QString& documentText) {
  Completions result;
  int prefixStart = int(textBeforeCursor.size());
  while (prefixStart > 0 && isIdentifierChar(textBeforeCursor[prefixStart - 1])) --prefixStart;
  const QString prefix = textBeforeCursor.mid(prefixStart);
  if (!prefix.isEmpty() && prefix[0].isDigit()) return result;  // a number
  const int from = statementStart(textBeforeCursor);
  const Scan s = scan(textBeforeCursor, from);
  if (s.inStringOrComment) return result;
  int wordStart = 0;
  const QString previousWord = identifierBefore(textBeforeCursor, prefixStart, &wordStart);
  if (previousWord == QLatin1String("def") || previousWord == QLatin1String("const") || previousWord == QLatin1String("for"))
    return result;  // a new name is being written
  result.prefixLength = int(prefix.size());
  QSet<QString> seen;
  const bool afterCuda = prefixStart > 0 && textBeforeCursor[prefixStart - 1] == u'.';
  if (afterCuda) {
    appendMatching(result.items, seen, builtinNames(), prefix);
    return result;
  }
  // A keyword argument of the enclosing built-in fits where an argument starts.
  int before = prefixStart;
  while (before > 0 && textBeforeCursor[before - 1].isSpace()) --before;
  const QChar opener = before > 0 ? textBeforeCursor[before - 1] : QChar();
  if (s.innermostOpen >= 0 && (opener == u'(' || opener == u',') && textBeforeCursor[s.innermostOpen] == u'(') {
    if (const pdl::BuiltinSignature* b = findBuiltin(calleeBefore(textBeforeCursor, s.innermostOpen))) {
      const GivenArguments given = givenArguments(textBeforeCursor, s.innermostOpen);
      QStringList keywords;
      const int filled = b->variadic ? 0 : given.positional;  // concat's tensors fill no named parameter
      for (int i = filled; i < int(b->parameters.size()); ++i) {
        const QString p = QString::fromStdString(b->parameters[size_t(i)]);
        if (!given.keywords.contains(p)) keywords << p + u'=';
      }
      appendMatching(result.items, seen, keywords, prefix);
    }
  }
  QStringList names = definedNames(documentText);
  names.removeAll(prefix);  // the word being typed is in the document too
  names.sort();
  appendMatching(result.items, seen, names, prefix);
  appendMatching(result.items, seen, builtinNames(), prefix);
  appendMatching(result.items, seen, kEnvironmentWords, prefix);
  appendMatching(result.items, seen, kStatementWords, prefix);
  return result;
}

QString callTip(const QString& name) {
  const pdl::BuiltinSignature* b = findBuiltin(name);
  if (!b) return {};
  QStringList params;
  if (b->variadic) params << QStringLiteral("t1, t2, …");
  for (int i = 0; i < int(b->parameters.size()); ++i) {
    const QString p = QString::fromStdString(b->parameters[size_t(i)]);
    params << (i < b->requiredCount ? p : p + QStringLiteral("=…"));
  }
  return name + u'(' + params.join(QStringLiteral(", ")) + u')';
}

QStringList definedNames(const QString& documentText) {
  static const QRegularExpression definition(QStringLiteral(
      R"(^[ ]*(?:def[ ]+([A-Za-z_]\w*)[ ]*\(([^)]*)\)|const[ ]+([A-Za-z_]\w*)|for[ ]+([A-Za-z_]\w*)|([A-Za-z_][\w, ]*?)[ ]*=(?!=)))"),
      QRegularExpression::MultilineOption);
  static const QRegularExpression name(QStringLiteral("[A-Za-z_]\\w*"));
  QSet<QString> out;
  for (auto it = definition.globalMatch(documentText); it.hasNext();) {
    const QRegularExpressionMatch m = it.next();
    for (int group = 1; group <= 5; ++group)
      for (auto n = name.globalMatch(m.capturedView(group)); n.hasNext();) out.insert(n.next().captured());
  }
  for (const QString& w : kStatementWords) out.remove(w);
  return QStringList(out.begin(), out.end());
}

}  // namespace cas::widgets::pdl_completion
