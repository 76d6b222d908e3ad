// Run folders under concurrent use, interrupted writes and later edits: the lock, resume that
// repairs the logs (or refuses, touching nothing), restart, runs that keep their policy, the
// iteration before the first training step, configurations too large for memory, and the smaller
// refusals of issue 13 (items 4-7, 9, 10 and 15); and issue 44's: forged checkpoint counters,
// logs rewritten by other tools, links out of the run, a half-made folder, --use-project on
// resume, bounded input to play, JSON without NaN, a finished run, a policy that computes NaN.
// Each asserts the exact message and what the folder holds afterwards.
#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonArray>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

#include <csignal>
#include <cstring>
#include <limits>
#include <unistd.h>

#include "core/engine/run_folder.hpp"
#include "core/engine/run_lock.hpp"
#include "core/engine/trained_run.hpp"

#include "support/cli_runs.hpp"

namespace {

using cas::test::cli;
using cas::test::kCli;
using cas::test::kQuick;
using cas::test::lines;
using cas::test::Result;
using cas::test::kExample;

QByteArray bytes(const QString& path) {
  QFile f(path);
  return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

void append(const QString& path, const QByteArray& text) {
  QFile f(path);
  QVERIFY(f.open(QIODevice::Append));
  f.write(text);
}

// Every metrics line is a JSON object, and they record iterations 1..count in order.
void verifyMetrics(const QString& run, int count) {
  const QByteArray text = bytes(run + QStringLiteral("/metrics.jsonl"));
  QVERIFY2(text.endsWith('\n'), text.right(80).constData());
  const QStringList m = lines(run + QStringLiteral("/metrics.jsonl"));
  QCOMPARE(m.size(), count);
  for (int i = 0; i < m.size(); ++i) {
    const QJsonDocument doc = QJsonDocument::fromJson(m[i].toUtf8());
    QVERIFY2(doc.isObject(), qPrintable(m[i]));
    QCOMPARE(doc.object().value(QLatin1String("iteration")).toInt(), i + 1);
  }
}

// Every file of a run folder but its lock, with its contents.
QMap<QString, QByteArray> contents(const QString& run) {
  QMap<QString, QByteArray> out;
  for (const QString& sub : {QString(), QStringLiteral("checkpoints/")})
    for (const QString& name : QDir(run + QLatin1Char('/') + sub).entryList(QDir::Files))
      if (name != QLatin1String("lock")) out[sub + name] = bytes(run + QLatin1Char('/') + sub + name);
  return out;
}

// A checkpoint file for `payload`: the payload, its checksum and the trailer, as the run writes it.
QByteArray withChecksum(const QByteArray& payload) {
  const std::uint64_t sum = cas::engine::fnv1a64({payload.constData(), size_t(payload.size())});
  return payload + QByteArray(reinterpret_cast<const char*>(&sum), sizeof sum) + QByteArray("CASCKPT1");
}

// `good`'s payload (a checkpoint file less its 16-byte trailer) with its iteration replaced.
QByteArray withIteration(const QByteArray& good, qint64 iteration) {
  QByteArray payload = good.left(good.size() - 16);
  std::memcpy(payload.data() + 8, &iteration, sizeof iteration);
  return withChecksum(payload);
}

}  // namespace

class TestRunSafety : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;

  // A fresh run of `iterations` quick iterations of `project` in the folder `name`.
  QString trained(const QString& name, int iterations, const QString& project = kExample, const QStringList& extra = {}) {
    const QString run = dir_.filePath(name);
    const Result r = cli(QStringList{QStringLiteral("train"), project, QStringLiteral("--iterations"), QString::number(iterations),
                                     QStringLiteral("--out"), run} + kQuick + extra);
    if (r.status != 0) qWarning("%s", qPrintable(r.err));
    return run;
  }

 private slots:
  // Item 4: one writer per run folder, the CLI's and the studio's alike (both take RUN/lock in
  // RunFolder); a lock left by a killed process is taken over with a note.
  void aRunFolderInUseIsRefused() {
    const QString run = dir_.filePath(QStringLiteral("busy"));
    QProcess first;
    first.start(kCli, QStringList{QStringLiteral("train"), kExample, QStringLiteral("--iterations"), QStringLiteral("100000"),
                                  QStringLiteral("--out"), run} + kQuick);
    QVERIFY(first.waitForStarted());
    QTRY_VERIFY_WITH_TIMEOUT(!QDir(run + QStringLiteral("/checkpoints")).entryList({QStringLiteral("iter-*.ckpt")}).isEmpty(), 60000);
    const QString pid = QString::number(first.processId());
    QCOMPARE(bytes(run + QStringLiteral("/lock")), (pid + QLatin1Char('\n')).toUtf8());
    const QString inUse = QStringLiteral("error: %1 is in use by process %2 (it holds %1/lock); wait for that run to end, or stop it\n").arg(run, pid);
    Result r = cli({QStringLiteral("train"), QStringLiteral("--resume"), run, QStringLiteral("--iterations"), QStringLiteral("1")});
    QCOMPARE(r.status, 1);
    QCOMPARE(r.err, inUse);
    r = cli(QStringList{QStringLiteral("train"), kExample, QStringLiteral("--out"), run} + kQuick);
    QCOMPARE(r.status, 1);
    QCOMPARE(r.err, inUse);
    std::string error, note;
    QVERIFY(!cas::engine::RunLock::acquire(run.toStdString(), &error, &note));
    QCOMPARE(QString::fromStdString(error) + QLatin1Char('\n'), inUse.mid(7));

    ::kill(pid_t(first.processId()), SIGKILL);
    first.waitForFinished();
    const int done = int(lines(run + QStringLiteral("/metrics.jsonl")).size());
    r = cli({QStringLiteral("train"), QStringLiteral("--resume"), run, QStringLiteral("--iterations"), QStringLiteral("1")});
    QCOMPARE(r.status, 0);
    QVERIFY2(r.err.startsWith(QStringLiteral("note: %1/lock named process %2, which no longer holds it (it was stopped or killed); taking the run over\n")
                                  .arg(run, pid)),
             qPrintable(r.err));
    QCOMPARE(bytes(run + QStringLiteral("/lock")), QByteArray());  // released at the end
    const QStringList m = lines(run + QStringLiteral("/metrics.jsonl"));
    QVERIFY(m.size() >= 2 && m.size() <= done + 1);
    verifyMetrics(run, int(m.size()));  // each iteration logged once
  }

  // Item 5: resume cuts the log back to the checkpoint, says what it dropped, and the log then
  // holds every iteration once.
  void resumeRepairsTheLog() {
    const QString run = trained(QStringLiteral("repair"), 3);
    verifyMetrics(run, 3);
    append(run + QStringLiteral("/metrics.jsonl"), "{\"iteration\": 4, \"games\": 3");  // killed while writing
    Result r = cli({QStringLiteral("train"), QStringLiteral("--resume"), run, QStringLiteral("--iterations"), QStringLiteral("1")});
    QCOMPARE(r.status, 0);
    QCOMPARE(r.err, QStringLiteral("note: metrics.jsonl cut back to iteration 3: dropped a partial last line (cut short when the run stopped)\n"
                                   "resumed from %1/checkpoints/iter-00000003.ckpt (iteration 3)\nrun folder: %1\n").arg(run));
    verifyMetrics(run, 4);

    // A full disk: iteration 5 was logged but its checkpoint never written, and a change logged
    // after it; then the log ends in half a line.
    QVERIFY(QFile::remove(run + QStringLiteral("/checkpoints/iter-00000004.ckpt")));
    append(run + QStringLiteral("/metrics.jsonl"), "{\"iteration\": 5, \"games\": 40}\n{\"iteration\": 6, \"ga");
    append(run + QStringLiteral("/changes.jsonl"), "{\"iteration\": 3, \"parameter\": \"search.c_puct\", \"from\": \"1.5\", \"to\": \"2.5\"}\n"
                                                    "{\"iteration\": 5, \"parameter\": \"search.c_puct\", \"from\": \"2.5\", \"to\": \"3\"}\n{\"iter");
    cas::engine::TrainedRun resumed = cas::engine::openTrainedRun(run.toStdString(), cas::exec::makeCpuBackend(), {cas::engine::RunUse::Resume, false});
    QVERIFY2(resumed.trainer, resumed.error.message.c_str());
    QCOMPARE(resumed.trainer->iteration(), std::int64_t(3));
    QCOMPARE(resumed.trainer->parameters().getFloat("search.c_puct"), 2.5);  // the change of iteration 3 holds again
    QStringList notices;
    for (const cas::Diagnostic& d : resumed.notices) notices << QString::fromStdString(cas::formatHeadline(d));
    QCOMPARE(notices, QStringList({QStringLiteral("note: metrics.jsonl cut back to iteration 3: dropped 2 lines recorded after the checkpoint "
                                                  "(those iterations run again) and a partial last line (cut short when the run stopped)"),
                                   QStringLiteral("note: changes.jsonl cut back to the changes applied by iteration 4: dropped 1 change "
                                                  "logged after the checkpoint or malformed and a partial last line (cut short when the run stopped)"),
                                   QStringLiteral("note: applied again the 1 parameter change(s) logged up to iteration 4")}));
    verifyMetrics(run, 3);
    QCOMPARE(lines(run + QStringLiteral("/changes.jsonl")),
             QStringList({QStringLiteral("{\"iteration\": 3, \"parameter\": \"search.c_puct\", \"from\": \"1.5\", \"to\": \"2.5\"}")}));
  }

  // Item 6: without a valid checkpoint, --resume refuses and leaves the folder as it was;
  // --restart discards the progress and starts again.
  void resumeWithoutACheckpointRefuses() {
    const QString run = trained(QStringLiteral("no-checkpoint"), 2);
    for (const char* name : {"iter-00000001.ckpt", "iter-00000002.ckpt"}) {
      QFile f(run + QStringLiteral("/checkpoints/") + QLatin1String(name));
      QVERIFY(f.open(QIODevice::ReadWrite));
      f.seek(64);
      f.write("corrupt");
    }
    const auto before = contents(run);
    Result r = cli({QStringLiteral("train"), QStringLiteral("--resume"), run});
    QCOMPARE(r.status, 1);
    QCOMPARE(r.err, QStringLiteral("warning: skipping checkpoint iter-00000002.ckpt: checksum mismatch (the file is corrupted)\n"
                                   "warning: skipping checkpoint iter-00000001.ckpt: checksum mismatch (the file is corrupted)\n"
                                   "error: %1 has no valid checkpoint to resume from; `cuda-agent train --restart %1` discards its progress and "
                                   "trains it again from iteration 1, or train into a new --out folder\n").arg(run));
    QCOMPARE(contents(run), before);

    r = cli({QStringLiteral("train"), QStringLiteral("--restart"), run, QStringLiteral("--iterations"), QStringLiteral("1")});
    QCOMPARE(r.status, 0);
    QCOMPARE(r.err, QStringLiteral("note: discarded the progress of %1 (2 files in checkpoints/, metrics.jsonl, changes.jsonl); "
                                   "training it again from iteration 1\nrun folder: %1\n").arg(run));
    verifyMetrics(run, 1);
    QCOMPARE(QDir(run + QStringLiteral("/checkpoints")).entryList(QDir::Files), QStringList({QStringLiteral("iter-00000001.ckpt")}));
  }

  // Item 7: a run keeps the policy it was trained with; the project's edit is used only when asked.
  void aRunKeepsItsPolicy() {
    const QString project = dir_.filePath(QStringLiteral("edited-project"));
    QDir().mkpath(project);
    for (const char* file : {"project.toml", "policy.pdl"})
      QVERIFY(QFile::copy(kExample + QLatin1Char('/') + QLatin1String(file), project + QLatin1Char('/') + QLatin1String(file)));
    const QByteArray original = bytes(project + QStringLiteral("/policy.pdl"));
    const QString run = trained(QStringLiteral("keeps-policy"), 1, project);
    QCOMPARE(bytes(run + QStringLiteral("/policy.pdl")), original);
    const QStringList analyse = {QStringLiteral("analyze"), run, QStringLiteral("--position"), QStringLiteral("5"), QStringLiteral("--json")};
    const Result before = cli(analyse);
    QCOMPARE(before.status, 0);

    QByteArray edited = original;
    const int at = int(edited.indexOf("relu("));
    QVERIFY(at > 0);
    edited.replace(at, 5, "tanh(");
    QFile policy(project + QStringLiteral("/policy.pdl"));
    QVERIFY(policy.open(QIODevice::WriteOnly));
    policy.write(edited);
    policy.close();
    const int line = original.left(at).count('\n') + 1;
    auto shown = [&](const QByteArray& text) {  // a line in a message: its first 60 bytes
      const QByteArray l = text.split('\n')[line - 1];
      return l.size() > 60 ? QString::fromUtf8(l.left(60)) + QStringLiteral("...") : QString::fromUtf8(l);
    };
    const QString how = QStringLiteral("from line %1: the run's copy has '%2', the project's has '%3'").arg(line).arg(shown(original), shown(edited));

    const Result kept = cli(analyse);
    QCOMPARE(kept.out, before.out);  // the same network and weights
    QCOMPARE(kept.err, QStringLiteral("note: the project's %1/policy.pdl has changed since this run started (%2); the run uses its own copy, "
                                      "%3/policy.pdl (--use-project uses the project's)\nusing %3/checkpoints/iter-00000001.ckpt (iteration 1)\n")
                           .arg(project, how, run));
    const Result asked = cli(analyse + QStringList{QStringLiteral("--use-project")});
    QCOMPARE(asked.status, 0);
    QVERIFY(asked.out != before.out);  // tanh where the weights were trained with relu
    QVERIFY2(asked.err.startsWith(QStringLiteral("warning: using the project's %1/policy.pdl (--use-project) instead of the run's copy %2/policy.pdl, "
                                                 "which it trained with; they differ %3\n").arg(project, run, how)),
             qPrintable(asked.err));
  }

  // Item 9: before the replay buffer holds one batch there is no loss: none is printed or stored.
  void noLossBeforeTheFirstTrainingStep() {
    const QString run = dir_.filePath(QStringLiteral("no-loss"));
    const Result r = cli(QStringList{QStringLiteral("train"), kExample, QStringLiteral("--iterations"), QStringLiteral("1"), QStringLiteral("--out"), run} +
                         kQuick + QStringList{QStringLiteral("--set"), QStringLiteral("train.batch_size=4096")});
    QCOMPARE(r.status, 0);
    const QJsonObject metrics = QJsonDocument::fromJson(lines(run + QStringLiteral("/metrics.jsonl")).value(0).toUtf8()).object();
    const int positions = metrics.value(QLatin1String("positions")).toInt();
    QVERIFY(positions > 0 && positions < 4096);
    QVERIFY2(r.out.startsWith(QStringLiteral("iter 1 | games 8 | no training step yet (%1 of 4096 positions) | ").arg(positions)), qPrintable(r.out));
    QVERIFY(!metrics.contains(QLatin1String("loss")) && !metrics.contains(QLatin1String("loss_policy")));
    QCOMPARE(metrics.value(QLatin1String("training_steps")).toInt(), 0);
  }

  // Item 10: a legal configuration that cannot fit is refused before anything is allocated, with
  // the parameter to reduce; the limit is the least of free memory, the cgroup's and ulimit -v.
  void configurationsTooLargeForMemoryAreRefused() {
    const QString shape = QStringLiteral("^error: this configuration needs about [0-9.]+ [KMGT]iB of memory, more than the [0-9.]+ [KMGT]iB available; "
                                         "the largest part is %1$");
    Result r = cli({QStringLiteral("train"), kExample, QStringLiteral("--out"), dir_.filePath(QStringLiteral("huge-trees")), QStringLiteral("--set"),
                    QStringLiteral("search.node_budget=16777216"), QStringLiteral("--set"), QStringLiteral("train.parallel_games=65536")});
    QCOMPARE(r.status, 1);
    QVERIFY2(QRegularExpression(shape.arg(QStringLiteral("the self-play search trees \\(65536 games of 16777216 nodes\\), 32\\.0 TiB: "
                                                         "reduce search\\.node_budget or train\\.parallel_games\n")))
                 .match(r.err)
                 .hasMatch(),
             qPrintable(r.err));
    QVERIFY(!QDir(dir_.filePath(QStringLiteral("huge-trees"))).exists());  // the refused run leaves no folder behind
    // Under a 4 GiB address-space limit, whatever the machine has.
    const QString limited = QStringLiteral("ulimit -v 4194304; exec \"$0\" \"$@\"");
    r = cli({QStringLiteral("-c"), limited, kCli, QStringLiteral("train"), kExample, QStringLiteral("--out"), dir_.filePath(QStringLiteral("huge-buffer")),
             QStringLiteral("--set"), QStringLiteral("train.replay_capacity=100000000")},
            QStringLiteral("/bin/sh"));
    QCOMPARE(r.status, 1);
    QVERIFY2(QRegularExpression(shape.arg(QStringLiteral("the replay buffer \\(100000000 positions of 28 floats, with its checkpoint\\), 31\\.3 GiB: "
                                                         "reduce train\\.replay_capacity\n")))
                 .match(r.err)
                 .hasMatch(),
             qPrintable(r.err));
  }

  // Item 15: --iterations 0 is not "unlimited"; a kill during a checkpoint's write leaves a
  // temporary file that the next writer removes; a run folder's error says "error" once; the
  // project folder is not a run folder.
  void smallerRefusals() {
    Result r = cli({QStringLiteral("train"), kExample, QStringLiteral("--iterations"), QStringLiteral("0")});
    QCOMPARE(r.status, 2);
    QVERIFY2(r.err.startsWith(QStringLiteral("--iterations: expected a whole number in [1, 1099511627776], got '0'\n")), qPrintable(r.err));
    QVERIFY(cli({QStringLiteral("train"), QStringLiteral("--help")}).out.contains(QStringLiteral("Stop after this many iterations (default: no limit)")));

    const QString run = trained(QStringLiteral("leftover"), 1);
    const QString leftover = run + QStringLiteral("/checkpoints/iter-00000002.ckpt.tmp.4242");
    append(leftover, "half a checkpoint");
    r = cli({QStringLiteral("eval"), run, QStringLiteral("--games"), QStringLiteral("2")});  // a reader leaves it alone
    QVERIFY(QFile::exists(leftover));
    r = cli({QStringLiteral("train"), QStringLiteral("--resume"), run, QStringLiteral("--iterations"), QStringLiteral("1")});
    QCOMPARE(r.status, 0);
    QVERIFY2(r.err.startsWith(QStringLiteral("note: removed %1, left by a write that was interrupted\n").arg(leftover)), qPrintable(r.err));
    QVERIFY(!QFile::exists(leftover));

    QFile config(run + QStringLiteral("/config.toml"));
    QVERIFY(config.open(QIODevice::ReadWrite));
    QByteArray text = config.readAll().replace("c_puct = 1.5", "c_puct = \"high\"");
    config.resize(0);
    config.write(text);
    config.close();
    const int line = text.left(text.indexOf("c_puct")).count('\n') + 1;
    r = cli({QStringLiteral("eval"), run});
    QCOMPARE(r.status, 1);
    QCOMPARE(r.err, QStringLiteral("%1/config.toml:%2:10: error: search.c_puct must be a number in [0, 100], got a string\n").arg(run).arg(line));
    r = cli({QStringLiteral("eval"), dir_.path()});
    QCOMPARE(r.err, QStringLiteral("error: %1 is not a run folder: it has no config.toml (run folders are made by cuda-agent train)\n").arg(dir_.path()));

    const QString project = dir_.filePath(QStringLiteral("own-project"));
    QDir().mkpath(project);
    for (const char* file : {"project.toml", "policy.pdl"})
      QVERIFY(QFile::copy(kExample + QLatin1Char('/') + QLatin1String(file), project + QLatin1Char('/') + QLatin1String(file)));
    r = cli({QStringLiteral("train"), project, QStringLiteral("--out"), project});
    QCOMPARE(r.status, 1);
    QCOMPARE(r.err, QStringLiteral("error: %1 holds a project.toml: it is a project folder, not a run folder; give the run a folder of its own, "
                                   "such as runs/tictactoe-alphazero\n").arg(project));
    QCOMPARE(QDir(project).entryList(QDir::AllEntries | QDir::NoDotAndDotDot), QStringList({QStringLiteral("policy.pdl"), QStringLiteral("project.toml")}));
  }

  // Issue 44: a checkpoint's counters are checked (and its iteration against its name) before
  // anything is cut or pruned; checkpoints are ordered by their iteration as a number.
  void checkpointCountersAreValidated() {
    const QString run = trained(QStringLiteral("counters"), 2);
    const QString folder = run + QStringLiteral("/checkpoints/");
    // `good` with its counter at `offset` (8: the iteration, 16: the games) replaced, and a
    // checksum that holds.
    auto forged = [](QByteArray good, int offset, qint64 value) {
      QByteArray payload = good.left(good.size() - 16);
      std::memcpy(payload.data() + offset, &value, sizeof value);
      const std::uint64_t sum = cas::engine::fnv1a64({payload.constData(), size_t(payload.size())});
      return payload + QByteArray(reinterpret_cast<const char*>(&sum), sizeof sum) + QByteArray("CASCKPT1");
    };
    const QStringList resume = {QStringLiteral("train"), QStringLiteral("--resume"), run, QStringLiteral("--iterations"), QStringLiteral("1")};
    struct Case {
      const char* name;
      int offset;
      qint64 value;
      const char* why;
    };
    const Case cases[] = {{"iter-00000003.ckpt", 8, -5, "its iteration is -5; an iteration cannot be negative"},
                          {"iter-00000004.ckpt", 8, 0, "its iteration is 0; a run's checkpoint is written after iteration 1 or later"},
                          {"iter-00000005.ckpt", 16, -1, "it counts -1 games played; a count cannot be negative"},
                          // A count near 2^63 would wrap negative in the next iteration's checkpoint.
                          {"iter-00000006.ckpt", 16, std::numeric_limits<qint64>::max(),
                           "it counts 9223372036854775807 games or optimizer steps, more than the 72057594037927936 a run can reach"}};
    int iterations = 2;
    for (const Case& c : cases) {
      append(folder + QLatin1String(c.name), forged(bytes(folder + QStringLiteral("iter-%1.ckpt").arg(iterations, 8, 10, QLatin1Char('0'))),
                                                    c.offset, c.value));
      const Result r = cli(resume);
      QCOMPARE(r.status, 0);
      QCOMPARE(r.err, QStringLiteral("warning: skipping checkpoint %1: %2\nresumed from %3/checkpoints/iter-%4.ckpt (iteration %5)\nrun folder: %3\n")
                          .arg(QLatin1String(c.name), QLatin1String(c.why), run)
                          .arg(iterations, 8, 10, QLatin1Char('0'))
                          .arg(iterations));
      verifyMetrics(run, ++iterations);
    }
    // A checkpoint whose name says 9 but which holds iteration 6: newest by number, and skipped.
    QVERIFY(QFile::copy(folder + QStringLiteral("iter-00000006.ckpt"), folder + QStringLiteral("iter-9.ckpt")));
    const Result r = cli(resume);
    QCOMPARE(r.status, 0);
    QCOMPARE(r.err, QStringLiteral("warning: skipping checkpoint iter-9.ckpt: it holds iteration 6, not the 9 its name says\n"
                                   "resumed from %1/checkpoints/iter-00000006.ckpt (iteration 6)\nrun folder: %1\n").arg(run));
    verifyMetrics(run, 7);
    QCOMPARE(QDir(folder).entryList(QDir::Files), QStringList({QStringLiteral("iter-00000006.ckpt"), QStringLiteral("iter-00000007.ckpt"),
                                                                QStringLiteral("iter-9.ckpt")}));
  }

  // Issue 44: resume reads the logs as JSON lines: whitespace, CRLF and re-serialised lines are
  // kept, every line up to the checkpoint's iteration stays, and the logged changes apply again.
  void resumeReadsLogLinesAsJson() {
    const QString run = trained(QStringLiteral("json-logs"), 3);
    const QString metrics = run + QStringLiteral("/metrics.jsonl");
    const QStringList m = lines(metrics);
    QCOMPARE(m.size(), 3);
    const QByteArray compact = QJsonDocument::fromJson(m[2].toUtf8()).toJson(QJsonDocument::Compact);  // as `jq -c` writes it
    QFile::remove(metrics);
    append(metrics, m[0].toUtf8() + "  \n" + m[1].toUtf8() + "\r\n" + compact + "\n\n");
    append(run + QStringLiteral("/changes.jsonl"), "{\"iteration\":2,\"parameter\":\"search.c_puct\",\"from\":\"1.5\",\"to\":\"2.5\"}\r\n"
                                                  "{\"to\": \"3\", \"from\": \"2.5\", \"parameter\": \"search.c_puct\", \"iteration\": 3} \n");
    cas::engine::TrainedRun resumed = cas::engine::openTrainedRun(run.toStdString(), cas::exec::makeCpuBackend(), {cas::engine::RunUse::Resume, false});
    QVERIFY2(resumed.trainer, resumed.error.message.c_str());
    QCOMPARE(resumed.trainer->iteration(), std::int64_t(3));
    QCOMPARE(resumed.trainer->parameters().getFloat("search.c_puct"), 3.0);
    QStringList notices;
    for (const cas::Diagnostic& d : resumed.notices) notices << QString::fromStdString(cas::formatHeadline(d));
    QCOMPARE(notices, QStringList({QStringLiteral("note: applied again the 2 parameter change(s) logged up to iteration 4")}));
    verifyMetrics(run, 3);
    QCOMPARE(lines(metrics).value(2).toUtf8(), compact);
    QCOMPARE(lines(run + QStringLiteral("/changes.jsonl")).size(), 2);
  }

  // An iteration written as 2.0 or 3e0 (JSON numbers equal to it, as a tool may rewrite them) is
  // that iteration: its line stays.
  void resumeKeepsIterationsWrittenAsFractions() {
    const QString run = trained(QStringLiteral("fraction-logs"), 3);
    const QString metrics = run + QStringLiteral("/metrics.jsonl");
    QStringList m = lines(metrics);
    QCOMPARE(m.size(), 3);
    m[1].replace(QStringLiteral("\"iteration\": 2,"), QStringLiteral("\"iteration\": 2.0,"));
    m[2].replace(QStringLiteral("\"iteration\": 3,"), QStringLiteral("\"iteration\": 3e0,"));
    QVERIFY2(m[1].contains(QStringLiteral("2.0")) && m[2].contains(QStringLiteral("3e0")), qPrintable(m.join('\n')));
    QFile::remove(metrics);
    append(metrics, (m.join('\n') + '\n').toUtf8());
    const Result r = cli({QStringLiteral("train"), QStringLiteral("--resume"), run, QStringLiteral("--iterations"), QStringLiteral("1")});
    QCOMPARE(r.status, 0);
    verifyMetrics(run, 4);
    QCOMPARE(lines(metrics).mid(0, 3), m);
  }

  // Issue 44: nothing is read or deleted through a symbolic link out of the run folder.
  void symlinksOutOfTheRunAreNotFollowed() {
    const QString run = trained(QStringLiteral("linked"), 2);
    const QString elsewhere = dir_.filePath(QStringLiteral("elsewhere"));
    QVERIFY(QDir().rename(run + QStringLiteral("/checkpoints"), elsewhere));
    append(elsewhere + QStringLiteral("/keep.txt"), "someone else's file");
    QVERIFY(QFile::link(elsewhere, run + QStringLiteral("/checkpoints")));
    const QStringList before = QDir(elsewhere).entryList(QDir::Files);
    QCOMPARE(before.size(), 3);
    const QString refusal = QStringLiteral("error: %1/checkpoints is a symbolic link; a run's checkpoints/ must be a folder of its own "
                                           "(move the files it points to into the run folder)\n").arg(run);
    for (const char* how : {"--resume", "--restart"}) {
      const Result r = cli({QStringLiteral("train"), QLatin1String(how), run, QStringLiteral("--iterations"), QStringLiteral("1")});
      QCOMPARE(r.status, 1);
      QCOMPARE(r.err, refusal);
      QCOMPARE(QDir(elsewhere).entryList(QDir::Files), before);
    }
    QVERIFY(QFile::remove(run + QStringLiteral("/checkpoints")));
    QVERIFY(QDir().rename(elsewhere, run + QStringLiteral("/checkpoints")));

    // The run's own copy of its policy, replaced by a link to a file elsewhere.
    const QString outside = dir_.filePath(QStringLiteral("outside.pdl"));
    QVERIFY(QFile::rename(run + QStringLiteral("/policy.pdl"), outside));
    QVERIFY(QFile::link(outside, run + QStringLiteral("/policy.pdl")));
    const Result r = cli({QStringLiteral("eval"), run, QStringLiteral("--games"), QStringLiteral("2")});
    QCOMPARE(r.status, 1);
    QCOMPARE(r.err, QStringLiteral("error: %1/policy.pdl is a symbolic link; a run folder's files are read from the folder itself "
                                   "(put a copy of the file in place of the link)\n").arg(run));
  }

  // Issue 44: a run folder whose making was interrupted (its lock and copies, no config.toml) is
  // no project folder: the next train into it takes it over.
  void anInterruptedRunFolderIsTakenOver() {
    const QString run = dir_.filePath(QStringLiteral("half-made"));
    QDir().mkpath(run + QStringLiteral("/checkpoints"));
    append(run + QStringLiteral("/lock"), "");
    for (const char* file : {"project.toml", "policy.pdl"})
      QVERIFY(QFile::copy(kExample + QLatin1Char('/') + QLatin1String(file), run + QLatin1Char('/') + QLatin1String(file)));
    const Result r = cli(QStringList{QStringLiteral("train"), kExample, QStringLiteral("--iterations"), QStringLiteral("1"), QStringLiteral("--out"), run} + kQuick);
    QCOMPARE(r.status, 0);
    QVERIFY2(r.err.startsWith(QStringLiteral("note: %1 holds the start of a run whose making was interrupted (no config.toml); making it again\n").arg(run)),
             qPrintable(r.err));
    verifyMetrics(run, 1);
  }

  // Issue 44: after train --resume --use-project the run's copies are the files it trained with,
  // and the change is recorded, so that eval, analyze, play and export use that network.
  void resumeWithTheProjectsFilesAdoptsThem() {
    const QString project = dir_.filePath(QStringLiteral("adopted-project"));
    QDir().mkpath(project);
    for (const char* file : {"project.toml", "policy.pdl"})
      QVERIFY(QFile::copy(kExample + QLatin1Char('/') + QLatin1String(file), project + QLatin1Char('/') + QLatin1String(file)));
    const QString run = trained(QStringLiteral("adopted"), 1, project);
    const QByteArray edited = bytes(project + QStringLiteral("/policy.pdl")).replace("relu(conv2d(obs", "tanh(conv2d(obs");
    QFile policy(project + QStringLiteral("/policy.pdl"));
    QVERIFY(policy.open(QIODevice::WriteOnly));
    policy.write(edited);
    policy.close();
    Result r = cli({QStringLiteral("train"), QStringLiteral("--resume"), run, QStringLiteral("--use-project"), QStringLiteral("--iterations"), QStringLiteral("1")});
    QCOMPARE(r.status, 0);
    QVERIFY2(r.err.contains(QStringLiteral("note: the run's copies %1/project.toml and %1/policy.pdl now hold the project's files (--use-project), "
                                           "which it trains with from iteration 2; recorded in changes.jsonl\n").arg(run)),
             qPrintable(r.err));
    QCOMPARE(bytes(run + QStringLiteral("/policy.pdl")), edited);
    const QJsonObject record = QJsonDocument::fromJson(lines(run + QStringLiteral("/changes.jsonl")).value(0).toUtf8()).object();
    QCOMPARE(record.value(QLatin1String("iteration")).toInt(), 2);
    QCOMPARE(record.value(QLatin1String("project_files")).toString(), QFileInfo(project).absoluteFilePath());
    r = cli({QStringLiteral("analyze"), run, QStringLiteral("--position"), QStringLiteral("5")});
    QCOMPARE(r.status, 0);
    QCOMPARE(r.err, QStringLiteral("using %1/checkpoints/iter-00000002.ckpt (iteration 2)\n").arg(run));
    // A later resume keeps the record and applies no change for it.
    r = cli({QStringLiteral("train"), QStringLiteral("--resume"), run, QStringLiteral("--iterations"), QStringLiteral("1")});
    QCOMPARE(r.status, 0);
    QCOMPARE(r.err, QStringLiteral("resumed from %1/checkpoints/iter-00000002.ckpt (iteration 2)\nrun folder: %1\n").arg(run));
    QCOMPARE(lines(run + QStringLiteral("/changes.jsonl")).size(), 1);
  }

  // Issue 44: a train that fails once its folder is made names the project's files, not the
  // run's copies, which it removes.
  void aFailedTrainNamesTheProjectsFiles() {
    const QString project = dir_.filePath(QStringLiteral("broken-project"));
    QDir().mkpath(project);
    QVERIFY(QFile::copy(kExample + QStringLiteral("/project.toml"), project + QStringLiteral("/project.toml")));
    append(project + QStringLiteral("/policy.pdl"), "def policy(obs):\n    return nothing\n");
    const QString run = dir_.filePath(QStringLiteral("never-made"));
    const Result r = cli(QStringList{QStringLiteral("train"), project, QStringLiteral("--out"), run} + kQuick);
    QCOMPARE(r.status, 1);
    QVERIFY2(r.err.startsWith(QStringLiteral("error: the policy does not compile: %1/policy.pdl:2:12: error: ").arg(project)), qPrintable(r.err));
    QVERIFY2(!r.err.contains(run), qPrintable(r.err));
    QVERIFY(!QFileInfo::exists(run));
  }

  // Issue 44: `play` reads a line of stdin up to a bound, and says what it did not read.
  void playReadsBoundedLines() {
    const QString run = trained(QStringLiteral("play"), 1);
    QProcess p;
    p.start(kCli, {QStringLiteral("play"), run, QStringLiteral("--sims"), QStringLiteral("2")});
    QVERIFY(p.waitForStarted());
    p.write(QByteArray(8 << 20, '5') + "\nq\n");
    p.closeWriteChannel();
    QVERIFY(p.waitForFinished(60000));
    QCOMPARE(p.exitCode(), 0);
    const QString out = QString::fromUtf8(p.readAllStandardOutput());
    QVERIFY2(out.contains(QStringLiteral("your move: a move is one digit from 1 to 9; a line of 8388608 bytes is not read\n")), qPrintable(out.right(400)));
  }

  // Issue 44: analyze --json prints JSON: a value that is not a number is null, with the reason.
  void analyzeJsonHasNoNan() {
    const QString project = dir_.filePath(QStringLiteral("nan-project"));
    QDir().mkpath(project);
    for (const char* file : {"project.toml", "policy.pdl"})
      QVERIFY(QFile::copy(kExample + QLatin1Char('/') + QLatin1String(file), project + QLatin1Char('/') + QLatin1String(file)));
    const QString run = trained(QStringLiteral("nan-run"), 1, project);
    QFile policy(project + QStringLiteral("/policy.pdl"));
    QVERIFY(policy.open(QIODevice::ReadWrite));
    const QByteArray text = policy.readAll();
    QVERIFY(text.contains("value = tanh("));
    policy.resize(0);
    policy.write(QByteArray(text).replace("value = tanh(dense(relu(dense(h, units=32)), units=1))",
                                          "value = log(tanh(dense(relu(dense(h, units=32)), units=1)) * 0 - 1)"));
    policy.close();
    const Result r = cli({QStringLiteral("analyze"), run, QStringLiteral("--position"), QStringLiteral("5"), QStringLiteral("--json"),
                          QStringLiteral("--use-project")});
    QCOMPARE(r.status, 0);
    QJsonParseError error;
    const QJsonDocument doc = QJsonDocument::fromJson(r.out.toUtf8(), &error);
    QVERIFY2(doc.isObject(), qPrintable(r.out + error.errorString()));
    QVERIFY(doc.object().value(QLatin1String("value")).isNull());
    QVERIFY2(doc.object().value(QLatin1String("not_finite")).toArray().contains(QStringLiteral("value")), qPrintable(r.out));
    QCOMPARE(doc.object().value(QLatin1String("not_finite_reason")).toString(),
             QStringLiteral("the network's output or the search's statistics are not finite numbers (NaN or infinite) there, printed as null"));
  }

  // Issue 44: resuming a PPO run that has reached its ppo.total_steps says so.
  void resumingAFinishedRunSaysSo() {
    const QString run = dir_.filePath(QStringLiteral("finished"));
    Result r = cli({QStringLiteral("train"), cas::test::sourcePath(QStringLiteral("projects/cartpole-ppo")), QStringLiteral("--out"), run,
                    QStringLiteral("--set"), QStringLiteral("ppo.total_steps=512")});
    QCOMPARE(r.status, 0);
    r = cli({QStringLiteral("train"), QStringLiteral("--resume"), run, QStringLiteral("--iterations"), QStringLiteral("3")});
    QCOMPARE(r.status, 0);
    QVERIFY2(r.err.endsWith(QStringLiteral("note: %1 has reached the end its configuration sets (ppo.total_steps = 512 environment steps): there is "
                                           "nothing to train; raise ppo.total_steps in %1/config.toml to train it further\n").arg(run)),
             qPrintable(r.err));
    QCOMPARE(lines(run + QStringLiteral("/metrics.jsonl")).size(), 1);
  }

  // Issue 44: a loss that is not finite because the policy computes NaN from its input is not
  // blamed on the learning rate.
  void aNanPolicyIsNotBlamedOnTheLearningRate() {
    const QString project = dir_.filePath(QStringLiteral("nan-ppo"));
    QDir().mkpath(project);
    QVERIFY(QFile::copy(cas::test::sourcePath(QStringLiteral("projects/cartpole-ppo/project.toml")), project + QStringLiteral("/project.toml")));
    QByteArray policy = bytes(cas::test::sourcePath(QStringLiteral("projects/cartpole-ppo/policy.pdl")));
    QVERIFY(policy.contains("value = dense(v, units=1)"));
    append(project + QStringLiteral("/policy.pdl"), policy.replace("value = dense(v, units=1)", "value = log(dense(v, units=1) * 0 - 1)"));
    const Result r = cli({QStringLiteral("train"), project, QStringLiteral("--out"), dir_.filePath(QStringLiteral("nan-ppo-run")),
                          QStringLiteral("--iterations"), QStringLiteral("1")});
    QCOMPARE(r.status, 1);
    QVERIFY2(r.err.contains(QStringLiteral("error: the run stopped: the loss became NaN in iteration 1: the policy's value output in its rollout "
                                           "is already not a finite number (NaN or infinite), before any update, so the policy computes it from "
                                           "its input (a log or square root of a negative number, a division by zero); lowering "
                                           "ppo.learning_rate will not help: check the policy (the last checkpoint is kept)\n")),
             qPrintable(r.err));
  }

  // Issue 44, round 3: a run's exports/ that is a symbolic link out of the run is never written
  // or deleted through, as checkpoints/ is not.
  // A checkpoint whose checksum holds but whose payload cannot be restored (cut in half, then
  // sealed again) is skipped for the one before it, as a damaged one is (found by the held-out
  // probe: every command stopped on it).
  void aCheckpointThatCannotBeRestoredIsSkipped() {
    const QString run = trained(QStringLiteral("unrestorable"), 2);
    const QString folder = run + QStringLiteral("/checkpoints/");
    const QByteArray good = bytes(folder + QStringLiteral("iter-00000002.ckpt"));
    QByteArray payload = good.left((good.size() - 16) / 2);
    std::memcpy(payload.data() + 8, "\3\0\0\0\0\0\0\0", 8);  // iteration 3, as its name says
    const std::uint64_t sum = cas::engine::fnv1a64({payload.constData(), size_t(payload.size())});
    append(folder + QStringLiteral("iter-00000003.ckpt"), payload + QByteArray(reinterpret_cast<const char*>(&sum), sizeof sum) + QByteArray("CASCKPT1"));
    const Result r = cli({QStringLiteral("eval"), run, QStringLiteral("--games"), QStringLiteral("2")});
    QCOMPARE(r.status, 0);
    QVERIFY2(r.err.startsWith(QStringLiteral("warning: skipping checkpoint iter-00000003.ckpt: ")), qPrintable(r.err));
    QVERIFY2(r.err.contains(QStringLiteral("iter-00000002.ckpt (iteration 2)")), qPrintable(r.err));
    const Result resumed = cli({QStringLiteral("train"), QStringLiteral("--resume"), run, QStringLiteral("--iterations"), QStringLiteral("1")});
    QCOMPARE(resumed.status, 0);
    verifyMetrics(run, 3);
  }

  // Found by the held-out probe: eval --opponent run:FOLDER quoted a 100 KB folder whole.
  void opponentFoldersAreQuotedCut() {
    const QString run = trained(QStringLiteral("opponent"), 1);
    const Result r = cli({QStringLiteral("eval"), run, QStringLiteral("--opponent"), QStringLiteral("run:") + QString(100000, QLatin1Char('z'))});
    QCOMPARE(r.status, 1);
    QVERIFY2(r.err.endsWith(QStringLiteral("error: the run folder '%1... (100000 bytes)' is longer than the 4096 bytes a path may have\n")
                                .arg(QString(64, QLatin1Char('z')))),
             qPrintable(r.err.left(400)));
  }

  // train --out into a folder of the user's (files, no run in it) is refused before anything is
  // written (found by the held-out probe: the user's policy.pdl was replaced and the run
  // appended to their metrics.jsonl); an empty folder is fine.
  void aRunIsMadeOnlyInANewOrEmptyFolder() {
    const QString user = dir_.filePath(QStringLiteral("users-folder"));
    QVERIFY(QDir().mkpath(user));
    append(user + QStringLiteral("/policy.pdl"), "the user's own policy");
    append(user + QStringLiteral("/metrics.jsonl"), "{\"iteration\": 1}\n");
    const QMap<QString, QByteArray> before = contents(user);
    const Result r = cli({QStringLiteral("train"), kExample, QStringLiteral("--out"), user, QStringLiteral("--iterations"), QStringLiteral("1")});
    QCOMPARE(r.status, 1);
    QVERIFY2(r.err.startsWith(QStringLiteral("error: %1 already holds files that are not a run's (").arg(user)), qPrintable(r.err));
    QVERIFY2(r.err.endsWith(QStringLiteral("); give the run a new or empty folder, such as runs/tictactoe-alphazero\n")), qPrintable(r.err));
    QCOMPARE(contents(user), before);
    QCOMPARE(QDir(user).entryList(QDir::AllEntries | QDir::NoDotAndDotDot), QStringList({QStringLiteral("metrics.jsonl"), QStringLiteral("policy.pdl")}));
    const QString empty = dir_.filePath(QStringLiteral("empty-folder"));
    QVERIFY(QDir().mkpath(empty));
    QCOMPARE(cli({QStringLiteral("train"), kExample, QStringLiteral("--out"), empty, QStringLiteral("--iterations"), QStringLiteral("1")}).status, 0);
  }

  // An export never replaces the run's own files, and never goes through a link in exports/
  // (found by the held-out probe: --out RUN/checkpoints/NEWEST and --out RUN/metrics.jsonl were
  // replaced by the model, and RUN/exports/sub -> elsewhere was written through).
  void exportsNeverReplaceTheRunsOwnFiles() {
    const QString run = trained(QStringLiteral("own-files"), 2);
    const QMap<QString, QByteArray> before = contents(run);
    for (const QString& own : {QStringLiteral("/checkpoints/iter-00000002.ckpt"), QStringLiteral("/metrics.jsonl"), QStringLiteral("/config.toml"),
                               QStringLiteral("/checkpoints/new.onnx")}) {
      const Result r = cli({QStringLiteral("export"), run, QStringLiteral("--out"), run + own});
      QCOMPARE(r.status, 2);
      QCOMPARE(r.err, QStringLiteral("error: %1%2 is one of the run's own files (its checkpoints, logs and settings); export to %1/exports/ or "
                                     "outside the run\n").arg(run, own));
    }
    QCOMPARE(contents(run), before);
    const QString elsewhere = dir_.filePath(QStringLiteral("sub-elsewhere"));
    QVERIFY(QDir().mkpath(elsewhere) && QDir().mkpath(run + QStringLiteral("/exports")));
    QVERIFY(QFile::link(elsewhere, run + QStringLiteral("/exports/sub")));
    const Result r = cli({QStringLiteral("export"), run, QStringLiteral("--out"), run + QStringLiteral("/exports/sub/x.onnx")});
    QCOMPARE(r.status, 2);
    QCOMPARE(r.err, QStringLiteral("error: %1/exports/sub is a symbolic link inside the run's exports/; export to a folder of the run's own, "
                                   "or to a path outside the run\n").arg(run));
    QVERIFY(QDir(elsewhere).isEmpty());
    QCOMPARE(cli({QStringLiteral("export"), run, QStringLiteral("--out"), run + QStringLiteral("/exports/mine/x.onnx")}).status, 0);
  }

  void exportsThroughALinkOutOfTheRunAreRefused() {
    const QString run = trained(QStringLiteral("linked-exports"), 1);
    const QString elsewhere = dir_.filePath(QStringLiteral("exports-elsewhere"));
    QVERIFY(QDir().mkpath(elsewhere));
    append(elsewhere + QStringLiteral("/policy.onnx"), "someone else's model");
    append(elsewhere + QStringLiteral("/policy.h"), "someone else's header");
    QVERIFY(QFile::link(elsewhere, run + QStringLiteral("/exports")));
    const QMap<QString, QByteArray> before = {{QStringLiteral("policy.h"), "someone else's header"},
                                              {QStringLiteral("policy.onnx"), "someone else's model"}};
    auto held = [&] {
      QMap<QString, QByteArray> out;
      for (const QString& name : QDir(elsewhere).entryList(QDir::Files)) out[name] = bytes(elsewhere + QLatin1Char('/') + name);
      return out;
    };
    const QString refusal = QStringLiteral("error: %1/exports is a symbolic link; a run's exports/ must be a folder of its own "
                                           "(remove the link, or export to a path outside it)\n").arg(run);
    for (const char* format : {"onnx", "c", "cuda"}) {
      const Result r = cli({QStringLiteral("export"), run, QStringLiteral("--format"), QLatin1String(format)});
      QCOMPARE(r.status, 2);
      QCOMPARE(r.err, refusal);
      QCOMPARE(held(), before);
    }
    const Result named = cli({QStringLiteral("export"), run, QStringLiteral("--out"), run + QStringLiteral("/exports/other.onnx")});
    QCOMPARE(named.status, 2);
    QCOMPARE(named.err, refusal);
    QCOMPARE(held(), before);
    // A path elsewhere is the user's to choose.
    QCOMPARE(cli({QStringLiteral("export"), run, QStringLiteral("--out"), dir_.filePath(QStringLiteral("elsewhere.onnx"))}).status, 0);
    QVERIFY(QFile::remove(run + QStringLiteral("/exports")));
    QCOMPARE(cli({QStringLiteral("export"), run}).status, 0);
    QVERIFY(QFileInfo(run + QStringLiteral("/exports/policy.onnx")).isFile());
  }

  // Issue 44, round 3: AlphaZero's loss that is not finite because its data is not (here value
  // targets made NaN in the checkpoint it resumed from) says so, and does not blame the learning rate.
  void anAlphaZeroLossOfNanDataSaysWhatWasNotFinite() {
    const QString run = trained(QStringLiteral("nan-targets"), 1, kExample, {QStringLiteral("--set"), QStringLiteral("train.replay_capacity=64")});
    const QString file = run + QStringLiteral("/checkpoints/iter-00000001.ckpt");
    const QByteArray good = bytes(file);
    QByteArray payload = good.left(good.size() - 16);
    // The ring ends the payload; its last section is the 64 value targets (a u64 count, floats).
    quint64 count = 0;
    std::memcpy(&count, payload.constData() + payload.size() - 64 * 4 - 8, sizeof count);
    QCOMPARE(count, quint64(64));
    const float nan = std::numeric_limits<float>::quiet_NaN();
    for (int i = 0; i < 64; ++i) std::memcpy(payload.data() + payload.size() - 64 * 4 + i * 4, &nan, sizeof nan);
    QFile::remove(file);
    append(file, withChecksum(payload));
    const Result r = cli({QStringLiteral("train"), QStringLiteral("--resume"), run, QStringLiteral("--iterations"), QStringLiteral("1")});
    QCOMPARE(r.status, 1);
    QVERIFY2(QRegularExpression(QStringLiteral("error: the run stopped: the loss became NaN in iteration 2: the replay buffer's value targets are "
                                               "already not finite numbers \\(NaN or infinite\\) in [0-9]+ of its [0-9]+ positions, before any update; "
                                               "lowering train\\.learning_rate will not help: the positions come from self-play and from the "
                                               "checkpoint the run resumed from \\(the last checkpoint is kept\\)\n"))
                 .match(r.err)
                 .hasMatch(),
             qPrintable(r.err));
    QVERIFY2(!r.err.contains(QStringLiteral("lower train.learning_rate")), qPrintable(r.err));
  }

  // Issue 44, round 3: an AlphaZero policy that computes NaN from its input is not blamed on the
  // learning rate either.
  void anAlphaZeroNanPolicyIsNotBlamedOnTheLearningRate() {
    const QString project = dir_.filePath(QStringLiteral("nan-alphazero"));
    QDir().mkpath(project);
    QVERIFY(QFile::copy(kExample + QStringLiteral("/project.toml"), project + QStringLiteral("/project.toml")));
    QByteArray policy = bytes(kExample + QStringLiteral("/policy.pdl"));
    QVERIFY(policy.contains("value = tanh(dense(relu(dense(h, units=32)), units=1))"));
    append(project + QStringLiteral("/policy.pdl"), policy.replace("value = tanh(dense(relu(dense(h, units=32)), units=1))",
                                                                   "value = log(tanh(dense(relu(dense(h, units=32)), units=1)) * 0 - 1)"));
    // Iteration 1 trains nothing (train.overlap: its steps draw from earlier positions only).
    const Result r = cli(QStringList{QStringLiteral("train"), project, QStringLiteral("--out"), dir_.filePath(QStringLiteral("nan-alphazero-run")),
                                     QStringLiteral("--iterations"), QStringLiteral("2")} + kQuick);
    QCOMPARE(r.status, 1);
    QVERIFY2(r.err.contains(QStringLiteral("error: the run stopped: the loss became NaN in iteration 2: the policy's value output on the replay "
                                           "buffer's positions is already not a finite number (NaN or infinite), before any update, so the policy "
                                           "computes it from its input (a log or square root of a negative number, a division by zero); lowering "
                                           "train.learning_rate will not help: check the policy (the last checkpoint is kept)\n")),
             qPrintable(r.err));
  }

  // Issue 44, round 3: checkpoints of iterations wider than the names' zero padding are named and
  // ordered by number; a run at the most iterations a run can reach is not trained past it.
  void checkpointsPastThePaddedWidthAreOrderedByNumber() {
    const QString run = trained(QStringLiteral("wide"), 2);
    const QString folder = run + QStringLiteral("/checkpoints/");
    const QByteArray good = bytes(folder + QStringLiteral("iter-00000002.ckpt"));
    append(folder + QStringLiteral("iter-99999999.ckpt"), withIteration(good, 99999999));  // after iter-100000000 as a string
    append(folder + QStringLiteral("iter-100000000.ckpt"), withIteration(good, 100000000));
    Result r = cli({QStringLiteral("eval"), run, QStringLiteral("--games"), QStringLiteral("2")});
    QCOMPARE(r.status, 0);
    QCOMPARE(r.err, QStringLiteral("using %1/checkpoints/iter-100000000.ckpt (iteration 100000000)\n").arg(run));
    const QStringList resume = {QStringLiteral("train"), QStringLiteral("--resume"), run, QStringLiteral("--iterations"), QStringLiteral("1")};
    r = cli(resume);
    QCOMPARE(r.status, 0);
    QVERIFY2(r.err.endsWith(QStringLiteral("resumed from %1/checkpoints/iter-100000000.ckpt (iteration 100000000)\nrun folder: %1\n").arg(run)),
             qPrintable(r.err));
    QCOMPARE(QDir(folder).entryList(QDir::Files), QStringList({QStringLiteral("iter-100000000.ckpt"), QStringLiteral("iter-100000001.ckpt")}));
    QVERIFY(lines(run + QStringLiteral("/metrics.jsonl")).last().startsWith(QStringLiteral("{\"iteration\": 100000001,")));

    // 2^40, the most iterations a run can reach: used, and not trained past.
    const qint64 most = qint64(1) << 40;
    append(folder + QStringLiteral("iter-1099511627776.ckpt"), withIteration(good, most));
    const auto before = contents(run);
    r = cli(resume);
    QCOMPARE(r.status, 1);
    QCOMPARE(r.err, QStringLiteral("error: %1 has reached iteration 1099511627776 (checkpoints/iter-1099511627776.ckpt), the most iterations a run "
                                   "can have; it cannot be trained further: train a new run, or this one again with --restart\n").arg(run));
    QCOMPARE(contents(run), before);
    r = cli({QStringLiteral("eval"), run, QStringLiteral("--games"), QStringLiteral("2")});
    QCOMPARE(r.status, 0);
    QCOMPARE(r.err, QStringLiteral("using %1/checkpoints/iter-1099511627776.ckpt (iteration 1099511627776)\n").arg(run));
    r = cli({QStringLiteral("export"), run, QStringLiteral("--checkpoint"), QStringLiteral("1099511627776"), QStringLiteral("--out"),
             dir_.filePath(QStringLiteral("wide.onnx"))});
    QCOMPARE(r.status, 0);
    QVERIFY2(r.out.contains(QStringLiteral("iteration 1099511627776\n")), qPrintable(r.out));
  }

  // Issue 44, round 3: two names for one iteration (a corrupt iter-0002.ckpt beside a valid
  // iter-00000002.ckpt, or a valid unpadded copy): the run's own name is tried first, and pruning
  // goes by iteration, never deleting the newest valid checkpoint before the one just written.
  void twoNamesForOneIterationKeepTheValidOne() {
    const QString run = trained(QStringLiteral("two-names"), 2);
    const QString folder = run + QStringLiteral("/checkpoints/");
    append(folder + QStringLiteral("iter-0002.ckpt"), "not a checkpoint");
    const QStringList resume = {QStringLiteral("train"), QStringLiteral("--resume"), run, QStringLiteral("--iterations"), QStringLiteral("1")};
    Result r = cli(resume);
    QCOMPARE(r.status, 0);
    QCOMPARE(r.err, QStringLiteral("resumed from %1/checkpoints/iter-00000002.ckpt (iteration 2)\nrun folder: %1\n").arg(run));
    QCOMPARE(QDir(folder).entryList(QDir::Files),
             QStringList({QStringLiteral("iter-00000002.ckpt"), QStringLiteral("iter-00000003.ckpt"), QStringLiteral("iter-0002.ckpt")}));
    r = cli(resume);  // iteration 4: both names of iteration 2 go
    QCOMPARE(r.status, 0);
    QCOMPARE(QDir(folder).entryList(QDir::Files), QStringList({QStringLiteral("iter-00000003.ckpt"), QStringLiteral("iter-00000004.ckpt")}));

    // A valid unpadded copy beside the run's own file, corrupted: the copy is used and kept.
    QVERIFY(QFile::copy(folder + QStringLiteral("iter-00000004.ckpt"), folder + QStringLiteral("iter-4.ckpt")));
    QFile own(folder + QStringLiteral("iter-00000004.ckpt"));
    QVERIFY(own.open(QIODevice::ReadWrite));
    own.seek(64);
    own.write("corrupt");
    own.close();
    r = cli(resume);
    QCOMPARE(r.status, 0);
    QCOMPARE(r.err, QStringLiteral("warning: skipping checkpoint iter-00000004.ckpt: checksum mismatch (the file is corrupted)\n"
                                   "resumed from %1/checkpoints/iter-4.ckpt (iteration 4)\nrun folder: %1\n").arg(run));
    QCOMPARE(QDir(folder).entryList(QDir::Files),
             QStringList({QStringLiteral("iter-00000004.ckpt"), QStringLiteral("iter-00000005.ckpt"), QStringLiteral("iter-4.ckpt")}));
    verifyMetrics(run, 5);
  }

  // Issue 44, round 3: resume counts the logged changes it could not apply again.
  void refusedChangesAreCountedOnResume() {
    const QString run = trained(QStringLiteral("refused-changes"), 2);
    append(run + QStringLiteral("/changes.jsonl"), "{\"iteration\": 2, \"parameter\": \"search.c_puct\", \"from\": \"1.5\", \"to\": \"2.5\"}\n"
                                                  "{\"iteration\": 2, \"parameter\": \"search.c_puct\", \"from\": \"2.5\", \"to\": \"1000\"}\n"
                                                  "{\"iteration\": 3, \"parameter\": \"search.no_such\", \"from\": \"1\", \"to\": \"2\"}\n");
    cas::engine::TrainedRun resumed = cas::engine::openTrainedRun(run.toStdString(), cas::exec::makeCpuBackend(), {cas::engine::RunUse::Resume, false});
    QVERIFY2(resumed.trainer, resumed.error.message.c_str());
    QCOMPARE(resumed.trainer->parameters().getFloat("search.c_puct"), 2.5);
    QStringList notices;
    for (const cas::Diagnostic& d : resumed.notices) notices << QString::fromStdString(d.message);
    QCOMPARE(notices, QStringList({QStringLiteral("the change of search.c_puct at iteration 2 is not applied again: search.c_puct = 1000 is out of "
                                                  "range: expected a number in [0, 100]"),
                                   QStringLiteral("the change of search.no_such at iteration 3 is not applied again: unknown parameter 'search.no_such'"),
                                   QStringLiteral("applied again 1 of the 3 parameter change(s) logged up to iteration 3; 2 refused (see the "
                                                  "warnings above)")}));
  }

  // Issue 44, round 3: analyze --json of a network whose logits are partly NaN prints JSON: the
  // values that are not numbers are null, and "not_finite" names them.
  void analyzeJsonOfPartlyNanLogits() {
    const QString project = dir_.filePath(QStringLiteral("nan-logits-project"));
    QDir().mkpath(project);
    for (const char* file : {"project.toml", "policy.pdl"})
      QVERIFY(QFile::copy(kExample + QLatin1Char('/') + QLatin1String(file), project + QLatin1Char('/') + QLatin1String(file)));
    const QString run = trained(QStringLiteral("nan-logits-run"), 1, project);
    QFile policy(project + QStringLiteral("/policy.pdl"));
    QVERIFY(policy.open(QIODevice::ReadWrite));
    const QByteArray text = policy.readAll();
    QVERIFY(text.contains("logits = dense(h, units=action_dim)"));
    policy.resize(0);
    policy.write(QByteArray(text).replace("logits = dense(h, units=action_dim)", "logits = log(dense(h, units=action_dim))"));  // NaN where negative
    policy.close();
    for (const char* position : {"5", "15"}) {
      const Result r = cli({QStringLiteral("analyze"), run, QStringLiteral("--position"), QLatin1String(position), QStringLiteral("--json"),
                            QStringLiteral("--use-project")});
      QCOMPARE(r.status, 0);
      QVERIFY2(!QRegularExpression(QStringLiteral("[:,\\[] *-?(nan|inf)")).match(r.out).hasMatch(), qPrintable(r.out));
      QJsonParseError error;
      const QJsonDocument doc = QJsonDocument::fromJson(r.out.toUtf8(), &error);
      QVERIFY2(doc.isObject(), qPrintable(r.out + error.errorString()));
      const QJsonObject o = doc.object();
      QVERIFY2(o.value(QLatin1String("not_finite")).isArray(), qPrintable(r.out));
      QVERIFY2(o.value(QLatin1String("not_finite")).toArray().contains(QStringLiteral("prior")), qPrintable(r.out));
      for (const QJsonValue& v : o.value(QLatin1String("not_finite")).toArray()) {
        const QJsonValue field = o.value(v.toString());
        QVERIFY2(field.isNull() || (field.isArray() && field.toArray().contains(QJsonValue::Null)), qPrintable(r.out));
      }
      QCOMPARE(o.value(QLatin1String("not_finite_reason")).toString(),
               QStringLiteral("the network's output or the search's statistics are not finite numbers (NaN or infinite) there, printed as null"));
    }
  }

  // Issue 44, round 3: analyze --positions FILE reads CRLF lines and a byte order mark, refuses a
  // line too long to be a position without analysing it, and reports at most 20 errors.
  void positionsFilesAreReadAsTextAndBounded() {
    const QString run = trained(QStringLiteral("positions"), 1);
    const QString file = dir_.filePath(QStringLiteral("positions.txt"));
    QByteArray text = "\xef\xbb\xbf" "5\r\n# a comment\r\n" + QByteArray(100000, '1') + "\r\n";
    for (int i = 0; i < 25; ++i) text += "x\r\n";
    text += "1\r\n";
    append(file, text);
    const Result r = cli({QStringLiteral("analyze"), run, QStringLiteral("--positions"), file, QStringLiteral("--json")});
    QCOMPARE(r.status, 1);
    const QStringList out = r.out.split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    QCOMPARE(out.size(), 2);
    QVERIFY2(out[0].startsWith(QStringLiteral("{\"position\": \"5\",")), qPrintable(out[0]));
    QVERIFY2(out[1].startsWith(QStringLiteral("{\"position\": \"1\",")), qPrintable(out[1]));
    QStringList err = r.err.split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    QVERIFY2(err.first().startsWith(QStringLiteral("using ")), qPrintable(r.err));
    err.removeFirst();
    QCOMPARE(err.size(), 21);
    QCOMPARE(err[0], QStringLiteral("error: %1:3: a line of 100000 bytes is not a position; a position is at most 1024 bytes").arg(file));
    QVERIFY2(err[1].startsWith(QStringLiteral("error: %1:4: position 'x': ").arg(file)), qPrintable(err[1]));
    QVERIFY2(err[19].startsWith(QStringLiteral("error: %1:22: position 'x': ").arg(file)), qPrintable(err[19]));
    QCOMPARE(err[20], QStringLiteral("error: ... and 6 more positions that are not valid (the first 20 are shown)"));
    QVERIFY(r.err.size() < 4000);
  }
};

QTEST_GUILESS_MAIN(TestRunSafety)
#include "test_run_safety.moc"
