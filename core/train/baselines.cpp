#include "core/train/baselines.hpp"

#include <cmath>
#include <random>
#include <sstream>
#include <stdexcept>
#include <unordered_map>
#include <vector>

#include "core/env/perfect_play.hpp"
#include "core/support/numbers.hpp"
#include "core/support/printable.hpp"

namespace cas::train {
namespace {

std::vector<int> legalMoves(const env::BoardGames& g, int game) {
  std::vector<int> moves;
  for (int a = 0; a < g.actionCount(); ++a)
    if (g.legal(game, a)) moves.push_back(a);
  return moves;
}

class RandomOpponent final : public Opponent {
 public:
  explicit RandomOpponent(std::uint64_t seed) : rng_(seed) {}
  std::string name() const override { return "random"; }
  int choose(const env::BoardGames& g, int game) override {
    auto moves = legalMoves(g, game);
    return moves[std::uniform_int_distribution<size_t>(0, moves.size() - 1)(rng_)];
  }

 private:
  std::mt19937_64 rng_;
};

// UCT with random rollouts: a tree of (position key -> visits, value) over one search.
class RolloutMcts final : public Opponent {
 public:
  RolloutMcts(const std::string& env, int rollouts, std::uint64_t seed)
      : rollouts_(rollouts), rng_(seed), scratch_(env::makeBoardGames(env, 2)) {}
  std::string name() const override { return "mcts:" + std::to_string(rollouts_); }

  int choose(const env::BoardGames& g, int game) override {
    stats_.clear();
    for (int r = 0; r < rollouts_; ++r) {
      g.copy(game, *scratch_, 0);
      simulate();
    }
    g.copy(game, *scratch_, 0);
    int best = -1, bestVisits = -1;
    for (int a : legalMoves(*scratch_, 0)) {
      scratch_->copy(0, *scratch_, 1);
      scratch_->play(1, a);
      const Stats& s = stats_[scratch_->key(1)];
      if (s.visits > bestVisits) {
        bestVisits = s.visits;
        best = a;
      }
    }
    return best;
  }

 private:
  struct Stats {
    int visits = 0;
    double value = 0;  // for the player who moved into the position
  };

  // One selection-expansion-rollout-backup pass from the position in slot 0.
  void simulate() {
    std::vector<std::uint64_t> path = {scratch_->key(0)};
    while (!scratch_->terminal(0)) {
      const Stats& parent = stats_[path.back()];
      auto moves = legalMoves(*scratch_, 0);
      int pick = -1;
      double bestScore = -1e30;
      for (int a : moves) {
        scratch_->copy(0, *scratch_, 1);
        scratch_->play(1, a);
        auto it = stats_.find(scratch_->key(1));
        const double score = it == stats_.end() || it->second.visits == 0
                                 ? 1e9 + std::uniform_real_distribution<double>(0, 1)(rng_)
                                 : it->second.value / it->second.visits + 1.4 * std::sqrt(std::log(double(parent.visits + 1)) / it->second.visits);
        if (score > bestScore) {
          bestScore = score;
          pick = a;
        }
      }
      scratch_->play(0, pick);
      const bool fresh = !stats_.count(scratch_->key(0));
      path.push_back(scratch_->key(0));
      stats_[path.back()];
      if (fresh) break;
    }
    // Random rollout to the end; the result is for the player to move at the end.
    int plies = 0;
    while (!scratch_->terminal(0)) {
      auto moves = legalMoves(*scratch_, 0);
      scratch_->play(0, moves[std::uniform_int_distribution<size_t>(0, moves.size() - 1)(rng_)]);
      ++plies;
    }
    double v = scratch_->terminalValue(0);  // for the mover at the final position
    if (plies % 2 == 1) v = -v;             // now for the mover at the last tree node
    for (size_t i = path.size(); i-- > 0;) {
      Stats& s = stats_[path[i]];
      s.visits += 1;
      s.value += -v;  // for the player who moved into the node
      v = -v;
    }
  }

  int rollouts_;
  std::mt19937_64 rng_;
  std::unique_ptr<env::BoardGames> scratch_;
  std::unordered_map<std::uint64_t, Stats> stats_;
};

class PerfectOpponent final : public Opponent {
 public:
  PerfectOpponent(const env::EnvironmentInfo& environment, double seconds, std::uint64_t seed)
      : solver_(environment.perfectPlayer(kTableBytes)), seconds_(seconds), rng_(seed) {}
  std::string name() const override { return seconds_ == kPerfectMoveSeconds ? "perfect" : "perfect:" + formatSeconds(seconds_); }
  int choose(const env::BoardGames& g, int game) override {
    // Weak verdicts: keeping the best of win, draw and loss is perfect play, and proving it
    // takes far fewer positions than the exact score.
    const auto moves = solver_->solveMoves(g, game, env::SolveMode::Weak, {0, seconds_});
    const std::vector<int> best = env::perfectMoves(moves);
    if (best.empty())
      throw UnsolvedMove("the perfect player could not solve move " + std::to_string(g.moveCount(game) + 1) + " within " + formatSeconds(seconds_) +
                             " s; give it more time with --opponent perfect:SECONDS, or judge the agent with --mistakes, which skips such positions.",
                         g.render(game));
    return best[std::uniform_int_distribution<size_t>(0, best.size() - 1)(rng_)];
  }

 private:
  static std::string formatSeconds(double s) {
    std::ostringstream text;
    text << s;
    return text.str();
  }
  static constexpr std::size_t kTableBytes = std::size_t(256) << 20;
  std::unique_ptr<env::PerfectPlayer> solver_;
  double seconds_;
  std::mt19937_64 rng_;
};

}  // namespace

std::unique_ptr<Opponent> makeOpponent(const std::string& spec, const std::string& environment, std::uint64_t seed, std::string* error) {
  if (spec == "random") return std::make_unique<RandomOpponent>(seed);
  if (spec == "perfect" || spec.rfind("perfect:", 0) == 0) {
    const env::EnvironmentInfo* e = env::findEnvironment(environment);
    if (!e || !e->perfectPlayer) {
      std::string games;
      for (const env::EnvironmentInfo& other : env::environments())
        if (other.perfectPlayer) games += (games.empty() ? "" : ", ") + other.name;
      if (error) *error = "'" + environment + "' has no perfect player; " + games + " have one";
      return nullptr;
    }
    double seconds = kPerfectMoveSeconds;
    if (spec != "perfect") {
      const auto given = parseNumber(std::string_view(spec).substr(8), 0.001, 86400);
      if (!given) {
        if (error) *error = "perfect:SECONDS needs the solver's time per move in seconds, in [0.001, 86400], such as perfect:600; got " + quoteValue(spec.substr(8));
        return nullptr;
      }
      seconds = *given;
    }
    return std::make_unique<PerfectOpponent>(*e, seconds, seed);
  }
  if (spec.rfind("mcts:", 0) == 0) {
    const auto rollouts = parseInteger(std::string_view(spec).substr(5), 1, 1000000);
    if (!rollouts) {
      if (error) *error = "mcts:ROLLOUTS needs a whole number of rollouts in [1, 1000000], such as mcts:200; got " + quoteValue(spec.substr(5));
      return nullptr;
    }
    return std::make_unique<RolloutMcts>(environment, int(*rollouts), seed);
  }
  // run:DIR is eval's (app/cli/run_commands.cpp opens the other run), and named here since eval's
  // --opponent is the only way a user's opponent reaches this.
  if (error)
    *error = "unknown opponent " + quoteValue(spec) + "; expected random, mcts:ROLLOUTS, perfect, perfect:SECONDS or run:DIR (another trained run of the same game)";
  return nullptr;
}

}  // namespace cas::train
