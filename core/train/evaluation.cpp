#include "core/train/evaluation.hpp"

#include <algorithm>
#include <numeric>
#include <vector>

namespace cas::train {
namespace {

// Adds the finished games [0, count) of a round whose first game is number `first` to `result`
// (even-numbered games: the agent moved first).
void tally(EvaluationResult& result, const env::BoardGames& pos, int first, int count) {
  for (int g = 0; g < count; ++g) {
    const int agentSide = (first + g) % 2;
    const float v = pos.terminalValue(g);  // for the player to move at the end
    const float forAgent = pos.toMove(g) == agentSide ? v : -v;
    const bool movedFirst = agentSide == 0;
    if (forAgent > 0) { ++result.wins; ++(movedFirst ? result.winsFirst : result.winsSecond); }
    else if (forAgent < 0) { ++result.losses; ++(movedFirst ? result.lossesFirst : result.lossesSecond); }
    else { ++result.draws; ++(movedFirst ? result.drawsFirst : result.drawsSecond); }
  }
}

}  // namespace

EvaluationResult playMatch(search::SelfPlaySearch& agent, Opponent& opponent, int games, const std::function<bool()>& cancelled) {
  EvaluationResult result;
  result.opponent = opponent.name();  // as it plays: "mcts:0200" plays and is labelled mcts:200
  const int round = agent.games();
  const env::BoardGames& pos = agent.positions();
  int played = 0;
  auto stop = [&] { return cancelled && cancelled(); };
  for (int first = 0; first < games && !stop(); first += round) {
    const int count = std::min(round, games - first);
    std::vector<int> all(static_cast<size_t>(count));
    std::iota(all.begin(), all.end(), 0);
    agent.resetGames(all);
    for (int g : all) opponent.started(g);
    bool stopped = false;
    for (int done = 0; done < count && !(stopped = stop());) {
      std::vector<int> agentToMove, opponentGames, opponentMoves;
      for (int g = 0; g < count; ++g) {
        if (pos.terminal(g)) continue;
        const int agentSide = (first + g) % 2;  // even games: the agent moves first
        if (pos.toMove(g) == agentSide) agentToMove.push_back(g);
        else opponentGames.push_back(g);
      }
      if (!opponentGames.empty()) {
        opponentMoves = opponent.chooseAll(pos, opponentGames);
        agent.play(opponentGames, opponentMoves);
        for (size_t i = 0; i < opponentGames.size(); ++i) opponent.moved(opponentGames[i], opponentMoves[i]);
      }
      if (!agentToMove.empty()) {
        agent.search(agentToMove);
        std::vector<int> chosen;
        for (const search::RootStats& r : agent.rootStats(agentToMove)) chosen.push_back(r.chosen);
        agent.play(agentToMove, chosen);
        for (size_t i = 0; i < agentToMove.size(); ++i) opponent.moved(agentToMove[i], chosen[i]);
      }
      done = 0;
      for (int g = 0; g < count; ++g) done += pos.terminal(g);
    }
    if (stopped) break;  // the round's unfinished games are not counted
    tally(result, pos, first, count);
    played += count;
  }
  result.games = played;
  return result;
}

}  // namespace cas::train
