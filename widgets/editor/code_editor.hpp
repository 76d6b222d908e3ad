#pragma once
// One open file of the Policy editor: a QScintilla view with the studio's margins (line numbers,
// diagnostic markers), indicators and the PDL lexer for .pdl files, and the layer hints drawn
// inline after the end of their line ("[32,3,3]  608 p"), in a smaller, muted font. Drawn there,
// a hint never covers code and takes no width from it, however long the hints are; a margin
// wide enough for the longest hint took half the editor at the default window size.
// Thread-safety: GUI thread only.
#include <Qsci/qsciscintilla.h>

#include <QFont>
#include <QImage>
#include <QString>

#include <map>

#include "core/support/diagnostic.hpp"

namespace cas::widgets {

class PdlLexer;

// A diagnostic's margin marker: a disc in the severity's colour with a white glyph, `size` pixels.
QImage severityMarkerImage(Severity severity, int size);
QColor severityColour(Severity severity);

class CodeEditor : public QsciScintilla {
  Q_OBJECT
 public:
  // Margins, markers and indicators (the Policy editor sets them by these numbers).
  static constexpr int kLineNumberMargin = 0, kMarkerMargin = 1;
  static constexpr int kErrorMarker = 0, kWarningMarker = 1, kNoteMarker = 2;
  static constexpr int kErrorIndicator = 8, kWarningIndicator = 9, kNoteIndicator = 10;

  explicit CodeEditor(QWidget* parent = nullptr);

  // The file this view edits; empty for the blank view shown before anything is opened.
  QString file() const { return file_; }
  bool isPdl() const { return isPdl_; }
  // Names the file (its suffix picks the lexer); the text is not touched.
  void setFile(const QString& path);

  // The hints by 1-based line; they replace the previous ones.
  void setLineHints(std::map<int, QString> hints);
  const std::map<int, QString>& lineHints() const { return hints_; }
  // Where the hint of `line` (1-based) is drawn, in viewport coordinates; null when the line has
  // none or is scrolled out of view.
  QRect hintRect(int line) const;

  // How many characters of code fit across the text area as it is now (margins excluded).
  int visibleColumns() const;
  // The width of the whole view that shows `columns` characters of code beside the margins.
  int widthForColumns(int columns) const;
  // The width of one character of code (fonts advance by fractions of a pixel: measured over a
  // hundred of them).
  double characterWidth() const;

 protected:
  void paintEvent(QPaintEvent* event) override;

 private:
  int marginsWidth() const;
  void applyMarginColours();

  QString file_;
  bool isPdl_ = false;
  PdlLexer* pdlLexer_;
  QFont hintFont_;
  std::map<int, QString> hints_;
};

}  // namespace cas::widgets
