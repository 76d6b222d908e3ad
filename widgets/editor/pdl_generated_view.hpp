#pragma once
// The code a policy becomes, shown beside the PDL editor, with a header that says which code it
// is and why:
//   - on the CPU backend, the IR after the default passes (fold, dce, plan-memory): what the CPU
//     backend interprets node by node, then the schedule the CUDA backend would run (its kernels);
//   - when the CUDA backend can run graphs, the CUDA source of every generated kernel, obtained
//     through the Backend interface (compile, then profileKernels(1)).
// Kernel generation (NVRTC) takes too long for the GUI thread, so it runs on a worker thread, one
// at a time, newest program wins. A Backend is driven from one thread at a time and the engine
// drives the registry's instance during training, so the view loads a CUDA backend instance of
// its own (exec::loadCudaPlugin) that only its workers use.
// Thread-safety: GUI thread only; workers share nothing with the widget but their result.
#include <QWidget>

#include <memory>
#include <optional>

#include "core/ir/graph.hpp"

class QLabel;
class QThread;
class QsciScintilla;

namespace cas::exec {
class Backend;
}

namespace cas::widgets {

class GeneratedCodeView : public QWidget {
  Q_OBJECT
 public:
  enum class Kind { Ir, Cuda };

  explicit GeneratedCodeView(QWidget* parent = nullptr);
  ~GeneratedCodeView() override;  // waits for a kernel generation in flight

  Kind kind() const { return kind_; }
  QString explanation() const;  // the header's text
  QString code() const;
  QsciScintilla* codeView() const { return code_; }

 public slots:
  // The graph of a program that compiled (before passes).
  void showGraph(const ir::Graph& graph);
  // The program has errors now: the code stays, marked as the last version that compiled.
  void markOutOfDate();

 signals:
  void codeUpdated();
  // Double-click on an IR line: the PDL position it came from (its "@line:col").
  void sourcePositionActivated(int line, int column);

 private:
  struct KernelSources;
  void showIr(const ir::Graph& graph);
  void startKernelGeneration();
  void finishKernelGeneration(const KernelSources& result);
  void setHeader(const QString& what);

  Kind kind_ = Kind::Ir;
  QString whyNotCuda_;  // set on the IR view
  QLabel* header_;
  QsciScintilla* code_;
  QString what_;  // the header's description of the code shown
  bool outOfDate_ = false;
  bool compiledOnce_ = false;
  // CUDA view only:
  std::shared_ptr<exec::Backend> cuda_;  // the view's own instance, used by workers only
  QString cudaStatus_;
  std::optional<ir::Graph> pending_;    // the newest graph not generated yet
  QThread* worker_ = nullptr;
};

}  // namespace cas::widgets
