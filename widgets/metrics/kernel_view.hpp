#pragma once
// The Kernels dock. On the CUDA backend: a table of the run's self-play inference kernels (time,
// share of the run, IR nodes, registers, shared memory, theoretical and achieved occupancy, launch
// shape, PDL layers), measured on the run's backend through exec::Executable::profileKernels
// (RunController::requestKernelProfile), followed by the device search's kernels, instrumented
// (their SIMT efficiency, and their blocks on the SM timeline below the table), a plot of their
// SIMT efficiency and occupancy over the iterations profiled, and the selected kernel's CUDA
// source. Live profiles again every kLiveIntervalMs while a CUDA run trains, so a change of
// search.selection (branchy or masked) shows in the SIMT column within seconds. On the CPU
// backend, which interprets the graph node by node and has no kernels, a sentence saying that GPU
// kernel metrics need the CUDA backend and why it is not in use, and the stage times of the
// latest iterations. Values a backend cannot measure (negative in KernelReport) read "n/a".
// Thread-safety: GUI thread only.
#include <QAbstractTableModel>
#include <QTimer>
#include <QWidget>

#include <deque>
#include <vector>

#include "core/exec/backend.hpp"
#include "core/train/alphazero.hpp"
#include "widgets/runs/run_controller.hpp"

class QCheckBox;
class QCustomPlot;
class QLabel;
class QPlainTextEdit;
class QPushButton;
class QSortFilterProxyModel;
class QStackedWidget;
class QTableView;

namespace cas::widgets {
class SmTimeline;
}

namespace cas::widgets {

class KernelTableModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column {
    Index,
    Kernel,
    Kind,
    Time,
    Share,
    SimtEfficiency,  // what a live run changes first, before the static columns
    AchievedOccupancy,
    TheoreticalOccupancy,
    Nodes,
    Registers,
    SharedMemory,
    Launch,
    Layers,
    ColumnCount
  };
  static constexpr int SortRole = Qt::UserRole;  // numbers for numeric columns, so that sorting is numeric

  explicit KernelTableModel(QObject* parent = nullptr);
  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

  void setKernels(std::vector<cas::exec::KernelReport> kernels);
  const cas::exec::KernelReport& kernel(int row) const { return kernels_[size_t(row)]; }
  double totalMicroseconds() const { return totalUs_; }  // measured kernels only, the search's apart

 private:
  std::vector<cas::exec::KernelReport> kernels_;
  double totalUs_ = 0, searchUs_ = 0;
};

// The stage times of the latest iterations, newest first.
class StageTimeModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column { Iteration, Inference, Search, Records, Training, Total, ColumnCount };
  static constexpr int kMaxRows = 50;

  explicit StageTimeModel(QObject* parent = nullptr);
  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

  void addIteration(const cas::train::IterationReport& report);
  void clear();

 private:
  struct Row {
    qint64 iteration;
    double inference, search, records, training;
  };
  std::deque<Row> rows_;
};

class KernelView : public QWidget {
  Q_OBJECT
 public:
  static constexpr int kProfileRuns = 20;
  static constexpr int kLiveIntervalMs = 5000;  // Live: a profile at most this often

  // One point of the history plot: the device search's kernels after an iteration, each
  // fraction weighted by the kernel's time (-1: not measured).
  struct HistoryPoint {
    qint64 iteration = 0;
    double simtEfficiency = -1, occupancy = -1;
  };

  explicit KernelView(QWidget* parent = nullptr);

  KernelTableModel* kernelModel() const { return kernels_; }
  StageTimeModel* stageModel() const { return stages_; }
  bool showsKernels() const;  // the CUDA page, rather than the CPU page
  QString explanation() const;  // the sentence above the table
  QString selectedSource() const;
  const SmTimeline* timeline() const { return timeline_; }
  const std::vector<HistoryPoint>& history() const { return history_; }
  const QCustomPlot* historyPlot() const { return historyPlot_; }
  bool liveProfiling() const { return liveTimer_.isActive(); }
  void setLiveInterval(int ms) { liveTimer_.setInterval(ms); }  // tests: shorter than kLiveIntervalMs

 public slots:
  // The backend that runtime.device picks for graphs (before and between runs).
  void setDevice(const QString& device);
  // The backend the run actually uses; on CUDA the first profile is asked for at once.
  void runStarted(const QString& backendId);
  void runFinished();
  void showProfile(const cas::widgets::KernelProfile& profile);
  void addIteration(const cas::train::IterationReport& report);

 signals:
  void profileRequested(int runs);

 private:
  void createControls();
  void createLayout();
  void connectSignals();
  void showBackend(bool cuda, const QString& status);
  void showSelectedSource();
  void addToHistory(const KernelProfile& profile);
  void updateLiveTimer();

  KernelTableModel* kernels_;
  StageTimeModel* stages_;
  QSortFilterProxyModel* sortedKernels_;
  QStackedWidget* pages_;
  QLabel *kernelSummary_, *cpuExplanation_;
  QPushButton* profileButton_;
  QTableView* kernelTable_;
  SmTimeline* timeline_;
  QCustomPlot* historyPlot_;
  QCheckBox* live_;
  QTimer liveTimer_;
  std::vector<HistoryPoint> history_;
  bool cudaRun_ = false;
  QPlainTextEdit* source_;
  QString device_ = QStringLiteral("auto");
  bool runActive_ = false;
};

}  // namespace cas::widgets
