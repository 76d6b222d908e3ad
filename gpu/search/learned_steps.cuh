#pragma once
// One game's share of each kernel of the device search over a learned model, written as the CPU
// reference does it (core/search/learned_search.cpp, BatchedLearnedSearch), in the same order and
// with the same arithmetic (core/search/search_math.hpp: learnedQ, minMaxNormalize, pendingQ,
// normalizedPuctScore, the Philox streams, searchExp/Log, the Gumbel helpers). A kernel runs one
// of these per thread, one thread per game, or per float for the latent states' copies
// (learned_kernels.cu);
// tests/gpu/test_learned_search_port.cpp runs them on the host, game after game, against the CPU
// reference.
//
//   a search() call:   represent -> predict -> expandRoot, selectLeaves -> storeRootState,
//                      gatherState                                           (the root graph)
//                      recurrent -> storeLeafState -> expandLeaves, selectLeaves -> gatherState
//                                   (the step graph, ceil(S / k) times; after the last step the
//                                   selection has nothing to do)
//                      finishRoot
//   then:              rootStatistics                                (as the caller asks)
//
// Memory (device_tree.cuh's trees, slot-major, plus the learned model's per-slot fields of
// core/search/tree_fields.hpp, CAS_LEARNED_NODE_FIELDS, indexed alike):
//
//   reward  [budget * games]               reward(s) of game g at reward[s * games + g]
//   latent  [budget * games * stateSize]   latent(s) of game g at latent[(s * games + g) * stateSize]
//   LearnedSlot [games]                    min-max bounds, simulations left, Gumbel's arms (32)
//   LearnedPending [games * k]             selection j of game g at g * k + j: its leaf, its row
//
//   model rows, row-major (the programs' own buffers when the model is a network):
//     root:       rootStates [games, stateSize]   (represent's "state", predict's input)
//                 rootLogits [games, actions], rootValues [games]          (predict's outputs)
//     recurrent:  stateRows [games * k, stateSize], actionRows [games * k, actions] (one-hot)
//                 nextStates [games * k, stateSize], rewards, logits [.., actions], values
//   Leaf j of game g uses row g * k + row(j): a selection that ends on a leaf an earlier
//   selection of the step is already waiting on shares that one's row (the CPU's shared row).
//
// The step clock (lastUsed) is GameSlot::step, set from LearnedParams::stepBase at the root so
// that it counts as the CPU's clock does (one tick for the roots, one per simulation step).
// Thread-safety: each function touches only its game's tree, slots and rows.
#include <cstdint>

#include "core/search/search_math.hpp"
#include "gpu/search/device_tree.cuh"

namespace cas::gpu::search {

constexpr int kMaxLearnedActions = 32;

// The search configuration as the kernels read it: in device memory, so a change needs no new
// graph.
struct LearnedParams {
  float cPuct, dirichletAlpha, dirichletFraction, discount, minMaxFloor;
  std::int32_t simulations;  // this search() call's (Gumbel's phase lengths, the budget)
  std::int32_t gumbel, gumbelArms;
  std::uint32_t stepBase;  // the CPU clock before this search: the roots' step is stepBase + 1
  std::uint64_t seed;
};

// Per game, beside the tree's GameSlot (which keeps the allocation state, the step clock, the
// evaluation count and `listed`). Gumbel's arms are child indices, best first.
struct LearnedSlot {
  float lo, hi;  // MinMaxStats
  std::int32_t remaining, phaseVisits, armCount;
  std::uint32_t draws;  // root preparations: the random streams' `draw`
  std::int8_t arms[kMaxLearnedActions];
  float score[kMaxLearnedActions];  // Gumbel: g + log prior, by child index
  float clean[kMaxLearnedActions];  // the root's priors without noise, by child index
};

struct LearnedPending {
  std::int32_t leaf;  // kNone: no selection
  std::int32_t row;   // within the game's k rows: j for a new leaf, an earlier j for a shared one
};

struct LearnedRootOut {
  std::int32_t visits[kMaxLearnedActions];
  float q[kMaxLearnedActions], prior[kMaxLearnedActions], policy[kMaxLearnedActions];
  std::int32_t chosen, played, treeNodes, pvLength;
  float value;
  std::int8_t pv[kMaxPv];
};

struct LearnedContext {
  TreeStorage trees;  // spare: unused (no rerooting)
  LearnedSlot* learnedSlots;
  float* reward;
  float* latent;
  LearnedPending* pending;
  const float* rootStates;
  const float* rootLogits;
  const float* rootValues;
  float* stateRows;
  float* actionRows;
  const float* nextStates;
  const float* rewards;
  const float* logits;
  const float* values;
  const LearnedParams* params;
  LearnedRootOut* stats;
  int games, k, stateSize, actions;
};

CAS_HD inline std::uint32_t allLearnedActions(int actions) { return actions >= 32 ? 0xFFFFFFFFu : (1u << actions) - 1u; }

CAS_HD inline float atLeastFloat(float x, float floor) { return x < floor ? floor : x; }  // std::max's order

CAS_HD inline float* latentOf(const LearnedContext& c, GameTree& t, std::int32_t s) { return c.latent + t.at(s) * c.stateSize; }

// --- the learned arithmetic of one tree ---------------------------------------------------------

// The normalised Q of child ch (0 unvisited): BatchedLearnedSearch::normalizedQ.
CAS_HD inline float learnedNormalizedQ(const LearnedContext& c, GameTree& t, const LearnedSlot& slot, std::int32_t ch) {
  if (t.visits(ch) == 0) return 0.0f;
  const float q = cas::search::learnedQ(c.reward[t.at(ch)], t.valueSum(ch), t.visits(ch), c.params->discount);
  return cas::search::minMaxNormalize(q, slot.lo, slot.hi, c.params->minMaxFloor);
}

// Gumbel's completed Q: a visited child's normalised Q, an unvisited one's the root value's.
CAS_HD inline float learnedCompletedQ(const LearnedContext& c, GameTree& t, const LearnedSlot& slot, std::int32_t ch) {
  if (t.visits(ch) > 0) return learnedNormalizedQ(c, t, slot, ch);
  return cas::search::minMaxNormalize(t.valueSum(0) / float(t.visits(0)), slot.lo, slot.hi, c.params->minMaxFloor);
}

CAS_HD inline void sortArmsByScore(std::int8_t* arms, int count, const float* score) {
  for (int i = 1; i < count; ++i)  // stable insertion sort, best first
    for (int j = i; j > 0 && score[arms[j]] > score[arms[j - 1]]; --j) {
      const std::int8_t a = arms[j];
      arms[j] = arms[j - 1];
      arms[j - 1] = a;
    }
}

// --- selection ----------------------------------------------------------------------------------

// PUCT over normalised Q with pending selections as visits of value 0.
CAS_HD inline std::int32_t learnedPuctChild(const LearnedContext& c, GameTree& t, const LearnedSlot& slot, std::int32_t node) {
  const float sqrtParent = cas::search::parentSqrt(t.visits(node) + t.virtualLoss(node));
  std::int32_t best = t.child(node, 0);
  float bestScore = -bitsFloat(0x7F800000u);
  for (int k = 0; k < t.childCount(node); ++k) {
    const std::int32_t ch = t.child(node, k);
    const std::int32_t n = t.visits(ch), pending = t.virtualLoss(ch);
    const float qn = cas::search::pendingQ(learnedNormalizedQ(c, t, slot, ch), n, pending);
    const float score = cas::search::normalizedPuctScore(qn, n + pending, t.prior(ch), sqrtParent, c.params->cPuct);
    if (score > bestScore) {
      bestScore = score;
      best = ch;
    }
  }
  return best;
}

// Sequential halving: the racing arm with the fewest visits, pending ones included (the best
// sampled score among equals).
CAS_HD inline std::int32_t learnedGumbelRootChild(GameTree& t, const LearnedSlot& slot) {
  int best = -1, bestVisits = 0;
  for (int i = 0; i < slot.armCount; ++i) {
    const int arm = slot.arms[i];
    const std::int32_t ch = t.child(0, arm);
    const int v = t.visits(ch) + t.virtualLoss(ch);
    if (best < 0 || v < bestVisits || (v == bestVisits && slot.score[arm] > slot.score[best])) {
      best = arm;
      bestVisits = v;
    }
  }
  return t.child(0, best);
}

CAS_HD inline void setLearnedPending(GameTree& t, std::int32_t leaf, int sign) {
  for (std::int32_t s = leaf;; s = t.parent(s)) {
    t.virtualLoss(s) = std::int16_t(t.virtualLoss(s) + sign);
    if (s == 0) break;
  }
}

// A new row's one-hot action into the leaf; its state, the leaf's parent's, follows in
// gatherStateElement.
CAS_HD inline void writeActionRow(const LearnedContext& c, GameTree& t, std::int64_t row, std::int32_t leaf) {
  float* action = c.actionRows + row * c.actions;
  for (int a = 0; a < c.actions; ++a) action[a] = a == t.action(leaf) ? 1.0f : 0.0f;
}

// The leaf of one simulation: descent from the root, every node on the path stamped with `step`.
CAS_HD inline std::int32_t descend(const LearnedContext& c, GameTree& t, const LearnedSlot& slot, std::uint32_t step) {
  std::int32_t node = 0;
  while (t.expanded(node))
    node = node == 0 && c.params->gumbel && slot.armCount > 0 ? learnedGumbelRootChild(t, slot) : learnedPuctChild(c, t, slot, node);
  for (std::int32_t s = node;; s = t.parent(s)) {
    t.lastUsed(s) = step;
    if (s == 0) break;
  }
  return node;
}

// Up to k selections of game g (BatchedLearnedSearch::selectLeaves), their rows written.
CAS_HD inline void selectLearnedLeaves(const LearnedContext& c, int g) {
  LearnedPending* pending = c.pending + std::int64_t(g) * c.k;
  for (int j = 0; j < c.k; ++j) pending[j].leaf = kNone;
  LearnedSlot& slot = c.learnedSlots[g];
  if (!c.trees.gameSlots[g].listed || slot.remaining <= 0) return;
  GameTree t(c.trees, g);
  const std::uint32_t step = ++t.slot().step;
  for (int j = 0; j < c.k && slot.remaining > 0; ++j) {
    slot.remaining -= 1;
    if (c.params->gumbel) slot.phaseVisits += 1;
    const std::int32_t leaf = descend(c, t, slot, step);
    pending[j].leaf = leaf;
    pending[j].row = j;
    if (t.virtualLoss(leaf) > 0) {
      for (int i = 0; i < j; ++i)
        if (pending[i].leaf == leaf) pending[j].row = pending[i].row;
    } else {
      writeActionRow(c, t, std::int64_t(g) * c.k + j, leaf);
    }
    setLearnedPending(t, leaf, +1);
  }
}

// --- expansion and backup -------------------------------------------------------------------------

// Children for every action with the softmax of `logits` as priors (BatchedLearnedSearch::expand).
CAS_HD inline void expandLearned(const LearnedContext& c, GameTree& t, std::int32_t node, const float* logits, std::uint32_t step) {
  float priors[kMaxLearnedActions];
  const std::uint32_t all = allLearnedActions(c.actions);
  cas::search::legalPriors(logits, all, c.actions, priors);
  t.expand(node, all, priors, step);
}

// From the leaf up: W += G, N += 1, the bounds take the node's Q, then G = reward + discount * G.
CAS_HD inline void learnedBackup(const LearnedContext& c, GameTree& t, LearnedSlot& slot, std::int32_t leaf, float leafValue,
                                 std::uint32_t step) {
  const float discount = c.params->discount;
  float value = leafValue;
  for (std::int32_t s = leaf;; s = t.parent(s)) {
    t.visits(s) += 1;
    t.valueSum(s) = t.valueSum(s) + value;
    t.lastUsed(s) = step;
    const float reward = c.reward[t.at(s)];
    const float q = cas::search::learnedQ(reward, t.valueSum(s), t.visits(s), discount);
    slot.lo = q < slot.lo ? q : slot.lo;
    slot.hi = q > slot.hi ? q : slot.hi;
    value = reward + discount * value;
    if (s == 0) break;
  }
}

// Halves the field when a phase's share of this search's budget is spent, ranking the racing
// arms by g + log prior + sigma(completed normalised Q) (BatchedLearnedSearch::halveGumbelField).
CAS_HD inline void halveLearnedGumbelField(const LearnedContext& c, GameTree& t, LearnedSlot& slot) {
  const LearnedParams& p = *c.params;
  if (slot.armCount <= 1) return;
  if (slot.phaseVisits < cas::search::gumbelPhaseLength(slot.armCount, p.gumbelArms, p.simulations)) return;
  slot.phaseVisits = 0;
  std::int32_t maxVisits = 0;
  for (int i = 0; i < slot.armCount; ++i) {
    const std::int32_t n = t.visits(t.child(0, slot.arms[i]));
    maxVisits = n > maxVisits ? n : maxVisits;
  }
  float score[kMaxLearnedActions];
  for (int i = 0; i < slot.armCount; ++i) {
    const int arm = slot.arms[i];
    score[arm] = slot.score[arm] + cas::search::gumbelSigma(2.0f * learnedCompletedQ(c, t, slot, t.child(0, arm)) - 1.0f, maxVisits);
  }
  sortArmsByScore(slot.arms, slot.armCount, score);
  slot.armCount = (slot.armCount + 1) / 2;
}

// The step's evaluations into game g's tree (BatchedLearnedSearch::evaluateLeaves): a leaf's first
// selection writes its state and reward and expands it; every selection takes its pending mark
// off and backs the value up; then Gumbel's halving.
CAS_HD inline void expandLearnedLeaves(const LearnedContext& c, int g) {
  if (!c.trees.gameSlots[g].listed) return;
  LearnedSlot& slot = c.learnedSlots[g];
  GameTree t(c.trees, g);
  const std::uint32_t step = t.slot().step;
  const LearnedPending* pending = c.pending + std::int64_t(g) * c.k;
  for (int j = 0; j < c.k; ++j) {
    const std::int32_t leaf = pending[j].leaf;
    if (leaf == kNone) continue;
    const std::int64_t row = std::int64_t(g) * c.k + pending[j].row;
    if (pending[j].row == j) {  // its latent state is in the pool already (storeLeafStateElement)
      c.reward[t.at(leaf)] = c.rewards[row];
      expandLearned(c, t, leaf, c.logits + row * c.actions, step);
      t.slot().evaluations += 1;
    }
    setLearnedPending(t, leaf, -1);
    learnedBackup(c, t, slot, leaf, c.values[row], step);
  }
  if (c.params->gumbel) halveLearnedGumbelField(c, t, slot);
}

// --- the root ---------------------------------------------------------------------------------------

// Gumbel's arms: g + log prior sampled per child, sorted, the best gumbelArms racing.
CAS_HD inline void sampleGumbelArms(const LearnedParams& p, LearnedSlot& slot, int g, int n, std::uint32_t draw) {
  cas::search::RandomStream r{p.seed, std::uint32_t(g), draw, cas::search::RandomPurpose::Gumbel};
  for (int k = 0; k < n; ++k) slot.score[k] = cas::search::gumbelSample(r) + cas::search::searchLog(atLeastFloat(slot.clean[k], 1e-30f));
  for (int k = 0; k < n; ++k) slot.arms[k] = std::int8_t(k);
  sortArmsByScore(slot.arms, n, slot.score);
  const int racing = p.gumbelArms > 1 ? p.gumbelArms : 1;
  slot.armCount = n < racing ? n : racing;
}

// Dirichlet noise into the root's priors (kept clean in the slot), or Gumbel's arms
// (BatchedLearnedSearch::prepareRoot).
CAS_HD inline void prepareLearnedRoot(const LearnedContext& c, GameTree& t, LearnedSlot& slot, int g) {
  const LearnedParams& p = *c.params;
  const int n = t.childCount(0);
  for (int k = 0; k < n; ++k) slot.clean[k] = t.prior(t.child(0, k));
  const std::uint32_t draw = slot.draws++;
  slot.armCount = 0;
  slot.phaseVisits = 0;
  if (p.gumbel) {
    sampleGumbelArms(p, slot, g, n, draw);
    return;
  }
  if (p.dirichletFraction <= 0 || n < 2) return;
  cas::search::RandomStream r{p.seed, std::uint32_t(g), draw, cas::search::RandomPurpose::Dirichlet};
  float noise[kMaxLearnedActions];
  float sum = 0;
  for (int k = 0; k < n; ++k) sum = sum + (noise[k] = cas::search::gammaSample(p.dirichletAlpha, r));
  const float f = p.dirichletFraction;
  for (int k = 0; k < n; ++k) t.prior(t.child(0, k)) = (1.0f - f) * slot.clean[k] + f * (noise[k] / atLeastFloat(sum, 1e-30f));
}

// A fresh tree for a listed game from its represent and predict rows (row g), the root backed up
// once, then the root's noise or arms and the call's simulations (BatchedLearnedSearch's
// evaluateRoots and prepareRoot).
CAS_HD inline void expandLearnedRoot(const LearnedContext& c, int g) {
  if (!c.trees.gameSlots[g].listed) return;
  LearnedSlot& slot = c.learnedSlots[g];
  GameTree t(c.trees, g);
  t.clear();
  const std::uint32_t step = c.params->stepBase + 1;
  t.slot().step = step;
  slot.lo = bitsFloat(0x7F800000u);
  slot.hi = -bitsFloat(0x7F800000u);
  c.reward[t.at(0)] = 0.0f;  // the root's latent state: storeRootStateElement
  expandLearned(c, t, 0, c.rootLogits + std::int64_t(g) * c.actions, step);
  learnedBackup(c, t, slot, 0, c.rootValues[g], step);
  prepareLearnedRoot(c, t, slot, g);
  slot.remaining = c.params->simulations;
}

CAS_HD inline void finishLearnedRoot(const LearnedContext& c, int g) {
  if (!c.trees.gameSlots[g].listed) return;
  GameTree t(c.trees, g);
  if (!t.expanded(0)) return;
  for (int k = 0; k < t.childCount(0); ++k) t.prior(t.child(0, k)) = c.learnedSlots[g].clean[k];
}

// --- latent states between the pool and the model's rows ----------------------------------------
// One float each, so that a kernel's threads copy whole rows side by side (coalesced) where a
// thread per game would walk a row of its own. Row r = g * k + j belongs to game g.

// Element i of game g's root state into its root's slot in the pool (after expandLearnedRoot).
CAS_HD inline void storeRootStateElement(const LearnedContext& c, int g, int i) {
  if (!c.trees.gameSlots[g].listed) return;
  GameTree t(c.trees, g);
  latentOf(c, t, 0)[i] = c.rootStates[std::int64_t(g) * c.stateSize + i];
}

// Element i of a row's next state into its leaf's slot, for the row a leaf's first selection
// owns (before expandLearnedLeaves reads the pending selections).
CAS_HD inline void storeLeafStateElement(const LearnedContext& c, std::int64_t row, int i) {
  const LearnedPending& p = c.pending[row];
  if (p.leaf == kNone || p.row != int(row % c.k)) return;
  GameTree t(c.trees, int(row / c.k));
  latentOf(c, t, p.leaf)[i] = c.nextStates[row * c.stateSize + i];
}

// Element i of a new row's state: the leaf's parent's latent state (after selectLearnedLeaves).
CAS_HD inline void gatherStateElement(const LearnedContext& c, std::int64_t row, int i) {
  const LearnedPending& p = c.pending[row];
  if (p.leaf == kNone || p.row != int(row % c.k)) return;
  GameTree t(c.trees, int(row / c.k));
  c.stateRows[row * c.stateSize + i] = latentOf(c, t, t.parent(p.leaf))[i];
}

// --- the hashed test model over the rows ---------------------------------------------------------

// Root row g: represent, then predict (search_math.hpp's hashed model).
CAS_HD inline void hashedRootRow(const float* observations, int observationSize, int g, const LearnedContext& c, float* rootStates,
                                 float* rootLogits, float* rootValues) {
  float* state = rootStates + std::int64_t(g) * c.stateSize;
  cas::search::hashedRepresentation(observations + std::int64_t(g) * observationSize, observationSize, c.stateSize, state);
  cas::search::hashedPrediction(state, c.stateSize, c.actions, rootLogits + std::int64_t(g) * c.actions, rootValues + g);
}

// Recurrent row `row`: dynamics on (state, the one-hot's action; 0 for a row of zeros), then
// prediction on the next state.
CAS_HD inline void hashedRecurrentRow(const LearnedContext& c, std::int64_t row, float* nextStates, float* rewards, float* logits,
                                      float* values) {
  const float* hot = c.actionRows + row * c.actions;
  int action = 0;
  for (int a = c.actions - 1; a >= 0; --a)
    if (hot[a] > 0.5f) action = a;
  float* next = nextStates + row * c.stateSize;
  cas::search::hashedDynamics(c.stateRows + row * c.stateSize, c.stateSize, action, next, rewards + row);
  cas::search::hashedPrediction(next, c.stateSize, c.actions, logits + row * c.actions, values + row);
}

// --- root statistics ----------------------------------------------------------------------------------

// Most visited moves from the root (the first in child order among equals), up to kMaxPv.
CAS_HD inline void learnedPrincipalVariation(GameTree& t, LearnedRootOut& r) {
  for (std::int32_t s = 0; t.expanded(s) && r.pvLength < kMaxPv;) {
    std::int32_t best = kNone;
    for (int k = 0; k < t.childCount(s); ++k) {
      const std::int32_t ch = t.child(s, k);
      if (best == kNone || t.visits(ch) > t.visits(best)) best = ch;
    }
    if (best == kNone || t.visits(best) == 0) break;
    r.pv[r.pvLength++] = std::int8_t(t.action(best));
    s = best;
  }
}

// Gumbel: the racing arm with the best g + log prior + sigma(completed Q) is the choice; the
// improved policy is softmax(log prior + sigma(completed Q)) over every action
// (BatchedLearnedSearch::gumbelPolicy).
CAS_HD inline void learnedGumbelPolicy(const LearnedContext& c, GameTree& t, const LearnedSlot& slot, LearnedRootOut& r) {
  const int count = t.childCount(0);
  std::int32_t maxVisits = 0;
  for (int k = 0; k < count; ++k) maxVisits = t.visits(t.child(0, k)) > maxVisits ? t.visits(t.child(0, k)) : maxVisits;
  const float infinity = bitsFloat(0x7F800000u);
  float bestScore = -infinity;
  for (int i = 0; i < slot.armCount; ++i) {
    const int arm = slot.arms[i];
    const std::int32_t ch = t.child(0, arm);
    const float s = slot.score[arm] + cas::search::gumbelSigma(2.0f * learnedCompletedQ(c, t, slot, ch) - 1.0f, maxVisits);
    if (s > bestScore) {
      bestScore = s;
      r.chosen = t.action(ch);
    }
  }
  float logit[kMaxLearnedActions];
  for (int a = 0; a < c.actions; ++a) logit[a] = -infinity;
  float top = -infinity;
  for (int k = 0; k < count; ++k) {
    const std::int32_t ch = t.child(0, k);
    const int act = t.action(ch);
    logit[act] = cas::search::searchLog(atLeastFloat(t.prior(ch), 1e-30f)) +
                 cas::search::gumbelSigma(2.0f * learnedCompletedQ(c, t, slot, ch) - 1.0f, maxVisits);
    top = top < logit[act] ? logit[act] : top;
  }
  float sum = 0;
  for (int a = 0; a < c.actions; ++a) sum = sum + (r.policy[a] = cas::search::searchExp(logit[a] - top));
  for (int a = 0; a < c.actions; ++a) r.policy[a] = r.policy[a] / sum;
}

// Game g's LearnedRootOut (BatchedLearnedSearch::statsOf).
CAS_HD inline void learnedRootStatistics(const LearnedContext& c, int g) {
  const LearnedSlot& slot = c.learnedSlots[g];
  GameTree t(c.trees, g);
  LearnedRootOut& r = c.stats[g];
  for (int a = 0; a < c.actions; ++a) {
    r.visits[a] = 0;
    r.q[a] = r.prior[a] = r.policy[a] = 0.0f;
  }
  r.chosen = r.played = -1;
  r.value = 0.0f;
  r.treeNodes = t.slot().inUse;
  r.pvLength = 0;
  if (!t.expanded(0)) return;
  std::int32_t total = 0, bestVisits = -1;
  for (int k = 0; k < t.childCount(0); ++k) {
    const std::int32_t ch = t.child(0, k);
    const int act = t.action(ch);
    const std::int32_t n = t.visits(ch);
    r.visits[act] = n;
    r.q[act] = n > 0 ? cas::search::learnedQ(c.reward[t.at(ch)], t.valueSum(ch), n, c.params->discount) : 0.0f;
    r.prior[act] = t.prior(ch);
    total += n;
    if (n > bestVisits) {
      bestVisits = n;
      r.chosen = act;
    }
  }
  r.value = t.valueSum(0) / float(t.visits(0));
  if (c.params->gumbel && slot.armCount > 0)
    learnedGumbelPolicy(c, t, slot, r);
  else if (total > 0)
    for (int a = 0; a < c.actions; ++a) r.policy[a] = float(r.visits[a]) / float(total);
  learnedPrincipalVariation(t, r);
  r.played = r.chosen;
}

}  // namespace cas::gpu::search
