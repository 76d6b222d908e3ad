#include "widgets/editor/pdl_lexer.hpp"

#include <QFontDatabase>

#include <string>

#include "core/pdl/compiler.hpp"
#include "core/pdl/parser.hpp"
#include "widgets/studio_resources.hpp"

namespace cas::widgets {

namespace {

// Scintilla wants space-separated word lists that outlive the lexer; they are built once from
// the compiler's own tables so that highlighting never disagrees with the language.
const std::string& reservedWordList() {
  static const std::string words = [] {
    std::string out;
    for (const std::string& w : pdl::reservedWords()) out += w + ' ';
    return out;
  }();
  return words;
}

const std::string& builtinWordList() {
  static const std::string words = [] {
    std::string out = "cuda range action_dim obs_shape ";
    for (const pdl::BuiltinSignature& b : pdl::builtinSignatures()) out += b.name + ' ';
    return out;
  }();
  return words;
}

}  // namespace

PdlLexer::PdlLexer(QObject* parent) : QsciLexerPython(parent) {
  setIndentationWarning(QsciLexerPython::Tabs);  // a tab in the indentation is a PDL error
  setFoldComments(true);
}

const char* PdlLexer::keywords(int set) const {
  if (set == 1) return reservedWordList().c_str();
  if (set == 2) return builtinWordList().c_str();
  return nullptr;
}

QColor PdlLexer::defaultColor(int style) const {
  const EditorStyle& s = editorStyle();
  switch (style) {
    case Comment:
    case CommentBlock: return s.comment;
    case Number: return s.number;
    case DoubleQuotedString:
    case SingleQuotedString:
    case TripleSingleQuotedString:
    case TripleDoubleQuotedString:
    case UnclosedString: return s.string;
    case Keyword: return s.keyword;
    case ClassName:
    case FunctionMethodName: return s.function;
    case HighlightedIdentifier: return s.builtin;
    case Decorator: return s.decorator;
    default: return s.text;
  }
}

QColor PdlLexer::defaultPaper(int style) const {
  return style == UnclosedString ? editorStyle().unclosedStringPaper : editorStyle().paper;
}

QFont PdlLexer::defaultFont(int style) const {
  QFont f = codeFont();
  if (style == Keyword || style == FunctionMethodName || style == ClassName) f.setBold(true);
  if (style == Comment || style == CommentBlock) f.setItalic(true);
  return f;
}

QFont PdlLexer::codeFont() {
  QFont f = QFontDatabase::systemFont(QFontDatabase::FixedFont);
  f.setPointSize(10);
  return f;
}

}  // namespace cas::widgets
