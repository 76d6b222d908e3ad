#include "core/train/self_play.hpp"

#include <algorithm>
#include <chrono>
#include <numeric>

#include "core/train/training_step.hpp"

namespace cas::train {
namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

}  // namespace

SelfPlay::SelfPlay(std::unique_ptr<search::SelfPlaySearch> search, int observationSize, int maxMoves)
    : search_(std::move(search)), observationSize_(observationSize), maxMoves_(maxMoves), records_(size_t(search_->games())),
      moves_(size_t(search_->games())) {}

void SelfPlay::recordAndPlayOnHost(const std::vector<int>& games, search::ReplayStore& store, std::vector<int>& played, std::vector<int>& ended) {
  const env::BoardGames& pos = search_->positions();
  const std::vector<search::RootStats> stats = search_->rootStats(games);
  played.resize(games.size());
  for (size_t i = 0; i < games.size(); ++i) {
    const int g = games[i];
    Record rec;
    rec.obs.resize(size_t(observationSize_));
    pos.observe(g, rec.obs.data());
    rec.policy = stats[i].policy;
    rec.player = pos.toMove(g);
    played[i] = stats[i].played;
    records_[size_t(g)].push_back(std::move(rec));
  }
  search_->play(games, played);
  for (int g : games) {
    if (!pos.terminal(g)) continue;
    const float v = pos.terminalValue(g);  // for the player to move at the end
    const int last = pos.toMove(g);
    for (const Record& r : records_[size_t(g)]) store.add(r.obs.data(), r.policy.data(), r.player == last ? v : -v);
    records_[size_t(g)].clear();
    ended.push_back(g);
  }
  search_->resetGames(ended);
}

std::int64_t SelfPlay::play(std::int64_t games, search::ReplayStore& store, const std::function<bool()>& cancelled, IterationReport& report,
                            TrainingPhase* training) {
  const auto start = Clock::now();
  const search::SearchMetrics before = search_->metrics();
  std::vector<int> active(size_t(search_->games()));
  std::iota(active.begin(), active.end(), 0);
  const std::int64_t roomPerMove = std::int64_t(active.size()) * maxMoves_;
  // Training steps per move, spread over the moves the last iteration took.
  const std::int64_t stepsPerMove =
      training ? std::max<std::int64_t>(1, (training->remaining() + std::max<std::int64_t>(1, movesPerIteration_) - 1) / std::max<std::int64_t>(1, movesPerIteration_)) : 0;
  std::int64_t finished = 0, moves = 0;
  std::vector<int> played, ended;
  double hostSeconds = 0;

  while (finished < games && !(cancelled && cancelled()) && store.fresh() + roomPerMove <= store.freshCapacity()) {
    search_->search(active);
    if (training) training->enqueue(stepsPerMove);
    const auto hostStart = Clock::now();
    played.clear();
    ended.clear();
    if (!search_->recordAndPlay(active, store, &played, &ended)) recordAndPlayOnHost(active, store, played, ended);
    for (size_t i = 0; i < active.size(); ++i) moves_[size_t(active[i])].push_back(played[i]);
    for (int g : ended) moves_[size_t(g)].clear();
    finished += std::int64_t(ended.size());
    ++moves;
    hostSeconds += since(hostStart);
  }
  movesPerIteration_ = moves;
  const double seconds = std::max(since(start), 1e-9);
  const search::SearchMetrics after = search_->metrics();
  report.inferenceSeconds = after.inferenceSeconds - before.inferenceSeconds;
  report.searchSeconds = after.searchSeconds - before.searchSeconds;
  report.dataSeconds = hostSeconds;  // recording on the host (a device store times itself: the trainer)
  report.selfPlaySeconds = seconds;
  report.simulationsPerSecond = double(after.simulations - before.simulations) / seconds;
  report.gamesPerSecond = double(finished) / seconds;
  report.recycledNodes = after.recycledNodes;
  report.hostWaitsPerMove = moves > 0 ? double(after.hostWaits - before.hostWaits) / double(moves) : 0;
  return finished;
}

void SelfPlay::stepSimulation() {
  std::vector<int> active;
  for (int g = 0; g < search_->positions().size(); ++g)
    if (!search_->positions().terminal(g)) active.push_back(g);
  search_->search(active, 1);
}

TreeSnapshot SelfPlay::snapshot(int game, int maxNodes) const {
  TreeSnapshot snap = snapshotTree(*search_, game, maxNodes);
  snap.rootMoves = moves_[size_t(snap.game)];
  return snap;
}

TreeSnapshot snapshotTree(const search::SelfPlaySearch& search, int game, int maxNodes) {
  TreeSnapshot snap;
  snap.game = std::clamp(game, 0, search.positions().size() - 1);
  snap.board = search.positions().render(snap.game);
  const search::Tree t = search.treeSnapshot(snap.game);
  snap.treeNodes = t.nodesInUse();
  snap.treeCapacity = t.budget();
  snap.recycledNodes = t.recycledNodes();
  snap.cPuct = search.config().cPuct;
  std::vector<std::pair<std::int32_t, std::int32_t>> queue = {{0, -1}};  // (tree slot, parent index)
  std::vector<int> depth = {0};
  for (size_t q = 0; q < queue.size() && int(snap.nodes.size()) < maxNodes; ++q) {
    const auto [slot, parentIndex] = queue[q];
    const auto s = size_t(slot);
    snap.nodes.push_back({parentIndex, t.action[s], t.visits[s], t.virtualLoss[s], depth[q],
                          t.visits[s] > 0 ? t.valueSum[s] / float(t.visits[s]) : 0.0f, t.prior[s]});
    if (!t.expanded(slot)) continue;
    for (int k = 0; k < t.childCount[s]; ++k) {
      queue.push_back({t.child(slot, k), std::int32_t(snap.nodes.size() - 1)});
      depth.push_back(depth[q] + 1);
    }
  }
  return snap;
}

void SelfPlay::restart() {
  std::vector<int> all(size_t(search_->games()));
  std::iota(all.begin(), all.end(), 0);
  search_->resetGames(all);
  for (auto& r : records_) r.clear();
  for (auto& m : moves_) m.clear();
}

}  // namespace cas::train
