// The device search over a learned model (gpu/search/learned_steps.cuh) run on the host against
// the CPU reference, BatchedLearnedSearch, with the hashed model: what the kernels compute is
// checked on every machine, GPU or not. PUCT with Dirichlet noise at k = 1, k = 8 with the
// pending rule (shared rows), Gumbel with sequential halving, and node budgets so small that
// every search recycles; many games and random observations over several searches of changing
// game lists. On the host both sides compute the same bits, so everything must be equal: root
// statistics, trees node by node, each node's latent state and reward, the min-max bounds and
// the counts. tests/gpu/test_gpu_learned_search.cpp checks the same on the device.
//
// HostLearnedTwin lays its arrays out as the device does (learned_steps.cuh's memory) and runs
// each kernel as a loop over the games, one game after another.
#include <QTest>

#include <cstring>
#include <random>

#include "core/search/learned_search.hpp"
#include "core/search/search_math.hpp"
#include "gpu/search/learned_steps.cuh"
#include "gpu/search_port_host.hpp"
#include "support/search_compare.hpp"

using namespace cas;
namespace gs = cas::gpu::search;
using search::LearnedSearchConfig;

namespace {

class HostLearnedTwin {
 public:
  HostLearnedTwin(int games, int observationSize, int stateSize, int actions, LearnedSearchConfig config, std::uint64_t seed)
      : games_(games), observationSize_(observationSize), stateSize_(stateSize), actions_(actions), config_(config), seed_(seed) {
    blocks_ = std::max(1, (config.nodeBudget - 1) / actions);
    budget_ = 1 + blocks_ * actions;
    k_ = std::max(1, config.leavesPerStep);
    const auto nodes = size_t(games) * size_t(budget_), rows = size_t(games) * size_t(k_);
    main_.resize(nodes);
    work_.assign(nodes, 0);
    free_.assign(size_t(games) * size_t(blocks_), 0);
    slots_.assign(size_t(games), gs::GameSlot{});
    learned_.assign(size_t(games), gs::LearnedSlot{});
    reward_.assign(nodes, 0.0f);
    latent_.assign(nodes * size_t(stateSize), 0.0f);
    pending_.assign(rows, gs::LearnedPending{});
    observations_.assign(size_t(games) * size_t(observationSize), 0.0f);
    rootStates_.assign(size_t(games) * size_t(stateSize), 0.0f);
    rootLogits_.assign(size_t(games) * size_t(actions), 0.0f);
    rootValues_.assign(size_t(games), 0.0f);
    for (auto* v : {&stateRows_, &nextStates_}) v->assign(rows * size_t(stateSize), 0.0f);
    for (auto* v : {&actionRows_, &logits_}) v->assign(rows * size_t(actions), 0.0f);
    for (auto* v : {&rewards_, &values_}) v->assign(rows, 0.0f);
    stats_.assign(size_t(games), gs::LearnedRootOut{});
    for (int g = 0; g < games; ++g) gs::GameTree(context().trees, g).clear();
  }

  // The device's sequence: the root kernels, then each step's recurrent rows, expansion and the
  // next selection, then the clean root priors.
  void search(const std::vector<int>& games, const float* observations, int simulations) {
    for (auto& s : slots_) s.listed = 0;
    for (size_t i = 0; i < games.size(); ++i) {
      slots_[size_t(games[i])].listed = 1;
      std::copy_n(observations + i * size_t(observationSize_), observationSize_,
                  observations_.data() + size_t(games[i]) * size_t(observationSize_));
    }
    params_ = {config_.cPuct, config_.dirichletAlpha, config_.dirichletFraction, config_.discount, config_.minMaxFloor,
               simulations,   config_.gumbel,         config_.gumbelArms,        stepBase_,          seed_};
    const gs::LearnedContext c = context();
    for (int g = 0; g < games_; ++g)
      gs::hashedRootRow(observations_.data(), observationSize_, g, c, rootStates_.data(), rootLogits_.data(), rootValues_.data());
    for (int g = 0; g < games_; ++g) {
      gs::expandLearnedRoot(c, g);
      gs::selectLearnedLeaves(c, g);
    }
    forEachElement(games_, [&](std::int64_t g, int i) { gs::storeRootStateElement(c, int(g), i); });
    forEachElement(std::int64_t(games_) * k_, [&](std::int64_t row, int i) { gs::gatherStateElement(c, row, i); });
    const int steps = (simulations + k_ - 1) / k_;
    for (int step = 0; step < steps; ++step) {
      for (std::int64_t row = 0; row < std::int64_t(games_) * k_; ++row)
        gs::hashedRecurrentRow(c, row, nextStates_.data(), rewards_.data(), logits_.data(), values_.data());
      forEachElement(std::int64_t(games_) * k_, [&](std::int64_t row, int i) { gs::storeLeafStateElement(c, row, i); });
      for (int g = 0; g < games_; ++g) {
        gs::expandLearnedLeaves(c, g);
        gs::selectLearnedLeaves(c, g);
      }
      forEachElement(std::int64_t(games_) * k_, [&](std::int64_t row, int i) { gs::gatherStateElement(c, row, i); });
    }
    for (int g = 0; g < games_; ++g) gs::finishLearnedRoot(c, g);
    stepBase_ += 1 + std::uint32_t(std::max(1, steps));  // the CPU's clock: the roots, then each step
  }

  search::RootStats rootStats(int g) {
    gs::learnedRootStatistics(context(), g);
    const gs::LearnedRootOut& r = stats_[size_t(g)];
    search::RootStats out;
    out.visits.assign(r.visits, r.visits + actions_);
    out.q.assign(r.q, r.q + actions_);
    out.prior.assign(r.prior, r.prior + actions_);
    out.policy.assign(r.policy, r.policy + actions_);
    out.pv.assign(r.pv, r.pv + r.pvLength);
    out.chosen = r.chosen;
    out.played = r.played;
    out.value = r.value;
    out.treeNodes = r.treeNodes;
    return out;
  }

  search::Tree tree(int g) const { return test::hostTreeCopy(main_, slots_, free_, g, games_, blocks_, actions_, config_.nodeBudget); }
  const float* latent(int g, std::int32_t s) const {
    return latent_.data() + (size_t(s) * size_t(games_) + size_t(g)) * size_t(stateSize_);
  }
  float reward(int g, std::int32_t s) const { return reward_[size_t(s) * size_t(games_) + size_t(g)]; }
  const gs::LearnedSlot& slot(int g) const { return learned_[size_t(g)]; }
  std::int64_t evaluations() const {
    std::int64_t n = 0;
    for (const auto& s : slots_) n += s.evaluations;
    return n;
  }

 private:
  // A copy kernel's threads, one per float of `rows` rows of the state, in turn.
  template <typename Copy>
  void forEachElement(std::int64_t rows, Copy copy) const {
    for (std::int64_t row = 0; row < rows; ++row)
      for (int i = 0; i < stateSize_; ++i) copy(row, i);
  }

  gs::LearnedContext context() {
    gs::LearnedContext c{};
    c.trees = {main_.view(), gpu::search::TreeFields{}, work_.data(), free_.data(), slots_.data(), budget_, blocks_, actions_, games_};
    c.learnedSlots = learned_.data();
    c.reward = reward_.data();
    c.latent = latent_.data();
    c.pending = pending_.data();
    c.rootStates = rootStates_.data();
    c.rootLogits = rootLogits_.data();
    c.rootValues = rootValues_.data();
    c.stateRows = stateRows_.data();
    c.actionRows = actionRows_.data();
    c.nextStates = nextStates_.data();
    c.rewards = rewards_.data();
    c.logits = logits_.data();
    c.values = values_.data();
    c.params = &params_;
    c.stats = stats_.data();
    c.games = games_;
    c.k = k_;
    c.stateSize = stateSize_;
    c.actions = actions_;
    return c;
  }

  int games_, observationSize_, stateSize_, actions_, budget_ = 0, blocks_ = 0, k_ = 1;
  LearnedSearchConfig config_;
  std::uint64_t seed_;
  std::uint32_t stepBase_ = 0;
  test::HostTreeFields main_;
  std::vector<std::int32_t> work_, free_;
  std::vector<gs::GameSlot> slots_;
  std::vector<gs::LearnedSlot> learned_;
  std::vector<float> reward_, latent_, observations_, rootStates_, rootLogits_, rootValues_;
  std::vector<float> stateRows_, actionRows_, nextStates_, logits_, rewards_, values_;
  std::vector<gs::LearnedPending> pending_;
  std::vector<gs::LearnedRootOut> stats_;
  gs::LearnedParams params_{};
};

bool sameBits(const float* a, const float* b, int n) { return std::memcmp(a, b, size_t(n) * sizeof(float)) == 0; }

// Every node the CPU tree reaches has the same latent state and reward on both sides.
QString learnedNodesDifference(const search::BatchedLearnedSearch& cpu, const HostLearnedTwin& twin, int g, int stateSize) {
  const search::Tree& t = cpu.tree(g);
  const search::LearnedNodes& nodes = cpu.nodes(g);
  std::vector<std::int32_t> queue = {0};
  for (size_t q = 0; q < queue.size(); ++q) {
    const std::int32_t s = queue[q];
    const float reward = twin.reward(g, s);
    if (!sameBits(nodes.latent.data() + size_t(s) * size_t(stateSize), twin.latent(g, s), stateSize) ||
        !sameBits(&nodes.reward[size_t(s)], &reward, 1))
      return QStringLiteral("slot %1: latent state or reward differ").arg(s);
    if (t.expanded(s))
      for (int k = 0; k < t.childCount[size_t(s)]; ++k) queue.push_back(t.child(s, k));
  }
  const search::MinMaxStats& m = cpu.minMax(g);
  if (!sameBits(&m.lo, &twin.slot(g).lo, 1) || !sameBits(&m.hi, &twin.slot(g).hi, 1)) return QStringLiteral("min-max bounds differ");
  return {};
}

struct Shape {
  int observationSize = 12, stateSize = 6, actions = 5;
};

LearnedSearchConfig config(int simulations, int leaves, bool gumbel, int nodeBudget) {
  LearnedSearchConfig c;
  c.simulations = simulations;
  c.leavesPerStep = leaves;
  c.gumbel = gumbel;
  c.gumbelArms = 4;
  c.dirichletFraction = gumbel ? 0.0f : 0.25f;
  c.dirichletAlpha = 0.3f;
  c.nodeBudget = nodeBudget;
  c.discount = 0.997f;
  return c;
}

// `searches` searches of random game subsets over random observations, on both sides, each
// compared in full; the CPU search's metrics.
search::LearnedSearchMetrics compareSearches(const Shape& shape, const LearnedSearchConfig& c, int games, int searches,
                                             std::uint64_t seed) {
  search::BatchedLearnedSearch cpu(search::hashedLearnedModel(shape.observationSize, shape.stateSize, shape.actions), games, c, seed);
  HostLearnedTwin twin(games, shape.observationSize, shape.stateSize, shape.actions, c, seed);
  std::mt19937 rng{std::uint32_t(seed)};
  for (int round = 0; round < searches; ++round) {
    std::vector<int> listed;
    for (int g = 0; g < games; ++g)
      if (round == 0 || rng() % 3 != 0) listed.push_back(g);
    std::vector<float> obs(listed.size() * size_t(shape.observationSize));
    for (float& x : obs) x = float(int(rng() % 9) - 4) * 0.5f;
    const int simulations = c.simulations - int(rng() % 4);
    cpu.search(listed, obs.data(), simulations);
    twin.search(listed, obs.data(), simulations);
    for (int g : listed) {
      const QString where = QStringLiteral("search %1, game %2: ").arg(round).arg(g);
      const QString stats = test::statsDifference(cpu.rootStats(g), twin.rootStats(g));
      const QString tree = test::treeDifference(cpu.tree(g), twin.tree(g));
      const QString nodes = learnedNodesDifference(cpu, twin, g, shape.stateSize);
      if (!stats.isEmpty() || !tree.isEmpty() || !nodes.isEmpty()) {
        QTest::qFail(qPrintable(where + stats + tree + nodes), __FILE__, __LINE__);
        return cpu.metrics();
      }
    }
  }
  if (twin.evaluations() != cpu.metrics().evaluations) QTest::qFail("the evaluation counts differ", __FILE__, __LINE__);
  return cpu.metrics();
}

}  // namespace

class TestLearnedSearchPort : public QObject {
  Q_OBJECT
 private slots:
  void puctWithNoiseOneLeaf() { compareSearches(Shape{}, config(48, 1, false, 4096), 200, 4, 11); }
  void puctEightLeavesWithPendingRule() { compareSearches(Shape{}, config(64, 8, false, 4096), 200, 4, 12); }
  // Few actions: selections of one step often end on the same leaf and share its row.
  void sharedRowsWithTwoActions() {
    const search::LearnedSearchMetrics m = compareSearches(Shape{12, 4, 2}, config(40, 8, false, 4096), 24, 3, 13);
    QVERIFY2(m.evaluations < m.simulations, "no selections shared a row");
  }
  void gumbelOneLeaf() { compareSearches(Shape{}, config(48, 1, true, 4096), 200, 4, 14); }
  void gumbelFourLeavesManyActions() { compareSearches(Shape{10, 8, 32}, config(64, 4, true, 8192), 16, 3, 15); }
  void tinyBudgetRecycles() {
    const search::LearnedSearchMetrics m = compareSearches(Shape{}, config(200, 1, false, 1 + 6 * 5), 100, 3, 16);
    QVERIFY2(m.recycledNodes > 0, "the budget is meant to force recycling");
  }
  void tinyBudgetEightLeavesGumbel() {
    const search::LearnedSearchMetrics m = compareSearches(Shape{}, config(120, 8, true, 1 + 10 * 5), 24, 3, 17);
    QVERIFY2(m.recycledNodes > 0, "the budget is meant to force recycling");
  }
  void zeroSimulations() { compareSearches(Shape{}, config(3, 2, false, 4096), 8, 2, 18); }
  void minMaxFloor() {  // muzero.min_max_floor above many trees' Q spans
    LearnedSearchConfig c = config(48, 1, false, 4096);
    c.minMaxFloor = 0.5f;
    compareSearches(Shape{}, c, 200, 4, 19);
  }
};

QTEST_GUILESS_MAIN(TestLearnedSearchPort)
#include "test_learned_search_port.moc"
