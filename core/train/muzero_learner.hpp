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
#include <functional>
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
  std::uint64_t modelSeed = 0;        // the parameters' initialisation (a project's runtime.seed)
  std::string fileName = "model.pdl";  // the source's name in diagnostics
  std::string searchDevice = "auto";  // makeLearnedSearch's device
};

struct MuZeroIterationStats {
  std::int64_t iteration = 0, updates = 0;
  LossSums loss;  // this iteration's, summed over its updates
  MuZeroSelfPlayStats selfPlay;  // since the episodes started (startEpisodes), all iterations
  std::int64_t replayPositions = 0;
  double selfPlaySeconds = 0, trainSeconds = 0;  // this iteration's, wall clock
  bool stopped = false;  // `cancelled` answered yes: the moves and updates taken so far stand
};

class MuZeroLearner {
 public:
  // Throws std::invalid_argument with the diagnostics when the model does not compile.
  MuZeroLearner(exec::Backend& backend, const std::string& source, const env::EnvironmentInfo& environment, MuZeroOptions options);
  ~MuZeroLearner();

  // selfPlayMoves moves, then `updates` training steps; `cancelled` is polled between them.
  MuZeroIterationStats iteration(const std::function<bool()>& cancelled = {});
  const MuZeroOptions& options() const { return options_; }
  // Takes effect at the next iteration: the moves, updates, temperature, optimizer and the
  // search's settings (not its node budget, nor the sizes fixed at construction).
  void setLiveOptions(const MuZeroOptions& options);
  // Fresh copies of the environment seeded with `seed`, their episodes started anew (the episodes
  // under way are dropped: a resumed run's were not kept).
  void startEpisodes(std::uint64_t seed);
  // The search's choice for up to options().copies observations, without root noise: what
  // evaluation plays. The rows' root statistics, in order.
  std::vector<search::RootStats> plan(const float* observations, int n);
  // After the updater's parameters were set from outside (a checkpoint): into the search.
  void parametersChanged() { copyParameters(); }
  std::int64_t iterations() const { return iterations_; }
  void setIterations(std::int64_t n) { iterations_ = n; }
  Updater& updater() { return *updater_; }
  const Updater& updater() const { return *updater_; }
  EpisodeReplay& replay() { return *replay_; }
  const EpisodeReplay& replay() const { return *replay_; }
  // The program the search runs most (dynamics, then predict, on every simulation step's leaves).
  exec::Executable& recurrentProgram() { return *recurrent_; }
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
  env::EnvironmentInfo environment_;
  std::string searchNote_;
  std::int64_t iterations_ = 0;
};

}  // namespace cas::train
