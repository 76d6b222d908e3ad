#pragma once
// The Policy editor dock: the project's files in tabs (the policy and project.toml open side by
// side, each a CodeEditor: highlighting, line numbers, undo, atomic save and Save As, a modified
// marker on its tab), with, for the PDL file in front:
//   - live diagnostics: kCompileDelayMs after the last edit the text is compiled with the
//     project's environment and algorithm, and every diagnostic is underlined at its line:column,
//     marked in the margin and listed under the editor (a click jumps to it);
//   - the output shape and parameter count of the layers made on each line, drawn after the line
//     (code_editor.hpp);
//   - completion of built-ins, names and the keyword arguments of the built-in being called,
//     call tips (Ctrl+Space asks for completion), and a built-in's documentation from
//     docs/pdl.md when the mouse rests on its name (pdl_builtin_docs.hpp);
//   - the generated code (pdl_generated_view.hpp): beside the editor when the dock has room for
//     it next to kCodeColumns columns of code, under it otherwise.
// The compiler runs on the GUI thread: it is bounded (core/pdl/compiler.hpp), takes well under a
// millisecond on the example policies and about 0.15 s with the IR view for a 30000-op program near
// the limits; test_pdl_editor measures both and the latency from a keystroke.
// Thread-safety: GUI thread only.
#include <QWidget>

#include <map>
#include <optional>
#include <vector>

#include "core/pdl/compiler.hpp"
#include "core/support/diagnostic.hpp"

class QAction;
class QLabel;
class QsciScintilla;
class QSplitter;
class QStackedWidget;
class QTabBar;
class QTimer;
class QToolButton;
class QTreeWidget;
class QTreeWidgetItem;

namespace cas::project {
struct Project;
}

namespace cas::widgets {

class CodeEditor;
class GeneratedCodeView;

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
  // The columns of code the generated view never takes from the editor when it sits beside it.
  static constexpr int kCodeColumns = 80;

  explicit PdlEditor(QWidget* parent = nullptr);
  ~PdlEditor() override;

  // The file in front (a blank view when none is open).
  QsciScintilla* editor() const;
  CodeEditor* codeEditor() const { return editor_; }
  QTabBar* tabBar() const { return tabs_; }
  QStringList openFiles() const;
  QTreeWidget* problemList() const { return problems_; }
  GeneratedCodeView* generatedView() const { return generated_; }
  // Diagnostics first, each followed by its notes: the order of the problem list.
  const std::vector<Mark>& marks() const { return marks_; }
  // The layer hint shown after `line` (1-based); empty when no layer is made there.
  QString layerHint(int line) const;
  QString currentFile() const;
  // What the text is compiled with; empty until a project is set.
  const std::optional<pdl::CompileOptions>& compileOptions() const { return options_; }
  bool isModified() const;  // the file in front
  bool anyModified() const;  // any open file
  double lastCompileMs() const { return lastCompileMs_; }
  // Where each mark's underline is: the indicator number, for tests and tooltips.
  int indicatorFor(Severity severity) const;
  // Whether the generated code sits beside the editor (else under it).
  bool generatedViewBeside() const;
  QAction* saveAction() const { return saveAction_; }
  QAction* saveAsAction() const { return saveAsAction_; }

 public slots:
  // The environment and algorithm that the policy is compiled for. The open files close without
  // asking: the caller asks maybeSave() first.
  void setProject(const project::Project& project);
  // Brings the file's tab to the front, opening it in a new tab when it is not open. Returns
  // false (and says why) when it cannot be read.
  bool openFile(const QString& path);
  // Writes the file in front atomically. Returns false (and says why) when it could not.
  bool save();
  // Writes the file in front to `path` atomically and goes on editing it there.
  bool saveAs(const QString& path);
  // Asks where, then saveAs().
  void chooseSaveAsPath();
  // When any open file has unsaved changes, asks whether to save them; false means "cancel".
  bool maybeSave();
  // Closes a tab, asking first when it has unsaved changes; false when the user kept it.
  bool closeTab(int index);
  // Compiles now instead of after the delay.
  void compileNow();

 signals:
  void diagnosticsUpdated();
  void saved(const QString& path);

 protected:
  void resizeEvent(QResizeEvent* event) override;

 private:
  void createControls();
  void createLayout();
  void connectSignals();
  CodeEditor* addEditor();
  void connectEditor(CodeEditor* editor);
  void showTab(int index);
  void updateTab(CodeEditor* editor);
  void updateActions();
  void placeGeneratedView();
  bool saveEditor(CodeEditor* editor);
  bool loadInto(CodeEditor* editor, const QString& path);
  void showDiagnostics(const DiagnosticList& diagnostics);
  void addMark(const Diagnostic& d, QTreeWidgetItem* parentItem);
  void showLayerHints(const pdl::CompiledPolicy& policy);
  void showSummary(const pdl::CompileResult& result);
  void jumpTo(int start, int line);
  void charAdded(int ch);
  void showCompletions(bool asked);
  void showDwellTip(CodeEditor* editor, int position, int x, int y);
  QString textBeforeCursor() const;

  QTabBar* tabs_;
  QStackedWidget* stack_;  // one CodeEditor per tab, in the tabs' order
  CodeEditor* editor_ = nullptr;  // the one in front
  QLabel* summary_;
  QToolButton *saveButton_, *undoButton_, *redoButton_;
  QAction *saveAction_, *saveAsAction_, *undoAction_, *redoAction_;
  QTreeWidget* problems_;
  GeneratedCodeView* generated_;
  QSplitter* split_;  // the code and problems | the generated code
  QTimer* compileTimer_;
  std::optional<pdl::CompileOptions> options_;
  std::vector<Mark> marks_;
  std::map<int, QString> hintDetails_;  // by 1-based line
  double lastCompileMs_ = 0;
};

}  // namespace cas::widgets
