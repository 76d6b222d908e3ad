#pragma once
// Evaluation: matches of the agent's search against a baseline (baselines.hpp), the agent
// moving first in the even-numbered games, tallied from the agent's side.
// Thread-safety: driven by one thread.
#include <functional>

#include "core/search/self_play_search.hpp"
#include "core/train/baselines.hpp"
#include "core/train/reports.hpp"

namespace cas::train {

// Plays `games` games of `agent` against `opponent`, in rounds of agent.games() games at a time.
// `cancelled` (when given) is asked before every move: once it says so, the match stops and the
// result counts the rounds finished (result.games says how many games that is).
EvaluationResult playMatch(search::SelfPlaySearch& agent, Opponent& opponent, int games, const std::function<bool()>& cancelled = {});

}  // namespace cas::train
