#include "core/env/environments.hpp"

#include <stdexcept>

#include "core/env/cartpole.hpp"
#include "core/env/connect4_solver.hpp"
#include "core/env/market_making.hpp"
#include "core/env/minatar_asterix.hpp"
#include "core/env/minatar_breakout.hpp"
#include "core/env/minatar_environments.hpp"
#include "core/env/minatar_freeway.hpp"
#include "core/env/minatar_seaquest.hpp"
#include "core/env/minatar_space_invaders.hpp"
#include "core/env/perfect_play.hpp"
#include "core/env/trading.hpp"

// Marks the actions' names for lupdate (the studio translates them); core itself has no Qt.
#define QT_TRANSLATE_NOOP(context, text) text

namespace cas::env {
namespace {

// The MinAtar twins' minimal action sets (core/env/minatar_*.hpp), and CartPole's.
const char* const kNone = QT_TRANSLATE_NOOP("cas::env::Environments", "no-op");
const char* const kLeft = QT_TRANSLATE_NOOP("cas::env::Environments", "left");
const char* const kRight = QT_TRANSLATE_NOOP("cas::env::Environments", "right");
const char* const kUp = QT_TRANSLATE_NOOP("cas::env::Environments", "up");
const char* const kDown = QT_TRANSLATE_NOOP("cas::env::Environments", "down");
const char* const kFire = QT_TRANSLATE_NOOP("cas::env::Environments", "fire");

// Tic-tac-toe's whole game fits a small memo, so the table size does not apply.
std::unique_ptr<PerfectPlayer> ticTacToePlayer(std::size_t) { return std::make_unique<TicTacToeSolver>(); }
std::unique_ptr<PerfectPlayer> connectFourPlayer(std::size_t tableBytes) { return std::make_unique<Connect4Solver>(tableBytes); }

std::unique_ptr<SingleAgentEnvironments> cartPoles(int count, std::uint64_t seed, const EnvironmentData&) { return std::make_unique<CartPole>(count, seed); }
template <class Game>
std::unique_ptr<SingleAgentEnvironments> minatar(int count, std::uint64_t seed, const EnvironmentData&) {
  return std::make_unique<MinAtarEnvironments<Game>>(count, seed);
}
std::unique_ptr<SingleAgentEnvironments> marketMaking(int count, std::uint64_t seed, const EnvironmentData&) {
  return std::make_unique<MarketMaking>(count, seed);
}
// Copies trading the training part of the project's series.
std::unique_ptr<SingleAgentEnvironments> tradingStocks(int count, std::uint64_t seed, const EnvironmentData& data) {
  return std::make_unique<TradingEnvironments>(tradingPart(data, stocksSetup(data)), stocksSetup(data), count, seed);
}

EnvironmentInfo boardGame(std::string name, std::string summary, BoardGeometry board, std::unique_ptr<PerfectPlayer> (*perfect)(std::size_t),
                          std::string evaluationOpponent) {
  EnvironmentInfo e;
  e.name = std::move(name);
  e.summary = std::move(summary);
  e.observationShape = {2, board.rows, board.columns};
  e.actionCount = board.dropsInColumns ? board.columns : board.rows * board.columns;
  e.twoPlayer = true;
  e.board = board;
  e.perfectPlayer = perfect;
  e.evaluationOpponent = std::move(evaluationOpponent);
  return e;
}

}  // namespace

const std::vector<EnvironmentInfo>& environments() {
  using Stones = BoardGeometry::Stones;
  static const std::vector<EnvironmentInfo> all = {
      boardGame("tictactoe", "Tic-tac-toe on a 3x3 board; planes: own stones, opponent stones.", {3, 3, 3, false, Stones::CrossesAndNoughts},
                ticTacToePlayer, "perfect"),
      // The solver needs seconds to minutes for opening positions: training evaluates against
      // the rollout search, and `eval --mistakes` judges with a time limit.
      boardGame("connect4", "Connect Four on a 6x7 board; planes: own stones, opponent stones.", {6, 7, 4, true, Stones::Discs}, connectFourPlayer,
                "mcts:200"),
      {"cartpole", "Balance a pole on a cart (Gymnasium CartPole-v1 dynamics).", {4}, 2, false, std::nullopt, nullptr, "", cartPoles,
       {QT_TRANSLATE_NOOP("cas::env::Environments", "push left"), QT_TRANSLATE_NOOP("cas::env::Environments", "push right")}},
      {"minatar-asterix", "MinAtar Asterix on a 10x10 grid with sticky actions and difficulty ramps (the minatar package's rules); planes: player, enemies, trails, gold.",
       {4, 10, 10}, 5, false, std::nullopt, nullptr, "", minatar<MinAtarAsterix>, {kNone, kLeft, kUp, kRight, kDown}},
      {"minatar-breakout", "MinAtar Breakout on a 10x10 grid with sticky actions (the minatar package's rules); planes: paddle, ball, trail, bricks.",
       {4, 10, 10}, 3, false, std::nullopt, nullptr, "", minatar<MinAtarBreakout>, {kNone, kLeft, kRight}},
      {"minatar-freeway", "MinAtar Freeway on a 10x10 grid with sticky actions (the minatar package's rules); planes: chicken, cars, trails by speed.",
       {7, 10, 10}, 3, false, std::nullopt, nullptr, "", minatar<MinAtarFreeway>, {kNone, kUp, kDown}},
      {"minatar-seaquest", "MinAtar Seaquest on a 10x10 grid with sticky actions and difficulty ramps (the minatar package's rules); planes: "
       "submarine's front, back, its bullets, trails, enemy bullets, fish, enemy subs, oxygen, divers carried, divers.",
       {10, 10, 10}, 6, false, std::nullopt, nullptr, "", minatar<MinAtarSeaquest>, {kNone, kLeft, kUp, kRight, kDown, kFire}},
      {"minatar-space-invaders", "MinAtar Space Invaders on a 10x10 grid with sticky actions (the minatar package's rules); planes: cannon, aliens, "
       "aliens marching left, right, the cannon's bullets, the aliens' bullets.",
       {6, 10, 10}, 4, false, std::nullopt, nullptr, "", minatar<MinAtarSpaceInvaders>, {kNone, kLeft, kRight, kFire}},
      // gym-anytrading's StocksEnv (stocks-v0's window of 30 bars) over the CSV price series the
      // project names (core/env/trading.hpp, price_series.hpp); PPO's copies trade episodes drawn
      // from the series' training part.
      {"trading-stocks", "Trade one stock over a CSV price series with gym-anytrading's StocksEnv rules (long or short, fees on closing a long); "
       "observation: the last 30 bars' close and its change.",
       {30, 2}, 2, false, std::nullopt, nullptr, "", tradingStocks,
       {QT_TRANSLATE_NOOP("cas::env::Environments", "sell"), QT_TRANSLATE_NOOP("cas::env::Environments", "buy")}, true},
      // Avellaneda and Stoikov's model (core/env/market_making.hpp): action 9 b + a quotes the bid
      // 0.25 b below the mid and the ask 0.25 a above it.
      {"market-making", "Quote a bid and an ask in Avellaneda and Stoikov's market-making model (Brownian mid price, fills with intensity "
       "falling exponentially in the quote's distance, inventory penalised); observation: inventory / 10 and the time left.",
       {2}, MarketMaking::kActions, false, std::nullopt, nullptr, "", marketMaking, {}},
  };
  return all;
}

const EnvironmentInfo* findEnvironment(std::string_view name) {
  for (const EnvironmentInfo& e : environments())
    if (e.name == name) return &e;
  return nullptr;
}

}  // namespace cas::env
