#include "widgets/runs/run_controller.hpp"

#include <QDateTime>
#include <QDir>
#include <QFileInfo>
#include <QMetaObject>

#include <algorithm>

#include "core/engine/trained_run.hpp"
#include "core/params/run_params.hpp"
#include "core/support/printable.hpp"
#include "core/train/alphazero.hpp"

namespace cas::widgets {

RunController::RunController(QObject* parent) : QObject(parent) {
  connect(this, &RunController::iterationFinished, this, [this] {
    ++iterationsDone_;
    activeAtLastIteration_ = activeSeconds();
  });
}

RunController::~RunController() = default;  // the engine stops and joins in its destructor

bool RunController::startTraining(const project::Project& project, const QString& runsRoot) {
  if (engine_) return false;
  // The name becomes part of the folder's name: only a plain one (no "../../x").
  if (auto problem = project::folderNameProblem(project.name)) {
    emit runFailed(QString::fromStdString("the project's name " + quoteValue(project.name) + " cannot name a run folder: " + *problem +
                                          "; rename the project in its project.toml"));
    return false;
  }
  const QString stamped = QDir(runsRoot).filePath(QString::fromStdString(project.name) + QLatin1Char('-') +
                                                  QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-HHmmss")));
  // Runs started within the same second (a quick stop and restart) get folders of their own.
  QString folder = stamped;
  for (int n = 2; QFileInfo::exists(folder); ++n) folder = stamped + QStringLiteral("-%1").arg(n);
  // The run trains its own copies of the project file and the policy (run_folder.hpp).
  project::Project runProject = project;
  Diagnostic refused;
  std::vector<Diagnostic> notices;
  auto run = engine::RunFolder::create(folder.toStdString(), runProject, &refused, &notices);
  for (const Diagnostic& d : notices) emit messagePosted(QString::fromStdString(formatHeadline(d)));
  if (!run) {
    emit runFailed(QString::fromStdString(refused.message));
    return false;
  }
  std::string error;
  auto backend = exec::BackendRegistry::instance().select(params::readRuntimeParams(project.parameters).device, &error);
  if (!backend) {
    run->removeUnstarted();
    emit runFailed(QString::fromStdString(error));
    return false;
  }
  std::unique_ptr<train::Trainer> trainer;
  try {
    trainer = train::makeTrainer(runProject, backend);
  } catch (const std::exception& e) {  // the policy does not compile, or the configuration cannot fit
    run->removeUnstarted();
    emit runFailed(QString::fromUtf8(e.what()));
    return false;
  }
  resumedFrom_ = 0;
  startEngine(std::move(trainer), std::move(*run), folder, backend->id());
  return true;
}

bool RunController::resumeRun(const QString& folder) {
  if (engine_) return false;
  // The backend the run was trained on: its own recorded runtime.device.
  project::Project recorded;
  Diagnostic problem;
  std::vector<Diagnostic> notices;
  if (!engine::RunFolder::open(folder.toStdString(), engine::RunAccess::Read, false, &recorded, &problem, &notices)) {
    emit runFailed(tr("%1 cannot be resumed: %2").arg(folder, QString::fromStdString(formatHeadline(problem))));
    return false;
  }
  std::string error;
  auto backend = exec::BackendRegistry::instance().select(params::readRuntimeParams(recorded.parameters).device, &error);
  if (!backend) {
    emit runFailed(tr("%1 cannot be resumed: %2").arg(folder, QString::fromStdString(error)));
    return false;
  }
  engine::OpenRunOptions options;
  options.use = engine::RunUse::Resume;
  engine::OpenedRun<train::Trainer> run = engine::openAnyRun(folder.toStdString(), backend, options);
  for (const std::string& skipped : run.skipped) emit messagePosted(tr("Skipped checkpoint %1").arg(QString::fromStdString(skipped)));
  for (const Diagnostic& d : run.notices) emit messagePosted(QString::fromStdString(formatHeadline(d)));
  if (!run.trainer) {
    emit runFailed(tr("%1 cannot be resumed: %2").arg(folder, QString::fromStdString(formatHeadline(run.error))));
    return false;
  }
  resumedFrom_ = run.trainer->iteration();
  startEngine(std::move(run.trainer), std::move(*run.folder), folder, backend->id());
  return true;
}

void RunController::startEngine(std::unique_ptr<train::Trainer> trainer, engine::RunFolder run, const QString& folder,
                                const std::string& backendId) {
  startParameters_ = trainer->parameters();
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
  // After an iteration the engine thread is between iterations and the trainer's backend is free:
  // the place to time its kernels.
  events.iterationFinished = [this, forward = std::move(events.iterationFinished), engineTrainer = trainer.get()](const train::IterationReport& r) {
    forward(r);
    if (const int runs = kernelProfileRuns_.exchange(0); runs > 0) profileKernels(*engineTrainer, r.iteration, runs);
  };
  train::SearchingTrainer* searching = trainer->searching();
  searchDevice_ = searching ? QString::fromStdString(searching->selfPlaySearch().device()) : QString();
  engine_ = std::make_unique<engine::Engine>(std::move(trainer), std::move(run), events, limits_);
  runFolder_ = folder;
  paused_ = false;
  backendId_ = QString::fromStdString(backendId);
  clock_.start();
  pausedMs_ = pausedSinceMs_ = 0;
  iterationsDone_ = 0;
  activeAtLastIteration_ = 0;
  kernelProfileRuns_ = 0;
  engine_->start();
  emit runStarted(folder);
}

void RunController::pauseTraining() {
  if (!engine_) return;
  engine_->pause();
  if (!paused_) pausedSinceMs_ = clock_.elapsed();
  paused_ = true;
}

void RunController::resumeTraining() {
  if (!engine_) return;
  engine_->resume();
  if (paused_) pausedMs_ += clock_.elapsed() - pausedSinceMs_;
  paused_ = false;
}

void RunController::stopTraining() {
  if (engine_) engine_->stop();  // the engine checkpoints, then reports finished
}

void RunController::stepSimulation() {
  if (engine_ && paused_) engine_->step();
}

void RunController::requestTreeSnapshot(int game, int maxNodes, int deviceNodes) {
  if (engine_) engine_->requestSnapshot(game, maxNodes, deviceNodes);
}

void RunController::requestKernelProfile(int runs) {
  if (engine_) kernelProfileRuns_ = std::max(1, runs);
}

void RunController::profileKernels(train::Trainer& trainer, qint64 iteration, int runs) {
  KernelProfile profile;
  profile.iteration = iteration;
  profile.runs = runs;
  profile.batch = trainer.inferenceBatch();
  exec::Executable& program = trainer.inferenceProgram();
  profile.graph = QString::fromStdString(program.graph().name);
  QElapsedTimer whole;
  whole.start();
  try {
    profile.kernels = program.profileKernels(runs);
    profile.runtimeStats = program.runtimeStats();
    if (train::SearchingTrainer* searching = trainer.searching()) {
      QElapsedTimer search;
      search.start();
      profile.searchKernels = searching->selfPlaySearch().profileKernels(runs);
      profile.searchProfileMs = double(search.nsecsElapsed()) / 1e6;
      if (!profile.searchKernels.empty()) profile.searchSteps = runs;
    }
    profile.profileMs = double(whole.nsecsElapsed()) / 1e6;
  } catch (const std::exception& e) {
    const QString reason = tr("The kernels could not be timed: %1").arg(QString::fromUtf8(e.what()));
    QMetaObject::invokeMethod(this, [this, reason] { emit messagePosted(reason); }, Qt::QueuedConnection);
    return;
  }
  QMetaObject::invokeMethod(this, [this, profile] { emit kernelsProfiled(profile); }, Qt::QueuedConnection);
}

double RunController::activeSeconds() const {
  if (!clock_.isValid()) return 0;
  const qint64 now = clock_.elapsed();
  return double(now - pausedMs_ - (paused_ ? now - pausedSinceMs_ : 0)) / 1000.0;
}

RunProgress RunController::progress() const {
  RunProgress p;
  p.iterations = iterationsDone_;
  p.iterationBudget = limits_.iterations;
  p.activeSeconds = running() ? activeSeconds() : activeAtLastIteration_;
  if (iterationsDone_ > 0) p.meanIterationSeconds = activeAtLastIteration_ / double(iterationsDone_);
  if (p.iterationBudget > 0 && iterationsDone_ > 0)
    p.etaSeconds = std::max<double>(0, p.meanIterationSeconds * double(p.iterationBudget - iterationsDone_));
  if (limits_.minutes > 0 && clock_.isValid()) {  // the engine counts minutes of wall time, pauses included
    const double left = std::max(0.0, limits_.minutes * 60 - double(clock_.elapsed()) / 1000.0);
    p.etaSeconds = p.etaSeconds < 0 ? left : std::min(p.etaSeconds, left);
  }
  return p;
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
