#include "widgets/editor/code_editor.hpp"

#include <QFileInfo>
#include <QFontMetrics>
#include <QPainter>
#include <QPaintEvent>
#include <QScrollBar>

#include <algorithm>
#include <cmath>
#include <utility>

#include "widgets/editor/pdl_lexer.hpp"
#include "widgets/studio_resources.hpp"

namespace cas::widgets {

namespace {
// Space between the end of the code and its hint's box, in characters; the box adds its padding.
constexpr int kHintGapCharacters = 1;
constexpr int kHintPadding = 4;
}  // namespace

QColor severityColour(Severity s) {
  const EditorStyle& style = editorStyle();
  return s == Severity::Error ? style.error : s == Severity::Warning ? style.warning : style.note;
}

QImage severityMarkerImage(Severity s, int size) {
  QImage image(size, size, QImage::Format_ARGB32_Premultiplied);
  image.fill(Qt::transparent);
  QPainter p(&image);
  p.setRenderHint(QPainter::Antialiasing);
  p.setPen(Qt::NoPen);
  p.setBrush(severityColour(s));
  const qreal inset = size * 0.12;
  p.drawEllipse(QRectF(inset, inset, size - 2 * inset, size - 2 * inset));
  QFont f;
  f.setBold(true);
  f.setPixelSize(int(size * 0.62));
  p.setFont(f);
  p.setPen(Qt::white);
  p.drawText(QRectF(0, 0, size, size), Qt::AlignCenter, s == Severity::Note ? QStringLiteral("i") : QStringLiteral("!"));
  return image;
}

CodeEditor::CodeEditor(QWidget* parent) : QsciScintilla(parent), pdlLexer_(new PdlLexer(this)) {
  setObjectName(QStringLiteral("pdlText"));
  setUtf8(true);
  setEolMode(QsciScintilla::EolUnix);
  setIndentationsUseTabs(false);  // a tab in the indentation is a PDL error
  setIndentationWidth(4);
  setTabWidth(4);
  setTabIndents(true);
  setBackspaceUnindents(true);
  setAutoIndent(true);
  setIndentationGuides(true);
  setBraceMatching(QsciScintilla::SloppyBraceMatch);
  setCaretLineVisible(true);
  setCaretLineBackgroundColor(editorStyle().caretLine);
  setMatchedBraceBackgroundColor(editorStyle().matchedBrace);
  setWrapMode(QsciScintilla::WrapNone);
  setEdgeMode(QsciScintilla::EdgeNone);
  SendScintilla(SCI_SETSCROLLWIDTHTRACKING, 1);
  SendScintilla(SCI_SETSCROLLWIDTH, 1);
  setLexer(nullptr);
  setFont(PdlLexer::codeFont());

  // Line numbers, then the diagnostic markers.
  applyMarginColours();
  setMarginType(kLineNumberMargin, QsciScintilla::NumberMargin);
  connect(this, &QsciScintilla::linesChanged, this,
          [this] { setMarginWidth(kLineNumberMargin, QString(QString::number(lines()).size() + 1, u'0')); });
  setMarginWidth(kLineNumberMargin, QStringLiteral("000"));
  setMarginType(kMarkerMargin, QsciScintilla::SymbolMargin);
  const int markerSize = fontMetrics().height() * 4 / 5;  // a small disc: the margins' width is the code's
  setMarginWidth(kMarkerMargin, markerSize + 2);
  setMarginMarkerMask(kMarkerMargin, (1 << kErrorMarker) | (1 << kWarningMarker) | (1 << kNoteMarker));
  setMarginWidth(2, 0);  // QScintilla shows a third margin by default
  markerDefine(severityMarkerImage(Severity::Error, markerSize), kErrorMarker);
  markerDefine(severityMarkerImage(Severity::Warning, markerSize), kWarningMarker);
  markerDefine(severityMarkerImage(Severity::Note, markerSize), kNoteMarker);
  for (auto [indicator, severity] : {std::pair{kErrorIndicator, Severity::Error}, std::pair{kWarningIndicator, Severity::Warning},
                                     std::pair{kNoteIndicator, Severity::Note}}) {
    indicatorDefine(severity == Severity::Note ? QsciScintilla::DotsIndicator : QsciScintilla::SquiggleLowIndicator, indicator);
    setIndicatorForegroundColor(severityColour(severity), indicator);
    SendScintilla(SCI_INDICSETUNDER, static_cast<unsigned long>(indicator), 1L);
  }
  hintFont_ = PdlLexer::codeFont();
  hintFont_.setPointSizeF(hintFont_.pointSizeF() * 0.85);
}

// Setting a lexer resets the margins' style, so this runs after each change of lexer.
void CodeEditor::applyMarginColours() {
  setMarginsFont(PdlLexer::codeFont());
  setMarginsBackgroundColor(editorStyle().marginPaper);
  setMarginsForegroundColor(editorStyle().marginText);
}

void CodeEditor::setFile(const QString& path) {
  file_ = path;
  const bool pdl = QFileInfo(path).suffix() == QLatin1String("pdl");
  if (pdl == isPdl_ && lexer() == (pdl ? pdlLexer_ : nullptr)) return;
  isPdl_ = pdl;
  // Other files of the project (project.toml, README.md) are plain text.
  setLexer(isPdl_ ? pdlLexer_ : nullptr);
  if (!isPdl_) setFont(PdlLexer::codeFont());
  applyMarginColours();
  if (!isPdl_) setLineHints({});
}

void CodeEditor::setLineHints(std::map<int, QString> hints) {
  if (hints == hints_) return;
  hints_ = std::move(hints);
  viewport()->update();
}

double CodeEditor::characterWidth() const {
  // Style 0 is the lexer's default (or plain text's) style: the code font.
  return std::max(1.0, double(SendScintilla(SCI_TEXTWIDTH, 0UL, QByteArray(100, '0').constData())) / 100.0);
}

int CodeEditor::marginsWidth() const {
  int width = 0;
  for (int m = 0; m < margins(); ++m) width += marginWidth(m);
  return width + int(SendScintilla(SCI_GETMARGINLEFT)) + int(SendScintilla(SCI_GETMARGINRIGHT));
}

int CodeEditor::visibleColumns() const { return int(std::max(0, viewport()->width() - marginsWidth()) / characterWidth()); }

int CodeEditor::widthForColumns(int columns) const {
  return marginsWidth() + int(std::ceil(columns * characterWidth())) + verticalScrollBar()->sizeHint().width() + 2 * frameWidth();
}

QRect CodeEditor::hintRect(int line) const {
  const auto it = hints_.find(line);
  if (it == hints_.end() || line < 1 || line > lines()) return {};
  const long end = SendScintilla(SCI_GETLINEENDPOSITION, static_cast<unsigned long>(line - 1));
  const int x = int(SendScintilla(SCI_POINTXFROMPOSITION, 0UL, end) + kHintGapCharacters * characterWidth());
  const int y = int(SendScintilla(SCI_POINTYFROMPOSITION, 0UL, end));
  const int height = int(SendScintilla(SCI_TEXTHEIGHT, static_cast<unsigned long>(line - 1)));
  if (y + height <= 0 || y >= viewport()->height()) return {};
  const int width = QFontMetrics(hintFont_).horizontalAdvance(it->second) + 2 * kHintPadding;
  return QRect(std::max(x, marginsWidth()), y, width, height);
}

void CodeEditor::paintEvent(QPaintEvent* event) {
  QsciScintilla::paintEvent(event);
  if (hints_.empty()) return;
  QPainter p(viewport());
  p.setClipRect(QRect(marginsWidth(), 0, viewport()->width() - marginsWidth(), viewport()->height()));
  p.setFont(hintFont_);
  p.setRenderHint(QPainter::Antialiasing);
  for (const auto& [line, text] : hints_) {
    const QRect r = hintRect(line);
    if (r.isNull() || !r.intersects(event->rect())) continue;
    const QRect box = r.adjusted(0, 2, 0, -2);
    p.setPen(Qt::NoPen);
    p.setBrush(editorStyle().marginPaper);
    p.drawRoundedRect(box, 3, 3);
    p.setPen(editorStyle().layerHint);
    p.drawText(box, Qt::AlignCenter, text);
  }
}

}  // namespace cas::widgets
