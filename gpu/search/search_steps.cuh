#pragma once
// One game's share of each device-search kernel, written as the CPU reference does it
// (core/search/mcts.cpp, BatchedSearch), in the same order and with the same arithmetic
// (core/search/search_math.hpp). A kernel runs one of these per thread, one thread per game
// (search_kernels.cu); tests/gpu/test_search_port.cpp runs them on the host, game after game,
// against the CPU search.
//
//   a search() call:   encodeRoot -> evaluator -> expandRoot -> selectLeaves   (the root graph)
//                      evaluator -> expandLeaves, selectLeaves  (the step graph, S/k times;
//                                   after the last step the selection has nothing to do)
//                      finishRoot
//   then:              rootStatistics, playMove, resetGame            (as the caller asks)
//
// Leaf j of game g is row g*k + j of the evaluator's input and outputs.
// Thread-safety: each function touches only its game's tree, slot, root and rows.
#include <cstdint>

#include "core/search/search_math.hpp"
#include "gpu/search/device_games.cuh"
#include "gpu/search/device_tree.cuh"

namespace cas::gpu::search {

using cas::search::RandomPurpose;
using cas::search::RandomStream;

// The search configuration (core/search's SearchConfig) as the kernels read it: in device
// memory, so that a change needs no new graph.
struct DeviceSearchParams {
  float cPuct, dirichletAlpha, dirichletFraction, virtualLoss, temperature;
  std::int32_t simulations;        // SearchConfig::simulations (Gumbel's phase lengths)
  std::int32_t callSimulations;    // this search() call's
  std::int32_t gumbel, gumbelArms, subtreeReuse, temperatureMoves;
  std::uint64_t seed;
};

struct Pending {
  std::int32_t leaf;     // kNone: no leaf awaits evaluation in this row
  std::uint32_t legal;   // the leaf position's legal moves
};

struct RootOut {
  std::int32_t visits[kMaxActions];
  float q[kMaxActions], prior[kMaxActions], policy[kMaxActions];
  std::int32_t chosen, played, treeNodes, pvLength;
  float value;
  std::int8_t pv[kMaxPv];
};

template <class Game>
struct SearchContext {
  TreeStorage trees;
  typename Game::State* roots;
  Pending* pending;      // [games * k]
  float* obs;            // [games * k, Game::kObsSize]: the evaluator's input rows
  const float* logits;   // [games * k, actions]
  const float* values;   // [games * k]
  const DeviceSearchParams* params;
  RootOut* stats;        // [games]
  int games, k;
};

// Samples taken by instrumented kernels (search_kernels.cu); on the host nothing is counted.
struct NoProbe {
  CAS_HD void sample() {}
};

// True when any lane of the warp still has `b` (on the host: b).
CAS_HD inline bool anyLane(bool b) {
#if defined(__CUDA_ARCH__)
  return __any_sync(__activemask(), b);
#else
  return b;
#endif
}

CAS_HD inline float atLeast(float x, float floor) { return x < floor ? floor : x; }  // std::max's order

// --- selection ----------------------------------------------------------------------------------

template <class Game>
CAS_HD std::int32_t gumbelRootChild(GameTree& t, int armCount, bool masked) {
  GameSlot& slot = t.slot();
  int best = slot.arms[0];
  for (int i = 1; i < (masked ? Game::kActions : armCount); ++i) {
    const bool valid = i < armCount;
    const int arm = valid ? slot.arms[i] : best;
    const std::int32_t n = t.visits(t.child(0, arm)), nb = t.visits(t.child(0, best));
    const bool take = valid && (n < nb || (n == nb && slot.score[arm] > slot.score[best]));
    best = take ? arm : best;
  }
  return t.child(0, best);
}

// PUCT over a node's children. Masked: a fixed trip count over every action, invalid children
// scored but never taken, so the lanes of a warp stay together.
template <class Game, bool Masked>
CAS_HD std::int32_t puctChild(GameTree& t, std::int32_t node, float cPuct) {
  const float sqrtParent = cas::search::parentSqrt(t.visits(node));
  const std::int32_t first = t.firstChild(node);
  const int count = t.childCount(node);
  std::int32_t best = first;
  float bestScore = -bitsFloat(0x7F800000u);
  for (int k = 0; k < (Masked ? Game::kActions : count); ++k) {
    const bool valid = k < count;
    const std::int32_t c = valid ? first + k : first;
    const float score = cas::search::puctScore(t.valueSum(c), t.visits(c), t.prior(c), sqrtParent, cPuct);
    const bool take = valid && score > bestScore;
    best = take ? c : best;
    bestScore = take ? score : bestScore;
  }
  return best;
}

CAS_HD inline void applyVirtualLoss(GameTree& t, std::int32_t leaf, int sign, float virtualLoss) {
  for (std::int32_t s = leaf;; s = t.parent(s)) {
    t.visits(s) += sign;
    t.valueSum(s) = t.valueSum(s) - float(sign) * virtualLoss;
    t.virtualLoss(s) = std::int16_t(t.virtualLoss(s) + sign);
    if (s == 0) break;
  }
}

// The leaf's value for the player to move there, backed up through every node to the root.
CAS_HD inline void backup(GameTree& t, std::int32_t leaf, float v, std::uint32_t step) {
  for (std::int32_t s = leaf;; s = t.parent(s)) {
    t.visits(s) += 1;
    t.valueSum(s) = t.valueSum(s) - v;
    t.lastUsed(s) = step;
    v = -v;
    if (s == 0) break;
  }
}

// k leaves of game g: selection under virtual loss, the leaf's position played from the root,
// terminal leaves backed up at once, the others' observations written into their rows.
template <class Game, bool Masked, class Probe>
CAS_HD void selectLeaves(const SearchContext<Game>& c, int g, Probe& probe) {
  GameSlot& slot = c.trees.gameSlots[g];
  Pending* pending = c.pending + std::int64_t(g) * c.k;
  for (int j = 0; j < c.k; ++j) pending[j].leaf = kNone;
  if (slot.remaining <= 0) return;
  const DeviceSearchParams& p = *c.params;
  GameTree t(c.trees, g);
  const std::uint32_t step = ++slot.step;
  for (int j = 0; j < c.k && slot.remaining > 0; ++j) {
    slot.remaining -= 1;
    if (p.gumbel) slot.phaseVisits += 1;
    typename Game::State state = c.roots[g];
    t.lastUsed(0) = step;
    // The root's level: every lane of the warp is here.
    probe.sample();
    std::int32_t node = p.gumbel && slot.armCount > 0 ? gumbelRootChild<Game>(t, slot.armCount, Masked) : puctChild<Game, Masked>(t, 0, p.cPuct);
    Game::play(state, t.action(node));
    t.lastUsed(node) = step;
    if (Masked) {
      // Lanes whose leaf is found keep walking on the root's children (valid memory) and keep
      // what they had: the warp leaves the loop together.
      bool active = t.expanded(node);
      while (anyLane(active)) {
        probe.sample();
        const std::int32_t next = puctChild<Game, true>(t, active ? node : 0, p.cPuct);
        node = active ? next : node;
        typename Game::State played = state;
        Game::play(played, t.action(next));
        state = active ? played : state;
        if (active) t.lastUsed(node) = step;
        active = active && t.expanded(node);
      }
    } else {
      while (t.expanded(node)) {
        probe.sample();
        node = puctChild<Game, false>(t, node, p.cPuct);
        Game::play(state, t.action(node));
        t.lastUsed(node) = step;
      }
    }
    if (Game::terminal(state)) {
      backup(t, node, Game::terminalValue(state), step);
      continue;
    }
    applyVirtualLoss(t, node, +1, p.virtualLoss);
    pending[j].leaf = node;
    pending[j].legal = Game::legalMask(state);
    Game::encode(state, c.obs + (std::int64_t(g) * c.k + j) * Game::kObsSize);
  }
}

// --- expansion and backup -------------------------------------------------------------------------

template <class Game>
CAS_HD void halveGumbelField(GameTree& t, const DeviceSearchParams& p) {
  GameSlot& slot = t.slot();
  if (slot.armCount <= 1 || !t.expanded(0)) return;
  if (slot.phaseVisits < cas::search::gumbelPhaseLength(slot.armCount, p.gumbelArms, p.simulations)) return;
  slot.phaseVisits = 0;
  std::int32_t maxVisits = 0;
  for (int i = 0; i < slot.armCount; ++i) {
    const std::int32_t n = t.visits(t.child(0, slot.arms[i]));
    maxVisits = n > maxVisits ? n : maxVisits;
  }
  float score[kMaxActions];
  for (int i = 0; i < slot.armCount; ++i) {
    const std::int32_t ch = t.child(0, slot.arms[i]);
    const float q = t.visits(ch) > 0 ? t.valueSum(ch) / float(t.visits(ch)) : 0.0f;
    score[slot.arms[i]] = slot.score[slot.arms[i]] + cas::search::gumbelSigma(q, maxVisits);
  }
  for (int i = 1; i < slot.armCount; ++i)  // stable insertion sort, best first
    for (int j = i; j > 0 && score[slot.arms[j]] > score[slot.arms[j - 1]]; --j) {
      const std::int8_t a = slot.arms[j];
      slot.arms[j] = slot.arms[j - 1];
      slot.arms[j - 1] = a;
    }
  slot.armCount = (slot.armCount + 1) / 2;
}

template <class Game, class Probe>
CAS_HD void expandLeaves(const SearchContext<Game>& c, int g, Probe& probe) {
  GameSlot& slot = c.trees.gameSlots[g];
  if (!slot.listed) return;
  const DeviceSearchParams& p = *c.params;
  GameTree t(c.trees, g);
  const std::uint32_t step = slot.step;
  for (int j = 0; j < c.k; ++j) {
    const std::int64_t row = std::int64_t(g) * c.k + j;
    const Pending leaf = c.pending[row];
    if (leaf.leaf == kNone) continue;
    probe.sample();
    float priors[kMaxActions];
    cas::search::legalPriors(c.logits + row * Game::kActions, leaf.legal, Game::kActions, priors);
    t.expand(leaf.leaf, leaf.legal, priors, step);
    // The virtual loss comes off and the value goes up in one walk: per node the same two
    // float operations, in the same order, as the CPU's two walks.
    float v = c.values[row];
    for (std::int32_t s = leaf.leaf;; s = t.parent(s)) {
      t.valueSum(s) = t.valueSum(s) - float(-1) * p.virtualLoss;
      t.virtualLoss(s) = std::int16_t(t.virtualLoss(s) - 1);
      t.valueSum(s) = t.valueSum(s) - v;
      t.lastUsed(s) = step;
      v = -v;
      if (s == 0) break;
    }
    slot.evaluations += 1;
  }
  if (p.gumbel) halveGumbelField<Game>(t, p);
}

// --- the root ---------------------------------------------------------------------------------------

template <class Game>
CAS_HD void encodeRoot(const SearchContext<Game>& c, int g) {
  GameSlot& slot = c.trees.gameSlots[g];
  GameTree t(c.trees, g);
  slot.rootPending = slot.listed && !t.expanded(0) && !Game::terminal(c.roots[g]);
  if (slot.rootPending) Game::encode(c.roots[g], c.obs + std::int64_t(g) * c.k * Game::kObsSize);
}

// Dirichlet noise into the root's priors (kept clean in the slot), or Gumbel's arm sampling.
template <class Game>
CAS_HD void prepareRoot(GameTree& t, int g, const DeviceSearchParams& p) {
  GameSlot& slot = t.slot();
  const int n = t.childCount(0);
  for (int k = 0; k < n; ++k) slot.clean[k] = t.prior(t.child(0, k));
  const std::uint32_t draw = slot.draws++;
  if (p.gumbel) {
    RandomStream r{p.seed, std::uint32_t(g), draw, RandomPurpose::Gumbel};
    for (int k = 0; k < n; ++k) slot.score[k] = cas::search::gumbelSample(r) + cas::search::searchLog(atLeast(slot.clean[k], 1e-30f));
    for (int k = 0; k < n; ++k) {
      slot.arms[k] = std::int8_t(k);
      for (int j = k; j > 0 && slot.score[slot.arms[j]] > slot.score[slot.arms[j - 1]]; --j) {
        const std::int8_t a = slot.arms[j];
        slot.arms[j] = slot.arms[j - 1];
        slot.arms[j - 1] = a;
      }
    }
    slot.armCount = n < p.gumbelArms ? n : p.gumbelArms;
    slot.phaseVisits = 0;
    return;
  }
  slot.armCount = 0;
  if (p.dirichletFraction <= 0 || n < 2) return;
  RandomStream r{p.seed, std::uint32_t(g), draw, RandomPurpose::Dirichlet};
  float noise[kMaxActions];
  float sum = 0;
  for (int k = 0; k < n; ++k) sum = sum + (noise[k] = cas::search::gammaSample(p.dirichletAlpha, r));
  const float f = p.dirichletFraction;
  for (int k = 0; k < n; ++k) t.prior(t.child(0, k)) = (1.0f - f) * slot.clean[k] + f * (noise[k] / atLeast(sum, 1e-30f));
}

template <class Game>
CAS_HD void expandRoot(const SearchContext<Game>& c, int g) {
  GameSlot& slot = c.trees.gameSlots[g];
  const DeviceSearchParams& p = *c.params;
  GameTree t(c.trees, g);
  if (slot.rootPending) {
    const std::uint32_t step = ++slot.step;
    const std::int64_t row = std::int64_t(g) * c.k;
    float priors[kMaxActions];
    const std::uint32_t legal = Game::legalMask(c.roots[g]);
    cas::search::legalPriors(c.logits + row * Game::kActions, legal, Game::kActions, priors);
    t.expand(0, legal, priors, step);
    backup(t, 0, c.values[row], step);
    slot.evaluations += 1;
    slot.rootPending = 0;
  }
  slot.remaining = 0;
  if (slot.listed && t.expanded(0)) {
    prepareRoot<Game>(t, g, p);
    slot.remaining = p.callSimulations;
  }
}

template <class Game>
CAS_HD void finishRoot(const SearchContext<Game>& c, int g) {
  GameSlot& slot = c.trees.gameSlots[g];
  GameTree t(c.trees, g);
  if (!slot.listed || !t.expanded(0)) return;
  for (int k = 0; k < t.childCount(0); ++k) t.prior(t.child(0, k)) = slot.clean[k];
}

// core: BatchedSearch::statsOf.
template <class Game>
CAS_HD void rootStatistics(const SearchContext<Game>& c, int g) {
  GameSlot& slot = c.trees.gameSlots[g];
  const DeviceSearchParams& p = *c.params;
  GameTree t(c.trees, g);
  RootOut& r = c.stats[g];
  constexpr int A = Game::kActions;
  for (int a = 0; a < A; ++a) {
    r.visits[a] = 0;
    r.q[a] = r.prior[a] = r.policy[a] = 0.0f;
  }
  r.chosen = r.played = -1;
  r.value = 0.0f;
  r.treeNodes = slot.inUse;
  r.pvLength = 0;
  if (!t.expanded(0)) return;
  std::int32_t total = 0, bestVisits = -1;
  const int count = t.childCount(0);
  for (int k = 0; k < count; ++k) {
    const std::int32_t ch = t.child(0, k);
    const int act = t.action(ch);
    const std::int32_t n = t.visits(ch);
    r.visits[act] = n;
    r.q[act] = n > 0 ? t.valueSum(ch) / float(n) : 0.0f;
    r.prior[act] = t.prior(ch);
    total += n;
    if (n > bestVisits) {
      bestVisits = n;
      r.chosen = act;
    }
  }
  r.value = t.visits(0) > 0 ? -t.valueSum(0) / float(t.visits(0)) : 0.0f;
  if (p.gumbel && slot.armCount > 0) {
    std::int32_t maxVisits = 0;
    for (int k = 0; k < count; ++k) maxVisits = t.visits(t.child(0, k)) > maxVisits ? t.visits(t.child(0, k)) : maxVisits;
    float bestScore = -bitsFloat(0x7F800000u);
    for (int i = 0; i < slot.armCount; ++i) {
      const int arm = slot.arms[i];
      const int act = t.action(t.child(0, arm));
      const float s = slot.score[arm] + cas::search::gumbelSigma(r.q[act], maxVisits);
      if (s > bestScore) {
        bestScore = s;
        r.chosen = act;
      }
    }
    float logit[A];
    float top = -bitsFloat(0x7F800000u);
    for (int a = 0; a < A; ++a) logit[a] = -bitsFloat(0x7F800000u);
    for (int k = 0; k < count; ++k) {
      const std::int32_t ch = t.child(0, k);
      const int act = t.action(ch);
      const float q = t.visits(ch) > 0 ? r.q[act] : r.value;
      logit[act] = cas::search::searchLog(atLeast(t.prior(ch), 1e-30f)) + cas::search::gumbelSigma(q, maxVisits);
      top = top < logit[act] ? logit[act] : top;
    }
    float sum = 0;
    for (int a = 0; a < A; ++a) sum = sum + (r.policy[a] = cas::search::searchExp(logit[a] - top));
    for (int a = 0; a < A; ++a) r.policy[a] = r.policy[a] / sum;
  } else if (total > 0) {
    for (int a = 0; a < A; ++a) r.policy[a] = float(r.visits[a]) / float(total);
  }
  for (std::int32_t s = 0; t.expanded(s) && r.pvLength < kMaxPv;) {  // principal variation
    std::int32_t best = kNone;
    for (int k = 0; k < t.childCount(s); ++k) {
      const std::int32_t ch = t.child(s, k);
      if (best == kNone || t.visits(ch) > t.visits(best)) best = ch;
    }
    if (best == kNone || t.visits(best) == 0) break;
    r.pv[r.pvLength++] = std::int8_t(t.action(best));
    s = best;
  }
  r.played = r.chosen;
  if (!p.gumbel && p.temperature > 0 && Game::moveCount(c.roots[g]) < p.temperatureMoves && bestVisits > 0) {
    // visits^(1/T), scaled by the most visited move's so that no weight overflows.
    RandomStream rs{p.seed, std::uint32_t(g), slot.draws, RandomPurpose::Temperature};
    const float top = cas::search::searchLog(float(bestVisits));
    float weight[A];
    float sum = 0;
    for (int a = 0; a < A; ++a) {
      const std::int32_t v = r.visits[a];
      weight[a] = 0.0f;
      if (v > 0) weight[a] = p.temperature == 1.0f ? float(v) : cas::search::searchExp((cas::search::searchLog(float(v)) - top) / p.temperature);
      sum = sum + weight[a];
    }
    const float u = rs.uniform() * sum;
    float cumulative = 0;
    for (int a = 0; a < A; ++a) {
      if (weight[a] <= 0) continue;
      cumulative = cumulative + weight[a];
      r.played = a;
      if (u < cumulative) break;
    }
  }
}

// --- moves ----------------------------------------------------------------------------------------

template <class Game>
CAS_HD void playMove(const SearchContext<Game>& c, int g, int action) {
  GameTree t(c.trees, g);
  std::int32_t next = kNone;
  if (c.params->subtreeReuse && t.expanded(0))
    for (int k = 0; k < t.childCount(0); ++k)
      if (t.action(t.child(0, k)) == action) next = t.child(0, k);
  Game::play(c.roots[g], action);
  if (next != kNone && !Game::terminal(c.roots[g])) t.reroot(next);
  else t.clear();
  t.slot().armCount = 0;
}

template <class Game>
CAS_HD void resetGame(const SearchContext<Game>& c, int g) {
  c.roots[g] = Game::start();
  GameTree(c.trees, g).clear();
}

}  // namespace cas::gpu::search
