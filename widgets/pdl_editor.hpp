#pragma once
// The Policy editor dock: the project's PDL file in a QScintilla editor (highlighting, line
// numbers, undo, atomic save, a modified marker), with
//   - live diagnostics: kCompileDelayMs after the last edit the text is compiled with the
//     project's environment and algorithm, and every diagnostic is underlined at its line:column,
//     marked in the margin and listed under the editor (a click jumps to it);
//   - a margin with the output shape and parameter count of the layers made on each line;
//   - completion of built-ins, names and the keyword arguments of the built-in being called,
//     and call tips (Ctrl+Space asks for completion);
//   - the generated code beside it (pdl_generated_view.hpp).
// The compiler runs on the GUI thread: it is bounded (core/pdl/compiler.hpp), takes well under a
// millisecond on the example policies and about 0.15 s with the IR view for a 30000-op program near
// the limits; test_pdl_editor measures both and the latency from a keystroke.
// Thread-safety: GUI thread only.
#include <QWidget>

#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "core/pdl/compiler.hpp"
#include "core/support/diagnostic.hpp"

class QLabel;
class QsciScintilla;
class QsciStyle;
class QTimer;
class QToolButton;
class QTreeWidget;
class QTreeWidgetItem;

namespace cas::project {
struct Project;
}

namespace cas::widgets {

class GeneratedCodeView;
class PdlLexer;

class PdlEditor : public QWidget {
  Q_OBJECT
 public:
  // One diagnostic (or note) as the editor shows it.
  struct Mark {
    Severity severity = Severity::Error;
    int line = 0, column = 0;  // 1-based, as the compiler reports them; 0 means the whole file/line
    int start = -1, end = -1;  // the underlined document range in bytes; -1 when nothing is underlined
    QString message;
  };

  static constexpr int kCompileDelayMs = 150;

  explicit PdlEditor(QWidget* parent = nullptr);
  ~PdlEditor() override;

  QsciScintilla* editor() const { return editor_; }
  QTreeWidget* problemList() const { return problems_; }
  GeneratedCodeView* generatedView() const { return generated_; }
  // Diagnostics first, each followed by its notes: the order of the problem list.
  const std::vector<Mark>& marks() const { return marks_; }
  // The hint in the layer margin of `line` (1-based); empty when no layer is made there.
  QString layerHint(int line) const;
  QString currentFile() const { return file_; }
  // What the text is compiled with; empty until a project is set.
  const std::optional<pdl::CompileOptions>& compileOptions() const { return options_; }
  bool isModified() const;
  double lastCompileMs() const { return lastCompileMs_; }
  // Where each mark's underline is: the indicator number, for tests and tooltips.
  int indicatorFor(Severity severity) const;

 public slots:
  // The environment and algorithm that the policy is compiled for.
  void setProject(const project::Project& project);
  // Asks to save unsaved changes first. Returns false when the file was not opened.
  bool openFile(const QString& path);
  // Writes the file atomically. Returns false (and says why) when it could not.
  bool save();
  // When there are unsaved changes, asks whether to save them; false means "cancel".
  bool maybeSave();
  // Compiles now instead of after the delay.
  void compileNow();

 signals:
  void diagnosticsUpdated();
  void saved(const QString& path);

 private:
  void setUpEditor();
  void applyMarginColours();
  void updateFileLabel();
  void showDiagnostics(const DiagnosticList& diagnostics);
  void addMark(const Diagnostic& d, QTreeWidgetItem* parentItem);
  void showLayerHints(const pdl::CompiledPolicy& policy);
  void showSummary(const pdl::CompileResult& result);
  void jumpTo(int start, int line);
  void charAdded(int ch);
  void showCompletions(bool asked);
  void showDwellTip(int position, int x, int y);
  QString textBeforeCursor() const;

  QLabel* fileLabel_;
  QLabel* summary_;
  QToolButton *saveButton_, *undoButton_, *redoButton_;
  QsciScintilla* editor_;
  PdlLexer* pdlLexer_ = nullptr;
  QTreeWidget* problems_;
  GeneratedCodeView* generated_;
  QTimer* compileTimer_;
  std::unique_ptr<QsciStyle> hintStyle_;  // the layer margin's text
  QString file_;
  bool isPdl_ = false;
  std::optional<pdl::CompileOptions> options_;
  std::vector<Mark> marks_;
  std::map<int, QString> hints_, hintDetails_;  // by 1-based line
  double lastCompileMs_ = 0;
};

}  // namespace cas::widgets
