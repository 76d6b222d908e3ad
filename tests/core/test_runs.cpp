// Training runs end to end through the CLI and the engine: refused parameter values, SIGKILL and
// resume, a corrupted checkpoint, a live parameter change logged with its iteration, and a
// trained agent judged by the perfect player (eval --mistakes, --opponent perfect).
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>

#include <csignal>

#include "core/engine/engine.hpp"
#include "core/train/alphazero.hpp"

#include "support/cli_runs.hpp"
#include "support/source_dir.hpp"

namespace {

using cas::test::cli;
using cas::test::kCli;
using cas::test::kQuick;
using cas::test::lines;
using cas::test::Result;
const QString kProject = cas::test::kExample;

// The tic-tac-toe project with the quick settings, and a fresh run folder for it.
std::unique_ptr<cas::train::AlphaZeroTrainer> quickTrainer(const QString& folder, std::optional<cas::engine::RunFolder>* run) {
  auto loaded = cas::project::loadProject(kProject.toStdString());
  if (!loaded.project) return nullptr;
  cas::project::Project p = *loaded.project;
  for (const QString& a : kQuick)
    if (a != QLatin1String("--set") && p.parameters.assign(a.toStdString())) return nullptr;
  *run = cas::engine::RunFolder::create(folder.toStdString(), p, nullptr, nullptr);
  if (!*run) return nullptr;
  return std::make_unique<cas::train::AlphaZeroTrainer>(p, cas::exec::BackendRegistry::instance().find("cpu")->backend);
}

QStringList checkpoints(const QString& run) {
  return QDir(run + QStringLiteral("/checkpoints")).entryList({QStringLiteral("iter-*.ckpt")}, QDir::Files, QDir::Name);
}

}  // namespace

class TestRuns : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;

 private slots:
  void refusesBadValues() {
    Result r = cli({QStringLiteral("train"), kProject, QStringLiteral("--set"), QStringLiteral("search.c_puct=abc"), QStringLiteral("--out"), dir_.filePath(QStringLiteral("a"))});
    QCOMPARE(r.status, 2);
    QVERIFY2(r.err.contains(QStringLiteral("search.c_puct: 'abc' is not valid: expected a number in [0, 100]")), qPrintable(r.err));
    r = cli({QStringLiteral("train"), kProject, QStringLiteral("--set"), QStringLiteral("search.simulations=0"), QStringLiteral("--out"), dir_.filePath(QStringLiteral("b"))});
    QCOMPARE(r.status, 2);
    QVERIFY2(r.err.contains(QStringLiteral("search.simulations = 0 is out of range: expected an integer in [1, 100000]")), qPrintable(r.err));
    QVERIFY(!QDir(dir_.filePath(QStringLiteral("b"))).exists());  // nothing was created
  }

  void killedRunResumesFromItsNewestCheckpoint() {
    const QString run = dir_.filePath(QStringLiteral("killed"));
    QProcess p;
    p.start(kCli, QStringList{QStringLiteral("train"), kProject, QStringLiteral("--iterations"), QStringLiteral("1000"), QStringLiteral("--out"), run} + kQuick);
    QVERIFY(p.waitForStarted());
    QTRY_VERIFY_WITH_TIMEOUT(lines(run + QStringLiteral("/metrics.jsonl")).size() >= 3, 120000);
    ::kill(pid_t(p.processId()), SIGKILL);
    p.waitForFinished();
    const QStringList saved = checkpoints(run);
    QVERIFY(!saved.isEmpty());
    const int checkpointed = saved.last().mid(5, 8).toInt();
    QVERIFY(checkpointed >= 2);

    Result r = cli({QStringLiteral("train"), QStringLiteral("--resume"), run, QStringLiteral("--iterations"), QStringLiteral("2")});
    QCOMPARE(r.status, 0);
    QVERIFY2(r.err.contains(QStringLiteral("(iteration %1)").arg(checkpointed)), qPrintable(r.err));
    QVERIFY2(r.out.contains(QStringLiteral("iter %1 |").arg(checkpointed + 2)), qPrintable(r.out));
    // Metrics run on without a gap or a repeat.
    const QStringList m = lines(run + QStringLiteral("/metrics.jsonl"));
    for (int i = 0; i < m.size(); ++i)
      QVERIFY2(m[i].startsWith(QStringLiteral("{\"iteration\": %1,").arg(i + 1)), qPrintable(m[i]));
    QCOMPARE(m.size(), checkpointed + 2);
    // The replay buffer came back with the checkpoint: it keeps growing across the resume (an
    // emptied one would hold only the resumed iterations' positions).
    auto positions = [&](int i) { return QJsonDocument::fromJson(m[i].toUtf8()).object().value(QStringLiteral("positions")).toInt(); };
    for (int i = 1; i < m.size(); ++i) QVERIFY2(positions(i) > positions(i - 1), qPrintable(m[i - 1] + QStringLiteral("\n") + m[i]));
  }

  void corruptedCheckpointFallsBackToThePreviousOne() {
    const QString run = dir_.filePath(QStringLiteral("corrupt"));
    Result r = cli(QStringList{QStringLiteral("train"), kProject, QStringLiteral("--iterations"), QStringLiteral("3"), QStringLiteral("--out"), run} + kQuick);
    QCOMPARE(r.status, 0);
    const QStringList saved = checkpoints(run);
    QCOMPARE(saved.size(), 2);  // the two newest are kept
    QFile newest(run + QStringLiteral("/checkpoints/") + saved.last());
    QVERIFY(newest.open(QIODevice::ReadWrite));
    newest.seek(100);
    char c = 0;
    newest.read(&c, 1);
    newest.seek(100);
    c = char(c ^ 0x5A);
    newest.write(&c, 1);
    newest.close();
    r = cli({QStringLiteral("eval"), run, QStringLiteral("--opponent"), QStringLiteral("random"), QStringLiteral("--games"), QStringLiteral("2")});
    QCOMPARE(r.status, 0);
    QVERIFY2(r.err.contains(QStringLiteral("skipping checkpoint ") + saved.last() + QStringLiteral(": checksum mismatch")), qPrintable(r.err));
    QVERIFY2(r.err.contains(QStringLiteral("(iteration 2)")), qPrintable(r.err));
  }

  // Another trained run as the opponent: its own search, following the match's games.
  void evalAgainstAnotherRun() {
    const QString run = dir_.filePath(QStringLiteral("rival"));
    Result r = cli(QStringList{QStringLiteral("train"), kProject, QStringLiteral("--iterations"), QStringLiteral("1"), QStringLiteral("--out"), run} + kQuick);
    QCOMPARE(r.status, 0);
    r = cli({QStringLiteral("eval"), run, QStringLiteral("--opponent"), QStringLiteral("run:") + run, QStringLiteral("--games"), QStringLiteral("6"),
             QStringLiteral("--json")});
    QCOMPARE(r.status, 0);
    const QJsonObject o = QJsonDocument::fromJson(r.out.toUtf8()).object();
    QCOMPARE(o.value(QStringLiteral("opponent")).toString(), QStringLiteral("run:") + run);
    QCOMPARE(o.value(QStringLiteral("games")).toInt(), 6);
    QCOMPARE(o.value(QStringLiteral("wins")).toInt() + o.value(QStringLiteral("draws")).toInt() + o.value(QStringLiteral("losses")).toInt(), 6);
    // Both sides search deterministically at evaluation settings: the agent against itself gets
    // the same result moving first in every game, and the mirror of it moving second.
    const QJsonObject first = o.value(QStringLiteral("first")).toObject(), second = o.value(QStringLiteral("second")).toObject();
    QCOMPARE(first.value(QStringLiteral("wins")).toInt(), second.value(QStringLiteral("losses")).toInt());
    QCOMPARE(first.value(QStringLiteral("draws")).toInt(), second.value(QStringLiteral("draws")).toInt());
    r = cli({QStringLiteral("eval"), run, QStringLiteral("--opponent"), QStringLiteral("run:") + dir_.filePath(QStringLiteral("absent"))});
    QVERIFY(r.status != 0);
  }

  void evalJudgesMistakesWithThePerfectPlayer() {
    const QString run = dir_.filePath(QStringLiteral("judged"));
    Result r = cli(QStringList{QStringLiteral("train"), kProject, QStringLiteral("--iterations"), QStringLiteral("1"), QStringLiteral("--out"), run} + kQuick);
    QCOMPARE(r.status, 0);
    r = cli({QStringLiteral("eval"), run, QStringLiteral("--mistakes"), QStringLiteral("30"), QStringLiteral("--json")});
    QCOMPARE(r.status, 0);
    const QJsonObject o = QJsonDocument::fromJson(r.out.toUtf8()).object();
    QCOMPARE(o.value(QStringLiteral("positions")).toInt(), 30);
    QCOMPARE(o.value(QStringLiteral("unsolved")).toInt(), 0);  // tic-tac-toe is always solved
    QCOMPARE(o.value(QStringLiteral("judged")).toInt(), 30);
    const int mistakes = o.value(QStringLiteral("mistakes")).toInt();
    QVERIFY(std::abs(o.value(QStringLiteral("mistake_rate")).toDouble() - mistakes / 30.0) < 1e-5);  // printed with 6 digits
    const QJsonArray sources = o.value(QStringLiteral("sources")).toArray();
    QCOMPARE(sources.size(), 2);
    QCOMPARE(sources[0].toObject().value(QStringLiteral("positions")).toInt() + sources[1].toObject().value(QStringLiteral("positions")).toInt(), 30);
    int byDepth = 0;
    for (const QJsonValue& d : o.value(QStringLiteral("depths")).toArray()) byDepth += d.toObject().value(QStringLiteral("mistakes")).toInt();
    QCOMPARE(byDepth, mistakes);
    // Solvers side by side judge the same moves alike (every tic-tac-toe position is solved).
    for (const char* threads : {"1", "3"}) {
      r = cli({QStringLiteral("eval"), run, QStringLiteral("--mistakes"), QStringLiteral("30"), QStringLiteral("--solver-threads"), QLatin1String(threads),
               QStringLiteral("--json")});
      QCOMPARE(r.status, 0);
      QJsonObject again = QJsonDocument::fromJson(r.out.toUtf8()).object();
      QJsonObject first = o;
      again.remove(QStringLiteral("seconds"));
      first.remove(QStringLiteral("seconds"));
      QCOMPARE(again, first);
    }

    r = cli({QStringLiteral("eval"), run, QStringLiteral("--mistakes"), QStringLiteral("4"), QStringLiteral("--opponent"), QStringLiteral("random")});
    QCOMPARE(r.status, 2);
    QVERIFY2(r.err.contains(QStringLiteral("--opponent excludes --mistakes")), qPrintable(r.err));
    r = cli({QStringLiteral("eval"), run, QStringLiteral("--opponent"), QStringLiteral("perfect"), QStringLiteral("--games"), QStringLiteral("2")});
    QCOMPARE(r.status, 0);
    QVERIFY2(r.out.startsWith(QStringLiteral("2 games against perfect: 0 wins")), qPrintable(r.out));

    // Connect Four's openings do not solve in a millisecond: skipped and counted, and said so.
    const QString connect4 = dir_.filePath(QStringLiteral("judged-c4"));
    r = cli(QStringList{QStringLiteral("train"), cas::test::sourcePath(QStringLiteral("projects/connect4-alphazero")), QStringLiteral("--iterations"),
                        QStringLiteral("1"), QStringLiteral("--out"), connect4} + kQuick);
    QCOMPARE(r.status, 0);
    r = cli({QStringLiteral("eval"), connect4, QStringLiteral("--mistakes"), QStringLiteral("6"), QStringLiteral("--solver-seconds"), QStringLiteral("0.001")});
    QCOMPARE(r.status, 0);
    QVERIFY2(r.out.contains(QStringLiteral("positions skipped: the solver could not finish them within 0.001 s each")), qPrintable(r.out));
    // Hardening, fourth probe: the board of a position the perfect player could not solve was
    // printed as one line of literal "\n"; it is printed on its lines.
    r = cli({QStringLiteral("eval"), connect4, QStringLiteral("--opponent"), QStringLiteral("perfect:0.001"), QStringLiteral("--games"), QStringLiteral("2")});
    QCOMPARE(r.status, 2);
    QVERIFY2(r.err.contains(QStringLiteral("\nerror: the perfect player could not solve move ")), qPrintable(r.err));
    QVERIFY2(r.err.contains(QStringLiteral("which skips such positions. The position:\n")) && !r.err.contains(QStringLiteral("\\n")) &&
                 r.err.count(QLatin1Char('\n')) >= 6,
             qPrintable(r.err));
  }

  void liveChangeIsLoggedWithItsIteration() {
    std::optional<cas::engine::RunFolder> run;
    auto trainer = quickTrainer(dir_.filePath(QStringLiteral("live")), &run);
    QVERIFY(trainer);
    std::atomic<int> iterations{0};
    std::vector<cas::engine::ParameterChange> applied;
    cas::engine::EngineEvents events;
    events.iterationFinished = [&](const cas::train::IterationReport&) { ++iterations; };
    events.parameterApplied = [&](const cas::engine::ParameterChange& c) { applied.push_back(c); };
    cas::engine::Engine engine(std::move(trainer), std::move(*run), events, {6, 0});
    QCOMPARE(engine.requestParameter("search.c_puct", "abc").value_or(""), std::string("search.c_puct: 'abc' is not valid: expected a number in [0, 100]"));
    QCOMPARE(engine.requestParameter("search.c_puct", "-1").value_or(""), std::string("search.c_puct = -1 is out of range: expected a number in [0, 100]"));
    QCOMPARE(engine.requestParameter("search.node_budget", "1000").value_or(""),
             std::string("search.node_budget applies only when a run starts; it cannot change during a run"));
    engine.start();
    QTRY_VERIFY_WITH_TIMEOUT(iterations >= 2, 60000);
    QVERIFY(!engine.requestParameter("search.c_puct", "3.5"));
    QVERIFY(!engine.requestParameter("search.simulations", "24"));
    engine.wait();
    QCOMPARE(int(applied.size()), 2);
    const QStringList changes = lines(dir_.filePath(QStringLiteral("live/changes.jsonl")));
    QCOMPARE(changes.size(), 2);
    const qint64 at = applied[0].iteration;
    QVERIFY(at >= 3 && at <= 6);
    QCOMPARE(changes[0], QStringLiteral("{\"iteration\": %1, \"parameter\": \"search.c_puct\", \"from\": \"1.5\", \"to\": \"3.5\"}").arg(at));
    QCOMPARE(changes[1], QStringLiteral("{\"iteration\": %1, \"parameter\": \"search.simulations\", \"from\": \"16\", \"to\": \"24\"}").arg(at));
  }

  // Hardening, fourth probe: each iteration's checkpoint is written once. The final checkpoint was
  // written again after the last iteration's, and on a nearly full disk that second write failed
  // the run though its checkpoint existed. Here every write after the last iteration fails:
  // checkpoints/ is a file by then.
  void finalIterationsCheckpointIsWrittenOnce() {
    std::optional<cas::engine::RunFolder> run;
    const QString folder = dir_.filePath(QStringLiteral("once"));
    auto trainer = quickTrainer(folder, &run);
    QVERIFY(trainer);
    std::atomic<int> iterations{0};
    std::string failure;
    cas::engine::EngineEvents events;
    events.iterationFinished = [&](const cas::train::IterationReport&) {
      if (++iterations < 2) return;
      QDir(folder).rename(QStringLiteral("checkpoints"), QStringLiteral("kept"));
      QFile blocker(folder + QStringLiteral("/checkpoints"));
      if (!blocker.open(QIODevice::WriteOnly)) qWarning("cannot make %s", qPrintable(blocker.fileName()));
    };
    events.failed = [&](const std::string& why) { failure = why; };
    cas::engine::Engine engine(std::move(trainer), std::move(*run), events, {2, 0});
    engine.start();
    engine.wait();
    QCOMPARE(iterations.load(), 2);
    QVERIFY2(failure.empty(), failure.c_str());
    QVERIFY(QFile::exists(folder + QStringLiteral("/kept/iter-00000002.ckpt")));
  }

  void pausedEngineStepsSimulationsAndSnapshotsTrees() {
    std::optional<cas::engine::RunFolder> run;
    auto trainer = quickTrainer(dir_.filePath(QStringLiteral("step")), &run);
    QVERIFY(trainer);
    std::atomic<std::int64_t> stepped{0};
    std::mutex m;
    std::vector<cas::train::TreeSnapshot> snapshots;
    cas::engine::EngineEvents events;
    events.simulationStepped = [&](std::int64_t n) { stepped = n; };
    events.treeSnapshot = [&](const cas::train::TreeSnapshot& s) {
      std::lock_guard lock(m);
      snapshots.push_back(s);
    };
    cas::engine::Engine engine(std::move(trainer), std::move(*run), events, {0, 0});
    engine.pause();  // before start: the engine waits for commands
    engine.start();
    for (int i = 0; i < 5; ++i) engine.step();
    QTRY_COMPARE_WITH_TIMEOUT(stepped.load(), std::int64_t(5), 30000);
    engine.requestSnapshot(0);
    engine.step();
    engine.requestSnapshot(0, 4096, 1 << 20);  // the CPU search has no device layout to add
    QTRY_VERIFY_WITH_TIMEOUT([&] { std::lock_guard lock(m); return snapshots.size() == 2; }(), 30000);
    engine.stop();
    engine.wait();
    // Each step adds one simulation; the root's first visit is its own evaluation.
    QCOMPARE(snapshots[0].nodes.at(0).visits, 1 + 5);
    QCOMPARE(snapshots[1].nodes.at(0).visits, 1 + 6);
    QCOMPARE(snapshots[1].nodes.at(0).parent, -1);
    QVERIFY(snapshots[1].nodes.size() >= 10);  // the root and its 9 children
    QVERIFY(QString::fromStdString(snapshots[1].board).contains(QStringLiteral("1 2 3")));
    QVERIFY(!snapshots[1].deviceSunburst);
    QVERIFY(snapshots[1].deviceProblem.empty());
  }
};

QTEST_GUILESS_MAIN(TestRuns)
#include "test_runs.moc"
