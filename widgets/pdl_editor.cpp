#include "widgets/pdl_editor.hpp"

#include <QDir>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLocale>
#include <QMessageBox>
#include <QPainter>
#include <QShortcut>
#include <QSplitter>
#include <QTimer>
#include <QToolButton>
#include <QToolTip>
#include <QTreeWidget>
#include <QVBoxLayout>
#include <Qsci/qsciscintilla.h>
#include <Qsci/qscistyle.h>

#include <algorithm>
#include <cctype>

#include "core/env/environments.hpp"
#include "core/params/run_params.hpp"
#include "core/project/project.hpp"
#include "core/support/atomic_file.hpp"
#include "widgets/pdl_completion.hpp"
#include "widgets/pdl_generated_view.hpp"
#include "widgets/pdl_lexer.hpp"
#include "widgets/studio_resources.hpp"

namespace cas::widgets {

namespace {

// Margins, markers and indicators of the editor.
constexpr int kLineNumberMargin = 0, kMarkerMargin = 1, kHintMargin = 2;
constexpr int kErrorMarker = 0, kWarningMarker = 1, kNoteMarker = 2;
constexpr int kErrorIndicator = 8, kWarningIndicator = 9, kNoteIndicator = 10;

QColor colourOf(Severity s) {
  const EditorStyle& style = editorStyle();
  return s == Severity::Error ? style.error : s == Severity::Warning ? style.warning : style.note;
}

// A margin marker: a filled disc with a white glyph, drawn at the margin's size.
QImage markerImage(Severity s, int size) {
  QImage image(size, size, QImage::Format_ARGB32_Premultiplied);
  image.fill(Qt::transparent);
  QPainter p(&image);
  p.setRenderHint(QPainter::Antialiasing);
  p.setPen(Qt::NoPen);
  p.setBrush(colourOf(s));
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

QIcon severityIcon(Severity s) { return QIcon(QPixmap::fromImage(markerImage(s, 16))); }

// Counts as the CLI prints them: exact below 10,000, then K and M with one decimal.
QString compactCount(std::int64_t n) {
  if (n < 10000) return QString::number(n);
  if (n < 10000000) return QString::number(double(n) / 1e3, 'f', 1) + u'K';
  return QString::number(double(n) / 1e6, 'f', 1) + u'M';
}

bool isIdentifierByte(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// The length of the token that starts at byte `i` of `line`, so that an underline covers the
// whole name, number, string or operator a diagnostic points at.
int tokenLength(const QByteArray& line, int i) {
  const int n = int(line.size());
  if (i >= n) return 0;
  const char c = line[i];
  int j = i + 1;
  if (isIdentifierByte(c)) {
    const bool number = std::isdigit(static_cast<unsigned char>(c));
    while (j < n && (isIdentifierByte(line[j]) || (line[j] == '.' && j + 1 < n && isIdentifierByte(line[j + 1])) ||
                     (number && (line[j] == '+' || line[j] == '-') && (line[j - 1] == 'e' || line[j - 1] == 'E'))))
      ++j;
  } else if (c == '\'' || c == '"') {
    while (j < n && line[j] != c) j += line[j] == '\\' ? 2 : 1;
    j = std::min(j + 1, n);
  } else if (j < n && line[j] == '=' && QByteArrayLiteral("=!<>+-*/").contains(c)) {
    ++j;
  }
  return j - i;
}

}  // namespace

PdlEditor::PdlEditor(QWidget* parent)
    : QWidget(parent),
      fileLabel_(new QLabel(this)),
      summary_(new QLabel(this)),
      saveButton_(new QToolButton(this)),
      undoButton_(new QToolButton(this)),
      redoButton_(new QToolButton(this)),
      editor_(new QsciScintilla(this)),
      problems_(new QTreeWidget(this)),
      generated_(new GeneratedCodeView(this)),
      compileTimer_(new QTimer(this)) {
  setObjectName(QStringLiteral("pdlEditor"));
  fileLabel_->setObjectName(QStringLiteral("policyFileLabel"));
  fileLabel_->setText(tr("Open a project to edit its policy."));
  summary_->setObjectName(QStringLiteral("compileSummary"));
  summary_->setTextFormat(Qt::RichText);
  summary_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);  // a long summary is cut, not widening the dock

  auto* saveAction = new QAction(tr("&Save"), this);
  saveAction->setShortcut(QKeySequence::Save);
  saveAction->setShortcutContext(Qt::WidgetWithChildrenShortcut);
  saveAction->setToolTip(tr("Save the policy (%1)").arg(QKeySequence(QKeySequence::Save).toString(QKeySequence::NativeText)));
  connect(saveAction, &QAction::triggered, this, &PdlEditor::save);
  addAction(saveAction);
  saveButton_->setDefaultAction(saveAction);
  auto* undoAction = new QAction(tr("Undo"), this);
  undoAction->setToolTip(tr("Undo the last edit (%1)").arg(QKeySequence(QKeySequence::Undo).toString(QKeySequence::NativeText)));
  connect(undoAction, &QAction::triggered, editor_, &QsciScintilla::undo);
  undoButton_->setDefaultAction(undoAction);
  auto* redoAction = new QAction(tr("Redo"), this);
  redoAction->setToolTip(tr("Redo the edit undone last (%1)").arg(QKeySequence(QKeySequence::Redo).toString(QKeySequence::NativeText)));
  connect(redoAction, &QAction::triggered, editor_, &QsciScintilla::redo);
  redoButton_->setDefaultAction(redoAction);
  for (QToolButton* b : {saveButton_, undoButton_, redoButton_}) {
    b->setAutoRaise(true);
    b->setToolButtonStyle(Qt::ToolButtonTextOnly);
  }

  problems_->setObjectName(QStringLiteral("problemList"));
  problems_->setColumnCount(2);
  problems_->setHeaderLabels({tr("Line:Col"), tr("Problem")});
  problems_->header()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
  problems_->header()->setStretchLastSection(true);
  problems_->setIndentation(14);
  problems_->setUniformRowHeights(true);
  problems_->setSelectionMode(QAbstractItemView::SingleSelection);
  problems_->setAlternatingRowColors(true);
  connect(problems_, &QTreeWidget::itemClicked, this, [this](QTreeWidgetItem* item) {
    const Mark& m = marks_.at(size_t(item->data(0, Qt::UserRole).toInt()));
    jumpTo(m.start, m.line);
  });
  connect(generated_, &GeneratedCodeView::sourcePositionActivated, this, [this](int line, int column) {
    jumpTo(int(editor_->SendScintilla(QsciScintillaBase::SCI_POSITIONFROMLINE, line - 1)) + column - 1, line);
  });

  setUpEditor();

  auto* bar = new QHBoxLayout;
  bar->setContentsMargins(8, 2, 4, 2);
  bar->addWidget(fileLabel_);
  bar->addSpacing(12);
  bar->addWidget(summary_, 1);
  bar->addSpacing(8);
  bar->addWidget(undoButton_);
  bar->addWidget(redoButton_);
  bar->addWidget(saveButton_);
  auto* left = new QSplitter(Qt::Vertical);
  left->addWidget(editor_);
  left->addWidget(problems_);
  left->setStretchFactor(0, 5);
  left->setStretchFactor(1, 1);
  left->setChildrenCollapsible(false);
  auto* split = new QSplitter(Qt::Horizontal);
  split->addWidget(left);
  split->addWidget(generated_);
  split->setStretchFactor(0, 2);
  split->setStretchFactor(1, 1);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(0);
  layout->addLayout(bar);
  layout->addWidget(split, 1);

  compileTimer_->setSingleShot(true);
  compileTimer_->setInterval(kCompileDelayMs);
  connect(compileTimer_, &QTimer::timeout, this, &PdlEditor::compileNow);
  connect(editor_, &QsciScintilla::textChanged, this, [this, undoAction, redoAction] {
    undoAction->setEnabled(editor_->isUndoAvailable());
    redoAction->setEnabled(editor_->isRedoAvailable());
    if (isPdl_) compileTimer_->start();
  });
  connect(editor_, &QsciScintilla::modificationChanged, this, &PdlEditor::updateFileLabel);
  undoAction->setEnabled(false);
  redoAction->setEnabled(false);
  saveAction->setEnabled(false);
  connect(editor_, &QsciScintilla::modificationChanged, saveAction, &QAction::setEnabled);
}

PdlEditor::~PdlEditor() = default;

void PdlEditor::setUpEditor() {
  editor_->setObjectName(QStringLiteral("pdlText"));
  editor_->setUtf8(true);
  pdlLexer_ = new PdlLexer(editor_);
  editor_->setLexer(pdlLexer_);
  editor_->setEolMode(QsciScintilla::EolUnix);
  editor_->setIndentationsUseTabs(false);  // a tab in the indentation is a PDL error
  editor_->setIndentationWidth(4);
  editor_->setTabWidth(4);
  editor_->setTabIndents(true);
  editor_->setBackspaceUnindents(true);
  editor_->setAutoIndent(true);
  editor_->setIndentationGuides(true);
  editor_->setBraceMatching(QsciScintilla::SloppyBraceMatch);
  editor_->setCaretLineVisible(true);
  editor_->setCaretLineBackgroundColor(editorStyle().caretLine);
  editor_->setMatchedBraceBackgroundColor(editorStyle().matchedBrace);
  editor_->setWrapMode(QsciScintilla::WrapNone);
  editor_->setEdgeMode(QsciScintilla::EdgeNone);
  editor_->SendScintilla(QsciScintillaBase::SCI_SETSCROLLWIDTHTRACKING, 1);
  editor_->SendScintilla(QsciScintillaBase::SCI_SETSCROLLWIDTH, 1);

  // Line numbers, then the diagnostic markers, then the layer hints.
  applyMarginColours();
  editor_->setMarginType(kLineNumberMargin, QsciScintilla::NumberMargin);
  connect(editor_, &QsciScintilla::linesChanged, this, [this] {
    editor_->setMarginWidth(kLineNumberMargin, QString(QString::number(editor_->lines()).size() + 1, u'0'));
  });
  editor_->setMarginWidth(kLineNumberMargin, QStringLiteral("000"));
  editor_->setMarginType(kMarkerMargin, QsciScintilla::SymbolMargin);
  const int markerSize = editor_->fontMetrics().height();
  editor_->setMarginWidth(kMarkerMargin, markerSize + 4);
  editor_->setMarginMarkerMask(kMarkerMargin, (1 << kErrorMarker) | (1 << kWarningMarker) | (1 << kNoteMarker));
  editor_->setMarginType(kHintMargin, QsciScintilla::TextMarginRightJustified);
  editor_->setMarginMarkerMask(kHintMargin, 0);
  editor_->setMarginWidth(kHintMargin, 0);
  editor_->markerDefine(markerImage(Severity::Error, markerSize), kErrorMarker);
  editor_->markerDefine(markerImage(Severity::Warning, markerSize), kWarningMarker);
  editor_->markerDefine(markerImage(Severity::Note, markerSize), kNoteMarker);
  QFont hintFont = PdlLexer::codeFont();
  hintFont.setPointSizeF(hintFont.pointSizeF() * 0.85);
  hintStyle_ = std::make_unique<QsciStyle>(-1, QStringLiteral("layer hint"), editorStyle().layerHint, editorStyle().marginPaper, hintFont);

  for (auto [indicator, severity] : {std::pair{kErrorIndicator, Severity::Error}, std::pair{kWarningIndicator, Severity::Warning},
                                     std::pair{kNoteIndicator, Severity::Note}}) {
    editor_->indicatorDefine(severity == Severity::Note ? QsciScintilla::DotsIndicator : QsciScintilla::SquiggleLowIndicator, indicator);
    editor_->setIndicatorForegroundColor(colourOf(severity), indicator);
    editor_->SendScintilla(QsciScintillaBase::SCI_INDICSETUNDER, static_cast<unsigned long>(indicator), 1L);
  }

  // Completion and call tips are driven here (pdl_completion.hpp), not by QScintilla's own.
  editor_->setAutoCompletionSource(QsciScintilla::AcsNone);
  editor_->setCallTipsStyle(QsciScintilla::CallTipsNone);
  editor_->SendScintilla(QsciScintillaBase::SCI_AUTOCSETORDER, static_cast<unsigned long>(QsciScintillaBase::SC_ORDER_CUSTOM));
  editor_->SendScintilla(QsciScintillaBase::SCI_AUTOCSETAUTOHIDE, 1UL);
  editor_->SendScintilla(QsciScintillaBase::SCI_AUTOCSETMAXHEIGHT, 10UL);
  editor_->SendScintilla(QsciScintillaBase::SCI_AUTOCSETCANCELATSTART, 0UL);
  editor_->setCallTipsBackgroundColor(editorStyle().callTipPaper);
  editor_->setCallTipsForegroundColor(editorStyle().callTipText);
  connect(editor_, &QsciScintillaBase::SCN_CHARADDED, this, &PdlEditor::charAdded);
  auto* complete = new QShortcut(QKeySequence(Qt::CTRL | Qt::Key_Space), editor_, nullptr, nullptr, Qt::WidgetShortcut);
  connect(complete, &QShortcut::activated, this, [this] { showCompletions(true); });

  editor_->SendScintilla(QsciScintillaBase::SCI_SETMOUSEDWELLTIME, 500UL);
  connect(editor_, &QsciScintillaBase::SCN_DWELLSTART, this, &PdlEditor::showDwellTip);
  connect(editor_, &QsciScintillaBase::SCN_DWELLEND, this, [] { QToolTip::hideText(); });
}

// Setting a lexer resets the margins' style, so this runs after each change of lexer.
void PdlEditor::applyMarginColours() {
  editor_->setMarginsFont(PdlLexer::codeFont());
  editor_->setMarginsBackgroundColor(editorStyle().marginPaper);
  editor_->setMarginsForegroundColor(editorStyle().marginText);
}

bool PdlEditor::isModified() const { return editor_->isModified(); }

int PdlEditor::indicatorFor(Severity severity) const {
  return severity == Severity::Error ? kErrorIndicator : severity == Severity::Warning ? kWarningIndicator : kNoteIndicator;
}

QString PdlEditor::layerHint(int line) const {
  const auto it = hints_.find(line);
  return it == hints_.end() ? QString() : it->second;
}

void PdlEditor::setProject(const project::Project& project) {
  const env::EnvironmentInfo* e = env::findEnvironment(project.environment);
  if (!e) return;  // a loaded project always names a known environment
  // The options project::compilePolicy uses, for text that is not saved yet.
  pdl::CompileOptions o;
  o.observationShape.assign(e->observationShape.begin(), e->observationShape.end());
  o.actionCount = e->actionCount;
  o.algorithm = project.algorithm;
  o.batch = 1;
  o.seed = std::uint64_t(params::readRuntimeParams(project.parameters).seed);
  o.fileName = file_.toStdString();
  options_ = std::move(o);
  if (!file_.isEmpty()) compileNow();
}

bool PdlEditor::openFile(const QString& path) {
  if (path == file_) return true;
  if (!maybeSave()) return false;
  std::string error;
  const auto text = readFile(path.toStdString(), kEditorFileLimit, &error);
  if (!text) {
    QMessageBox::warning(this, tr("Open"), tr("%1 cannot be read: %2").arg(path, QString::fromStdString(error)));
    return false;
  }
  file_ = path;
  isPdl_ = QFileInfo(path).suffix() == QLatin1String("pdl");
  if (options_) options_->fileName = path.toStdString();
  // Other files of the project (project.toml, README.md) open as plain text.
  editor_->setLexer(isPdl_ ? pdlLexer_ : nullptr);
  if (!isPdl_) editor_->setFont(PdlLexer::codeFont());
  applyMarginColours();
  editor_->setText(QString::fromUtf8(text->data(), qsizetype(text->size())));
  editor_->SendScintilla(QsciScintillaBase::SCI_EMPTYUNDOBUFFER);
  editor_->setModified(false);
  editor_->clearMarginText();
  editor_->setMarginWidth(kHintMargin, 0);
  hints_.clear();
  hintDetails_.clear();
  updateFileLabel();
  compileNow();
  return true;
}

bool PdlEditor::save() {
  if (file_.isEmpty()) return false;
  std::string error;
  if (!writeFileAtomic(file_.toStdString(), editor_->text().toStdString(), &error)) {
    QMessageBox::warning(this, tr("Save"), tr("%1 was not saved: %2").arg(file_, QString::fromStdString(error)));
    return false;
  }
  editor_->setModified(false);
  emit saved(file_);
  return true;
}

bool PdlEditor::maybeSave() {
  if (!isModified()) return true;
  const auto answer = QMessageBox::question(this, tr("Unsaved changes"), tr("%1 has changes that are not saved. Save them?").arg(QFileInfo(file_).fileName()),
                                            QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel, QMessageBox::Save);
  if (answer == QMessageBox::Save) return save();
  return answer == QMessageBox::Discard;
}

void PdlEditor::updateFileLabel() {
  if (file_.isEmpty()) return;
  const QString name = QFileInfo(file_).fileName();
  fileLabel_->setText(isModified() ? tr("<b>%1</b> <span style='color:#a15c00'>● modified</span>").arg(name.toHtmlEscaped())
                                   : QStringLiteral("<b>%1</b>").arg(name.toHtmlEscaped()));
  fileLabel_->setToolTip(QDir::toNativeSeparators(file_));
}

void PdlEditor::compileNow() {
  compileTimer_->stop();
  if (!isPdl_ || !options_) {
    showDiagnostics({});
    summary_->setText(isPdl_ ? tr("No project: the policy is compiled for the project's environment.")
                             : tr("Not a PDL file: it is not compiled."));
    emit diagnosticsUpdated();
    return;
  }
  QElapsedTimer clock;
  clock.start();
  const QByteArray source = editor_->text().toUtf8();
  const pdl::CompileResult result = pdl::compile(std::string_view(source.constData(), size_t(source.size())), *options_);
  lastCompileMs_ = double(clock.nsecsElapsed()) / 1e6;
  showDiagnostics(result.diagnostics);
  if (result.policy) {
    showLayerHints(*result.policy);
    generated_->showGraph(result.policy->graph);
  } else {
    generated_->markOutOfDate();  // the layer hints stay too: they move with their lines
  }
  showSummary(result);
  emit diagnosticsUpdated();
}

void PdlEditor::showDiagnostics(const DiagnosticList& diagnostics) {
  const int length = editor_->length();
  for (int indicator : {kErrorIndicator, kWarningIndicator, kNoteIndicator}) {
    editor_->SendScintilla(QsciScintillaBase::SCI_SETINDICATORCURRENT, static_cast<unsigned long>(indicator));
    editor_->SendScintilla(QsciScintillaBase::SCI_INDICATORCLEARRANGE, 0UL, long(length));
  }
  for (int marker : {kErrorMarker, kWarningMarker, kNoteMarker}) editor_->markerDeleteAll(marker);
  problems_->clear();
  marks_.clear();
  for (const Diagnostic& d : diagnostics.items()) {
    auto* item = new QTreeWidgetItem(problems_);
    addMark(d, item);
    for (const Diagnostic& note : d.notes) addMark(note, new QTreeWidgetItem(item));
  }
  problems_->expandAll();
}

void PdlEditor::addMark(const Diagnostic& d, QTreeWidgetItem* item) {
  Mark m;
  m.severity = d.severity;
  m.line = d.location.line;
  m.column = d.location.column;
  m.message = QString::fromStdString(d.message);
  const int lines = editor_->lines();
  if (m.line >= 1 && m.line <= lines) {
    const int lineStart = int(editor_->SendScintilla(QsciScintillaBase::SCI_POSITIONFROMLINE, static_cast<unsigned long>(m.line - 1)));
    const int lineEnd = int(editor_->SendScintilla(QsciScintillaBase::SCI_GETLINEENDPOSITION, static_cast<unsigned long>(m.line - 1)));
    const QByteArray text = editor_->bytes(lineStart, lineEnd);
    const int lineLength = int(text.size()) - (text.endsWith('\0') ? 1 : 0);  // bytes() adds a terminator
    if (m.column == 0) {  // the line as a whole: from its first non-blank byte
      int first = 0;
      while (first < lineLength && text[first] == ' ') ++first;
      if (first < lineLength) m.start = lineStart + first, m.end = lineEnd;
    } else if (lineLength > 0) {
      const int offset = std::min(m.column - 1, lineLength - 1);  // past the end: its last character
      m.start = lineStart + offset;
      m.end = m.start + std::max(1, tokenLength(text.left(lineLength), offset));
    }
    if (m.start >= 0) {
      editor_->SendScintilla(QsciScintillaBase::SCI_SETINDICATORCURRENT, static_cast<unsigned long>(indicatorFor(m.severity)));
      editor_->SendScintilla(QsciScintillaBase::SCI_INDICATORFILLRANGE, static_cast<unsigned long>(m.start), long(m.end - m.start));
    }
    editor_->markerAdd(m.line - 1, m.severity == Severity::Error ? kErrorMarker : m.severity == Severity::Warning ? kWarningMarker : kNoteMarker);
  }
  item->setIcon(0, severityIcon(m.severity));
  item->setText(0, m.line > 0 ? (m.column > 0 ? QStringLiteral("%1:%2").arg(m.line).arg(m.column) : QString::number(m.line))
                              : tr("file"));
  item->setText(1, m.message);
  item->setToolTip(1, m.message);
  item->setData(0, Qt::UserRole, int(marks_.size()));
  marks_.push_back(std::move(m));
}

void PdlEditor::showLayerHints(const pdl::CompiledPolicy& policy) {
  // One call site makes several layers when it is inlined more than once (a function called in a
  // loop): the hint shows its shape once with the count, and the parameters of all of them.
  struct Site {
    int column;
    std::vector<std::int64_t> shape;
    int count = 0;
    std::int64_t parameters = 0;
  };
  std::map<int, std::vector<Site>> sitesByLine;
  std::map<int, QStringList> details;
  for (const pdl::LayerSummary& l : policy.layers) {
    if (l.line <= 0) continue;
    std::vector<Site>& sites = sitesByLine[l.line];
    auto site = std::find_if(sites.begin(), sites.end(), [&](const Site& s) { return s.column == l.column; });
    if (site == sites.end()) site = sites.insert(sites.end(), Site{l.column, l.outputShape});
    ++site->count;
    site->parameters += l.parameters;
    details[l.line] << tr("%1 (%2): output %3, %4 parameters, %5 FLOPs per sample")
                           .arg(QString::fromStdString(l.name), QString::fromStdString(l.kind), QString::fromStdString(ir::shapeText(l.outputShape)))
                           .arg(l.parameters)
                           .arg(compactCount(l.flops));
  }
  editor_->clearMarginText();
  hints_.clear();
  hintDetails_.clear();
  int widest = 0;
  for (const auto& [line, sites] : sitesByLine) {
    QStringList shapes;
    std::int64_t parameters = 0;
    for (const Site& s : sites) {
      const QString shape = QString::fromStdString(ir::shapeText(s.shape));
      shapes << (s.count > 1 ? QStringLiteral("%1×%2").arg(shape).arg(s.count) : shape);
      parameters += s.parameters;
    }
    QString hint = shapes.join(QStringLiteral(" → "));
    if (parameters > 0) hint += QStringLiteral("  ") + tr("%1 p").arg(compactCount(parameters));
    const QString padded = hint + u' ';  // keeps the text off the code
    hints_[line] = hint;
    hintDetails_[line] = details[line].join(u'\n');
    editor_->setMarginText(line - 1, padded, *hintStyle_);
    widest = std::max(widest, int(editor_->SendScintilla(QsciScintillaBase::SCI_TEXTWIDTH, static_cast<unsigned long>(hintStyle_->style()),
                                                         padded.toUtf8().constData())));
  }
  editor_->setMarginWidth(kHintMargin, widest > 0 ? widest + 6 : 0);
}

void PdlEditor::showSummary(const pdl::CompileResult& result) {
  int errors = 0, warnings = 0;
  for (const Diagnostic& d : result.diagnostics.items()) ++(d.severity == Severity::Error ? errors : warnings);
  if (!result.policy) {
    summary_->setText(QStringLiteral("<span style='color:%1'>✗ %2</span>").arg(editorStyle().error.name(), tr("Errors: %1, warnings: %2").arg(errors).arg(warnings)));
    summary_->setToolTip(tr("The program does not compile; the layer margin shows the last version that compiled."));
    return;
  }
  const pdl::CompiledPolicy& p = *result.policy;
  QStringList outputs;
  for (size_t i = 0; i < p.outputNames.size(); ++i)
    outputs << QStringLiteral("%1 %2").arg(QString::fromStdString(p.outputNames[i]), QString::fromStdString(ir::shapeText(p.outputShapes[i])));
  QString text = QStringLiteral("<span style='color:#2e7d32'>✓</span> ") +
                 tr("%1 layers · %2 parameters").arg(p.layers.size()).arg(QLocale().toString(qlonglong(p.parameterCount)));
  if (warnings > 0) text += QStringLiteral(" · <span style='color:%1'>%2</span>").arg(editorStyle().warning.name(), tr("warnings: %1").arg(warnings));
  summary_->setText(text);
  summary_->setToolTip(tr("Outputs: %1. Compiled in %2 ms for batch 1. The margin shows the output shapes and parameters (p) of the layers made on each line.")
                           .arg(outputs.join(QStringLiteral(", ")))
                           .arg(lastCompileMs_, 0, 'f', 1));
}

void PdlEditor::jumpTo(int start, int line) {
  if (line < 1) return;
  const int position = start >= 0 ? start : int(editor_->SendScintilla(QsciScintillaBase::SCI_POSITIONFROMLINE, static_cast<unsigned long>(line - 1)));
  editor_->SendScintilla(QsciScintillaBase::SCI_GOTOPOS, static_cast<unsigned long>(position));
  editor_->ensureLineVisible(line - 1);
  editor_->setFocus();
}

QString PdlEditor::textBeforeCursor() const {
  const int position = int(editor_->SendScintilla(QsciScintillaBase::SCI_GETCURRENTPOS));
  return editor_->text(0, position);
}

void PdlEditor::charAdded(int ch) {
  if (!isPdl_) return;
  if (ch == '\n') {
    // QScintilla has kept the previous line's indentation; a block opens after a ':'.
    int line = 0, index = 0;
    editor_->getCursorPosition(&line, &index);
    if (line == 0) return;
    QString previous = editor_->text(line - 1);
    if (const int hash = int(previous.indexOf(u'#')); hash >= 0) previous.truncate(hash);
    if (previous.trimmed().endsWith(u':')) {
      const int indent = editor_->indentation(line - 1) + editor_->indentationWidth();
      editor_->setIndentation(line, indent);
      editor_->setCursorPosition(line, indent);
    }
  } else if (ch == '(') {
    const QString tip = pdl_completion::callTip(pdl_completion::enclosingBuiltin(textBeforeCursor()));
    if (!tip.isEmpty())
      editor_->SendScintilla(QsciScintillaBase::SCI_CALLTIPSHOW, static_cast<unsigned long>(editor_->SendScintilla(QsciScintillaBase::SCI_GETCURRENTPOS)),
                             tip.toUtf8().constData());
  } else if (ch == ')') {
    editor_->SendScintilla(QsciScintillaBase::SCI_CALLTIPCANCEL);
  } else if (ch < 128 && (std::isalnum(ch) || ch == '_' || ch == '.')) {
    showCompletions(false);
  }
}

void PdlEditor::showCompletions(bool asked) {
  const QString before = textBeforeCursor();
  const pdl_completion::Completions c = pdl_completion::completionsAt(before, editor_->text());
  // Unasked, the list appears once two characters are typed, or right after `cuda.`.
  const bool afterCuda = before.endsWith(u'.');
  if (c.items.isEmpty() || (!asked && c.prefixLength < 2 && !afterCuda)) {
    if (editor_->isListActive()) editor_->cancelList();
    return;
  }
  editor_->SendScintilla(QsciScintillaBase::SCI_AUTOCSHOW, static_cast<uintptr_t>(c.prefixLength), c.items.join(u' ').toUtf8().constData());
}

void PdlEditor::showDwellTip(int position, int x, int y) {
  const QPoint global = editor_->viewport()->mapToGlobal(QPoint(x, y));
  int marginsWidth = 0;
  for (int m = 0; m < editor_->margins(); ++m) marginsWidth += editor_->marginWidth(m);
  if (x < marginsWidth) {  // over the margins: the layers made on that line
    const int line = editor_->lineAt(QPoint(marginsWidth, y)) + 1;
    if (auto it = hintDetails_.find(line); it != hintDetails_.end()) QToolTip::showText(global, it->second, editor_);
    return;
  }
  QStringList messages;
  for (const Mark& m : marks_)
    if (position >= m.start && position < m.end) messages << m.message;
  if (!messages.isEmpty()) QToolTip::showText(global, messages.join(u'\n'), editor_);
}

}  // namespace cas::widgets
