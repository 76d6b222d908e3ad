#pragma once
// The catalogue of environments a project may name: observation shape, action count, the
// algorithms each suits, and for the board games the facts views and commands need (the
// board's geometry and notation, the perfect player), so that no caller compares names.
// PDL shape inference, project validation, evaluation, the CLI and the studio read it.
// Thread-safety: immutable, readable from any thread.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/env/trading_rules.hpp"

namespace cas::env {

class PerfectPlayer;
class SingleAgentEnvironments;
struct PriceSeries;

// What a project gives an environment beyond its name: the price series a trading environment
// steps over (project.toml's `series`), and the part of it training draws its episodes from
// (trading.train_fraction; the rest is held out for `eval`), and what its steps reward
// (trading.reward). Empty for every other environment.
struct EnvironmentData {
  std::shared_ptr<const PriceSeries> series;
  double trainFraction = 0.8;
  TradingReward tradingReward = TradingReward::PriceChange;  // trading.reward
};

// A board game's board: how it is laid out, how a move is written and how stones are drawn.
struct BoardGeometry {
  int rows = 0, columns = 0;
  int inARow = 0;               // stones in a line that win
  bool dropsInColumns = false;  // an action names a column its stone drops down; else a cell
  // How the board's stones look: crosses and noughts (tic-tac-toe) or discs (Connect Four).
  enum class Stones { CrossesAndNoughts, Discs } stones = Stones::CrossesAndNoughts;
  // What a move's number names in the notation ("cell" 1-9, "column" 1-7).
  const char* moveNoun() const { return dropsInColumns ? "column" : "cell"; }
};

struct EnvironmentInfo {
  std::string name;
  std::string summary;
  std::vector<int> observationShape;  // per sample, without the batch axis
  int actionCount = 0;
  bool twoPlayer = false;  // AlphaZero needs a two-player, zero-sum, perfect-information game
  std::optional<BoardGeometry> board;  // for the board games
  // The game's solver with a transposition table of about `tableBytes`; null when there is none.
  std::unique_ptr<PerfectPlayer> (*perfectPlayer)(std::size_t tableBytes) = nullptr;
  // The opponent training evaluates against besides random: the perfect player where it answers
  // every position at once, else the rollout search.
  std::string evaluationOpponent;
  // A single-agent environment's CPU twin as `count` copies seeded with `seed`: what PPO steps.
  // Null for the board games. One that needsSeries throws std::invalid_argument when `data`
  // holds no series, or one too short for an episode in its training part.
  std::unique_ptr<SingleAgentEnvironments> (*singleAgent)(int count, std::uint64_t seed, const EnvironmentData& data) = nullptr;
  // A single-agent environment's actions, in English (the studio translates them in the context
  // kActionContext); empty for the board games, whose moves are named by their board.
  std::vector<const char*> actionNames;
  // The environment steps over a price series the project names (EnvironmentData::series).
  bool needsSeries = false;
};

inline constexpr const char* kActionContext = "cas::env::Environments";

const std::vector<EnvironmentInfo>& environments();
const EnvironmentInfo* findEnvironment(std::string_view name);

}  // namespace cas::env
