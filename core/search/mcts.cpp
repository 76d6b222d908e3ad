#include "core/search/mcts.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>

#include "core/search/search_math.hpp"

namespace cas::search {
namespace {

using Clock = std::chrono::steady_clock;

double seconds(Clock::time_point since) { return std::chrono::duration<double>(Clock::now() - since).count(); }

std::uint32_t legalMask(const env::BoardGames& g, int game) {
  std::uint32_t mask = 0;
  for (int a = 0; a < g.actionCount(); ++a)
    if (g.legal(game, a)) mask |= 1u << a;
  return mask;
}

// A stable insertion sort of child indices by score, best first: the device search sorts its
// (at most 16) arms the same way.
void sortArms(std::vector<int>& arms, const std::vector<float>& score) {
  for (size_t i = 1; i < arms.size(); ++i)
    for (size_t j = i; j > 0 && score[size_t(arms[j])] > score[size_t(arms[j - 1])]; --j) std::swap(arms[j], arms[j - 1]);
}

}  // namespace

BatchedSearch::BatchedSearch(const std::string& environment, int games, SearchConfig config, Evaluator evaluator, std::uint64_t seed)
    : environment_(environment), games_(games), config_(config), evaluate_(std::move(evaluator)), seed_(seed) {
  roots_ = env::makeBoardGames(environment, games);
  scratch_ = env::makeBoardGames(environment, games * std::max(1, config.leavesPerStep));
  const int a = roots_->actionCount();
  for (int g = 0; g < games; ++g) {
    roots_->reset(g);
    trees_.emplace_back(a, config.nodeBudget);
  }
  draws_.assign(size_t(games), 0);
  cleanRootPriors_.resize(size_t(games));
  gumbelScore_.resize(size_t(games));
  gumbelArms_.resize(size_t(games));
  gumbelPhaseVisits_.resize(size_t(games));
}

std::optional<std::string> BatchedSearch::setConfig(const SearchConfig& c) {
  const bool wider = c.leavesPerStep > config_.leavesPerStep;
  const int budget = config_.nodeBudget;
  config_ = c;
  config_.nodeBudget = budget;
  if (wider) scratch_ = env::makeBoardGames(environment_, games_ * c.leavesPerStep);
  return std::nullopt;
}

void BatchedSearch::resetGames(const std::vector<int>& games) {
  for (int game : games) {
    roots_->reset(game);
    trees_[size_t(game)].clear();
    gumbelArms_[size_t(game)].clear();
  }
}

void BatchedSearch::play(const std::vector<int>& games, const std::vector<int>& actions) {
  if (games.size() != actions.size()) throw std::invalid_argument("play: one action per game");
  for (size_t i = 0; i < games.size(); ++i) {
    const int game = games[i], action = actions[i];
    if (!roots_->legal(game, action)) throw std::invalid_argument("move " + std::to_string(action + 1) + " is not legal in game " + std::to_string(game));
    Tree& t = trees_[size_t(game)];
    std::int32_t next = Tree::kNone;
    if (config_.subtreeReuse && t.expanded(0))
      for (int k = 0; k < t.childCount[0]; ++k)
        if (t.action[size_t(t.child(0, k))] == action) next = t.child(0, k);
    roots_->play(game, action);
    if (next != Tree::kNone && !roots_->terminal(game)) t.reroot(next);
    else t.clear();
    gumbelArms_[size_t(game)].clear();
  }
}

void BatchedSearch::applyVirtualLoss(Tree& t, const std::vector<std::int32_t>& path, int sign) const {
  for (std::int32_t s : path) {
    t.visits[size_t(s)] += sign;
    t.valueSum[size_t(s)] -= float(sign) * config_.virtualLoss;
    t.virtualLoss[size_t(s)] = std::int16_t(t.virtualLoss[size_t(s)] + sign);
  }
}

void BatchedSearch::backup(Tree& t, const std::vector<std::int32_t>& path, float leafValue) const {
  float v = leafValue;  // for the player to move at the node
  for (size_t i = path.size(); i-- > 0;) {
    const auto s = size_t(path[i]);
    t.visits[s] += 1;
    t.valueSum[s] -= v;  // W is kept for the player who moved into s
    t.lastUsed[s] = step_;
    v = -v;
  }
}

void BatchedSearch::expandWith(Tree& t, std::int32_t node, const env::BoardGames& g, int game, const float* logits) const {
  const std::uint32_t legal = legalMask(g, game);
  float priors[32];
  const int n = legalPriors(logits, legal, g.actionCount(), priors);
  std::vector<std::pair<int, float>> children;
  children.reserve(size_t(n));
  for (int a = 0, i = 0; a < g.actionCount(); ++a)
    if ((legal >> a) & 1u) children.push_back({a, priors[i++]});
  t.expand(node, children, step_);
}

std::int32_t BatchedSearch::selectChild(int game, std::int32_t node, bool atRoot) const {
  const Tree& t = trees_[size_t(game)];
  if (atRoot && config_.gumbel && !gumbelArms_[size_t(game)].empty()) {
    // Sequential halving: visit the remaining arm with the fewest visits (best score on ties).
    const auto& score = gumbelScore_[size_t(game)];
    int best = -1;
    for (int arm : gumbelArms_[size_t(game)]) {
      const auto c = size_t(t.child(node, arm));
      if (best < 0) {
        best = arm;
        continue;
      }
      const auto b = size_t(t.child(node, best));
      if (t.visits[c] < t.visits[b] || (t.visits[c] == t.visits[b] && score[size_t(arm)] > score[size_t(best)])) best = arm;
    }
    return t.child(node, best);
  }
  const float sqrtParent = parentSqrt(t.visits[size_t(node)]);
  std::int32_t best = t.child(node, 0);
  float bestScore = -std::numeric_limits<float>::infinity();
  for (int k = 0; k < t.childCount[size_t(node)]; ++k) {
    const auto c = size_t(t.child(node, k));
    const float score = puctScore(t.valueSum[c], t.visits[c], t.prior[c], sqrtParent, config_.cPuct);
    if (score > bestScore) {
      bestScore = score;
      best = std::int32_t(c);
    }
  }
  return best;
}

// Dirichlet noise into the root's priors (kept clean aside), and Gumbel's arm sampling.
void BatchedSearch::prepareRoot(int game) {
  Tree& t = trees_[size_t(game)];
  const int n = t.childCount[0];
  std::vector<float>& clean = cleanRootPriors_[size_t(game)];
  clean.assign(size_t(n), 0);
  for (int k = 0; k < n; ++k) clean[size_t(k)] = t.prior[size_t(t.child(0, k))];
  const std::uint32_t draw = draws_[size_t(game)]++;
  if (config_.gumbel) {
    RandomStream r{seed_, std::uint32_t(game), draw, RandomPurpose::Gumbel};
    auto& score = gumbelScore_[size_t(game)];
    score.assign(size_t(n), 0);
    for (int k = 0; k < n; ++k) score[size_t(k)] = gumbelSample(r) + searchLog(std::max(clean[size_t(k)], 1e-30f));
    auto& arms = gumbelArms_[size_t(game)];
    arms.resize(size_t(n));
    std::iota(arms.begin(), arms.end(), 0);
    sortArms(arms, score);
    arms.resize(size_t(std::min(n, config_.gumbelArms)));
    gumbelPhaseVisits_[size_t(game)] = 0;
    return;
  }
  gumbelArms_[size_t(game)].clear();
  if (config_.dirichletFraction <= 0 || n < 2) return;
  RandomStream r{seed_, std::uint32_t(game), draw, RandomPurpose::Dirichlet};
  std::vector<float> noise(static_cast<size_t>(n));
  float sum = 0;
  for (float& x : noise) sum = sum + (x = gammaSample(config_.dirichletAlpha, r));
  const float f = config_.dirichletFraction;
  for (int k = 0; k < n; ++k) t.prior[size_t(t.child(0, k))] = (1.0f - f) * clean[size_t(k)] + f * (noise[size_t(k)] / std::max(sum, 1e-30f));
}

void BatchedSearch::finishRoot(int game) {
  Tree& t = trees_[size_t(game)];
  const auto& clean = cleanRootPriors_[size_t(game)];
  for (int k = 0; k < t.childCount[0] && size_t(k) < clean.size(); ++k) t.prior[size_t(t.child(0, k))] = clean[size_t(k)];
}

// Halves the field when a phase's share of the budget is spent.
void BatchedSearch::halveGumbelField(int game) {
  auto& arms = gumbelArms_[size_t(game)];
  if (arms.size() <= 1 || !trees_[size_t(game)].expanded(0)) return;
  if (gumbelPhaseVisits_[size_t(game)] < gumbelPhaseLength(int(arms.size()), config_.gumbelArms, config_.simulations)) return;
  gumbelPhaseVisits_[size_t(game)] = 0;
  const Tree& t = trees_[size_t(game)];
  int maxVisits = 0;
  for (int arm : arms) maxVisits = std::max(maxVisits, t.visits[size_t(t.child(0, arm))]);
  std::vector<float> score(size_t(t.childCount[0]), 0.0f);
  for (int arm : arms) {
    const auto c = size_t(t.child(0, arm));
    const float q = t.visits[c] > 0 ? t.valueSum[c] / float(t.visits[c]) : 0.0f;
    score[size_t(arm)] = gumbelScore_[size_t(game)][size_t(arm)] + gumbelSigma(q, maxVisits);
  }
  sortArms(arms, score);
  arms.resize((arms.size() + 1) / 2);
}

void BatchedSearch::search(const std::vector<int>& games, int simulations) {
  if (simulations < 0) simulations = config_.simulations;
  const auto start = Clock::now();
  double inference = 0;
  const int a = roots_->actionCount();
  const int obsSize = int(std::accumulate(roots_->info().observationShape.begin(), roots_->info().observationShape.end(), 1, std::multiplies<>()));
  auto evaluate = [&](int n) {
    const auto t0 = Clock::now();
    logits_.resize(size_t(n * a));
    values_.resize(size_t(n));
    evaluate_(obs_.data(), n, logits_.data(), values_.data());
    metrics_.evaluations += n;
    ++metrics_.hostWaits;
    inference += seconds(t0);
  };

  // Roots that are leaves are expanded first, in one batch (this is not a simulation).
  std::vector<int> fresh;
  for (int g : games)
    if (!trees_[size_t(g)].expanded(0) && !roots_->terminal(g)) fresh.push_back(g);
  if (!fresh.empty()) {
    obs_.resize(size_t(fresh.size()) * size_t(obsSize));
    for (size_t i = 0; i < fresh.size(); ++i) roots_->observe(fresh[i], obs_.data() + i * size_t(obsSize));
    evaluate(int(fresh.size()));
    ++step_;
    for (size_t i = 0; i < fresh.size(); ++i) {
      Tree& t = trees_[size_t(fresh[i])];
      expandWith(t, 0, *roots_, fresh[i], logits_.data() + i * size_t(a));
      backup(t, {0}, values_[i]);
    }
  }
  std::vector<int> remaining(size_t(games_), 0);
  for (int g : games)
    if (trees_[size_t(g)].expanded(0)) {
      prepareRoot(g);
      remaining[size_t(g)] = simulations;
    }

  const int k = std::max(1, config_.leavesPerStep);
  std::vector<Pending> pending;
  for (bool work = true; work;) {
    work = false;
    ++step_;
    pending.clear();
    for (int g : games) {
      Tree& t = trees_[size_t(g)];
      for (int j = 0; j < k && remaining[size_t(g)] > 0; ++j) {
        --remaining[size_t(g)];
        ++metrics_.simulations;
        if (config_.gumbel) ++gumbelPhaseVisits_[size_t(g)];
        Pending p{g, 0, {0}, g * k + j};
        while (t.expanded(p.leaf)) {
          p.leaf = selectChild(g, p.leaf, p.leaf == 0);
          p.path.push_back(p.leaf);
        }
        for (std::int32_t s : p.path) t.lastUsed[size_t(s)] = step_;
        roots_->copy(g, *scratch_, p.scratch);
        for (size_t i = 1; i < p.path.size(); ++i) scratch_->play(p.scratch, t.action[size_t(p.path[i])]);
        if (scratch_->terminal(p.scratch)) {
          backup(t, p.path, scratch_->terminalValue(p.scratch));
          continue;
        }
        applyVirtualLoss(t, p.path, +1);
        pending.push_back(std::move(p));
      }
      if (remaining[size_t(g)] > 0) work = true;
    }
    if (!pending.empty()) {
      obs_.resize(pending.size() * size_t(obsSize));
      for (size_t i = 0; i < pending.size(); ++i) scratch_->observe(pending[i].scratch, obs_.data() + i * size_t(obsSize));
      evaluate(int(pending.size()));
      for (size_t i = 0; i < pending.size(); ++i) {
        const Pending& p = pending[i];
        Tree& t = trees_[size_t(p.game)];
        expandWith(t, p.leaf, *scratch_, p.scratch, logits_.data() + i * size_t(a));
        applyVirtualLoss(t, p.path, -1);
        backup(t, p.path, values_[i]);
      }
    }
    if (config_.gumbel)
      for (int g : games) halveGumbelField(g);
  }
  for (int g : games)
    if (trees_[size_t(g)].expanded(0)) finishRoot(g);
  std::int64_t recycled = 0;
  for (const Tree& t : trees_) recycled += t.recycledNodes();
  metrics_.recycledNodes = recycled;
  metrics_.inferenceSeconds += inference;
  metrics_.searchSeconds += seconds(start) - inference;
}

std::vector<RootStats> BatchedSearch::rootStats(const std::vector<int>& games) const {
  std::vector<RootStats> out;
  out.reserve(games.size());
  for (int g : games) out.push_back(statsOf(g));
  return out;
}

RootStats BatchedSearch::statsOf(int game) const {
  const Tree& t = trees_[size_t(game)];
  const int a = roots_->actionCount();
  RootStats r;
  r.visits.assign(size_t(a), 0);
  r.q.assign(size_t(a), 0);
  r.prior.assign(size_t(a), 0);
  r.policy.assign(size_t(a), 0);
  r.treeNodes = t.nodesInUse();
  if (!t.expanded(0)) return r;
  int total = 0, bestVisits = -1;
  for (int k = 0; k < t.childCount[0]; ++k) {
    const auto c = size_t(t.child(0, k));
    const int act = t.action[c];
    r.visits[size_t(act)] = t.visits[c];
    r.q[size_t(act)] = t.visits[c] > 0 ? t.valueSum[c] / float(t.visits[c]) : 0.0f;
    r.prior[size_t(act)] = t.prior[c];
    total += t.visits[c];
    if (t.visits[c] > bestVisits) {
      bestVisits = t.visits[c];
      r.chosen = act;
    }
  }
  r.value = t.visits[0] > 0 ? -t.valueSum[0] / float(t.visits[0]) : 0.0f;
  const auto& arms = gumbelArms_[size_t(game)];
  if (config_.gumbel && !arms.empty()) {
    // Gumbel: the winner of the halving; the improved policy is softmax(logit + sigma(q)), with
    // unvisited moves' q completed by the root value.
    int maxVisits = 0;
    for (int k = 0; k < t.childCount[0]; ++k) maxVisits = std::max(maxVisits, t.visits[size_t(t.child(0, k))]);
    float bestScore = -std::numeric_limits<float>::infinity();
    for (int arm : arms) {
      const auto c = size_t(t.child(0, arm));
      const float s = gumbelScore_[size_t(game)][size_t(arm)] + gumbelSigma(r.q[size_t(t.action[c])], maxVisits);
      if (s > bestScore) {
        bestScore = s;
        r.chosen = t.action[c];
      }
    }
    float top = -std::numeric_limits<float>::infinity();
    std::vector<float> logit(size_t(a), -std::numeric_limits<float>::infinity());
    for (int k = 0; k < t.childCount[0]; ++k) {
      const auto c = size_t(t.child(0, k));
      const float q = t.visits[c] > 0 ? r.q[size_t(t.action[c])] : r.value;
      logit[size_t(t.action[c])] = searchLog(std::max(t.prior[c], 1e-30f)) + gumbelSigma(q, maxVisits);
      top = std::max(top, logit[size_t(t.action[c])]);
    }
    float sum = 0;
    for (int act = 0; act < a; ++act) sum = sum + (r.policy[size_t(act)] = searchExp(logit[size_t(act)] - top));
    for (float& p : r.policy) p = p / sum;
  } else if (total > 0) {
    for (int act = 0; act < a; ++act) r.policy[size_t(act)] = float(r.visits[size_t(act)]) / float(total);
  }
  for (std::int32_t s = 0; t.expanded(s);) {  // principal variation
    std::int32_t best = Tree::kNone;
    for (int k = 0; k < t.childCount[size_t(s)]; ++k) {
      const std::int32_t c = t.child(s, k);
      if (best == Tree::kNone || t.visits[size_t(c)] > t.visits[size_t(best)]) best = c;
    }
    if (best == Tree::kNone || t.visits[size_t(best)] == 0) break;
    r.pv.push_back(t.action[size_t(best)]);
    s = best;
  }
  r.played = r.chosen;
  if (!config_.gumbel && config_.temperature > 0 && roots_->moveCount(game) < config_.temperatureMoves && bestVisits > 0) {
    // visits^(1/T), scaled by the most visited move's so that no weight overflows.
    RandomStream rs{seed_, std::uint32_t(game), draws_[size_t(game)], RandomPurpose::Temperature};
    const float top = searchLog(float(bestVisits));
    std::vector<float> weight(size_t(a), 0.0f);
    float sum = 0;
    for (int act = 0; act < a; ++act) {
      const int v = r.visits[size_t(act)];
      if (v > 0) weight[size_t(act)] = config_.temperature == 1.0f ? float(v) : searchExp((searchLog(float(v)) - top) / config_.temperature);
      sum = sum + weight[size_t(act)];
    }
    const float u = rs.uniform() * sum;
    float cumulative = 0;
    for (int act = 0; act < a; ++act) {
      if (weight[size_t(act)] <= 0) continue;
      cumulative = cumulative + weight[size_t(act)];
      r.played = act;
      if (u < cumulative) break;
    }
  }
  return r;
}

}  // namespace cas::search
