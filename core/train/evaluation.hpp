#pragma once
// Evaluation: matches of the agent's search against a baseline (baselines.hpp), the agent
// moving first in the even-numbered games, tallied from the agent's side.
// Thread-safety: driven by one thread.
#include "core/search/self_play_search.hpp"
#include "core/train/baselines.hpp"
#include "core/train/reports.hpp"

namespace cas::train {

// Plays `games` games of `agent` against `opponent`, in rounds of agent.games() games at a time.
EvaluationResult playMatch(search::SelfPlaySearch& agent, Opponent& opponent, int games);

}  // namespace cas::train
