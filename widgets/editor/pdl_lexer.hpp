#pragma once
// Syntax highlighting for PDL in QScintilla. PDL's tokens are Python's (comments, strings,
// numbers, decorators, indentation), so Scintilla's Python lexer does the scanning; this class
// gives it PDL's words (the reserved words as keywords, the built-ins and environment constants
// as highlighted identifiers) and the studio's colours. The generated IR view uses it too, so
// op names and comments look the same there. GUI thread only.
#include <Qsci/qscilexerpython.h>

namespace cas::widgets {

class PdlLexer : public QsciLexerPython {
  Q_OBJECT
 public:
  explicit PdlLexer(QObject* parent = nullptr);

  const char* language() const override { return "PDL"; }
  const char* keywords(int set) const override;
  QColor defaultColor(int style) const override;
  QColor defaultPaper(int style) const override;
  QFont defaultFont(int style) const override;

  // The editor font: the system's fixed-width font at a comfortable size.
  static QFont codeFont();
};

}  // namespace cas::widgets
