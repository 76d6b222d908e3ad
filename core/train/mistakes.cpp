#include "core/train/mistakes.hpp"

#include <chrono>
#include <cmath>
#include <memory>
#include <random>
#include <stdexcept>

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
enum class Verdict { Unsolved, Kept, Worse };

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
  Judge judge(*e, o);
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
  int done = 0;
  auto record = [&](int source, const std::vector<int>& moves, Verdict v) {
    count(report.total, v);
    count(report.sources[size_t(source)], v);
    int b = 0;
    while (b + 1 < int(report.depths.size()) && int(moves.size()) >= kDepthStarts[b + 1]) ++b;
    count(report.depths[size_t(b)], v);
    ++done;
    if (progress) progress(done, o.positions);
  };
  auto agentMove = [&](const std::vector<int>& moves) {
    std::string error;
    const search::RootStats r = agent.analyse(env::moveNotation(moves), 0, &error);
    if (!error.empty()) throw std::runtime_error("the agent could not search position " + env::moveNotation(moves) + ": " + error);
    return r.chosen;
  };

  // The agent's own games: every move it plays after the opening is judged.
  auto game = env::makeBoardGames(e->name, 1);
  const int ownTarget = o.positions - o.positions / 2;
  while (report.sources[0].positions < ownTarget) {
    const int opening = std::uniform_int_distribution<int>(0, kOpeningMoves)(rng);
    // Four moves end no game of either board (a line needs five stones), so this always exists.
    std::vector<int> moves = *env::randomPosition(*game, opening, rng);
    while (!game->terminal(0) && report.sources[0].positions < ownTarget) {
      const int move = agentMove(moves);
      record(0, moves, judge.judge(moves, move));
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
    const std::optional<std::vector<int>> moves = env::randomPosition(*game, depth, rng);
    if (!moves) throw std::runtime_error("random play did not reach " + std::to_string(depth) + " moves with the game still on");
    record(1, *moves, judge.judge(*moves, agentMove(*moves)));
  }
  report.seconds = since(start);
  return report;
}

}  // namespace cas::train
