// BatchedLearnedSearch: the CPU reference of the search over a learned model (learned_search.hpp
// draws the memory; docs/search.md states the rules). Every float operation is one of
// search_math.hpp's, in a fixed order, so that a device twin compiled without fused multiply-adds
// computes the same bits. Thread-safety: one thread drives a search.
#include "core/search/learned_search.hpp"

#include <algorithm>
#include <limits>
#include <numeric>
#include <stdexcept>

#include "core/search/search_math.hpp"

namespace cas::search {
namespace {

std::uint32_t allActions(int actions) { return actions >= 32 ? 0xFFFFFFFFu : (1u << actions) - 1u; }

// A stable insertion sort of child indices by score, best first (BatchedSearch's rule).
void sortArms(std::vector<int>& arms, const std::vector<float>& score) {
  for (size_t i = 1; i < arms.size(); ++i)
    for (size_t j = i; j > 0 && score[size_t(arms[j])] > score[size_t(arms[j - 1])]; --j) std::swap(arms[j], arms[j - 1]);
}

// Most visited moves from the root (the first in child order among equals).
std::vector<int> principalVariation(const Tree& t) {
  std::vector<int> pv;
  for (std::int32_t s = 0; t.expanded(s);) {
    std::int32_t best = Tree::kNone;
    for (int k = 0; k < t.childCount[size_t(s)]; ++k) {
      const std::int32_t c = t.child(s, k);
      if (best == Tree::kNone || t.visits[size_t(c)] > t.visits[size_t(best)]) best = c;
    }
    if (best == Tree::kNone || t.visits[size_t(best)] == 0) break;
    pv.push_back(t.action[size_t(best)]);
    s = best;
  }
  return pv;
}

}  // namespace

LearnedModel hashedLearnedModel(int observationSize, int stateSize, int actions) {
  LearnedModel m;
  m.observationSize = observationSize;
  m.stateSize = stateSize;
  m.actions = actions;
  m.represent = [observationSize, stateSize](const float* obs, int n, float* states) {
    for (int i = 0; i < n; ++i)
      hashedRepresentation(obs + size_t(i) * size_t(observationSize), observationSize, stateSize, states + size_t(i) * size_t(stateSize));
  };
  m.recurrent = [stateSize, actions](const float* states, const std::int32_t* act, int n, float* next, float* rewards, float* logits,
                                     float* values) {
    for (int i = 0; i < n; ++i) {
      float* s = next + size_t(i) * size_t(stateSize);
      hashedDynamics(states + size_t(i) * size_t(stateSize), stateSize, act[i], s, rewards + i);
      hashedPrediction(s, stateSize, actions, logits + size_t(i) * size_t(actions), values + i);
    }
  };
  m.predict = [stateSize, actions](const float* states, int n, float* logits, float* values) {
    for (int i = 0; i < n; ++i)
      hashedPrediction(states + size_t(i) * size_t(stateSize), stateSize, actions, logits + size_t(i) * size_t(actions), values + i);
  };
  return m;
}

LearnedNodes::LearnedNodes(int budget, int stateSize) {
#define CAS_LEARNED_RESIZE(name, type, width, root) name.assign(size_t(budget) * size_t(width), type(root));
  CAS_LEARNED_NODE_FIELDS(CAS_LEARNED_RESIZE)
#undef CAS_LEARNED_RESIZE
}

BatchedLearnedSearch::BatchedLearnedSearch(LearnedModel model, int games, LearnedSearchConfig config, std::uint64_t seed)
    : model_(std::move(model)), config_(config), seed_(seed) {
  if (model_.actions < 1 || model_.actions > 32) throw std::invalid_argument("learned search: between 1 and 32 actions");
  if (model_.stateSize < 1 || model_.observationSize < 1) throw std::invalid_argument("learned search: empty state or observation");
  if (!model_.represent || !model_.recurrent || !model_.predict)
    throw std::invalid_argument("learned search: the model needs represent, recurrent and predict");
  games_.reserve(size_t(games));
  for (int g = 0; g < games; ++g) {
    Tree t(model_.actions, config.nodeBudget);
    const int budget = t.budget();
    games_.push_back(Game{std::move(t), LearnedNodes(budget, model_.stateSize), {}, 0, 0, 0, {}, {}, {}, 0});
  }
}

void BatchedLearnedSearch::setConfig(const LearnedSearchConfig& c) {
  const int budget = config_.nodeBudget;
  config_ = c;
  config_.nodeBudget = budget;
}

// Fresh trees: no subtree survives a move, because the new root's state comes from
// represent(new observation), not from the dynamics that made the old tree's child.
void BatchedLearnedSearch::evaluateRoots(const std::vector<int>& games, const float* observations) {
  const size_t n = games.size(), s = size_t(model_.stateSize), a = size_t(model_.actions);
  states_.resize(n * s);
  logits_.resize(n * a);
  values_.resize(n);
  model_.represent(observations, int(n), states_.data());
  model_.predict(states_.data(), int(n), logits_.data(), values_.data());
  metrics_.modelCalls += 2;
  ++step_;
  for (size_t i = 0; i < n; ++i) {
    Game& g = games_[size_t(games[i])];
    g.tree.clear();
    g.minMax = MinMaxStats{};
    std::copy_n(states_.data() + i * s, s, g.nodes.latent.data());
    g.nodes.reward[0] = 0.0f;
    expand(g, 0, logits_.data() + i * a);
    backup(g, {0}, values_[i]);
  }
}

void BatchedLearnedSearch::search(const std::vector<int>& games, const float* observations, int simulations) {
  if (simulations < 0) simulations = config_.simulations;
  if (games.empty()) return;
  evaluateRoots(games, observations);
  for (int game : games) {
    Game& g = games_[size_t(game)];
    g.simulations = g.remaining = simulations;
    prepareRoot(game);
  }
  const int k = std::max(1, config_.leavesPerStep);
  std::vector<Pending> pending;
  for (bool work = true; work;) {
    work = false;
    ++step_;
    pending.clear();
    int rows = 0;
    for (int game : games) {
      selectLeaves(game, k, pending, rows);
      if (games_[size_t(game)].remaining > 0) work = true;
    }
    if (rows > 0) evaluateLeaves(pending, rows);
    if (config_.gumbel)
      for (int game : games) halveGumbelField(games_[size_t(game)]);
  }
  for (int game : games) finishRoot(games_[size_t(game)]);
  std::int64_t recycled = 0;
  for (const Game& g : games_) recycled += g.tree.recycledNodes();
  metrics_.recycledNodes = recycled;
}

// Up to k selections in one game. A selection that ends on a leaf already pending in this step
// shares that leaf's row: the leaf is evaluated once and backed up once per selection.
void BatchedLearnedSearch::selectLeaves(int game, int k, std::vector<Pending>& pending, int& rows) {
  Game& g = games_[size_t(game)];
  Tree& t = g.tree;
  for (int j = 0; j < k && g.remaining > 0; ++j) {
    --g.remaining;
    ++metrics_.simulations;
    if (config_.gumbel) ++g.phaseVisits;
    Pending p{game, 0, {0}, -1};
    while (t.expanded(p.leaf)) {
      p.leaf = selectChild(g, p.leaf);
      p.path.push_back(p.leaf);
    }
    for (std::int32_t s : p.path) t.lastUsed[size_t(s)] = step_;
    if (t.virtualLoss[size_t(p.leaf)] > 0) {
      for (const Pending& q : pending)
        if (q.game == game && q.leaf == p.leaf) p.row = q.row;
    } else {
      p.row = rows++;
    }
    setPending(g, p.path, +1);
    pending.push_back(std::move(p));
  }
}

// One recurrent call for every game's leaves: (parent's state, action into the leaf) per row.
void BatchedLearnedSearch::evaluateLeaves(const std::vector<Pending>& pending, int rows) {
  const size_t s = size_t(model_.stateSize), a = size_t(model_.actions), n = size_t(rows);
  states_.resize(n * s);
  nextStates_.resize(n * s);
  actions_.resize(n);
  rewards_.resize(n);
  logits_.resize(n * a);
  values_.resize(n);
  int gathered = 0;
  for (const Pending& p : pending) {
    if (p.row != gathered) continue;  // a shared row, gathered with its first selection
    const Game& g = games_[size_t(p.game)];
    const auto parent = size_t(g.tree.parent[size_t(p.leaf)]);
    std::copy_n(g.nodes.latent.data() + parent * s, s, states_.data() + size_t(p.row) * s);
    actions_[size_t(p.row)] = g.tree.action[size_t(p.leaf)];
    ++gathered;
  }
  model_.recurrent(states_.data(), actions_.data(), rows, nextStates_.data(), rewards_.data(), logits_.data(), values_.data());
  ++metrics_.recurrentCalls;
  ++metrics_.modelCalls;
  metrics_.evaluations += rows;
  int expanded = 0;
  for (const Pending& p : pending) {
    Game& g = games_[size_t(p.game)];
    const auto row = size_t(p.row);
    if (p.row == expanded) {
      std::copy_n(nextStates_.data() + row * s, s, g.nodes.latent.data() + size_t(p.leaf) * s);
      g.nodes.reward[size_t(p.leaf)] = rewards_[row];
      expand(g, p.leaf, logits_.data() + row * a);
      ++expanded;
    }
    setPending(g, p.path, -1);
    backup(g, p.path, values_[row]);
  }
}

float BatchedLearnedSearch::normalizedQ(const Game& g, std::int32_t c) const {
  const Tree& t = g.tree;
  const auto s = size_t(c);
  if (t.visits[s] == 0) return 0.0f;
  return minMaxNormalize(learnedQ(g.nodes.reward[s], t.valueSum[s], t.visits[s], config_.discount), g.minMax.lo, g.minMax.hi, config_.minMaxFloor);
}

// Gumbel's completed Q: a visited child's normalised Q, an unvisited one's the root value's.
float BatchedLearnedSearch::completedQ(const Game& g, std::int32_t c) const {
  const Tree& t = g.tree;
  if (t.visits[size_t(c)] > 0) return normalizedQ(g, c);
  return minMaxNormalize(t.valueSum[0] / float(t.visits[0]), g.minMax.lo, g.minMax.hi, config_.minMaxFloor);
}

std::int32_t BatchedLearnedSearch::selectChild(const Game& g, std::int32_t node) const {
  if (node == 0 && config_.gumbel && !g.gumbelArms.empty()) return gumbelRootChild(g);
  const Tree& t = g.tree;
  const float sqrtParent = parentSqrt(t.visits[size_t(node)] + t.virtualLoss[size_t(node)]);
  std::int32_t best = t.child(node, 0);
  float bestScore = -std::numeric_limits<float>::infinity();
  for (int k = 0; k < t.childCount[size_t(node)]; ++k) {
    const std::int32_t c = t.child(node, k);
    const std::int32_t n = t.visits[size_t(c)], pending = t.virtualLoss[size_t(c)];
    const float qn = pendingQ(normalizedQ(g, c), n, pending);
    const float score = normalizedPuctScore(qn, n + pending, t.prior[size_t(c)], sqrtParent, config_.cPuct);
    if (score > bestScore) {
      bestScore = score;
      best = c;
    }
  }
  return best;
}

// Sequential halving: the racing arm with the fewest visits, pending ones included (the best
// sampled score among equals).
std::int32_t BatchedLearnedSearch::gumbelRootChild(const Game& g) const {
  const Tree& t = g.tree;
  int best = -1, bestVisits = 0;
  for (int arm : g.gumbelArms) {
    const auto c = size_t(t.child(0, arm));
    const int v = t.visits[c] + t.virtualLoss[c];
    if (best < 0 || v < bestVisits || (v == bestVisits && g.gumbelScore[size_t(arm)] > g.gumbelScore[size_t(best)])) {
      best = arm;
      bestVisits = v;
    }
  }
  return t.child(0, best);
}

void BatchedLearnedSearch::expand(Game& g, std::int32_t node, const float* logits) const {
  float priors[32];
  const int n = legalPriors(logits, allActions(model_.actions), model_.actions, priors);
  std::vector<std::pair<int, float>> children(static_cast<size_t>(n));
  for (int a = 0; a < n; ++a) children[size_t(a)] = {a, priors[a]};
  g.tree.expand(node, children, step_);
}

// From the leaf up: W += G, N += 1, the bounds take the node's Q, then G = reward + discount * G.
void BatchedLearnedSearch::backup(Game& g, const std::vector<std::int32_t>& path, float leafValue) const {
  Tree& t = g.tree;
  float value = leafValue;
  for (size_t i = path.size(); i-- > 0;) {
    const auto s = size_t(path[i]);
    t.visits[s] += 1;
    t.valueSum[s] = t.valueSum[s] + value;
    t.lastUsed[s] = step_;
    const float reward = g.nodes.reward[s];
    g.minMax.update(learnedQ(reward, t.valueSum[s], t.visits[s], config_.discount));
    value = reward + config_.discount * value;
  }
}

void BatchedLearnedSearch::setPending(Game& g, const std::vector<std::int32_t>& path, int sign) const {
  for (std::int32_t s : path) g.tree.virtualLoss[size_t(s)] = std::int16_t(g.tree.virtualLoss[size_t(s)] + sign);
}

// Dirichlet noise into the root's priors (kept clean aside), or Gumbel's arms.
void BatchedLearnedSearch::prepareRoot(int game) {
  Game& g = games_[size_t(game)];
  Tree& t = g.tree;
  const int n = t.childCount[0];
  g.cleanPriors.assign(size_t(n), 0.0f);
  for (int k = 0; k < n; ++k) g.cleanPriors[size_t(k)] = t.prior[size_t(t.child(0, k))];
  const std::uint32_t draw = g.draws++;
  g.gumbelArms.clear();
  g.phaseVisits = 0;
  if (config_.gumbel) {
    RandomStream r{seed_, std::uint32_t(game), draw, RandomPurpose::Gumbel};
    g.gumbelScore.assign(size_t(n), 0.0f);
    for (int k = 0; k < n; ++k) g.gumbelScore[size_t(k)] = gumbelSample(r) + searchLog(std::max(g.cleanPriors[size_t(k)], 1e-30f));
    g.gumbelArms.resize(size_t(n));
    std::iota(g.gumbelArms.begin(), g.gumbelArms.end(), 0);
    sortArms(g.gumbelArms, g.gumbelScore);
    g.gumbelArms.resize(size_t(std::min(n, std::max(1, config_.gumbelArms))));
    return;
  }
  if (config_.dirichletFraction <= 0 || n < 2) return;
  RandomStream r{seed_, std::uint32_t(game), draw, RandomPurpose::Dirichlet};
  std::vector<float> noise(static_cast<size_t>(n));
  float sum = 0;
  for (float& x : noise) sum = sum + (x = gammaSample(config_.dirichletAlpha, r));
  const float f = config_.dirichletFraction;
  for (int k = 0; k < n; ++k)
    t.prior[size_t(t.child(0, k))] = (1.0f - f) * g.cleanPriors[size_t(k)] + f * (noise[size_t(k)] / std::max(sum, 1e-30f));
}

void BatchedLearnedSearch::finishRoot(Game& g) const {
  Tree& t = g.tree;
  if (!t.expanded(0)) return;
  for (int k = 0; k < t.childCount[0] && size_t(k) < g.cleanPriors.size(); ++k) t.prior[size_t(t.child(0, k))] = g.cleanPriors[size_t(k)];
}

// Halves the field when a phase's share of this search's budget is spent, ranking the racing
// arms by g + log prior + sigma(completed normalised Q), sigma over q mapped to [-1, 1].
void BatchedLearnedSearch::halveGumbelField(Game& g) const {
  auto& arms = g.gumbelArms;
  if (arms.size() <= 1) return;
  if (g.phaseVisits < gumbelPhaseLength(int(arms.size()), config_.gumbelArms, g.simulations)) return;
  g.phaseVisits = 0;
  const Tree& t = g.tree;
  int maxVisits = 0;
  for (int arm : arms) maxVisits = std::max(maxVisits, t.visits[size_t(t.child(0, arm))]);
  std::vector<float> score(size_t(t.childCount[0]), 0.0f);
  for (int arm : arms)
    score[size_t(arm)] = g.gumbelScore[size_t(arm)] + gumbelSigma(2.0f * completedQ(g, t.child(0, arm)) - 1.0f, maxVisits);
  sortArms(arms, score);
  arms.resize((arms.size() + 1) / 2);
}

std::vector<RootStats> BatchedLearnedSearch::rootStats(const std::vector<int>& games) const {
  std::vector<RootStats> out;
  out.reserve(games.size());
  for (int g : games) out.push_back(statsOf(g));
  return out;
}

RootStats BatchedLearnedSearch::statsOf(int game) const {
  const Game& g = games_[size_t(game)];
  const Tree& t = g.tree;
  const auto a = size_t(model_.actions);
  RootStats r;
  r.visits.assign(a, 0);
  r.q.assign(a, 0.0f);
  r.prior.assign(a, 0.0f);
  r.policy.assign(a, 0.0f);
  r.treeNodes = t.nodesInUse();
  if (!t.expanded(0)) return r;
  int total = 0, bestVisits = -1;
  for (int k = 0; k < t.childCount[0]; ++k) {
    const auto c = size_t(t.child(0, k));
    const auto act = size_t(t.action[c]);
    r.visits[act] = t.visits[c];
    r.q[act] = t.visits[c] > 0 ? learnedQ(g.nodes.reward[c], t.valueSum[c], t.visits[c], config_.discount) : 0.0f;
    r.prior[act] = t.prior[c];
    total += t.visits[c];
    if (t.visits[c] > bestVisits) {
      bestVisits = t.visits[c];
      r.chosen = int(act);
    }
  }
  r.value = t.valueSum[0] / float(t.visits[0]);
  if (config_.gumbel && !g.gumbelArms.empty())
    gumbelPolicy(g, r);
  else if (total > 0)
    for (size_t act = 0; act < a; ++act) r.policy[act] = float(r.visits[act]) / float(total);
  r.pv = principalVariation(t);
  r.played = r.chosen;
  return r;
}

// Gumbel: the racing arm with the best g + log prior + sigma(completed Q) is the choice; the
// improved policy is softmax(log prior + sigma(completed Q)) over every action.
void BatchedLearnedSearch::gumbelPolicy(const Game& g, RootStats& r) const {
  const Tree& t = g.tree;
  int maxVisits = 0;
  for (int k = 0; k < t.childCount[0]; ++k) maxVisits = std::max(maxVisits, t.visits[size_t(t.child(0, k))]);
  float bestScore = -std::numeric_limits<float>::infinity();
  for (int arm : g.gumbelArms) {
    const std::int32_t c = t.child(0, arm);
    const float s = g.gumbelScore[size_t(arm)] + gumbelSigma(2.0f * completedQ(g, c) - 1.0f, maxVisits);
    if (s > bestScore) {
      bestScore = s;
      r.chosen = t.action[size_t(c)];
    }
  }
  const auto a = size_t(model_.actions);
  std::vector<float> logit(a, -std::numeric_limits<float>::infinity());
  float top = -std::numeric_limits<float>::infinity();
  for (int k = 0; k < t.childCount[0]; ++k) {
    const std::int32_t c = t.child(0, k);
    const auto act = size_t(t.action[size_t(c)]);
    logit[act] = searchLog(std::max(t.prior[size_t(c)], 1e-30f)) + gumbelSigma(2.0f * completedQ(g, c) - 1.0f, maxVisits);
    top = std::max(top, logit[act]);
  }
  float sum = 0;
  for (size_t act = 0; act < a; ++act) sum = sum + (r.policy[act] = searchExp(logit[act] - top));
  for (float& p : r.policy) p = p / sum;
}

}  // namespace cas::search
