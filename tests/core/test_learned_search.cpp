// The search over a learned model (core/search/learned_search.hpp): a case computed by hand, the
// discount and rewards in the root value, determinism for a seed, k leaves per step in one
// batched model call, Gumbel's sequential halving, and recycling under a tiny node budget with
// every latent state checked against the model's own.
#include <QTest>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <numeric>
#include <set>

#include "core/exec/backend.hpp"
#include "core/exec/initialise.hpp"
#include "core/pdl/learned_model.hpp"
#include "core/search/learned_search.hpp"
#include "core/search/search_math.hpp"

using namespace cas::search;

namespace {

// Floats compared bit for bit (QCOMPARE's float comparison is fuzzy).
#define COMPARE_EXACT(actual, expected)                                                                                                  \
  do {                                                                                                                                   \
    const float a_ = (actual), e_ = (expected);                                                                                          \
    QVERIFY2(                                                                                                                            \
        std::memcmp(&a_, &e_, sizeof a_) == 0,                                                                                           \
        qPrintable(                                                                                                                      \
            QStringLiteral("%1 is %2, expected %3").arg(QLatin1String(#actual)).arg(double(a_), 0, 'g', 9).arg(double(e_), 0, 'g', 9))); \
  } while (false)

LearnedSearchConfig plain(int simulations) {
  LearnedSearchConfig c;
  c.simulations = simulations;
  c.dirichletFraction = 0;
  c.leavesPerStep = 1;
  return c;
}

// A one-float state that names its node: the root is 0, child a of node s is 2s + a + 1 (so node
// 1 is the root's action 0, 2 its action 1, 3 and 4 node 1's). Equal logits; rewards and values
// by node from the tables (0 elsewhere).
LearnedModel pathModel(int actions, std::map<int, float> reward, std::map<int, float> value) {
  LearnedModel m;
  m.observationSize = 1;
  m.stateSize = 1;
  m.actions = actions;
  m.represent = [](const float*, int n, float* states) { std::fill(states, states + n, 0.0f); };
  m.predict = [value, actions](const float* states, int n, float* logits, float* values) {
    std::fill(logits, logits + n * actions, 0.0f);
    for (int i = 0; i < n; ++i) values[i] = value.count(int(states[i])) ? value.at(int(states[i])) : 0.0f;
  };
  m.recurrent = [reward, value, actions](const float* states, const std::int32_t* act, int n, float* next, float* rewards, float* logits,
                                         float* values) {
    std::fill(logits, logits + n * actions, 0.0f);
    for (int i = 0; i < n; ++i) {
      const int node = int(states[i]) * (actions == 1 ? 1 : 2) + act[i] + 1;
      next[i] = float(node);
      rewards[i] = reward.count(node) ? reward.at(node) : 0.0f;
      values[i] = value.count(node) ? value.at(node) : 0.0f;
    }
  };
  return m;
}

std::int32_t childOf(const Tree& t, std::int32_t s, int action) {
  for (int k = 0; k < t.childCount[size_t(s)]; ++k)
    if (t.action[size_t(t.child(s, k))] == action) return t.child(s, k);
  return Tree::kNone;
}

// Every expanded node's visits are its children's plus the times it was a leaf itself (once for
// the root, at least once below it); where recycling collapsed a subtree the node is a leaf again.
void checkVisitSums(const Tree& t, std::int32_t s = 0) {
  if (!t.expanded(s)) return;
  int sum = 0;
  for (int k = 0; k < t.childCount[size_t(s)]; ++k) {
    sum += t.visits[size_t(t.child(s, k))];
    checkVisitSums(t, t.child(s, k));
  }
  if (s == 0)
    QCOMPARE(t.visits[0], 1 + sum);
  else
    QVERIFY2(t.visits[size_t(s)] >= 1 + sum, "a node has fewer visits than its evaluation and its children's");
}

template <typename T>
bool sameBits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

std::vector<float> observations(int games, int size) {
  std::vector<float> obs(size_t(games * size));
  for (size_t i = 0; i < obs.size(); ++i) obs[i] = float(i % 7) * 0.5f - float(i % 3);
  return obs;
}

// The state the model gives node s: the root's representation, then the dynamics down the
// actions of s's path.
std::vector<float> replayedState(const Tree& t, std::int32_t s, const std::vector<float>& root, float* reward) {
  std::vector<int> path;
  for (std::int32_t n = s; n != 0; n = t.parent[size_t(n)]) path.push_back(t.action[size_t(n)]);
  std::vector<float> state = root, next(root.size());
  *reward = 0.0f;
  for (size_t i = path.size(); i-- > 0;) {
    hashedDynamics(state.data(), int(state.size()), path[i], next.data(), reward);
    state = next;
  }
  return state;
}

}  // namespace

class TestLearnedSearch : public QObject {
  Q_OBJECT
 private slots:
  void formulas() {
    COMPARE_EXACT(learnedQ(1.0f, 3.0f, 2, 0.5f), 1.75f);  // 1 + 0.5 * 3/2
    COMPARE_EXACT(minMaxNormalize(2.0f, 1.0f, 3.0f, 0.0f), 0.5f);
    COMPARE_EXACT(minMaxNormalize(3.0f, 1.0f, 1.0f, 0.0f), 0.0f);  // max <= min: 0
    COMPARE_EXACT(minMaxNormalize(5.0f, 1.0f, 3.0f, 0.0f), 1.0f);  // clamped
    // A floor above the span seen divides by the floor: values 0.001 apart stay 0.1 apart.
    COMPARE_EXACT(minMaxNormalize(0.002f, 0.001f, 0.002f, 0.01f), (0.002f - 0.001f) / 0.01f);
    COMPARE_EXACT(minMaxNormalize(2.0f, 1.0f, 3.0f, 0.01f), 0.5f);  // below the span seen: no effect
    COMPARE_EXACT(minMaxNormalize(1.0f, 1.0f, 1.0f, 0.01f), 0.0f);
    COMPARE_EXACT(pendingQ(0.5f, 1, 1), 0.25f);              // one pending visit of value 0
    COMPARE_EXACT(pendingQ(0.75f, 0, 3), 0.0f);
    float state[8], next[8], logits[6], reward = 0, value = 0;
    const float obs[3] = {0.25f, -1.0f, 3.0f};
    hashedRepresentation(obs, 3, 8, state);
    hashedDynamics(state, 8, 2, next, &reward);
    hashedPrediction(next, 8, 6, logits, &value);
    for (float x : next) COMPARE_EXACT(float(int(x * 128.0f)), x * 128.0f);
    COMPARE_EXACT(float(int(reward * 128.0f)), reward * 128.0f);
    COMPARE_EXACT(float(int(value * 128.0f)), value * 128.0f);
    QVERIFY(std::memcmp(state, next, sizeof state) != 0);
  }

  // Two actions, cPuct 2, discount 0.5, equal priors 1/2, root value 0. Rewards r and values v by
  // node: r1 = 4, v1 = 2; r2 = 0, v2 = 1; r3 = 0, v3 = -4; r4 = 2, v4 = 2.
  //   root evaluation: N0 = 1, W0 = 0; bounds take 0 + 0.5*0 = 0.
  //   sim 1: both children unvisited, score 2*0.5*sqrt(1)/1 = 1 each: the first, node 1.
  //     node 1: W 2, N 1, Q 4 + 0.5*2 = 5; G = 5; root W 5, N 2 (Q 1.25). Bounds [0, 5].
  //   sim 2: root: node 1 5/5 + 2*0.5*1.414/2 = 1.707 > node 2's 1.414. Node 1 (N 1): equal, node 3.
  //     node 3: W -4, N 1, Q -2; G = -2; node 1: W 0, N 2, Q 4; G = 4 + 0.5*-2 = 3; root W 8, N 3.
  //     Bounds [-2, 5].
  //   sim 3: root (sqrt 3 = 1.732): node 1 (4+2)/7 + 1.732/3 = 1.434 < node 2's 1.732. Node 2:
  //     W 1, N 1, Q 0.5; G = 0.5; root W 8.5, N 4. (Raw Q would have taken node 1: 4 + 0.577.)
  //   sim 4: root (sqrt 2): node 1 6/7 + 2/3 = 1.524 > node 2 2.5/7 + 1 = 1.357. Node 1 (N 2,
  //     sqrt 1.414): node 3 normalised (-2+2)/7 = 0, + 1.414/2 = 0.707 < node 4's 1.414. Node 4:
  //     W 2, N 1, Q 3; G = 3; node 1: W 3, N 3, Q 4.5; G = 4 + 1.5 = 5.5; root W 14, N 5.
  // So: visits [3, 1], Q [4.5, 0.5], root value 14/5, bounds [-2, 5], choice 0.
  void handComputedTwoActions() {
    LearnedSearchConfig c = plain(4);
    c.cPuct = 2.0f;
    c.discount = 0.5f;
    BatchedLearnedSearch s(pathModel(2, {{1, 4.0f}, {4, 2.0f}}, {{1, 2.0f}, {2, 1.0f}, {3, -4.0f}, {4, 2.0f}}), 1, c, 1);
    const float obs = 0;
    s.search({0}, &obs);
    const Tree& t = s.tree(0);
    const std::int32_t n1 = childOf(t, 0, 0), n2 = childOf(t, 0, 1), n3 = childOf(t, n1, 0), n4 = childOf(t, n1, 1);
    QVERIFY(n1 > 0 && n2 > 0 && n3 > 0 && n4 > 0);
    QCOMPARE(t.visits[0], 5);
    COMPARE_EXACT(t.valueSum[0], 14.0f);
    QCOMPARE(t.visits[size_t(n1)], 3);
    COMPARE_EXACT(t.valueSum[size_t(n1)], 3.0f);
    QCOMPARE(t.visits[size_t(n2)], 1);
    COMPARE_EXACT(t.valueSum[size_t(n2)], 1.0f);
    COMPARE_EXACT(t.valueSum[size_t(n3)], -4.0f);
    COMPARE_EXACT(t.valueSum[size_t(n4)], 2.0f);
    COMPARE_EXACT(s.nodes(0).reward[size_t(n1)], 4.0f);
    COMPARE_EXACT(s.nodes(0).reward[size_t(n4)], 2.0f);
    COMPARE_EXACT(s.nodes(0).latent[size_t(n4)], 4.0f);                             // the state the dynamics gave node 4
    QVERIFY(t.expanded(n1) && t.expanded(n2) && t.expanded(n3) && t.expanded(n4));  // every evaluated node has its children
    COMPARE_EXACT(s.minMax(0).lo, -2.0f);
    COMPARE_EXACT(s.minMax(0).hi, 5.0f);
    const RootStats r = s.rootStats(0);
    QCOMPARE(r.visits, (std::vector<int>{3, 1}));
    QCOMPARE(r.q, (std::vector<float>{4.5f, 0.5f}));
    COMPARE_EXACT(r.value, 14.0f / 5.0f);
    QCOMPARE(r.policy, (std::vector<float>{0.75f, 0.25f}));
    QCOMPARE(r.chosen, 0);
    QCOMPARE(r.pv, (std::vector<int>{0, 0}));
    QCOMPARE(s.metrics().simulations, std::int64_t(4));
    QCOMPARE(s.metrics().evaluations, std::int64_t(4));
    QCOMPARE(s.metrics().recurrentCalls, std::int64_t(4));
    QCOMPARE(s.metrics().modelCalls, std::int64_t(6));  // represent and predict, then 4 steps
  }

  // Virtual loss with k = 2, the model of handComputedTwoActions but v2 = 4. Two steps of two:
  //   step 1, selection 1: both children unvisited, equal: node 1 (root, node 1 pending).
  //     selection 2: root sqrt(1 + 1 pending); node 1 has 0 visits and 1 pending: normalised 0,
  //     2*0.5*1.414/(1+1) = 0.707 < node 2's 1.414: node 2. One call, two rows; backups in order:
  //     node 1 W 2, N 1, Q 5, root W 5; node 2 W 4, N 1, Q 2, root W 7, N 3. Bounds [0, 5].
  //   step 2, selection 1: root sqrt 3: node 1 5/5 + 0.866 = 1.866 > node 2 2/5 + 0.866: node 1,
  //     then node 3 (its children equal).
  //     selection 2: root sqrt(3 + 1) = 2; node 1 (1 visit, 1 pending) counts 1 * 1/(1+1) = 0.5,
  //     + 2*0.5*2/(1+2) = 1.167 < node 2's 0.4 + 1 = 1.4: node 2, then its first child, node 5.
  //     (Counting the pending visit only in the visit term, node 1 would score 1.667 and node 4
  //     would be the second leaf.) Backups: node 3 W -4, Q -2; node 1 W 0, N 2; root W 10. Node 5
  //     W 0; node 2 W 4, N 2; root W 10, N 5.
  // So: visits [2, 2], W [0, 4], Q [4, 1], two calls of two rows, node 5 expanded, node 4 not.
  void virtualLossByHand() {
    LearnedSearchConfig c = plain(4);
    c.cPuct = 2.0f;
    c.discount = 0.5f;
    c.leavesPerStep = 2;
    LearnedModel m = pathModel(2, {{1, 4.0f}, {4, 2.0f}}, {{1, 2.0f}, {2, 4.0f}, {3, -4.0f}, {4, 2.0f}});
    std::vector<std::vector<float>> calls;
    const auto recurrent = m.recurrent;
    m.recurrent = [&](const float* states, const std::int32_t* act, int n, float* next, float* rewards, float* logits, float* values) {
      recurrent(states, act, n, next, rewards, logits, values);
      calls.emplace_back(next, next + n);
    };
    BatchedLearnedSearch s(m, 1, c, 1);
    const float obs = 0;
    s.search({0}, &obs);
    QCOMPARE(calls, (std::vector<std::vector<float>>{{1.0f, 2.0f}, {3.0f, 5.0f}}));  // the leaves' states, by call
    const Tree& t = s.tree(0);
    const std::int32_t n1 = childOf(t, 0, 0), n2 = childOf(t, 0, 1);
    QVERIFY(n1 > 0 && n2 > 0 && t.expanded(childOf(t, n1, 0)) && !t.expanded(childOf(t, n1, 1)) && t.expanded(childOf(t, n2, 0)));
    QCOMPARE(t.visits[0], 5);
    COMPARE_EXACT(t.valueSum[0], 10.0f);
    COMPARE_EXACT(t.valueSum[size_t(n1)], 0.0f);
    COMPARE_EXACT(t.valueSum[size_t(n2)], 4.0f);
    COMPARE_EXACT(s.minMax(0).lo, -2.0f);
    COMPARE_EXACT(s.minMax(0).hi, 5.0f);
    const RootStats r = s.rootStats(0);
    QCOMPARE(r.visits, (std::vector<int>{2, 2}));
    QCOMPARE(r.q, (std::vector<float>{4.0f, 1.0f}));
    QCOMPARE(r.chosen, 0);  // equal visits: the first action
    QCOMPARE(t.virtualLoss, std::vector<std::int16_t>(t.virtualLoss.size(), 0));
  }

  // Every search starts a fresh tree from represent(observation): a second search of the same
  // observation repeats the first (no noise), it does not add to it.
  void everySearchStartsAFreshTree() {
    BatchedLearnedSearch s(hashedLearnedModel(3, 8, 5), 2, plain(40), 1);
    const std::vector<float> obs = observations(2, 3);
    s.search({0, 1}, obs.data());
    const RootStats first = s.rootStats(1);
    const Tree before = s.tree(1);
    s.search({0, 1}, obs.data());
    QCOMPARE(s.tree(1).visits[0], 41);
    QCOMPARE(s.rootStats(1).visits, first.visits);
    QCOMPARE(s.rootStats(1).q, first.q);
    QVERIFY(sameBits(s.tree(1).valueSum, before.valueSum));
    QCOMPARE(s.metrics().modelCalls, std::int64_t(2 * (2 + 40)));  // represent, predict, 40 steps
  }

  // One action: the tree is a chain, simulation i reaches depth i. Every edge rewards 1, every
  // node below the root is worth 0.5, the root 0. With discount 0.5:
  //   sim 1: node 1 W 0.5; G = 1 + 0.5*0.5 = 1.25 at the root.
  //   sim 2: node 2 W 0.5; G = 1.25 -> node 1 W 1.75; G = 1 + 0.625 = 1.625 at the root.
  //   sim 3: node 3 W 0.5; 1.25 -> node 2 W 1.75; 1.625 -> node 1 W 3.375; G = 1.8125.
  //   root W = 0 + 1.25 + 1.625 + 1.8125 = 4.6875 over N 4: 1.171875; Q(node 1) = 1 + 0.5*3.375/3.
  void discountAndRewardEnterTheRootValue() {
    COMPARE_EXACT(LearnedSearchConfig{}.discount, 0.997f);
    const LearnedModel m = pathModel(1, {{1, 1.0f}, {2, 1.0f}, {3, 1.0f}}, {{1, 0.5f}, {2, 0.5f}, {3, 0.5f}});
    LearnedSearchConfig c = plain(3);
    c.discount = 0.5f;
    BatchedLearnedSearch half(m, 1, c, 1);
    const float obs = 0;
    half.search({0}, &obs);
    COMPARE_EXACT(half.tree(0).valueSum[0], 4.6875f);
    COMPARE_EXACT(half.rootStats(0).value, 1.171875f);
    COMPARE_EXACT(half.rootStats(0).q[0], 1.5625f);
    // The default discount, in the search's order of operations: G = r + d * G from the leaf up.
    BatchedLearnedSearch deflt(m, 1, plain(3), 1);
    deflt.search({0}, &obs);
    const float d = 0.997f;
    const float g1 = 1.0f + d * 0.5f, g2 = 1.0f + d * (1.0f + d * 0.5f), g3 = 1.0f + d * (1.0f + d * (1.0f + d * 0.5f));
    COMPARE_EXACT(deflt.tree(0).valueSum[0], ((0.0f + g1) + g2) + g3);
    COMPARE_EXACT(deflt.rootStats(0).value, (((0.0f + g1) + g2) + g3) / 4.0f);
    QVERIFY(deflt.rootStats(0).value != 7.5f / 4.0f);  // undiscounted: (0 + 1.5 + 2.5 + 3.5) / 4
  }

  void deterministicForASeed() {
    const std::vector<float> obs = observations(3, 5);
    auto run = [&](std::uint64_t seed) {
      LearnedSearchConfig c;  // Dirichlet noise at the root
      c.simulations = 64;
      c.leavesPerStep = 4;
      auto s = std::make_unique<BatchedLearnedSearch>(hashedLearnedModel(5, 8, 6), 3, c, seed);
      s->search({0, 1, 2}, obs.data());
      return s;
    };
    const auto a = run(7), b = run(7), other = run(8);
    for (int g = 0; g < 3; ++g) {
      QVERIFY(sameBits(a->tree(g).visits, b->tree(g).visits));
      QVERIFY(sameBits(a->tree(g).valueSum, b->tree(g).valueSum));
      QVERIFY(sameBits(a->tree(g).prior, b->tree(g).prior));
      QVERIFY(sameBits(a->nodes(g).reward, b->nodes(g).reward));
      QVERIFY(sameBits(a->nodes(g).latent, b->nodes(g).latent));
      QVERIFY(sameBits(a->rootStats(g).policy, b->rootStats(g).policy));
    }
    bool differs = false;
    for (int g = 0; g < 3; ++g) differs = differs || a->rootStats(g).visits != other->rootStats(g).visits;
    QVERIFY2(differs, "another seed's root noise should change some visits");
  }

  void kLeavesPerStepInOneBatchedCall() {
    const int games = 3, actions = 16, stateSize = 8;
    const LearnedModel hashed = hashedLearnedModel(4, stateSize, actions);
    LearnedModel counting = hashed;
    std::vector<int> callRows, duplicateRows;
    counting.recurrent = [&](const float* states, const std::int32_t* act, int n, float* next, float* rewards, float* logits,
                             float* values) {
      callRows.push_back(n);
      std::set<std::vector<float>> rows;
      for (int i = 0; i < n; ++i) {
        std::vector<float> key(states + i * stateSize, states + (i + 1) * stateSize);
        key.push_back(float(act[i]));
        if (!rows.insert(key).second) duplicateRows.push_back(i);
      }
      hashed.recurrent(states, act, n, next, rewards, logits, values);
    };
    LearnedSearchConfig c = plain(24);
    c.leavesPerStep = 8;
    BatchedLearnedSearch s(counting, games, c, 1);
    const std::vector<float> obs = observations(games, 4);
    s.search({0, 1, 2}, obs.data());
    QCOMPARE(int(callRows.size()), 3);  // 24 simulations in steps of 8, every game in each call
    QVERIFY(duplicateRows.empty());     // a leaf two selections reach is sent once
    QCOMPARE(s.metrics().simulations, std::int64_t(games * 24));
    QCOMPARE(s.metrics().recurrentCalls, std::int64_t(3));
    QCOMPARE(s.metrics().evaluations, std::int64_t(std::accumulate(callRows.begin(), callRows.end(), 0)));
    QVERIFY2(callRows[0] >= 2 * games, "virtual loss should spread a step's selections over several leaves");
    for (int g = 0; g < games; ++g) {
      QCOMPARE(s.tree(g).visits[0], 1 + 24);
      checkVisitSums(s.tree(g));
      QCOMPARE(s.tree(g).virtualLoss[0], std::int16_t(0));
    }
  }

  void gumbelFollowsSequentialHalving() {
    for (int k : {1, 4})
      for (std::uint64_t seed = 1; seed <= 4; ++seed) {
        LearnedSearchConfig c = plain(16);
        c.gumbel = true;
        c.gumbelArms = 4;
        c.leavesPerStep = k;
        BatchedLearnedSearch s(hashedLearnedModel(3, 8, 8), 1, c, seed);
        const std::vector<float> obs = observations(1, 3);
        s.search({0}, obs.data());
        const RootStats r = s.rootStats(0);
        // The sampled top 4 by g + log prior, as the search draws them (game 0, draw 0).
        RandomStream rs{seed, 0, 0, RandomPurpose::Gumbel};
        std::vector<std::pair<float, int>> sampled;
        for (int a = 0; a < 8; ++a) sampled.push_back({gumbelSample(rs) + searchLog(std::max(r.prior[size_t(a)], 1e-30f)), a});
        std::stable_sort(sampled.begin(), sampled.end(), [](auto x, auto y) { return x.first > y.first; });
        std::set<int> top;
        for (int i = 0; i < 4; ++i) top.insert(sampled[size_t(i)].second);
        // 16 simulations, 4 arms: two phases of 8; 2 visits each, then 4 more for the better two.
        std::vector<int> visits = r.visits;
        std::sort(visits.begin(), visits.end(), std::greater<>());
        QCOMPARE(visits, (std::vector<int>{6, 6, 2, 2, 0, 0, 0, 0}));
        for (int a = 0; a < 8; ++a) QCOMPARE(r.visits[size_t(a)] > 0, top.count(a) == 1);
        QVERIFY(top.count(r.chosen) == 1);
        QCOMPARE(r.visits[size_t(r.chosen)], 6);
        float sum = 0;
        for (float p : r.policy) sum += p;
        QVERIFY(std::abs(sum - 1.0f) < 1e-5f);
      }
  }

  void recyclingKeepsLatentStatesFresh() {
    const int stateSize = 8, actions = 4;
    const LearnedModel hashed = hashedLearnedModel(3, stateSize, actions);
    LearnedModel checking = hashed;
    std::set<std::vector<float>> produced;
    int unknownStates = 0;
    checking.represent = [&](const float* obs, int n, float* states) {
      hashed.represent(obs, n, states);
      for (int i = 0; i < n; ++i) produced.insert(std::vector<float>(states + i * stateSize, states + (i + 1) * stateSize));
    };
    checking.recurrent = [&](const float* states, const std::int32_t* act, int n, float* next, float* rewards, float* logits,
                             float* values) {
      for (int i = 0; i < n; ++i)
        unknownStates += produced.count(std::vector<float>(states + i * stateSize, states + (i + 1) * stateSize)) == 0;
      hashed.recurrent(states, act, n, next, rewards, logits, values);
      for (int i = 0; i < n; ++i) produced.insert(std::vector<float>(next + i * stateSize, next + (i + 1) * stateSize));
    };
    LearnedSearchConfig c = plain(300);
    c.leavesPerStep = 2;
    c.nodeBudget = 25;  // the root and 6 blocks of 4 children
    BatchedLearnedSearch s(checking, 2, c, 1);
    const std::vector<float> obs = observations(2, 3);
    s.search({0, 1}, obs.data());
    QVERIFY2(s.metrics().recycledNodes > 0, "the tiny budget should have forced recycling");
    QCOMPARE(unknownStates, 0);
    for (int g = 0; g < 2; ++g) {
      const Tree& t = s.tree(g);
      QVERIFY(t.nodesInUse() <= 25);
      QCOMPARE(t.visits[0], 301);
      checkVisitSums(t);
      std::vector<float> root(stateSize);
      hashedRepresentation(obs.data() + g * 3, 3, stateSize, root.data());
      int checked = 0;
      std::vector<std::int32_t> stack = {0};  // the expanded nodes, reached from the root
      while (!stack.empty()) {
        const std::int32_t n = stack.back();
        stack.pop_back();
        if (!t.expanded(n)) continue;
        for (int k = 0; k < t.childCount[size_t(n)]; ++k) stack.push_back(t.child(n, k));
        float reward = 0;
        const std::vector<float> expected = replayedState(t, n, root, &reward);
        QVERIFY2(std::memcmp(expected.data(), s.nodes(g).latent.data() + size_t(n) * stateSize, sizeof(float) * stateSize) == 0,
                 "a stale latent state");
        COMPARE_EXACT(s.nodes(g).reward[size_t(n)], reward);
        ++checked;
      }
      QVERIFY(checked > 3);
    }
  }

  // A PDL learned model's programs as the search's model: rows in chunks of the programs' batch
  // (4 here, 10 rows asked), each row what the program computes for it alone, actions one-hot.
  void compiledProgramsAreTheModel() {
    cas::pdl::LearnedModelOptions o;
    o.observationShape = {2, 3};
    o.actionCount = 3;
    o.batch = 4;
    const cas::pdl::LearnedModelResult r = cas::pdl::compileLearnedModel(
        "def represent(obs):\n    return tanh(dense(flatten(obs), units=5))\n"
        "def dynamics(state, action):\n    return tanh(dense(concat(state, action), units=5)), dense(state, units=1)\n"
        "def predict(state):\n    return dense(state, units=action_dim), tanh(dense(state, units=1))\n",
        o);
    QVERIFY(r.model);
    cas::exec::Backend& cpu = *cas::exec::BackendRegistry::instance().find("cpu")->backend;
    auto program = [&](const cas::pdl::CompiledPolicy& p) {
      auto exe = cpu.compile(p.graph);
      for (const cas::ir::Node& n : exe->graph().nodes)
        if (n.op == cas::ir::Op::Input && n.attrs.role == cas::ir::InputRole::Parameter) {
          const std::vector<float> v = cas::exec::initialValues(n, 3);
          exe->setInput(n.attrs.name, v.data(), v.size());
        }
      return exe;
    };
    auto represent = program(r.model->represent), recurrent = program(r.model->recurrent), predict = program(r.model->predict);
    cas::search::LearnedSearchSetup setup;
    setup.games = 10;
    setup.observationSize = 6, setup.stateSize = 5, setup.actions = 3;
    setup.evaluator = {cas::search::LearnedModelEvaluator::Kind::Network, represent.get(), recurrent.get(), predict.get()};
    const cas::search::LearnedModel model = cas::search::makeCpuLearnedModel(setup);

    std::vector<float> states(50), next(50), rewards(10), logits(30), values(10);
    for (size_t i = 0; i < states.size(); ++i) states[i] = std::sin(float(i));
    std::vector<std::int32_t> actions(10);
    for (int i = 0; i < 10; ++i) actions[size_t(i)] = (i * 7) % 3;
    model.recurrent(states.data(), actions.data(), 10, next.data(), rewards.data(), logits.data(), values.data());
    for (int i = 0; i < 10; ++i) {  // row i alone, in the program's first row
      std::vector<float> state(20, 0.0f), hot(12, 0.0f), out(20), reward(4), logit(12);
      std::copy(states.begin() + i * 5, states.begin() + i * 5 + 5, state.begin());
      hot[size_t(actions[size_t(i)])] = 1.0f;
      recurrent->setInput("state", state.data(), state.size());
      recurrent->setInput("action", hot.data(), hot.size());
      recurrent->run();
      recurrent->readOutput("state", out.data(), out.size());
      recurrent->readOutput("reward", reward.data(), reward.size());
      recurrent->readOutput("logits", logit.data(), logit.size());
      for (int j = 0; j < 5; ++j) QCOMPARE(next[size_t(i * 5 + j)], out[size_t(j)]);
      QCOMPARE(rewards[size_t(i)], reward[0]);
      for (int j = 0; j < 3; ++j) QCOMPARE(logits[size_t(i * 3 + j)], logit[size_t(j)]);
    }

    std::string note;
    setup.config.simulations = 16;
    auto search = cas::search::makeLearnedSearch(cpu, setup, "auto", &note);
    QCOMPARE(search->device(), std::string("cpu"));
    QVERIFY2(note.find("the search runs on the CPU") == 0, note.c_str());
    std::vector<float> observations(60);
    for (size_t i = 0; i < observations.size(); ++i) observations[i] = std::cos(float(i));
    std::vector<int> games(10);
    std::iota(games.begin(), games.end(), 0);
    search->search(games, observations.data());
    for (const cas::search::RootStats& stats : search->rootStats(games)) {
      QCOMPARE(std::accumulate(stats.visits.begin(), stats.visits.end(), 0), 16);
      QVERIFY(std::isfinite(stats.value));
    }
  }

  // A program that lacks what the search feeds it is refused before any search runs.
  void aProgramWithoutTheSearchsInputsIsRefused() {
    cas::pdl::LearnedModelOptions o;
    o.observationShape = {2, 3};
    o.actionCount = 3;
    const cas::pdl::LearnedModelResult r = cas::pdl::compileLearnedModel(
        "def represent(obs):\n    return flatten(obs)\n"
        "def dynamics(state, action):\n    return state, dense(state, units=1)\n"
        "def predict(state):\n    return dense(state, units=action_dim), dense(state, units=1)\n",
        o);
    QVERIFY(r.model);
    cas::exec::Backend& cpu = *cas::exec::BackendRegistry::instance().find("cpu")->backend;
    auto represent = cpu.compile(r.model->represent.graph), recurrent = cpu.compile(r.model->recurrent.graph),
         predict = cpu.compile(r.model->predict.graph);
    cas::search::LearnedSearchSetup setup;
    setup.observationSize = 6, setup.stateSize = 7, setup.actions = 3;  // the state has 6 values, not 7
    setup.evaluator = {cas::search::LearnedModelEvaluator::Kind::Network, represent.get(), recurrent.get(), predict.get()};
    try {
      cas::search::makeCpuLearnedModel(setup);
      QFAIL("a state of another width was accepted");
    } catch (const std::invalid_argument& e) {
      QCOMPARE(QString(e.what()), QString("the learned model's represent program's 'state' has shape [1, 6]; the search expects 7 values per row"));
    }
  }
};

QTEST_GUILESS_MAIN(TestLearnedSearch)
#include "test_learned_search.moc"
