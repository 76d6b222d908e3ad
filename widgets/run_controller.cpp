#include "widgets/run_controller.hpp"

#include <QDateTime>
#include <QDir>
#include <QMetaObject>

namespace cas::widgets {

RunController::RunController(QObject* parent) : QObject(parent) {}

RunController::~RunController() = default;  // the engine stops and joins in its destructor

bool RunController::startTraining(const project::Project& project, const QString& runsRoot) {
  if (engine_) return false;
  const QString folder = QDir(runsRoot).filePath(QString::fromStdString(project.name) + QLatin1Char('-') +
                                                 QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-HHmmss")));
  std::string error;
  auto run = engine::RunFolder::create(folder.toStdString(), project, &error);
  auto backend = run ? exec::BackendRegistry::instance().selectForGraphs(project.parameters.getChoice("runtime.device"), &error) : nullptr;
  if (!run || !backend) {
    emit runFailed(QString::fromStdString(error));
    return false;
  }
  std::unique_ptr<train::AlphaZeroTrainer> trainer;
  try {
    trainer = std::make_unique<train::AlphaZeroTrainer>(project, backend);
  } catch (const std::exception& e) {
    emit runFailed(QString::fromUtf8(e.what()));
    return false;
  }
  // Callbacks run on the engine thread: hop to the GUI thread with queued invocations.
  engine::EngineEvents events;
  events.iterationFinished = [this](const train::IterationReport& r) {
    QMetaObject::invokeMethod(this, [this, r] { emit iterationFinished(r); }, Qt::QueuedConnection);
  };
  events.parameterApplied = [this](const engine::ParameterChange& c) {
    QMetaObject::invokeMethod(this, [this, c] { emit parameterApplied(c); }, Qt::QueuedConnection);
  };
  events.message = [this](const std::string& m) {
    QMetaObject::invokeMethod(this, [this, m] { emit messagePosted(QString::fromStdString(m)); }, Qt::QueuedConnection);
  };
  events.failed = [this](const std::string& m) {
    QMetaObject::invokeMethod(this, [this, m] { emit runFailed(QString::fromStdString(m)); }, Qt::QueuedConnection);
  };
  events.simulationStepped = [this](std::int64_t n) {
    QMetaObject::invokeMethod(this, [this, n] { emit simulationStepped(qint64(n)); }, Qt::QueuedConnection);
  };
  events.treeSnapshot = [this](const train::TreeSnapshot& t) {
    QMetaObject::invokeMethod(this, [this, t] { emit treeSnapshotReady(t); }, Qt::QueuedConnection);
  };
  events.finished = [this] { QMetaObject::invokeMethod(this, &RunController::collectFinishedEngine, Qt::QueuedConnection); };
  engine_ = std::make_unique<engine::Engine>(std::move(trainer), std::move(*run), events, engine::EngineLimits{});
  runFolder_ = folder;
  paused_ = false;
  engine_->start();
  emit runStarted(folder);
  return true;
}

void RunController::pauseTraining() {
  if (!engine_) return;
  engine_->pause();
  paused_ = true;
}

void RunController::resumeTraining() {
  if (!engine_) return;
  engine_->resume();
  paused_ = false;
}

void RunController::stopTraining() {
  if (engine_) engine_->stop();  // the engine checkpoints, then reports finished
}

void RunController::stepSimulation() {
  if (engine_ && paused_) engine_->step();
}

void RunController::requestTreeSnapshot(int game, int maxNodes) {
  if (engine_) engine_->requestSnapshot(game, maxNodes);
}

QString RunController::requestParameter(const QString& name, const QString& value) {
  if (!engine_) return tr("No run is active.");
  auto problem = engine_->requestParameter(name.toStdString(), value.toStdString());
  return problem ? QString::fromStdString(*problem) : QString();
}

void RunController::collectFinishedEngine() {
  if (!engine_) return;
  engine_->wait();
  engine_.reset();
  paused_ = false;
  emit runFinished();
}

}  // namespace cas::widgets
