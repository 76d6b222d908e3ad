#pragma once
// The studio's side of a training run: starts an engine (core/engine) on its own thread and turns
// the engine's callbacks, which arrive on the engine thread, into queued Qt signals on the GUI
// thread. The GUI never blocks on the engine.
// Kernel metrics are measured on the engine thread too, between two iterations, where the
// trainer's backend is free; only an atomic request count crosses threads.
// Thread-safety: a RunController lives on the GUI thread; its slots are called there.
#include <QElapsedTimer>
#include <QObject>
#include <QString>
#include <atomic>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/engine/engine.hpp"
#include "core/exec/runtime_stat.hpp"

namespace cas::widgets {

// The kernels of a run's self-play inference program, timed on the run's backend.
struct KernelProfile {
  qint64 iteration = 0;  // measured after this iteration
  int runs = 0;          // each kernel's time is the mean over this many runs
  qint64 batch = 0;      // positions per inference call
  QString graph;         // the inference graph's name
  std::vector<cas::exec::KernelReport> kernels;
  std::vector<cas::exec::RuntimeStat> runtimeStats;  // shown in the interface's language
  // The device search's kernels, instrumented (SIMT efficiency, SM timeline), each timed per
  // simulation step over searchSteps steps of the run's own search (they add simulations to the
  // games' current trees, as the search would); empty for the CPU search and for PPO.
  std::vector<cas::exec::KernelReport> searchKernels;
  int searchSteps = 0;
  // What measuring cost the run: the engine thread's wall time for the whole profile and for the
  // instrumented search steps in it.
  double profileMs = 0, searchProfileMs = 0;
};

// Where a run stands: iterations against the budget, and the time it has been running.
struct RunProgress {
  qint64 iterations = 0;            // finished in this run
  qint64 iterationBudget = 0;       // 0: no budget
  double activeSeconds = 0;         // since the start, pauses left out
  double meanIterationSeconds = 0;  // 0 before the first iteration
  double etaSeconds = -1;           // -1 without a budget (iterations or minutes)
};

class RunController : public QObject {
  Q_OBJECT
 public:
  explicit RunController(QObject* parent = nullptr);
  ~RunController() override;

  bool running() const { return engine_ != nullptr; }
  bool paused() const { return paused_; }
  QString runFolder() const { return runFolder_; }
  QString backendId() const { return backendId_; }  // the running (or last) run's backend: "cpu", "cuda"
  // Where its search runs: "cpu", "cuda"; empty for an algorithm without one (PPO).
  QString searchDevice() const { return searchDevice_; }
  // Budget of the next run started (0 iterations / minutes: none).
  void setLimits(const cas::engine::EngineLimits& limits) { limits_ = limits; }
  RunProgress progress() const;
  // The parameter values the current (or last) run started with: the project's for a new run, the
  // run's own (its configuration and the changes it logged) for a resumed one.
  const cas::params::ParameterSet& startParameters() const { return startParameters_; }
  // The checkpoint's iteration a resumed run went on from; 0 for a run started from iteration 1.
  qint64 resumedFrom() const { return resumedFrom_; }

 public slots:
  // Creates a run folder under `runsRoot` and starts training; returns false (after emitting
  // runFailed) when the run cannot start.
  bool startTraining(const cas::project::Project& project, const QString& runsRoot);
  // Trains the run in `folder` on from its newest valid checkpoint, with the run's own project
  // file and policy (core/engine/trained_run.hpp); returns false (after emitting runFailed, with
  // the reason: no valid checkpoint, the run in use, ...) when it cannot.
  bool resumeRun(const QString& folder);
  void pauseTraining();
  void resumeTraining();
  void stopTraining();
  // Validates now; an empty string means accepted (it applies at the next iteration).
  QString requestParameter(const QString& name, const QString& value);
  // While paused: one more simulation in every self-play game (simulationStepped follows).
  void stepSimulation();
  // The top `maxNodes` nodes of self-play game `game`'s tree (treeSnapshotReady follows); with
  // `deviceNodes`, also the top that many laid out on the device when the search keeps its trees
  // there (core/engine/engine.hpp).
  void requestTreeSnapshot(int game, int maxNodes, int deviceNodes = 0);
  // Times each kernel of the run's inference program over `runs` runs at the end of the current
  // iteration (kernelsProfiled follows; a failure is posted as a message). Empty on the CPU backend.
  void requestKernelProfile(int runs);

 signals:
  void runStarted(const QString& folder);
  void iterationFinished(const cas::train::IterationReport& report);
  void parameterApplied(const cas::engine::ParameterChange& change);
  void messagePosted(const QString& text);
  void runFailed(const QString& reason);
  void simulationStepped(qint64 simulations);
  void treeSnapshotReady(const cas::train::TreeSnapshot& snapshot);
  void kernelsProfiled(const cas::widgets::KernelProfile& profile);
  void runFinished();

 private slots:
  void collectFinishedEngine();

 private:
  // Runs on the engine thread, between iterations.
  void profileKernels(train::Trainer& trainer, qint64 iteration, int runs);
  double activeSeconds() const;
  void startEngine(std::unique_ptr<train::Trainer> trainer, engine::RunFolder run, const QString& folder, const std::string& backendId);

  // Declared before engine_ so that it outlives the engine thread, which reads it.
  std::atomic<int> kernelProfileRuns_{0};
  std::unique_ptr<engine::Engine> engine_;
  QString runFolder_;
  bool paused_ = false;
  QString backendId_, searchDevice_;
  engine::EngineLimits limits_;
  params::ParameterSet startParameters_;
  qint64 resumedFrom_ = 0;
  QElapsedTimer clock_;              // since the run started
  qint64 pausedMs_ = 0, pausedSinceMs_ = 0;
  qint64 iterationsDone_ = 0;
  double activeAtLastIteration_ = 0;
};

}  // namespace cas::widgets
