#include "core/train/mistakes.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <exception>
#include <memory>
#include <mutex>
#include <random>
#include <stdexcept>
#include <thread>

#include "core/env/board_position.hpp"
#include "core/env/perfect_play.hpp"

namespace cas::train {
namespace {

using Clock = std::chrono::steady_clock;

// Own games start after 0 to this many random moves: the agent's search has no noise outside
// self-play, so from the empty board it would play the same game every time.
constexpr int kOpeningMoves = 4;
// The ranges of moves played that the report breaks down by: starts, each to the next.
constexpr int kDepthStarts[] = {0, 8, 16, 24};
// Consecutive positions a solver takes at a time: those of one game share much of their trees.
constexpr int kPositionsPerTake = 8;
enum class Verdict { Unsolved, Kept, Worse };

// A position to judge: where it came from, the moves that led to it and the agent's move there.
struct Case {
  int source;  // 0: own games, 1: random play
  std::vector<int> moves;
  int move;
};

double since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

class Judge {
 public:
  Judge(const env::EnvironmentInfo& e, const MistakeOptions& o)
      : solver_(e.perfectPlayer(o.tableBytes)), games_(env::makeBoardGames(e.name, 2)), seconds_(o.solverSeconds) {}

  // Whether playing `move` after `moves` keeps the weak verdict of the position for the mover.
  // Both solves share the time limit; the table carries over between positions, which share
  // much of their trees when they come from one game.
  Verdict judge(const std::vector<int>& moves, int move) {
    const auto start = Clock::now();
    games_->reset(0);
    for (int a : moves) games_->play(0, a);
    const env::Solution before = solver_->solve(*games_, 0, env::SolveMode::Weak, {0, seconds_});
    if (!before.solved) return Verdict::Unsolved;
    games_->copy(0, *games_, 1);
    games_->play(1, move);
    const double left = seconds_ - since(start);
    if (left <= 0) return Verdict::Unsolved;
    const env::Solution after = solver_->solve(*games_, 1, env::SolveMode::Weak, {0, left});
    if (!after.solved) return Verdict::Unsolved;
    return -after.score < before.score ? Verdict::Worse : Verdict::Kept;
  }

 private:
  std::unique_ptr<env::PerfectPlayer> solver_;
  std::unique_ptr<env::BoardGames> games_;  // 0: the position, 1: after the agent's move
  double seconds_;
};

void count(MistakeCounts& c, Verdict v) {
  ++c.positions;
  if (v == Verdict::Unsolved) ++c.unsolved;
  else ++c.judged;
  if (v == Verdict::Worse) ++c.mistakes;
}

}  // namespace

MistakeReport measureMistakes(AlphaZeroTrainer& agent, const MistakeOptions& o, const std::function<void(int, int)>& progress) {
  if (o.positions < 1 || o.positions > 1000000) throw std::invalid_argument("--mistakes needs 1 to 1000000 positions; got " + std::to_string(o.positions));
  if (!(o.solverSeconds > 0) || !std::isfinite(o.solverSeconds))
    throw std::invalid_argument("the solver's time limit per position must be a positive number of seconds");
  const env::EnvironmentInfo* e = env::findEnvironment(agent.project().environment);
  if (!e || !e->perfectPlayer || !e->board) {
    std::string games;
    for (const env::EnvironmentInfo& other : env::environments())
      if (other.perfectPlayer) games += (games.empty() ? "" : ", ") + other.name;
    throw std::invalid_argument("--mistakes needs a game with a perfect player (" + games + "); this run plays " + agent.project().environment);
  }
  const auto start = Clock::now();
  const int cells = e->board->rows * e->board->columns;
  std::mt19937_64 rng(o.seed);

  MistakeReport report;
  report.solverSeconds = o.solverSeconds;
  report.total.label = "all";
  report.sources = {{"own games"}, {"random play"}};
  const int buckets = int(std::size(kDepthStarts));
  for (int b = 0; b < buckets && kDepthStarts[b] < cells; ++b) {
    const int last = b + 1 < buckets ? std::min(kDepthStarts[b + 1], cells) - 1 : cells - 1;
    report.depths.push_back({std::to_string(kDepthStarts[b]) + "-" + std::to_string(last)});
  }
  auto record = [&](const Case& c, Verdict v) {
    count(report.total, v);
    count(report.sources[size_t(c.source)], v);
    int b = 0;
    while (b + 1 < int(report.depths.size()) && int(c.moves.size()) >= kDepthStarts[b + 1]) ++b;
    count(report.depths[size_t(b)], v);
  };
  auto agentMove = [&](const std::vector<int>& moves) {
    std::string error;
    const search::RootStats r = agent.analyse(env::moveNotation(moves), 0, &error);
    if (!error.empty()) throw std::runtime_error("the agent could not search position " + env::moveNotation(moves) + ": " + error);
    return r.chosen;
  };

  // The agent's own games: every move it plays after the opening is judged.
  std::vector<Case> cases;
  cases.reserve(size_t(o.positions));
  auto game = env::makeBoardGames(e->name, 1);
  const int ownTarget = o.positions - o.positions / 2;
  while (int(cases.size()) < ownTarget) {
    const int opening = std::uniform_int_distribution<int>(0, kOpeningMoves)(rng);
    // Four moves end no game of either board (a line needs five stones), so this always exists.
    std::vector<int> moves = *env::randomPosition(*game, opening, rng);
    while (!game->terminal(0) && int(cases.size()) < ownTarget) {
      const int move = agentMove(moves);
      cases.push_back({0, moves, move});
      moves.push_back(move);
      game->play(0, move);
    }
  }

  // Random play stopped at each depth in turn (the depths a game of this board can reach).
  std::vector<int> depths;
  for (int d : kRandomPlayDepths)
    if (d < cells) depths.push_back(d);
  for (int i = 0; i < o.positions / 2; ++i) {
    const int depth = depths[size_t(i) % depths.size()];
    std::optional<std::vector<int>> moves = env::randomPosition(*game, depth, rng);
    if (!moves) throw std::runtime_error("random play did not reach " + std::to_string(depth) + " moves with the game still on");
    const int move = agentMove(*moves);
    cases.push_back({1, std::move(*moves), move});
  }

  // The solvers, side by side; this thread reports their progress.
  std::vector<Verdict> verdicts(cases.size(), Verdict::Unsolved);
  std::atomic<int> nextTake{0}, judged{0};
  std::exception_ptr failure;  // the first solver's error, written under failureMutex
  std::mutex failureMutex;
  std::atomic<bool> failed{false};
  const int takes = (int(cases.size()) + kPositionsPerTake - 1) / kPositionsPerTake;
  const int threads = std::clamp(o.threads > 0 ? o.threads : int(std::thread::hardware_concurrency()), 1, std::max(1, takes));
  auto work = [&] {
    try {
      Judge judge(*e, o);
      for (int take; !failed && (take = nextTake++) < takes;)
        for (int i = take * kPositionsPerTake; i < std::min(int(cases.size()), (take + 1) * kPositionsPerTake); ++i) {
          verdicts[size_t(i)] = judge.judge(cases[size_t(i)].moves, cases[size_t(i)].move);
          ++judged;
        }
    } catch (...) {
      const std::lock_guard<std::mutex> lock(failureMutex);
      if (!failure) failure = std::current_exception();
      failed = true;
    }
  };
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) pool.emplace_back(work);
  for (int reported = 0; reported < int(cases.size()) && !failed;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const int now = judged;
    if (progress)
      while (reported < now) progress(++reported, o.positions);
    reported = now;
  }
  for (std::thread& t : pool) t.join();
  if (failure) std::rethrow_exception(failure);
  for (size_t i = 0; i < cases.size(); ++i) record(cases[i], verdicts[i]);
  report.seconds = since(start);
  return report;
}

}  // namespace cas::train
