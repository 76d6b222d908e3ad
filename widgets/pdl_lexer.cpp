#include "widgets/pdl_lexer.hpp"

#include <QFontDatabase>

#include <string>

#include "core/pdl/compiler.hpp"
#include "core/pdl/parser.hpp"

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
  switch (style) {
    case Comment:
    case CommentBlock: return QColor(0x8c, 0x8c, 0x8c);
    case Number: return QColor(0x17, 0x50, 0xeb);
    case DoubleQuotedString:
    case SingleQuotedString:
    case TripleSingleQuotedString:
    case TripleDoubleQuotedString:
    case UnclosedString: return QColor(0x06, 0x7d, 0x17);
    case Keyword: return QColor(0x00, 0x33, 0xb3);
    case ClassName:
    case FunctionMethodName: return QColor(0x00, 0x62, 0x7a);
    case HighlightedIdentifier: return QColor(0x87, 0x10, 0x94);
    case Decorator: return QColor(0x9e, 0x88, 0x0d);
    default: return QColor(0x1f, 0x1f, 0x1f);
  }
}

QColor PdlLexer::defaultPaper(int style) const {
  if (style == UnclosedString) return QColor(0xfd, 0xe8, 0xe8);
  return QColor(Qt::white);
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
