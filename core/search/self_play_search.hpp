#pragma once
// The one search interface: the trainer's self-play, evaluation games, `analyze`, `play`, the
// engine's tree snapshots and the studio all search through it. BatchedSearch (mcts.hpp) is the
// CPU reference implementation; the CUDA plugin registers a device implementation through
// exec::DeviceServices::createSearch (gpu/search), whose trees, games and leaf evaluations stay in
// device memory. For a seed both produce the same statistics (tests/gpu/test_gpu_search.cpp).
//
// A search holds `games` independent games. Each search() call runs simulations in the listed
// games' trees; each simulation step selects up to k leaves per game (spread by virtual loss),
// evaluates every game's leaves in one batch, expands them and backs their values up.
// Thread-safety: one thread drives a search (the engine thread).
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/env/games.hpp"
#include "core/exec/kernel_report.hpp"
#include "core/exec/runtime_stat.hpp"
#include "core/params/run_params.hpp"
#include "core/search/device_sunburst.hpp"
#include "core/search/tree.hpp"

namespace cas::exec {
class Backend;
class Executable;
}

namespace cas::search {

class ReplayStore;

// The device search's two selection kernels (the parameter search.selection).
using SelectionKernel = params::SelectionKernel;

// What one search runs with. Built from the typed parameters by configFor (below), the one path
// from a project's [search] section to a search; the member defaults, for tests and benchmarks
// that set fields themselves, are the parameters' (params::kSearchDefaults), except that a bare
// SearchConfig plays no temperature.
struct SearchConfig {
  int simulations = int(params::kSearchDefaults.simulations);
  float cPuct = float(params::kSearchDefaults.cPuct);
  float dirichletAlpha = float(params::kSearchDefaults.dirichletAlpha);
  float dirichletFraction = float(params::kSearchDefaults.dirichletFraction);  // 0: no noise (evaluation, analysis)
  int leavesPerStep = int(params::kSearchDefaults.leavesPerStep);
  float virtualLoss = float(params::kSearchDefaults.virtualLoss);
  bool gumbel = false;
  int gumbelArms = int(params::kSearchDefaults.gumbelArms);
  int nodeBudget = int(params::kSearchDefaults.nodeBudget);
  bool subtreeReuse = params::kSearchDefaults.subtreeReuse;
  // The move RootStats::played proposes: drawn with probability proportional to
  // visits^(1/temperature) while a game has fewer than temperatureMoves moves (PUCT only),
  // else the search's choice. Self-play's come from [search]; a bare config has none.
  float temperature = 0;
  int temperatureMoves = 0;
  // Device search only (the CPU search has one selection loop and no kernels to instrument).
  SelectionKernel selection = SelectionKernel::Masked;
  bool instrument = params::kSearchDefaults.instrument;  // count SIMT efficiency and record the SM timeline of each kernel
};

// Self-play explores (root noise, a temperature over the opening moves); evaluation and analysis
// play their best (neither).
enum class SearchUse { SelfPlay, Evaluation };
SearchConfig configFor(const params::SearchParams& p, SearchUse use);

struct RootStats {
  std::vector<int> visits;     // per action (0 for illegal moves)
  std::vector<float> q;        // per action, from the mover's point of view (0 when unvisited)
  std::vector<float> prior;    // per action, the network's (noise-free)
  std::vector<float> policy;   // the search's improved policy: visit shares, or Gumbel's
  std::vector<int> pv;         // principal variation: most visited moves from the root
  int chosen = -1;             // the search's choice (most visited; Gumbel's winner)
  int played = -1;             // the move self-play plays (see SearchConfig::temperature)
  float value = 0;             // root value estimate W/N from the mover's point of view
  int treeNodes = 0;           // nodes in the game's tree
  std::vector<float> logits;   // per action, the network's output at the root: filled by analysis only
};

struct SearchMetrics {
  std::int64_t simulations = 0;
  std::int64_t evaluations = 0;  // positions sent to the evaluator
  std::int64_t recycledNodes = 0;
  double inferenceSeconds = 0, searchSeconds = 0;
  // Times the searching thread had to wait for a result: the CPU search once per batch it sends
  // to the evaluator (with a GPU network, a round trip to the device each simulation step); the
  // device search only when the work it synchronises with had not finished (the moves of a
  // self-play step coming back), never between a search's simulation steps.
  std::int64_t hostWaits = 0;
};

// How leaves are evaluated. A network is a compiled inference program with input "obs"
// [batch, observation...] and outputs "logits" [batch, actions] and "value" [batch, 1] (values
// from the mover's point of view); its batch must hold every game's k leaves for the device
// search (the CPU search evaluates in chunks of the batch). Hashed and Uniform need no network:
// Hashed derives logits and value from the observation (search_math.hpp: tests compare the two
// searches with it), Uniform gives equal priors and value 0 (benchmarks of the search alone).
struct LeafEvaluator {
  enum class Kind { Network, Hashed, Uniform };
  Kind kind = Kind::Network;
  exec::Executable* network = nullptr;  // Network: not owned; outlives the search
};

struct SearchSetup {
  std::string environment;  // a two-player board game of env/games.hpp
  int games = 1;
  SearchConfig config;
  std::uint64_t seed = 1;
  LeafEvaluator evaluator;
};

class SelfPlaySearch {
 public:
  virtual ~SelfPlaySearch() = default;

  // "cpu" or "cuda": where the trees live and the games are played.
  virtual std::string device() const = 0;
  virtual int games() const = 0;
  // Every game's root position. The device search keeps this host copy in step with the device.
  virtual const env::BoardGames& positions() const = 0;
  virtual const SearchConfig& config() const = 0;
  // Applies at the next search (the node budget only at construction); nullopt, or why the
  // change cannot apply to this search.
  virtual std::optional<std::string> setConfig(const SearchConfig& c) = 0;

  // Runs `simulations` simulations (config().simulations when negative) in each listed game
  // with a non-terminal root. Roots without a tree are evaluated first (not a simulation).
  virtual void search(const std::vector<int>& games, int simulations = -1) = 0;
  virtual std::vector<RootStats> rootStats(const std::vector<int>& games) const = 0;
  // Plays actions[i] (legal) in games[i]'s root position and keeps (or drops) the matching
  // subtree.
  virtual void play(const std::vector<int>& games, const std::vector<int>& actions) = 0;
  virtual void resetGames(const std::vector<int>& games) = 0;  // fresh positions, empty trees
  // Self-play's move where the trees live, after a search() of the same games (none terminal):
  // in each listed game it records the root (its observation and RootStats::policy) in the
  // game's record, plays RootStats::played and, for each game that ends, adds the game's
  // positions with its result (from each mover's point of view) to `store`'s fresh positions,
  // game after game in the order listed, and starts a fresh game. Fills `played` (one move per
  // listed game) and `ended` (the games that ended, in the order listed). False, touching
  // nothing, when this search cannot write into `store` (the CPU search, or a store in other
  // memory): train::SelfPlay then does the same on the host, which is this function's spec.
  virtual bool recordAndPlay(const std::vector<int>& games, ReplayStore& store, std::vector<int>* played, std::vector<int>* ended) {
    (void)games, (void)store, (void)played, (void)ended;
    return false;
  }
  // A copy of one game's tree, taken without pausing the search.
  virtual Tree treeSnapshot(int game) const = 0;
  virtual SearchMetrics metrics() const = 0;
  // The device search's kernels, each timed over `steps` simulation steps of all games (the
  // trees change as they run, like a search); empty for the CPU search.
  virtual std::vector<exec::KernelReport> profileKernels(int steps) {
    (void)steps;
    return {};
  }
  // A game's tree laid out as the tree view's sunburst on the device that holds it, for the
  // studio's CUDA-GL interop path (device_sunburst.hpp); null for the CPU search, whose trees the
  // view lays out from treeSnapshot. It must not outlive this search.
  virtual std::unique_ptr<DeviceSunburst> deviceSunburst() { return nullptr; }
  // Lines about where the search runs: memory, captured graphs.
  virtual std::vector<exec::RuntimeStat> runtimeStats() const { return {}; }

  // One game at a time, for analysis and play.
  RootStats rootStats(int game) const { return rootStats(std::vector<int>{game}).front(); }
  void play(int game, int action) { play(std::vector<int>{game}, std::vector<int>{action}); }
  void resetGame(int game) { resetGames({game}); }
  // Resets `game` and plays "MOVES" in the game's notation; false with `error` on a bad move.
  bool setPosition(int game, const std::string& moves, std::string* error);
};

// The CPU evaluators for LeafEvaluator's kinds: a network in chunks of its batch, or the built-in
// ones. Observations [n, obs...] -> logits [n, A] and values [n].
using Evaluator = std::function<void(const float* observations, int n, float* logits, float* values)>;
Evaluator makeCpuEvaluator(const LeafEvaluator& e, const env::EnvironmentInfo& environment);

// The search for `setup` on `backend` (the network, if any, compiled by that backend). device:
// "gpu" takes the backend's device search and throws std::runtime_error with the reason when it
// has none; "auto" takes it when there is one, else the CPU search; "cpu" the CPU search. `note`
// says which search was made and, when it is the CPU's under "auto", why.
std::unique_ptr<SelfPlaySearch> makeSearch(exec::Backend& backend, const SearchSetup& setup, const std::string& device, std::string* note);

}  // namespace cas::search
