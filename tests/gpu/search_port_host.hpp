#pragma once
// The device search's per-game functions (gpu/search/search_steps.cuh) driven on the host, one
// game after another, over host arrays laid out as the device's: what a kernel launch does
// with one thread per game. Used by test_search_port to compare them with BatchedSearch
// without a GPU; its tree arrays (HostTreeFields, hostTreeCopy) also by
// test_learned_search_port.
#include <algorithm>
#include <vector>

#include "core/search/search_math.hpp"
#include "core/search/self_play_search.hpp"
#include "core/search/tree.hpp"
#include "gpu/search/search_steps.cuh"

namespace cas::test {

// The device's tree arrays in host memory: one vector per field of core/search/tree_fields.hpp,
// [budget * games] entries each, slot-major.
struct HostTreeFields {
#define CAS_TREE_VECTOR(name, type, root) std::vector<type> name;
  CAS_TREE_FIELDS(CAS_TREE_VECTOR)
#undef CAS_TREE_VECTOR
  void resize(size_t n) {
#define CAS_TREE_ZERO(name, type, root) name.assign(n, type{});
    CAS_TREE_FIELDS(CAS_TREE_ZERO)
#undef CAS_TREE_ZERO
    firstChild.assign(n, -1);
  }
  gpu::search::TreeFields view() {
    gpu::search::TreeFields f;
#define CAS_TREE_VIEW(name, type, root) f.name = name.data();
    CAS_TREE_FIELDS(CAS_TREE_VIEW)
#undef CAS_TREE_VIEW
    return f;
  }
};

// Game g's tree as a core Tree (what a device search's snapshot copies back).
inline cas::search::Tree hostTreeCopy(const HostTreeFields& f, const std::vector<gpu::search::GameSlot>& gameSlots, const std::vector<std::int32_t>& freeBlocks,
                                      int g, int games, int blocks, int actions, int nodeBudget) {
  cas::search::Tree t(actions, nodeBudget);
  for (size_t s = 0; s < size_t(t.budget()); ++s) {
    const size_t i = s * size_t(games) + size_t(g);  // slot-major, as on the device
#define CAS_TREE_COPY_OUT(name, type, root) t.name[s] = f.name[i];
    CAS_TREE_FIELDS(CAS_TREE_COPY_OUT)
#undef CAS_TREE_COPY_OUT
  }
  const auto& slot = gameSlots[size_t(g)];
  cas::search::Tree::Usage u;
  u.nextBlock = slot.nextBlock;
  u.inUse = slot.inUse;
  u.recycled = slot.recycled;
  const auto first = freeBlocks.begin() + std::ptrdiff_t(size_t(g) * size_t(blocks));
  u.freeBlocks.assign(first, first + slot.freeCount);
  t.adopt(u);
  return t;
}

template <class Game>
class HostDeviceSearch {
 public:
  HostDeviceSearch(int games, cas::search::SearchConfig config, std::uint64_t seed) : games_(games), config_(config), seed_(seed) {
    namespace gs = cas::gpu::search;
    const int a = Game::kActions;
    blocks_ = std::max(1, (config.nodeBudget - 1) / a);
    budget_ = 1 + blocks_ * a;
    k_ = std::max(1, config.leavesPerStep);
    const auto n = size_t(games) * size_t(budget_);
    for (HostTreeFields* f : {&main_, &spare_}) f->resize(n);
    work_.assign(n, 0);
    free_.assign(size_t(games) * size_t(blocks_), 0);
    slots_.assign(size_t(games), gs::GameSlot{});
    roots_.assign(size_t(games), Game::start());
    pending_.assign(size_t(games * k_), gs::Pending{});
    obs_.assign(size_t(games * k_ * Game::kObsSize), 0.0f);
    logits_.assign(size_t(games * k_ * a), 0.0f);
    values_.assign(size_t(games * k_), 0.0f);
    stats_.assign(size_t(games), gs::RootOut{});
    for (int g = 0; g < games; ++g) gs::resetGame(context(), g);
  }

  gpu::search::SearchContext<Game> context() {
    gpu::search::SearchContext<Game> c;
    c.trees = {main_.view(), spare_.view(), work_.data(), free_.data(), slots_.data(), budget_, blocks_, Game::kActions, games_};
    c.roots = roots_.data();
    c.pending = pending_.data();
    c.obs = obs_.data();
    c.logits = logits_.data();
    c.values = values_.data();
    params_ = {config_.cPuct, config_.dirichletAlpha, config_.dirichletFraction, config_.virtualLoss, config_.temperature,
               config_.simulations, callSimulations_, config_.gumbel, config_.gumbelArms, config_.subtreeReuse, config_.temperatureMoves, seed_};
    c.params = &params_;
    c.stats = stats_.data();
    c.games = games_;
    c.k = k_;
    return c;
  }

  void search(const std::vector<int>& games, int simulations) {
    namespace gs = cas::gpu::search;
    callSimulations_ = simulations;
    for (auto& s : slots_) s.listed = 0;
    for (int g : games) slots_[size_t(g)].listed = 1;
    auto c = context();
    gs::NoProbe probe;
    for (int g = 0; g < games_; ++g) gs::encodeRoot(c, g);
    evaluate();
    auto select = [&](int g) {
      if (masked_) gs::selectLeaves<Game, true>(c, g, probe);
      else gs::selectLeaves<Game, false>(c, g, probe);
    };
    // The device's graphs: the root graph ends with the first selection; each step expands and
    // then selects the next step's leaves in one kernel.
    for (int g = 0; g < games_; ++g) {
      gs::expandRoot(c, g);
      select(g);
    }
    for (int step = 0; step < (simulations + k_ - 1) / k_; ++step) {
      evaluate();
      for (int g = 0; g < games_; ++g) {
        gs::expandLeaves(c, g, probe);
        select(g);
      }
    }
    for (int g = 0; g < games_; ++g) gs::finishRoot(c, g);
  }

  cas::search::RootStats rootStats(int g) {
    auto c = context();
    gpu::search::rootStatistics(c, g);
    const auto& r = stats_[size_t(g)];
    cas::search::RootStats out;
    for (int a = 0; a < Game::kActions; ++a) {
      out.visits.push_back(r.visits[a]);
      out.q.push_back(r.q[a]);
      out.prior.push_back(r.prior[a]);
      out.policy.push_back(r.policy[a]);
    }
    for (int i = 0; i < r.pvLength; ++i) out.pv.push_back(r.pv[i]);
    out.chosen = r.chosen;
    out.played = r.played;
    out.value = r.value;
    out.treeNodes = r.treeNodes;
    return out;
  }

  void play(int g, int action) { gpu::search::playMove(context(), g, action); }
  void reset(int g) { gpu::search::resetGame(context(), g); }
  const typename Game::State& root(int g) const { return roots_[size_t(g)]; }
  void setMasked(bool masked) { masked_ = masked; }

  // Game g's tree as a core Tree (what the device search's snapshot copies back).
  cas::search::Tree tree(int g) const { return hostTreeCopy(main_, slots_, free_, g, games_, blocks_, Game::kActions, config_.nodeBudget); }

 private:
  void evaluate() {
    const int rows = games_ * k_;
    for (int r = 0; r < rows; ++r)
      cas::search::hashedEvaluation(obs_.data() + size_t(r) * Game::kObsSize, Game::kObsSize, Game::kActions, logits_.data() + size_t(r) * Game::kActions,
                                    values_.data() + r);
  }

  int games_, budget_ = 0, blocks_ = 0, k_ = 1, callSimulations_ = 0;
  bool masked_ = true;
  cas::search::SearchConfig config_;
  std::uint64_t seed_;
  HostTreeFields main_, spare_;
  std::vector<std::int32_t> work_, free_;
  std::vector<gpu::search::GameSlot> slots_;
  std::vector<typename Game::State> roots_;
  std::vector<gpu::search::Pending> pending_;
  std::vector<float> obs_, logits_, values_;
  std::vector<gpu::search::RootOut> stats_;
  gpu::search::DeviceSearchParams params_{};
};

}  // namespace cas::test
