#pragma once
// Batched Monte Carlo tree search over many games at once. Each step selects up to k leaves per
// game (spread by virtual loss), evaluates all games' leaves in one network batch through the
// Evaluator, expands them and backs the values up. Root policies: PUCT with Dirichlet noise, or
// Gumbel sampling with sequential halving. Deterministic for a seed.
// Thread-safety: one thread drives a BatchedSearch.
#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/env/games.hpp"
#include "core/search/tree.hpp"

namespace cas::search {

struct SearchConfig {
  int simulations = 64;
  float cPuct = 1.5f;
  float dirichletAlpha = 0.3f;
  float dirichletFraction = 0.25f;  // 0: no noise (evaluation, analysis)
  int leavesPerStep = 1;
  float virtualLoss = 1.0f;
  bool gumbel = false;
  int gumbelArms = 16;
  int nodeBudget = 16384;
  bool subtreeReuse = true;
};

// Evaluates n positions: observations [n, obs...] -> logits [n, A] and values [n] (from the
// point of view of the player to move).
using Evaluator = std::function<void(const float* observations, int n, float* logits, float* values)>;

struct RootStats {
  std::vector<int> visits;     // per action (0 for illegal moves)
  std::vector<float> q;        // per action, from the mover's point of view (0 when unvisited)
  std::vector<float> prior;    // per action, the network's (noise-free)
  std::vector<float> policy;   // the search's improved policy: visit shares, or Gumbel's
  std::vector<int> pv;         // principal variation: most visited moves from the root
  int chosen = -1;             // the search's choice (most visited; Gumbel's winner)
  float value = 0;             // root value estimate W/N from the mover's point of view
};

struct SearchMetrics {
  std::int64_t simulations = 0;
  std::int64_t evaluations = 0;  // positions sent to the network
  std::int64_t recycledNodes = 0;
  double inferenceSeconds = 0, searchSeconds = 0;
};

class BatchedSearch {
 public:
  BatchedSearch(const std::string& environment, int games, SearchConfig config, Evaluator evaluator, std::uint64_t seed);

  env::BoardGames& positions() { return *roots_; }  // the root position of each game
  const SearchConfig& config() const { return config_; }
  void setConfig(const SearchConfig& c);  // takes effect at the next search (budget: at the next reset)

  // Runs `simulations` simulations (config().simulations when negative) for each listed game
  // (non-terminal positions).
  void search(const std::vector<int>& games, int simulations = -1);
  RootStats rootStats(int game) const;
  // Plays `action` in game's root position and keeps (or drops) the matching subtree.
  void play(int game, int action);
  void resetGame(int game);  // a fresh position and an empty tree
  const Tree& tree(int game) const { return trees_[size_t(game)]; }
  const SearchMetrics& metrics() const { return metrics_; }

 private:
  struct Pending {
    int game;
    std::int32_t leaf;
    std::vector<std::int32_t> path;  // root .. leaf
    int scratch;                     // slot in scratch_ holding the leaf position
  };

  std::int32_t selectChild(int game, std::int32_t node, bool atRoot);
  void applyVirtualLoss(Tree& t, const std::vector<std::int32_t>& path, int sign);
  void backup(Tree& t, const std::vector<std::int32_t>& path, float leafValue);
  void prepareRoot(int game);
  void finishRoot(int game);

  std::string environment_;
  int games_;
  SearchConfig config_;
  Evaluator evaluate_;
  std::unique_ptr<env::BoardGames> roots_, scratch_;
  std::vector<Tree> trees_;
  std::vector<std::mt19937_64> rng_;
  std::vector<std::vector<float>> cleanRootPriors_;
  // Gumbel state per game: sampled arm scores g + logit and the arms still in the race.
  std::vector<std::vector<float>> gumbelScore_;
  std::vector<std::vector<int>> gumbelArms_;
  std::vector<int> gumbelPhaseVisits_;
  std::uint32_t step_ = 0;
  SearchMetrics metrics_;
  std::vector<float> obs_, logits_, values_;
};

}  // namespace cas::search
