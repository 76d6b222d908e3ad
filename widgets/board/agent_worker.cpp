#include "widgets/board/agent_worker.hpp"

#include "core/engine/trained_run.hpp"
#include "core/env/board_position.hpp"

namespace cas::widgets {

AgentWorker::AgentWorker() : backend_(exec::makeCpuBackend()) {}

AgentWorker::~AgentWorker() = default;

void AgentWorker::loadRun(const QString& folder) {
  // Exceptions must not cross the event loop: whatever goes wrong is reported as a signal.
  try {
    engine::TrainedRun run = engine::openTrainedRun(folder.toStdString(), backend_, {});
    if (!run.trainer) {
      QString reason = QString::fromStdString(formatHeadline(run.error));
      // A checkpoint passed over says why ("does not match this network", a bad checksum), which
      // "no valid checkpoint" alone would hide.
      QStringList skipped;
      for (const std::string& s : run.skipped) skipped << QString::fromStdString(s);
      if (!skipped.isEmpty()) reason = tr("%1; checkpoints passed over: %2").arg(reason, skipped.join(QStringLiteral("; ")));
      emit runLoadFailed(folder, reason);
      return;
    }
    trainer_ = std::move(run.trainer);
    grownPosition_.reset();
    const env::EnvironmentInfo& game = *env::findEnvironment(trainer_->project().environment);  // a loaded run's game exists
    perfect_ = game.perfectPlayer ? game.perfectPlayer(kPerfectPlayTableBytes) : nullptr;
    scratch_ = game.board ? env::makeBoardGames(game.name, 1) : nullptr;
    AgentSummary s;
    s.runFolder = folder;
    s.projectName = QString::fromStdString(trainer_->project().name);
    s.environment = QString::fromStdString(trainer_->project().environment);
    s.checkpointFile = QString::fromStdString(run.checkpoint.filename().string());
    s.iteration = trainer_->iteration();
    s.simulations = int(trainer_->searchParams().simulations);
    for (const std::string& skipped : run.skipped) s.skipped << QString::fromStdString(skipped);
    for (const Diagnostic& d : run.notices) s.notices << QString::fromStdString(formatHeadline(d));
    emit runLoaded(s);
  } catch (const std::exception& e) {
    emit runLoadFailed(folder, QString::fromUtf8(e.what()));
  }
}

void AgentWorker::searchPosition(const std::vector<int>& moves, int simulations) {
  if (!trainer_) {
    emit searchFailed(tr("No run is loaded."));
    return;
  }
  try {
    std::string error;
    AgentSearch result;
    grownPosition_.reset();  // analyse() searches in the tree growPositionTree grows
    result.statistics = trainer_->analyse(env::moveNotation(moves), simulations, &error);
    if (!error.empty()) {
      emit searchFailed(QString::fromStdString(error));
      return;
    }
    result.moves = moves;
    if (perfect_ && scratch_) {
      scratch_->reset(0);
      for (int a : moves) scratch_->play(0, a);  // legal: the search accepted the position
      result.perfectPlay = perfect_->solveMoves(*scratch_, 0, env::SolveMode::Weak, {0, kPerfectPlaySeconds});
    }
    emit searchFinished(result);
  } catch (const std::exception& e) {
    emit searchFailed(QString::fromUtf8(e.what()));
  }
}

void AgentWorker::growPositionTree(const std::vector<int>& moves, bool step, int maxNodes) {
  if (!trainer_) {
    emit positionTreeFailed(tr("No run is loaded."));
    return;
  }
  try {
    PositionTree tree;
    tree.moves = moves;
    if (grownPosition_ != moves) {
      grownPosition_.reset();
      std::string error;
      if (!trainer_->startAnalysis(moves, &error)) {
        emit positionTreeFailed(QString::fromStdString(error));
        return;
      }
      grownPosition_ = moves;
    }
    if (step) {
      tree.before = trainer_->analysisSnapshot(maxNodes);
      trainer_->stepAnalysis();
    }
    tree.after = trainer_->analysisSnapshot(maxNodes);
    emit positionTreeReady(tree);
  } catch (const std::exception& e) {
    grownPosition_.reset();
    emit positionTreeFailed(QString::fromUtf8(e.what()));
  }
}

}  // namespace cas::widgets
