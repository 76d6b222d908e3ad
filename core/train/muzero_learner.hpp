#pragma once
// MuZero's learning loop without a project around it: one PDL learned model compiled twice (the
// search's programs at the self-play batch, with h^-1 on the reward and value; the unrolled
// training program at the training batch), self-play into the episode replay, updates through
// LossKind::MuZero, and the new parameters copied into the search's programs after each
// iteration, by name (a name is the same tensor in every program).
//
//   iteration():  selfPlayMoves x MuZeroSelfPlay::step  ->  updates x (sample, Updater::step)
//                 (once an episode has ended)           ->  parameters into represent, recurrent, predict
//
// Thread-safety: driven by one thread.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/env/environments.hpp"
#include "core/exec/backend.hpp"
#include "core/pdl/learned_model.hpp"
#include "core/search/learned_search.hpp"
#include "core/train/muzero_self_play.hpp"
#include "core/train/muzero_targets.hpp"
#include "core/train/update.hpp"

namespace cas::train {

struct MuZeroOptions {
  int copies = 64;  // environment copies played side by side (the search's games)
  search::LearnedSearchConfig search;
  int unrollSteps = 5, tdSteps = 10;
  std::int64_t batch = 256;
  std::int64_t capacity = 1 << 18;  // replay positions
  int selfPlayMoves = 16;           // moves of every copy per iteration
  int updates = 8;                  // updates per iteration
  float temperature = 1.0f;
  OptimizerConfig optimizer;
  std::uint64_t seed = 1;
  std::string searchDevice = "auto";  // makeLearnedSearch's device
};

struct MuZeroIterationStats {
  std::int64_t iteration = 0, updates = 0;
  LossSums loss;  // this iteration's, summed over its updates
  MuZeroSelfPlayStats selfPlay;
  std::int64_t replayPositions = 0;
};

class MuZeroLearner {
 public:
  // Throws std::invalid_argument with the diagnostics when the model does not compile.
  MuZeroLearner(exec::Backend& backend, const std::string& source, const env::EnvironmentInfo& environment, MuZeroOptions options);
  ~MuZeroLearner();

  MuZeroIterationStats iteration();
  const Updater& updater() const { return *updater_; }
  const search::LearnedSearch& search() const { return *search_; }
  // Where the search runs, and why there (makeLearnedSearch's note).
  const std::string& searchNote() const { return searchNote_; }
  // The value of a parameter in one of the search's programs ("represent", "recurrent",
  // "predict"; std::invalid_argument for another name); empty when that program has no such
  // parameter.
  std::vector<float> searchParameter(const std::string& program, const std::string& name) const;

 private:
  void copyParameters();

  MuZeroOptions options_;
  std::optional<pdl::CompiledLearnedModel> searchModel_, trainingModel_;
  std::unique_ptr<exec::Executable> represent_, recurrent_, predict_;
  std::unique_ptr<Updater> updater_;
  std::unique_ptr<env::SingleAgentEnvironments> envs_;
  std::unique_ptr<search::LearnedSearch> search_;
  std::unique_ptr<EpisodeReplay> replay_;
  std::unique_ptr<MuZeroSelfPlay> selfPlay_;
  std::string searchNote_;
  std::int64_t iterations_ = 0;
};

}  // namespace cas::train
