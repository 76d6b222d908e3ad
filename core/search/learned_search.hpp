#pragma once
// The search over a learned model (MuZero): single-agent environments planned without their
// rules. The model is three callbacks over batches: represent (observation -> latent state),
// recurrent (dynamics, then prediction on the new state: state, action -> next state, reward,
// logits, value) and predict (the root's logits and value). LearnedSearch is the interface (its
// device twin, gpu/search/gpu_learned_search.cpp, sits behind it as the device search does behind
// SelfPlaySearch); BatchedLearnedSearch is the CPU reference, the executable spec that twin
// matches bit for bit (tests/gpu/test_learned_search_port.cpp, test_gpu_learned_search.cpp).
//
// A search holds G games. search(games, observations, S) gives each listed game a fresh tree:
// represent + predict its root (one batch, not a simulation), then simulation steps: up to k
// leaves per game, spread by virtual loss, every game's leaves in ONE recurrent call, expansion
// and backup. Values are discounted returns (config.discount): from the leaf's value G, every
// node on the path up to the root takes W += G, N += 1, then G = reward(node) + discount * G.
// A child's Q = reward + discount * W / N, normalised per tree into [0, 1] by the min and max Q
// seen in backups (search_math.hpp: learnedQ, minMaxNormalize, pendingQ); 0 while max <= min,
// and 0 for an unvisited child. Virtual loss: a pending selection counts as one more visit of
// normalised value 0; two selections of a step that reach the same leaf share its row. Roots:
// PUCT with Dirichlet noise, or Gumbel sampling with sequential halving; interior nodes: PUCT.
// docs/search.md gives the rules and choices.
//
// Memory, per game: a Tree (tree.hpp: visits, valueSum, prior, structure) and beside it, indexed
// by the same slots (CAS_LEARNED_NODE_FIELDS in tree_fields.hpp),
//
//   reward:  [budget]                 reward of the edge into each slot
//   latent:  [budget x stateSize]     slot s's state at latent[s * stateSize]
//            slot: 0      1 .. A          A+1 .. 2A     ...
//                [root] [block: children] [block] ...   recycled with the tree's blocks
//
// Model batches: observations [n, observationSize], states [n, stateSize], actions [n],
// rewards [n], logits [n, actions], values [n], row-major.
// Thread-safety: one thread drives a search; the callbacks are called on that thread.
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/search/self_play_search.hpp"
#include "core/search/tree.hpp"
#include "core/search/tree_fields.hpp"

namespace cas::search {

struct LearnedModel {
  int observationSize = 0, stateSize = 0, actions = 0;  // actions: at most 32, all legal everywhere
  std::function<void(const float* observations, int n, float* states)> represent;
  std::function<void(const float* states, const std::int32_t* actions, int n, float* nextStates, float* rewards, float* logits,
                     float* values)>
      recurrent;
  std::function<void(const float* states, int n, float* logits, float* values)> predict;
};

// The hashed model of search_math.hpp (hashedRepresentation, hashedDynamics, hashedPrediction).
LearnedModel hashedLearnedModel(int observationSize, int stateSize, int actions);

// SearchConfig's fields as they apply here, and the discount. Not used: virtualLoss (the rule is
// fixed: pending selections count as visits of normalised value 0), subtreeReuse (every search
// starts a fresh tree), temperature (RootStats::played is the choice), the device-only fields.
struct LearnedSearchConfig : SearchConfig {
  float discount = 0.997f;
  float minMaxFloor = 0.0f;  // the normalisation's smallest span (search_math.hpp: minMaxNormalize)
};

struct LearnedSearchMetrics {
  std::int64_t simulations = 0;
  std::int64_t evaluations = 0;     // leaves sent to recurrent (a leaf two selections share: once)
  std::int64_t recurrentCalls = 0;  // batched recurrent calls: one per simulation step
  std::int64_t modelCalls = 0;      // every batched callback call: represent, predict, recurrent
  std::int64_t recycledNodes = 0;
};

// Where one decision's time goes (a search() call and its rootStats for every listed game),
// measured between device events with the phases launched one by one rather than as captured
// graphs, so their sum is a little above a search() call's time. Microseconds per decision.
struct LearnedSearchBreakdown {
  double stageUs = 0;      // data exchange in: weights set since the last search, observations, listed games, settings
  double rootModelUs = 0;  // represent and predict at the roots (the hashed model's rows)
  double recurrentUs = 0;  // dynamics and predict over every step's rows, all steps
  double searchUs = 0;     // the search kernels: roots, latent copies, expansion, backup, selection, statistics
  double readbackUs = 0;   // data exchange out: the root statistics (device -> host)
  int steps = 0;           // recurrent batches in the decision
  double totalUs() const { return stageUs + rootModelUs + recurrentUs + searchUs + readbackUs; }
  double exchangeShare() const { return totalUs() > 0 ? (stageUs + readbackUs) / totalUs() : 0; }
};

// The per-slot arrays of CAS_LEARNED_NODE_FIELDS for one tree.
struct LearnedNodes {
  LearnedNodes(int budget, int stateSize);
#define CAS_LEARNED_ARRAY(name, type, width, root) std::vector<type> name;
  CAS_LEARNED_NODE_FIELDS(CAS_LEARNED_ARRAY)
#undef CAS_LEARNED_ARRAY
};

// MuZero's MinMaxStats: the bounds of the Q values backed up in one tree.
struct MinMaxStats {
  float lo = std::numeric_limits<float>::infinity(), hi = -std::numeric_limits<float>::infinity();
  void update(float q) {
    lo = q < lo ? q : lo;
    hi = q > hi ? q : hi;
  }
};

class LearnedSearch {
 public:
  virtual ~LearnedSearch() = default;
  virtual std::string device() const = 0;
  virtual int games() const = 0;
  virtual const LearnedSearchConfig& config() const = 0;
  // Applies at the next search (the node budget only at construction).
  virtual void setConfig(const LearnedSearchConfig& c) = 0;
  // Fresh trees for the listed games, rooted at observations[i * observationSize ..] of
  // games[i], then `simulations` simulations each (config().simulations when negative).
  virtual void search(const std::vector<int>& games, const float* observations, int simulations = -1) = 0;
  // Per action: visits, q (reward + discount * W / N, 0 unvisited), prior (noise-free), policy
  // (visit shares, or Gumbel's improved policy); chosen (most visited, or Gumbel's winner) =
  // played; value: the root's W / N; pv; treeNodes.
  virtual std::vector<RootStats> rootStats(const std::vector<int>& games) const = 0;
  virtual Tree treeSnapshot(int game) const = 0;
  virtual LearnedSearchMetrics metrics() const = 0;
  // One search of the listed games as search() does it, followed by their root statistics, timed
  // phase by phase (LearnedSearchBreakdown); nullopt where phases run in one host thread's order
  // and have no device time of their own (the CPU search).
  virtual std::optional<LearnedSearchBreakdown> profileDecision(const std::vector<int>& games, const float* observations, int simulations) {
    (void)games, (void)observations, (void)simulations;
    return std::nullopt;
  }

  RootStats rootStats(int game) const { return rootStats(std::vector<int>{game}).front(); }
};

// How a learned-model search evaluates: the three programs a PDL learned model compiles into
// (core/pdl/learned_model.hpp: represent "obs" -> "state"; recurrent "state", "action" (one-hot)
// -> "state", "reward", "logits", "value"; predict "state" -> "logits", "value"), compiled by one
// backend with their parameters set, or the hashed test model (no programs).
struct LearnedModelEvaluator {
  enum class Kind { Network, Hashed };
  Kind kind = Kind::Network;
  exec::Executable* represent = nullptr;  // Network: not owned; outlive the search
  exec::Executable* recurrent = nullptr;
  exec::Executable* predict = nullptr;
};

struct LearnedSearchSetup {
  int games = 1;
  int observationSize = 0, stateSize = 0, actions = 0;  // the hashed model's; a network's must agree
  LearnedSearchConfig config;
  std::uint64_t seed = 1;
  LearnedModelEvaluator evaluator;
};

// The model's callbacks on the host: the hashed model, or the programs run in chunks of their
// batch (zero-padded), actions written as one-hot rows. std::invalid_argument when a program
// lacks an input or output the search needs, or its shapes disagree with the setup's sizes.
LearnedModel makeCpuLearnedModel(const LearnedSearchSetup& setup);

// The learned-model search for `setup` on `backend`, as makeSearch (self_play_search.hpp) makes a
// board game's: device "gpu" takes the backend's device search (std::runtime_error with the reason
// when there is none), "auto" takes it when there is one, "cpu" the CPU reference. `note` says
// which search was made and why.
std::unique_ptr<LearnedSearch> makeLearnedSearch(exec::Backend& backend, const LearnedSearchSetup& setup, const std::string& device,
                                                 std::string* note);

class BatchedLearnedSearch final : public LearnedSearch {
 public:
  BatchedLearnedSearch(LearnedModel model, int games, LearnedSearchConfig config, std::uint64_t seed);

  std::string device() const override { return "cpu"; }
  int games() const override { return int(games_.size()); }
  const LearnedSearchConfig& config() const override { return config_; }
  void setConfig(const LearnedSearchConfig& c) override;
  void search(const std::vector<int>& games, const float* observations, int simulations = -1) override;
  std::vector<RootStats> rootStats(const std::vector<int>& games) const override;
  Tree treeSnapshot(int game) const override { return games_[size_t(game)].tree; }
  LearnedSearchMetrics metrics() const override { return metrics_; }
  using LearnedSearch::rootStats;

  // Without a copy, for tests.
  const Tree& tree(int game) const { return games_[size_t(game)].tree; }
  const LearnedNodes& nodes(int game) const { return games_[size_t(game)].nodes; }
  const MinMaxStats& minMax(int game) const { return games_[size_t(game)].minMax; }

 private:
  struct Game {
    Tree tree;
    LearnedNodes nodes;
    MinMaxStats minMax;
    std::uint32_t draws = 0;  // root preparations: the random streams' `draw`
    int simulations = 0;      // this search's budget (Gumbel's phases)
    int remaining = 0;
    std::vector<float> cleanPriors;
    // Gumbel: sampled g + log prior by child index; the arms (child indices) still racing, best
    // first; simulations in the current phase.
    std::vector<float> gumbelScore;
    std::vector<int> gumbelArms;
    int phaseVisits = 0;
  };
  struct Pending {
    int game;
    std::int32_t leaf;
    std::vector<std::int32_t> path;  // root .. leaf
    int row;                         // the leaf's row in the recurrent batch
  };

  void evaluateRoots(const std::vector<int>& games, const float* observations);
  void selectLeaves(int game, int k, std::vector<Pending>& pending, int& rows);
  void evaluateLeaves(const std::vector<Pending>& pending, int rows);
  std::int32_t selectChild(const Game& g, std::int32_t node) const;
  std::int32_t gumbelRootChild(const Game& g) const;
  float normalizedQ(const Game& g, std::int32_t c) const;
  float completedQ(const Game& g, std::int32_t c) const;
  void expand(Game& g, std::int32_t node, const float* logits) const;
  void backup(Game& g, const std::vector<std::int32_t>& path, float leafValue) const;
  void setPending(Game& g, const std::vector<std::int32_t>& path, int sign) const;
  void prepareRoot(int game);
  void finishRoot(Game& g) const;
  void halveGumbelField(Game& g) const;
  RootStats statsOf(int game) const;
  void gumbelPolicy(const Game& g, RootStats& r) const;

  LearnedModel model_;
  LearnedSearchConfig config_;
  std::uint64_t seed_;
  std::vector<Game> games_;
  std::uint32_t step_ = 0;
  LearnedSearchMetrics metrics_;
  std::vector<float> states_, nextStates_, rewards_, logits_, values_;
  std::vector<std::int32_t> actions_;
};

}  // namespace cas::search
