// The CPU replay store on its own: fresh positions and the commit into the ring, counter-based
// sampling under the game's symmetries, and the ring's checkpoint section, whose bytes must stay
// those of checkpoint format version 1 (checkpoints written before the store had its own class
// load unchanged).
#include <QTest>

#include <algorithm>
#include <cstring>

#include "core/env/games.hpp"
#include "core/train/replay_buffer.hpp"

using cas::Reader;
using cas::Writer;
using cas::search::ReplayRing;
using cas::search::ReplaySetup;
using cas::train::ReplayBuffer;

namespace {

// tic-tac-toe: 2 planes of 9 cells, 9 actions.
constexpr int kObs = 18, kActions = 9;

ReplaySetup setupOf(std::int64_t capacity, std::int64_t fresh = 16) { return {"tictactoe", capacity, fresh, kObs, kActions}; }

void addPosition(ReplayBuffer& b, float tag) {
  std::vector<float> obs(kObs, tag), policy(kActions, tag);
  b.add(obs.data(), policy.data(), tag);
}

std::vector<float> values(const ReplayBuffer& b, std::int64_t batch, std::uint64_t seed) {
  std::vector<float> obs(size_t(batch) * kObs), policy(size_t(batch) * kActions), value(static_cast<size_t>(batch));
  b.draw(batch, seed, obs.data(), policy.data(), value.data());
  return value;
}

}  // namespace

class TestReplayBuffer : public QObject {
  Q_OBJECT
 private slots:
  void freshPositionsJoinTheRingOnCommit() {
    ReplayBuffer b(setupOf(3));
    addPosition(b, 1);
    QCOMPARE(b.fresh(), std::int64_t(1));
    QCOMPARE(b.size(), std::int64_t(0));  // not drawn from before the commit
    b.commit();
    QCOMPARE(b.fresh(), std::int64_t(0));
    QCOMPARE(b.size(), std::int64_t(1));
    for (int i = 2; i <= 5; ++i) addPosition(b, float(i));
    b.commit();
    QCOMPARE(b.size(), std::int64_t(3));
    for (float v : values(b, 100, 7)) QVERIFY2(v >= 3 && v <= 5, qPrintable(QString::number(v)));  // 1 and 2 were overwritten
    // More fresh positions than the ring holds: the newest survive, in order.
    for (int i = 6; i <= 12; ++i) addPosition(b, float(i));
    b.commit();
    const ReplayRing ring = b.ring();
    QCOMPARE(ring.next, std::int64_t((5 + 7) % 3));
    std::vector<float> held(ring.value.begin(), ring.value.end());
    std::sort(held.begin(), held.end());
    QCOMPARE(held, (std::vector<float>{10, 11, 12}));
  }

  void fullFreshPositionsAreRefused() {
    ReplayBuffer b(setupOf(4, 2));
    addPosition(b, 1);
    addPosition(b, 2);
    QVERIFY_THROWS_EXCEPTION(std::length_error, addPosition(b, 3));
  }

  void drawsFollowTheSeedAndTheSymmetries() {
    ReplayBuffer b(setupOf(8));
    for (int i = 0; i < 8; ++i) {
      std::vector<float> obs(kObs, 0), policy(kActions, 0);
      obs[size_t(i)] = 1;  // the stone marks the position and shows the symmetry
      policy[size_t(i)] = 1;
      b.add(obs.data(), policy.data(), float(i));
    }
    b.commit();
    QCOMPARE(values(b, 32, 11), values(b, 32, 11));
    QVERIFY(values(b, 32, 11) != values(b, 32, 12));
    // Sample i: slot replayDraw(seed, 2i) % size under symmetry replayDraw(seed, 2i + 1) % 8.
    auto game = cas::env::makeBoardGames("tictactoe", 1);
    const std::int64_t batch = 16;
    std::vector<float> obs(batch * kObs), policy(batch * kActions), value(batch);
    b.draw(batch, 5, obs.data(), policy.data(), value.data());
    for (std::int64_t i = 0; i < batch; ++i) {
      const auto slot = int(cas::search::replayDraw(5, 2 * std::uint64_t(i)) % 8);
      const auto symmetry = int(cas::search::replayDraw(5, 2 * std::uint64_t(i) + 1) % 8);
      std::vector<float> o(kObs, 0), p(kActions, 0);
      o[size_t(slot)] = 1;
      p[size_t(slot)] = 1;
      game->applySymmetry(symmetry, o.data(), p.data());
      QCOMPARE(value[size_t(i)], float(slot));
      QVERIFY(std::equal(o.begin(), o.end(), obs.begin() + i * kObs));
      QVERIFY(std::equal(p.begin(), p.end(), policy.begin() + i * kActions));
    }
  }

  void sectionIsTheVersionOneLayout() {
    ReplayBuffer b(setupOf(2));
    const std::vector<float> position(kObs, 0.5f), visits(kActions, 1.0f / kActions);  // a policy target sums to 1
    b.add(position.data(), visits.data(), 0.5f);
    b.commit();
    Writer w;
    b.ring().write(w);
    // i64 size, i64 next slot, then each array at full capacity as a u64 count and the floats.
    Writer expected;
    expected.pod(std::int64_t(1));
    expected.pod(std::int64_t(1));
    std::vector<float> obs(2 * kObs, 0), policy(2 * kActions, 0), value(2, 0);
    std::fill(obs.begin(), obs.begin() + kObs, 0.5f);
    std::fill(policy.begin(), policy.begin() + kActions, 1.0f / kActions);
    value[0] = 0.5f;
    expected.floats(obs);
    expected.floats(policy);
    expected.floats(value);
    QVERIFY(w.bytes() == expected.bytes());
    QCOMPARE(ReplayRing::serialisedBytes(b.setup()), std::uint64_t(w.bytes().size()));

    Reader r(w.bytes());
    std::string error;
    auto back = ReplayRing::read(r, b.setup(), &error);
    QVERIFY2(back, error.c_str());
    QVERIFY(r.atEnd());
    QCOMPARE(back->size, std::int64_t(1));
    ReplayBuffer again(setupOf(2));
    again.load(std::move(*back));
    Writer rewritten;
    again.ring().write(rewritten);
    QVERIFY(rewritten.bytes() == w.bytes());
  }

  void refusesAnotherCapacityAndInconsistentCounters() {
    ReplayBuffer small(setupOf(2));
    Writer w;
    small.ring().write(w);
    std::string error;
    Reader r(w.bytes());
    QVERIFY(!ReplayRing::read(r, setupOf(3), &error));
    QCOMPARE(error, std::string("the checkpoint is truncated or does not match this project's replay capacity"));

    std::string bytes = w.bytes();
    const std::int64_t tooMany = 3;
    std::memcpy(bytes.data(), &tooMany, sizeof tooMany);  // size beyond the capacity
    Reader bad(bytes);
    QVERIFY(!ReplayRing::read(bad, setupOf(2), &error));
    QCOMPARE(error, std::string("the checkpoint's replay buffer is inconsistent"));
  }

  // Targets self-play never writes (an outcome outside -1 to 1, a policy target that is no
  // probability distribution) are refused naming the field; all-zero policy targets (a root one
  // simulation expanded) are read.
  void refusesTargetsSelfPlayNeverWrites() {
    auto readBack = [](float value, float policyEntry, std::string* error) {
      ReplayBuffer b(setupOf(2));
      const std::vector<float> obs(kObs, 1.0f), policy(kActions, policyEntry);
      b.add(obs.data(), policy.data(), value);
      b.commit();
      Writer w;
      b.ring().write(w);
      Reader r(w.bytes());
      return ReplayRing::read(r, setupOf(2), error).has_value();
    };
    std::string error;
    QVERIFY2(readBack(-1, 0, &error), error.c_str());
    QVERIFY2(readBack(1, 1.0f / kActions, &error), error.c_str());
    QVERIFY(!readBack(1.5f, 1.0f / kActions, &error));
    QCOMPARE(error, std::string(
                        "the checkpoint's replay buffer holds value target 1.5 at position 0, outside -1 to 1 (a game's outcome); training "
                        "never writes it, so the file was altered after it was written"));
    QVERIFY(!readBack(0, 0.5f, &error));
    QCOMPARE(
        error,
        std::string("the checkpoint's replay buffer holds policy targets at position 0 that are not probabilities (each 0 to 1, summing "
                    "to 1); training never writes them, so the file was altered after it was written"));
  }
};

QTEST_APPLESS_MAIN(TestReplayBuffer)
#include "test_replay_buffer.moc"
