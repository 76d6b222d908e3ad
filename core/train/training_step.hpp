#pragma once
// The training phase of an iteration: steps of the update graph (update.hpp) on batches drawn
// from the replay buffer, with the loss terms averaged over the steps.
// Thread-safety: driven by the thread that drives the Updater (the engine thread).
#include <cstdint>
#include <random>

#include "core/env/games.hpp"
#include "core/params/run_params.hpp"
#include "core/train/replay_buffer.hpp"
#include "core/train/reports.hpp"
#include "core/train/update.hpp"

namespace cas::train {

OptimizerConfig optimizerConfig(const params::TrainParams& p);

// `steps` updates on batches of `batch` samples (ReplayBuffer::sample with `game`'s symmetries
// and `rng`), filling the report's training figures; none while the buffer holds fewer than one
// batch. Throws std::runtime_error, naming iteration + 1 and the parameters to lower, when the
// loss stops being finite.
void trainSteps(Updater& updater, const ReplayBuffer& buffer, const env::BoardGames& game, std::int64_t steps, std::int64_t batch,
                std::mt19937_64& rng, std::int64_t iteration, IterationReport& report);

}  // namespace cas::train
