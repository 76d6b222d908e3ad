#include "core/search/mcts.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <numeric>

namespace cas::search {
namespace {

using Clock = std::chrono::steady_clock;

double seconds(Clock::time_point since) { return std::chrono::duration<double>(Clock::now() - since).count(); }

// Softmax of the logits over the legal moves: the priors of a node's children.
std::vector<std::pair<int, float>> legalPriors(const env::BoardGames& g, int game, const float* logits) {
  std::vector<std::pair<int, float>> children;
  float top = -std::numeric_limits<float>::infinity();
  for (int a = 0; a < g.actionCount(); ++a)
    if (g.legal(game, a)) {
      children.push_back({a, logits[a]});
      top = std::max(top, logits[a]);
    }
  float sum = 0;
  for (auto& c : children) sum += (c.second = std::exp(c.second - top));
  for (auto& c : children) c.second /= sum;
  return children;
}

}  // namespace

BatchedSearch::BatchedSearch(const std::string& environment, int games, SearchConfig config, Evaluator evaluator, std::uint64_t seed)
    : environment_(environment), games_(games), config_(config), evaluate_(std::move(evaluator)) {
  roots_ = env::makeBoardGames(environment, games);
  scratch_ = env::makeBoardGames(environment, games * std::max(1, config.leavesPerStep));
  const int a = roots_->actionCount();
  for (int g = 0; g < games; ++g) {
    roots_->reset(g);
    trees_.emplace_back(a, config.nodeBudget);
    rng_.emplace_back(seed * 0x9E3779B97F4A7C15ull + std::uint64_t(g) + 1);
  }
  cleanRootPriors_.resize(size_t(games));
  gumbelScore_.resize(size_t(games));
  gumbelArms_.resize(size_t(games));
  gumbelPhaseVisits_.resize(size_t(games));
}

void BatchedSearch::setConfig(const SearchConfig& c) {
  const bool wider = c.leavesPerStep > config_.leavesPerStep;
  config_ = c;
  if (wider) scratch_ = env::makeBoardGames(environment_, games_ * c.leavesPerStep);
}

void BatchedSearch::resetGame(int game) {
  roots_->reset(game);
  trees_[size_t(game)].clear();
}

void BatchedSearch::play(int game, int action) {
  Tree& t = trees_[size_t(game)];
  std::int32_t next = Tree::kNone;
  if (config_.subtreeReuse && t.expanded(0))
    for (int k = 0; k < t.childCount[0]; ++k)
      if (t.action[size_t(t.child(0, k))] == action) next = t.child(0, k);
  roots_->play(game, action);
  if (next != Tree::kNone && !roots_->terminal(game)) t.reroot(next);
  else t.clear();
}

void BatchedSearch::applyVirtualLoss(Tree& t, const std::vector<std::int32_t>& path, int sign) {
  for (std::int32_t s : path) {
    t.visits[size_t(s)] += sign;
    t.valueSum[size_t(s)] -= float(sign) * config_.virtualLoss;
    t.virtualLoss[size_t(s)] = std::int16_t(t.virtualLoss[size_t(s)] + sign);
  }
}

void BatchedSearch::backup(Tree& t, const std::vector<std::int32_t>& path, float leafValue) {
  float v = leafValue;  // for the player to move at the node
  for (size_t i = path.size(); i-- > 0;) {
    const auto s = size_t(path[i]);
    t.visits[s] += 1;
    t.valueSum[s] -= v;  // W is kept for the player who moved into s
    t.lastUsed[s] = step_;
    v = -v;
  }
}

std::int32_t BatchedSearch::selectChild(int game, std::int32_t node, bool atRoot) {
  const Tree& t = trees_[size_t(game)];
  if (atRoot && config_.gumbel && !gumbelArms_[size_t(game)].empty()) {
    // Sequential halving: visit the remaining arm with the fewest visits (best score on ties).
    std::int32_t best = Tree::kNone;
    for (int arm : gumbelArms_[size_t(game)]) {
      const std::int32_t c = t.child(node, arm);
      if (best == Tree::kNone || t.visits[size_t(c)] < t.visits[size_t(best)] ||
          (t.visits[size_t(c)] == t.visits[size_t(best)] &&
           gumbelScore_[size_t(game)][size_t(arm)] > gumbelScore_[size_t(game)][size_t(best - t.firstChild[size_t(node)])]))
        best = c;
    }
    return best;
  }
  const float sqrtParent = std::sqrt(float(std::max(1, t.visits[size_t(node)])));
  std::int32_t best = Tree::kNone;
  float bestScore = -std::numeric_limits<float>::infinity();
  for (int k = 0; k < t.childCount[size_t(node)]; ++k) {
    const auto c = size_t(t.child(node, k));
    const float q = t.visits[c] > 0 ? t.valueSum[c] / float(t.visits[c]) : 0.0f;
    const float u = config_.cPuct * t.prior[c] * sqrtParent / float(1 + t.visits[c]);
    if (q + u > bestScore) {
      bestScore = q + u;
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
  auto& rng = rng_[size_t(game)];
  if (config_.gumbel) {
    std::extreme_value_distribution<float> gumbel(0.0f, 1.0f);
    auto& score = gumbelScore_[size_t(game)];
    score.assign(size_t(n), 0);
    for (int k = 0; k < n; ++k) score[size_t(k)] = gumbel(rng) + std::log(std::max(clean[size_t(k)], 1e-30f));
    auto& arms = gumbelArms_[size_t(game)];
    arms.resize(size_t(n));
    std::iota(arms.begin(), arms.end(), 0);
    std::sort(arms.begin(), arms.end(), [&](int a, int b) { return score[size_t(a)] > score[size_t(b)]; });
    arms.resize(size_t(std::min(n, config_.gumbelArms)));
    gumbelPhaseVisits_[size_t(game)] = 0;
    return;
  }
  if (config_.dirichletFraction <= 0 || n < 2) return;
  std::gamma_distribution<float> gamma(config_.dirichletAlpha, 1.0f);
  std::vector<float> noise(static_cast<size_t>(n));
  float sum = 0;
  for (float& x : noise) sum += (x = gamma(rng));
  for (int k = 0; k < n; ++k)
    t.prior[size_t(t.child(0, k))] = (1 - config_.dirichletFraction) * clean[size_t(k)] + config_.dirichletFraction * noise[size_t(k)] / std::max(sum, 1e-30f);
}

void BatchedSearch::finishRoot(int game) {
  Tree& t = trees_[size_t(game)];
  const auto& clean = cleanRootPriors_[size_t(game)];
  for (int k = 0; k < t.childCount[0] && size_t(k) < clean.size(); ++k) t.prior[size_t(t.child(0, k))] = clean[size_t(k)];
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
      t.expand(0, legalPriors(*roots_, fresh[i], logits_.data() + i * size_t(a)), step_);
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
        applyVirtualLoss(t, p.path, -1);
        t.expand(p.leaf, legalPriors(*scratch_, p.scratch, logits_.data() + i * size_t(a)), step_);
        backup(t, p.path, values_[i]);
      }
    }
    if (config_.gumbel) {
      // Halve the field when a phase's share of the budget is spent.
      for (int g : games) {
        auto& arms = gumbelArms_[size_t(g)];
        if (arms.size() <= 1) continue;
        const int phases = std::max(1, int(std::ceil(std::log2(double(std::min<size_t>(arms.size() * 2, size_t(config_.gumbelArms)))))));
        const int phaseLength = std::max(int(arms.size()), config_.simulations / phases);
        if (gumbelPhaseVisits_[size_t(g)] < phaseLength) continue;
        gumbelPhaseVisits_[size_t(g)] = 0;
        const Tree& t = trees_[size_t(g)];
        int maxVisits = 0;
        for (int arm : arms) maxVisits = std::max(maxVisits, t.visits[size_t(t.child(0, arm))]);
        auto score = [&](int arm) {
          const auto c = size_t(t.child(0, arm));
          const float q = t.visits[c] > 0 ? t.valueSum[c] / float(t.visits[c]) : 0.0f;
          return gumbelScore_[size_t(g)][size_t(arm)] + (50.0f + float(maxVisits)) * 0.1f * (q + 1.0f) / 2.0f;
        };
        std::sort(arms.begin(), arms.end(), [&](int x, int y) { return score(x) > score(y); });
        arms.resize((arms.size() + 1) / 2);
      }
    }
  }
  for (int g : games)
    if (trees_[size_t(g)].expanded(0)) finishRoot(g);
  std::int64_t recycled = 0;
  for (const Tree& t : trees_) recycled += t.recycledNodes();
  metrics_.recycledNodes = recycled;
  metrics_.inferenceSeconds += inference;
  metrics_.searchSeconds += seconds(start) - inference;
}

RootStats BatchedSearch::rootStats(int game) const {
  const Tree& t = trees_[size_t(game)];
  const int a = roots_->actionCount();
  RootStats r;
  r.visits.assign(size_t(a), 0);
  r.q.assign(size_t(a), 0);
  r.prior.assign(size_t(a), 0);
  r.policy.assign(size_t(a), 0);
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
    auto sigma = [&](float q) { return (50.0f + float(maxVisits)) * 0.1f * (q + 1.0f) / 2.0f; };
    float bestScore = -std::numeric_limits<float>::infinity();
    for (int arm : arms) {
      const auto c = size_t(t.child(0, arm));
      const float s = gumbelScore_[size_t(game)][size_t(arm)] + sigma(r.q[size_t(t.action[c])]);
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
      logit[size_t(t.action[c])] = std::log(std::max(t.prior[c], 1e-30f)) + sigma(q);
      top = std::max(top, logit[size_t(t.action[c])]);
    }
    float sum = 0;
    for (int act = 0; act < a; ++act) sum += (r.policy[size_t(act)] = std::exp(logit[size_t(act)] - top));
    for (float& p : r.policy) p /= sum;
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
  return r;
}

}  // namespace cas::search
