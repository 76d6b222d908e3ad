#pragma once
// BatchedSearch: the CPU reference implementation of SelfPlaySearch (self_play_search.hpp).
// Batched Monte Carlo tree search over many games at once. Each step selects up to k leaves per
// game (spread by virtual loss), evaluates all games' leaves in one network batch through the
// Evaluator, expands them and backs the values up. Root policies: PUCT with Dirichlet noise, or
// Gumbel sampling with sequential halving. Deterministic for a seed: its random numbers and its
// arithmetic are those of search_math.hpp, which the device search shares.
// Thread-safety: one thread drives a BatchedSearch.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/env/games.hpp"
#include "core/search/self_play_search.hpp"
#include "core/search/tree.hpp"

namespace cas::search {

class BatchedSearch final : public SelfPlaySearch {
 public:
  BatchedSearch(const std::string& environment, int games, SearchConfig config, Evaluator evaluator, std::uint64_t seed);

  std::string device() const override { return "cpu"; }
  int games() const override { return games_; }
  const env::BoardGames& positions() const override { return *roots_; }
  const SearchConfig& config() const override { return config_; }
  std::optional<std::string> setConfig(const SearchConfig& c) override;

  void search(const std::vector<int>& games, int simulations = -1) override;
  std::vector<RootStats> rootStats(const std::vector<int>& games) const override;
  void play(const std::vector<int>& games, const std::vector<int>& actions) override;
  void resetGames(const std::vector<int>& games) override;
  Tree treeSnapshot(int game) const override { return trees_[size_t(game)]; }
  SearchMetrics metrics() const override { return metrics_; }

  using SelfPlaySearch::play;
  using SelfPlaySearch::rootStats;
  // The tree itself, without a copy (tests and the trainer's own views).
  const Tree& tree(int game) const { return trees_[size_t(game)]; }

 private:
  struct Pending {
    int game;
    std::int32_t leaf;
    std::vector<std::int32_t> path;  // root .. leaf
    int scratch;                     // slot in scratch_ holding the leaf position
  };

  RootStats statsOf(int game) const;
  std::int32_t selectChild(int game, std::int32_t node, bool atRoot) const;
  void applyVirtualLoss(Tree& t, const std::vector<std::int32_t>& path, int sign) const;
  void backup(Tree& t, const std::vector<std::int32_t>& path, float leafValue) const;
  void expandWith(Tree& t, std::int32_t node, const env::BoardGames& g, int game, const float* logits) const;
  void prepareRoot(int game);
  void finishRoot(int game);
  void halveGumbelField(int game);

  std::string environment_;
  int games_;
  SearchConfig config_;
  Evaluator evaluate_;
  std::uint64_t seed_;
  std::unique_ptr<env::BoardGames> roots_, scratch_;
  std::vector<Tree> trees_;
  std::vector<std::uint32_t> draws_;  // root preparations per game: the random streams' `draw`
  std::vector<std::vector<float>> cleanRootPriors_;
  // Gumbel state per game: sampled arm scores g + logit (by child index) and the arms (child
  // indices) still in the race, best first.
  std::vector<std::vector<float>> gumbelScore_;
  std::vector<std::vector<int>> gumbelArms_;
  std::vector<int> gumbelPhaseVisits_;
  std::uint32_t step_ = 0;
  SearchMetrics metrics_;
  std::vector<float> obs_, logits_, values_;
};

}  // namespace cas::search
