#pragma once
// What `analyze --json` and `eval --episodes N --json` print: one JSON object per position or
// evaluation. JSON has no NaN or infinity: a value that is not a finite number (a network whose
// output is NaN) is null, and the object says so.
// Thread-safety: plain functions.
#include <cstdint>
#include <string>

#include "core/env/games.hpp"
#include "core/search/self_play_search.hpp"
#include "core/train/reports.hpp"

namespace cas::train {

// One position's analysis: the moves that lead to it, the chosen move, the root's value and its
// children's visits, values and priors, and the principal variation.
std::string analysisJson(const std::string& moves, const env::BoardGames& board, const search::RootStats& r);

// A single-agent evaluation: the episodes' return statistics, how the actions were chosen
// (`sampled` or greedy), the seed and the seconds it took.
std::string episodesJson(const EpisodeEvaluation& r, bool sampled, std::uint64_t seed, double seconds);
// A trading run's held-out result, as the object `eval --episodes N --json` adds under "held_out".
std::string heldOutJson(const HeldOutResult& r);
// A market-making run against the closed-form quotes (OptimumComparison), one JSON object.
std::string optimumJson(const OptimumComparison& c);

}  // namespace cas::train
