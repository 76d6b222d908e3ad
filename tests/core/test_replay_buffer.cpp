// The replay buffer on its own: the ring, sampling under the game's symmetries, and its
// checkpoint section, whose bytes must stay those of checkpoint format version 1 (checkpoints
// written before the buffer had its own class load unchanged).
#include <QTest>

#include <cstring>
#include <random>

#include "core/env/games.hpp"
#include "core/train/replay_buffer.hpp"

using cas::Reader;
using cas::Writer;
using cas::train::ReplayBuffer;

namespace {

// tic-tac-toe: 2 planes of 9 cells, 9 actions.
constexpr int kObs = 18, kActions = 9;

void addPosition(ReplayBuffer& b, float tag) {
  std::vector<float> obs(kObs, tag), policy(kActions, tag);
  b.add(obs.data(), policy.data(), tag);
}

}  // namespace

class TestReplayBuffer : public QObject {
  Q_OBJECT
 private slots:
  void ringKeepsTheNewestPositions() {
    ReplayBuffer b(3, kObs, kActions);
    QCOMPARE(b.size(), std::int64_t(0));
    for (int i = 1; i <= 5; ++i) addPosition(b, float(i));
    QCOMPARE(b.size(), std::int64_t(3));
    auto game = cas::env::makeBoardGames("tictactoe", 1);
    std::mt19937_64 rng(7);
    std::vector<float> obs(100 * kObs), policy(100 * kActions), value(100);
    b.sample(100, *game, rng, obs.data(), policy.data(), value.data());
    for (float v : value) QVERIFY2(v >= 3 && v <= 5, qPrintable(QString::number(v)));  // 1 and 2 were overwritten
  }

  void sectionIsTheVersionOneLayout() {
    ReplayBuffer b(2, kObs, kActions);
    addPosition(b, 0.5f);
    Writer w;
    b.write(w);
    // i64 size, i64 next slot, then each array at full capacity as a u64 count and the floats.
    Writer expected;
    expected.pod(std::int64_t(1));
    expected.pod(std::int64_t(1));
    std::vector<float> obs(2 * kObs, 0), policy(2 * kActions, 0), value(2, 0);
    std::fill(obs.begin(), obs.begin() + kObs, 0.5f);
    std::fill(policy.begin(), policy.begin() + kActions, 0.5f);
    value[0] = 0.5f;
    expected.floats(obs);
    expected.floats(policy);
    expected.floats(value);
    QVERIFY(w.bytes() == expected.bytes());
    QCOMPARE(b.serialisedBytes(), std::uint64_t(w.bytes().size()));

    Reader r(w.bytes());
    std::string error;
    auto back = b.read(r, &error);
    QVERIFY2(back, error.c_str());
    QVERIFY(r.atEnd());
    QCOMPARE(back->size(), std::int64_t(1));
    Writer again;
    back->write(again);
    QVERIFY(again.bytes() == w.bytes());
  }

  void refusesAnotherCapacityAndInconsistentCounters() {
    ReplayBuffer small(2, kObs, kActions), large(3, kObs, kActions);
    Writer w;
    small.write(w);
    std::string error;
    Reader r(w.bytes());
    QVERIFY(!large.read(r, &error));
    QCOMPARE(error, std::string("the checkpoint is truncated or does not match this project's replay capacity"));

    std::string bytes = w.bytes();
    const std::int64_t tooMany = 3;
    std::memcpy(bytes.data(), &tooMany, sizeof tooMany);  // size beyond the capacity
    Reader bad(bytes);
    QVERIFY(!small.read(bad, &error));
    QCOMPARE(error, std::string("the checkpoint's replay buffer is inconsistent"));
  }
};

QTEST_APPLESS_MAIN(TestReplayBuffer)
#include "test_replay_buffer.moc"
