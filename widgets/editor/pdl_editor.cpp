#include "widgets/editor/pdl_editor.hpp"

#include <QDir>
#include <QElapsedTimer>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLocale>
#include <QMessageBox>
#include <QResizeEvent>
#include <QShortcut>
#include <QSplitter>
#include <QStackedWidget>
#include <QTabBar>
#include <QTimer>
#include <QToolButton>
#include <QToolTip>
#include <QTreeWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <cctype>

#include "core/env/environments.hpp"
#include "core/pdl/learned_model.hpp"
#include "core/params/run_params.hpp"
#include "core/project/project.hpp"
#include "core/support/atomic_file.hpp"
#include "widgets/editor/code_editor.hpp"
#include "widgets/editor/pdl_builtin_docs.hpp"
#include "widgets/editor/pdl_completion.hpp"
#include "widgets/editor/pdl_generated_view.hpp"
#include "widgets/studio_resources.hpp"

namespace cas::widgets {

namespace {

// What the editor shows of a policy file: the policy as the project compiles it, or for a MuZero
// project the learned model's three functions as one summary (represent's layers, then the
// recurrent program's: dynamics and predict; every parameter once; the recurrent graph, which
// the search runs most, in the generated view).
pdl::CompileResult compileForEditor(std::string_view source, const pdl::CompileOptions& options) {
  if (options.algorithm != "muzero") return pdl::compile(source, options);
  pdl::LearnedModelOptions o;
  o.fileName = options.fileName;
  o.observationShape = options.observationShape;
  o.actionCount = options.actionCount;
  o.seed = options.seed;
  pdl::LearnedModelResult learned = pdl::compileLearnedModel(source, o);
  pdl::CompileResult result;
  result.diagnostics = std::move(learned.diagnostics);
  if (!learned.model) return result;
  pdl::CompiledPolicy summary = std::move(learned.model->recurrent);
  const std::vector<pdl::LayerSummary>& represent = learned.model->represent.layers;
  summary.layers.insert(summary.layers.begin(), represent.begin(), represent.end());
  summary.parameters = learned.model->parameters;
  summary.parameterCount = learned.model->parameterCount;
  result.policy = std::move(summary);
  return result;
}

constexpr int kErrorMarker = CodeEditor::kErrorMarker, kWarningMarker = CodeEditor::kWarningMarker, kNoteMarker = CodeEditor::kNoteMarker;
constexpr int kErrorIndicator = CodeEditor::kErrorIndicator, kWarningIndicator = CodeEditor::kWarningIndicator,
              kNoteIndicator = CodeEditor::kNoteIndicator;
// The generated code beside the editor needs about this many columns to be read without scrolling.
constexpr int kGeneratedViewColumns = 48;

QIcon severityIcon(Severity s) { return QIcon(QPixmap::fromImage(severityMarkerImage(s, 16))); }

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
      tabs_(new QTabBar(this)),
      stack_(new QStackedWidget(this)),
      summary_(new QLabel(this)),
      saveButton_(new QToolButton(this)),
      undoButton_(new QToolButton(this)),
      redoButton_(new QToolButton(this)),
      problems_(new QTreeWidget(this)),
      generated_(new GeneratedCodeView(this)),
      split_(new QSplitter(Qt::Horizontal, this)),
      compileTimer_(new QTimer(this)) {
  setObjectName(QStringLiteral("pdlEditor"));
  createControls();
  createLayout();
  connectSignals();

  editor_ = addEditor();  // blank until a file is opened; it has no tab
  stack_->setCurrentWidget(editor_);
  tabs_->hide();
  updateActions();
}

PdlEditor::~PdlEditor() = default;

// The tab bar and the compile summary; the Save, Save As, Undo and Redo actions, each connected
// as it is made (before a tool button takes it as its default action); the problem list.
void PdlEditor::createControls() {
  tabs_->setObjectName(QStringLiteral("editorTabs"));
  tabs_->setDocumentMode(true);
  tabs_->setTabsClosable(true);
  tabs_->setMovable(false);  // the tabs and the stack of editors stay in one order
  tabs_->setExpanding(false);
  tabs_->setElideMode(Qt::ElideMiddle);
  summary_->setObjectName(QStringLiteral("compileSummary"));
  summary_->setTextFormat(Qt::RichText);
  summary_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);  // a long summary is cut, not widening the dock

  saveAction_ = new QAction(tr("&Save"), this);
  saveAction_->setObjectName(QStringLiteral("saveAction"));
  saveAction_->setShortcut(QKeySequence::Save);
  saveAction_->setShortcutContext(Qt::WidgetWithChildrenShortcut);
  saveAction_->setToolTip(tr("Save the file in front (%1)").arg(QKeySequence(QKeySequence::Save).toString(QKeySequence::NativeText)));
  connect(saveAction_, &QAction::triggered, this, &PdlEditor::save);
  addAction(saveAction_);
  saveButton_->setDefaultAction(saveAction_);
  saveAsAction_ = new QAction(tr("Save &As..."), this);
  saveAsAction_->setObjectName(QStringLiteral("saveAsAction"));
  saveAsAction_->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_S));  // QKeySequence::SaveAs is empty on some desktops
  saveAsAction_->setShortcutContext(Qt::WidgetWithChildrenShortcut);
  connect(saveAsAction_, &QAction::triggered, this, &PdlEditor::chooseSaveAsPath);
  addAction(saveAsAction_);
  undoAction_ = new QAction(tr("Undo"), this);
  undoAction_->setToolTip(tr("Undo the last edit (%1)").arg(QKeySequence(QKeySequence::Undo).toString(QKeySequence::NativeText)));
  connect(undoAction_, &QAction::triggered, this, [this] { editor_->undo(); });
  undoButton_->setDefaultAction(undoAction_);
  redoAction_ = new QAction(tr("Redo"), this);
  redoAction_->setToolTip(tr("Redo the edit undone last (%1)").arg(QKeySequence(QKeySequence::Redo).toString(QKeySequence::NativeText)));
  connect(redoAction_, &QAction::triggered, this, [this] { editor_->redo(); });
  redoButton_->setDefaultAction(redoAction_);
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
  compileTimer_->setSingleShot(true);
  compileTimer_->setInterval(kCompileDelayMs);
}

// The tab bar, summary and buttons over the editors beside the generated code, the problem list
// under the editors.
void PdlEditor::createLayout() {
  auto* bar = new QHBoxLayout;
  bar->setContentsMargins(4, 0, 4, 0);
  bar->addWidget(tabs_, 0, Qt::AlignBottom);
  bar->addSpacing(12);
  bar->addWidget(summary_, 1);
  bar->addSpacing(8);
  bar->addWidget(undoButton_);
  bar->addWidget(redoButton_);
  bar->addWidget(saveButton_);
  auto* left = new QSplitter(Qt::Vertical);
  left->addWidget(stack_);
  left->addWidget(problems_);
  left->setStretchFactor(0, 5);
  left->setStretchFactor(1, 1);
  left->setChildrenCollapsible(false);
  split_->setObjectName(QStringLiteral("editorSplit"));
  split_->addWidget(left);
  split_->addWidget(generated_);
  split_->setStretchFactor(0, 2);
  split_->setStretchFactor(1, 1);
  split_->setChildrenCollapsible(false);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(0);
  layout->addLayout(bar);
  layout->addWidget(split_, 1);
}

// A problem or a line of generated code clicked shows its place in the source; the compile
// timer; the tabs.
void PdlEditor::connectSignals() {
  connect(problems_, &QTreeWidget::itemClicked, this, [this](QTreeWidgetItem* item) {
    const Mark& m = marks_.at(size_t(item->data(0, Qt::UserRole).toInt()));
    jumpTo(m.start, m.line);
  });
  connect(generated_, &GeneratedCodeView::sourcePositionActivated, this, [this](int line, int column) {
    jumpTo(int(editor_->SendScintilla(QsciScintillaBase::SCI_POSITIONFROMLINE, line - 1)) + column - 1, line);
  });
  connect(compileTimer_, &QTimer::timeout, this, &PdlEditor::compileNow);
  connect(tabs_, &QTabBar::currentChanged, this, &PdlEditor::showTab);
  connect(tabs_, &QTabBar::tabCloseRequested, this, &PdlEditor::closeTab);
}

CodeEditor* PdlEditor::addEditor() {
  auto* e = new CodeEditor(stack_);
  stack_->addWidget(e);
  connectEditor(e);
  return e;
}

void PdlEditor::connectEditor(CodeEditor* e) {
  connect(e, &QsciScintilla::textChanged, this, [this, e] {
    if (e != editor_) return;
    updateActions();
    if (e->isPdl()) compileTimer_->start();
  });
  connect(e, &QsciScintilla::modificationChanged, this, [this, e] {
    updateTab(e);
    if (e == editor_) updateActions();
  });

  // Completion and call tips are driven here (pdl_completion.hpp), not by QScintilla's own.
  e->setAutoCompletionSource(QsciScintilla::AcsNone);
  e->setCallTipsStyle(QsciScintilla::CallTipsNone);
  e->SendScintilla(QsciScintillaBase::SCI_AUTOCSETORDER, static_cast<unsigned long>(QsciScintillaBase::SC_ORDER_CUSTOM));
  e->SendScintilla(QsciScintillaBase::SCI_AUTOCSETAUTOHIDE, 1UL);
  e->SendScintilla(QsciScintillaBase::SCI_AUTOCSETMAXHEIGHT, 10UL);
  e->SendScintilla(QsciScintillaBase::SCI_AUTOCSETCANCELATSTART, 0UL);
  e->setCallTipsBackgroundColor(editorStyle().callTipPaper);
  e->setCallTipsForegroundColor(editorStyle().callTipText);
  connect(e, &QsciScintillaBase::SCN_CHARADDED, this, [this, e](int ch) {
    if (e == editor_) charAdded(ch);
  });
  auto* complete = new QShortcut(QKeySequence(Qt::CTRL | Qt::Key_Space), e, nullptr, nullptr, Qt::WidgetShortcut);
  complete->setWhatsThis(tr("Policy editor: complete the word at the cursor"));  // Help > Keyboard Shortcuts lists it
  connect(complete, &QShortcut::activated, this, [this] { showCompletions(true); });

  e->SendScintilla(QsciScintillaBase::SCI_SETMOUSEDWELLTIME, 500UL);
  connect(e, &QsciScintillaBase::SCN_DWELLSTART, this, [this, e](int position, int x, int y) { showDwellTip(e, position, x, y); });
  connect(e, &QsciScintillaBase::SCN_DWELLEND, this, [] { QToolTip::hideText(); });
}

QsciScintilla* PdlEditor::editor() const { return editor_; }

QString PdlEditor::currentFile() const { return editor_->file(); }

QStringList PdlEditor::openFiles() const {
  QStringList out;
  for (int i = 0; i < tabs_->count(); ++i) out << static_cast<CodeEditor*>(stack_->widget(i))->file();
  return out;
}

bool PdlEditor::isModified() const { return editor_->isModified(); }

bool PdlEditor::anyModified() const {
  for (int i = 0; i < stack_->count(); ++i)
    if (static_cast<CodeEditor*>(stack_->widget(i))->isModified()) return true;
  return false;
}

int PdlEditor::indicatorFor(Severity severity) const {
  return severity == Severity::Error ? kErrorIndicator : severity == Severity::Warning ? kWarningIndicator : kNoteIndicator;
}

QString PdlEditor::layerHint(int line) const {
  const auto it = editor_->lineHints().find(line);
  return it == editor_->lineHints().end() ? QString() : it->second;
}

bool PdlEditor::generatedViewBeside() const { return split_->orientation() == Qt::Horizontal; }

void PdlEditor::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  placeGeneratedView();
}

// The generated code sits beside the code only when both fit: the editor keeps kCodeColumns
// columns and the generated view gets enough to be read; otherwise it goes under the code.
void PdlEditor::placeGeneratedView() {
  const int generatedWidth = int(kGeneratedViewColumns * editor_->characterWidth());
  const int besideWidth = editor_->widthForColumns(kCodeColumns) + split_->handleWidth() + generatedWidth;
  const Qt::Orientation wanted = width() >= besideWidth ? Qt::Horizontal : Qt::Vertical;
  if (wanted == split_->orientation()) return;
  split_->setOrientation(wanted);
  const int total = wanted == Qt::Horizontal ? width() : height();
  if (wanted == Qt::Horizontal) split_->setSizes({total - generatedWidth, generatedWidth});
  else split_->setSizes({total * 3 / 5, total * 2 / 5});
  // The problem list under the code keeps a few rows; the code gets the rest of the column.
  if (auto* code = qobject_cast<QSplitter*>(split_->widget(0))) {
    const int column = wanted == Qt::Horizontal ? height() : total * 3 / 5;
    const int problems = std::min(column / 4, 5 * problems_->fontMetrics().height() + problems_->header()->sizeHint().height());
    code->setSizes({column - problems, problems});
  }
}

void PdlEditor::setProject(const project::Project& project) {
  const env::EnvironmentInfo* e = env::findEnvironment(project.environment);
  if (!e) return;  // a loaded project always names a known environment
  // The project's files replace the open ones, read again from disk (the caller asked to save
  // them): a project opened again shows what its files hold.
  while (tabs_->count() > 1) {
    QWidget* w = stack_->widget(tabs_->count() - 1);
    tabs_->removeTab(tabs_->count() - 1);
    stack_->removeWidget(w);
    w->deleteLater();
  }
  if (tabs_->count() == 1) {
    tabs_->removeTab(0);
    tabs_->hide();
    editor_ = static_cast<CodeEditor*>(stack_->widget(0));
    loadInto(editor_, QString());
  }
  // The options project::compilePolicy uses, for text that is not saved yet.
  pdl::CompileOptions o;
  o.observationShape.assign(e->observationShape.begin(), e->observationShape.end());
  o.actionCount = e->actionCount;
  o.algorithm = project.algorithm;
  o.batch = 1;
  o.seed = std::uint64_t(params::readRuntimeParams(project.parameters).seed);
  o.fileName = editor_->file().toStdString();
  options_ = std::move(o);
  if (!editor_->file().isEmpty()) compileNow();
}

// Reads `path` into `e` (an empty path blanks it). False (and says why) when it cannot be read.
bool PdlEditor::loadInto(CodeEditor* e, const QString& path) {
  QByteArray bytes;
  if (!path.isEmpty()) {
    std::string error;
    const auto text = readFile(path.toStdString(), kEditorFileLimit, &error);
    if (!text) {
      QMessageBox::warning(this, tr("Open"), tr("%1 cannot be read: %2").arg(path, QString::fromStdString(error)));
      return false;
    }
    bytes = QByteArray(text->data(), qsizetype(text->size()));
  }
  e->setFile(path);
  e->setText(QString::fromUtf8(bytes));
  e->SendScintilla(QsciScintillaBase::SCI_EMPTYUNDOBUFFER);
  e->setModified(false);
  e->setLineHints({});
  return true;
}

bool PdlEditor::openFile(const QString& path) {
  const QString wanted = QFileInfo(path).absoluteFilePath();
  for (int i = 0; i < tabs_->count(); ++i)
    if (QFileInfo(static_cast<CodeEditor*>(stack_->widget(i))->file()).absoluteFilePath() == wanted) {
      tabs_->setCurrentIndex(i);
      return true;
    }
  // The blank view takes the first file; later ones get a tab of their own.
  const bool reuseBlank = tabs_->count() == 0;
  CodeEditor* e = reuseBlank ? editor_ : addEditor();
  if (!loadInto(e, path)) {
    if (!reuseBlank) {
      stack_->removeWidget(e);
      e->deleteLater();
    }
    return false;
  }
  const int index = tabs_->addTab(QFileInfo(path).fileName());
  updateTab(e);
  tabs_->show();
  if (tabs_->currentIndex() == index) showTab(index);  // the first tab is current already
  else tabs_->setCurrentIndex(index);
  return true;
}

void PdlEditor::showTab(int index) {
  if (index < 0) return;
  editor_ = static_cast<CodeEditor*>(stack_->widget(index));
  stack_->setCurrentWidget(editor_);
  if (options_) options_->fileName = editor_->file().toStdString();
  hintDetails_.clear();
  updateActions();
  compileNow();
}

void PdlEditor::updateTab(CodeEditor* e) {
  const int index = stack_->indexOf(e);
  if (index < 0 || index >= tabs_->count() || e->file().isEmpty()) return;
  const QString name = QFileInfo(e->file()).fileName();
  // The dot marks unsaved changes, as the window title of many editors does.
  tabs_->setTabText(index, e->isModified() ? tr("%1 ●").arg(name) : name);
  tabs_->setTabToolTip(index, e->isModified() ? tr("%1 (modified)").arg(QDir::toNativeSeparators(e->file()))
                                              : QDir::toNativeSeparators(e->file()));
}

void PdlEditor::updateActions() {
  undoAction_->setEnabled(editor_->isUndoAvailable());
  redoAction_->setEnabled(editor_->isRedoAvailable());
  saveAction_->setEnabled(editor_->isModified() && !editor_->file().isEmpty());
  saveAsAction_->setEnabled(!editor_->file().isEmpty());
}

bool PdlEditor::closeTab(int index) {
  if (index < 0 || index >= tabs_->count()) return false;
  auto* e = static_cast<CodeEditor*>(stack_->widget(index));
  if (e->isModified()) {
    const auto answer =
        QMessageBox::question(this, tr("Unsaved changes"), tr("%1 has changes that are not saved. Save them?").arg(QFileInfo(e->file()).fileName()),
                              QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel, QMessageBox::Save);
    if (answer == QMessageBox::Cancel || (answer == QMessageBox::Save && !saveEditor(e))) return false;
  }
  if (tabs_->count() == 1) {  // the last view stays, blank
    tabs_->removeTab(0);
    tabs_->hide();
    loadInto(e, QString());
    editor_ = e;
    hintDetails_.clear();
    updateActions();
    compileNow();
    return true;
  }
  stack_->removeWidget(e);
  tabs_->removeTab(index);  // makes another tab current, which shows it
  e->deleteLater();
  return true;
}

bool PdlEditor::save() { return saveEditor(editor_); }

bool PdlEditor::saveEditor(CodeEditor* e) {
  if (e->file().isEmpty()) return false;
  std::string error;
  if (!writeFileAtomic(e->file().toStdString(), e->text().toStdString(), &error)) {
    QMessageBox::warning(this, tr("Save"), tr("%1 was not saved: %2").arg(e->file(), QString::fromStdString(error)));
    return false;
  }
  e->setModified(false);
  emit saved(e->file());
  return true;
}

bool PdlEditor::saveAs(const QString& path) {
  if (editor_->file().isEmpty() || path.isEmpty()) return false;
  const QString target = QFileInfo(path).absoluteFilePath();
  for (int i = 0; i < tabs_->count(); ++i) {
    auto* other = static_cast<CodeEditor*>(stack_->widget(i));
    if (other != editor_ && QFileInfo(other->file()).absoluteFilePath() == target) {
      QMessageBox::warning(this, tr("Save As"), tr("%1 is open in another tab; close that tab first.").arg(QDir::toNativeSeparators(path)));
      return false;
    }
  }
  std::string error;
  if (!writeFileAtomic(target.toStdString(), editor_->text().toStdString(), &error)) {
    QMessageBox::warning(this, tr("Save As"), tr("%1 was not saved: %2").arg(path, QString::fromStdString(error)));
    return false;
  }
  editor_->setFile(target);
  editor_->setModified(false);
  updateTab(editor_);
  if (options_) options_->fileName = target.toStdString();
  updateActions();
  compileNow();
  emit saved(target);
  return true;
}

void PdlEditor::chooseSaveAsPath() {
  if (editor_->file().isEmpty()) return;
  const QString suffix = QFileInfo(editor_->file()).suffix();
  const QString filter = suffix == QLatin1String("pdl") ? tr("PDL policies (*.pdl)") : suffix == QLatin1String("toml") ? tr("TOML files (*.toml)") : QString();
  const QString path = QFileDialog::getSaveFileName(this, tr("Save As"), editor_->file(), filter);
  if (!path.isEmpty()) saveAs(path);
}

bool PdlEditor::maybeSave() {
  for (int i = 0; i < tabs_->count(); ++i) {
    auto* e = static_cast<CodeEditor*>(stack_->widget(i));
    if (!e->isModified()) continue;
    tabs_->setCurrentIndex(i);  // the file asked about is the one in front
    const auto answer =
        QMessageBox::question(this, tr("Unsaved changes"), tr("%1 has changes that are not saved. Save them?").arg(QFileInfo(e->file()).fileName()),
                              QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel, QMessageBox::Save);
    if (answer == QMessageBox::Cancel || (answer == QMessageBox::Save && !saveEditor(e))) return false;
  }
  return true;
}

void PdlEditor::compileNow() {
  compileTimer_->stop();
  if (!editor_->isPdl() || !options_) {
    showDiagnostics({});
    summary_->setText(editor_->file().isEmpty() ? tr("Open a project to edit its policy.")
                      : editor_->isPdl()         ? tr("No project: the policy is compiled for the project's environment.")
                                                 : tr("Not a PDL file: it is not compiled."));
    emit diagnosticsUpdated();
    return;
  }
  QElapsedTimer clock;
  clock.start();
  const QByteArray source = editor_->text().toUtf8();
  const pdl::CompileResult result = compileForEditor(std::string_view(source.constData(), size_t(source.size())), *options_);
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
  std::map<int, QString> hints;
  hintDetails_.clear();
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
    hints[line] = hint;
    hintDetails_[line] = details[line].join(u'\n');
  }
  editor_->setLineHints(std::move(hints));
}

void PdlEditor::showSummary(const pdl::CompileResult& result) {
  int errors = 0, warnings = 0;
  for (const Diagnostic& d : result.diagnostics.items()) ++(d.severity == Severity::Error ? errors : warnings);
  if (!result.policy) {
    summary_->setText(QStringLiteral("<span style='color:%1'>✗ %2</span>").arg(editorStyle().error.name(), tr("Errors: %1, warnings: %2").arg(errors).arg(warnings)));
    summary_->setToolTip(tr("The program does not compile; the layer hints show the last version that compiled."));
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
  summary_->setToolTip(tr("Outputs: %1. Compiled in %2 ms for batch 1. The hint after a line shows the output shapes and parameters (p) of the layers made on it.")
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
  if (!editor_->isPdl()) return;
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

void PdlEditor::showDwellTip(CodeEditor* e, int position, int x, int y) {
  if (e != editor_) return;
  const QPoint global = e->viewport()->mapToGlobal(QPoint(x, y));
  // Over a layer hint: the layers made on that line.
  for (const auto& [line, details] : hintDetails_)
    if (e->hintRect(line).contains(x, y)) {
      QToolTip::showText(global, details, e);
      return;
    }
  if (position < 0) return;
  QStringList tips;
  for (const Mark& m : marks_)
    if (position >= m.start && position < m.end) tips << QStringLiteral("<p>%1</p>").arg(m.message.toHtmlEscaped());
  // Over a built-in's name: its entry in the PDL reference.
  if (e->isPdl()) {
    const int start = int(e->SendScintilla(QsciScintillaBase::SCI_WORDSTARTPOSITION, static_cast<unsigned long>(position), 1L));
    const int end = int(e->SendScintilla(QsciScintillaBase::SCI_WORDENDPOSITION, static_cast<unsigned long>(position), 1L));
    const QString word = end > start ? QString::fromUtf8(e->bytes(start, end)).remove(QChar(0)) : QString();
    const QString doc = pdl_builtin_docs::documentation(word);
    if (!doc.isEmpty()) tips << doc;
  }
  if (!tips.isEmpty()) QToolTip::showText(global, tips.join(QStringLiteral("<hr>")), e);
}

}  // namespace cas::widgets
