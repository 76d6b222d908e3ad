#pragma once
// The studio's side of a training run: starts an engine (core/engine) on its own thread and turns
// the engine's callbacks, which arrive on the engine thread, into queued Qt signals on the GUI
// thread. The GUI never blocks on the engine.
// Thread-safety: a RunController lives on the GUI thread; its slots are called there.
#include <QObject>
#include <QString>
#include <memory>

#include "core/engine/engine.hpp"

namespace cas::widgets {

class RunController : public QObject {
  Q_OBJECT
 public:
  explicit RunController(QObject* parent = nullptr);
  ~RunController() override;

  bool running() const { return engine_ != nullptr; }
  bool paused() const { return paused_; }
  QString runFolder() const { return runFolder_; }

 public slots:
  // Creates a run folder under `runsRoot` and starts training; returns false (after emitting
  // runFailed) when the run cannot start.
  bool startTraining(const cas::project::Project& project, const QString& runsRoot);
  void pauseTraining();
  void resumeTraining();
  void stopTraining();
  // Validates now; an empty string means accepted (it applies at the next iteration).
  QString requestParameter(const QString& name, const QString& value);
  // While paused: one more simulation in every self-play game (simulationStepped follows).
  void stepSimulation();
  // The top `maxNodes` nodes of self-play game `game`'s tree (treeSnapshotReady follows).
  void requestTreeSnapshot(int game, int maxNodes);

 signals:
  void runStarted(const QString& folder);
  void iterationFinished(const cas::train::IterationReport& report);
  void parameterApplied(const cas::engine::ParameterChange& change);
  void messagePosted(const QString& text);
  void runFailed(const QString& reason);
  void simulationStepped(qint64 simulations);
  void treeSnapshotReady(const cas::train::TreeSnapshot& snapshot);
  void runFinished();

 private slots:
  void collectFinishedEngine();

 private:
  std::unique_ptr<engine::Engine> engine_;
  QString runFolder_;
  bool paused_ = false;
};

}  // namespace cas::widgets
