#pragma once
// The Play panel's agent: a trained run loaded through core (engine/trained_run) and searched
// from positions on request. It lives on its own QThread so that loading and searching never
// block the GUI; the panel calls its slots through queued invocations and hears back through
// its signals (queued to the GUI thread).
// With the agent's search comes the perfect player's verdict on every move of the position (for
// the games that have one), within kPerfectPlaySeconds: the Board view marks mistakes and
// perfect moves from it, and an opening the solver cannot finish that fast stays unjudged.
// The agent runs on a CPU backend of its own: the backends in the registry belong to the engine
// thread while the studio trains, and a backend is driven from one thread at a time.
// It also grows the search tree of a position one simulation at a time, for the Search tree
// dock's teaching mode on the Board's position (growPositionTree).
// Thread-safety: an AgentWorker's slots run on its thread only, one at a time.
#include <QMetaType>
#include <QObject>
#include <QString>
#include <QStringList>

#include <memory>
#include <vector>

#include "core/env/perfect_play.hpp"
#include "core/search/mcts.hpp"
#include "core/train/reports.hpp"

namespace cas::exec {
class Backend;
}
namespace cas::train {
class AlphaZeroTrainer;
}

namespace cas::widgets {

struct AgentSummary {
  QString runFolder;
  QString projectName;
  QString environment;
  QString checkpointFile;  // the file name, e.g. iter-00000135.ckpt
  qint64 iteration = 0;
  int simulations = 0;      // the run's search.simulations
  QStringList skipped;      // checkpoints passed over, each with the reason
  QStringList notices;      // what else the user should know, e.g. that the project's policy changed
};

struct AgentSearch {
  std::vector<int> moves;  // the position searched (actions from the start)
  search::RootStats statistics;
  // Per action: the perfect player's weak verdict of playing it (nullopt: illegal); empty when
  // the game has no perfect player.
  std::vector<std::optional<env::Solution>> perfectPlay;
};

// The search tree of one position as the agent grows it.
struct PositionTree {
  std::vector<int> moves;                      // the position at the tree's root
  train::TreeSnapshot after;                   // the tree now
  std::optional<train::TreeSnapshot> before;   // the tree before the simulation asked for
};

class AgentWorker : public QObject {
  Q_OBJECT
 public:
  static constexpr double kPerfectPlaySeconds = 1.0;
  static constexpr std::size_t kPerfectPlayTableBytes = std::size_t(32) << 20;

  AgentWorker();
  ~AgentWorker() override;

 public slots:
  // Loads the run's newest valid checkpoint, replacing the agent loaded before (if any).
  void loadRun(const QString& folder);
  // Searches the position after `moves` with `simulations` simulations.
  void searchPosition(const std::vector<int>& moves, int simulations);
  // The agent's search tree of the position after `moves` (its top `maxNodes` nodes): a fresh
  // tree, its root evaluated, unless the last call grew this position's tree (and no search came
  // between); then, with `step`, one more simulation in it.
  void growPositionTree(const std::vector<int>& moves, bool step, int maxNodes);

 signals:
  void runLoaded(const cas::widgets::AgentSummary& summary);
  void runLoadFailed(const QString& folder, const QString& reason);
  void searchFinished(const cas::widgets::AgentSearch& search);
  void searchFailed(const QString& reason);
  void positionTreeReady(const cas::widgets::PositionTree& tree);
  void positionTreeFailed(const QString& reason);

 private:
  std::shared_ptr<exec::Backend> backend_;
  std::unique_ptr<train::AlphaZeroTrainer> trainer_;
  std::unique_ptr<env::PerfectPlayer> perfect_;  // the loaded game's, when it has one
  std::unique_ptr<env::BoardGames> scratch_;     // the searched position, for the perfect player
  // The position whose tree growPositionTree holds in the trainer's analysis search; nullopt once
  // another search (or run) replaced it.
  std::optional<std::vector<int>> grownPosition_;
};

}  // namespace cas::widgets

Q_DECLARE_METATYPE(cas::widgets::AgentSummary)
Q_DECLARE_METATYPE(cas::widgets::AgentSearch)
Q_DECLARE_METATYPE(cas::widgets::PositionTree)
