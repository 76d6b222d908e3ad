// Run folders resumed and edited later: resume that repairs the logs (or refuses, touching
// nothing), logs rewritten by other tools (whitespace, CRLF, re-serialised lines, iterations
// written 2.0), logged parameter changes applied again, restart, runs that keep their policy and
// adopt the project's with --use-project, links out of the run, the iteration before the first
// training step, configurations too large for memory, a finished run, and the smaller refusals of
// issue 13 (items 5-7, 9, 10 and 15). Each asserts the exact message and what the folder holds
// afterwards. Making a run folder: test_run_making; its checkpoints: test_run_checkpoints.
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>

#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <limits>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/engine/run_folder.hpp"
#include "core/engine/run_lock.hpp"
#include "core/engine/trained_run.hpp"
#include "core/support/atomic_file.hpp"
#include "support/cli_runs.hpp"
#include "support/run_files.hpp"

using namespace cas::test;  // the run-folder helpers of support/run_files.hpp and cli_runs.hpp

namespace {

// The CLI run with `args`, its address space limited to `limitBytes` (0: no limit): its exit
// status, its standard error and the most memory it held (resident, KiB), from wait4.
struct Measured {
  int status = -1;
  QString err;
  long peakKiB = 0;
};
Measured measuredCli(const QStringList& args, const QString& errFile, rlim_t limitBytes = 0) {
  std::vector<QByteArray> words{kCli.toLocal8Bit()};
  for (const QString& a : args) words.push_back(a.toLocal8Bit());
  std::vector<char*> argv;
  for (QByteArray& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  const QByteArray errPath = errFile.toLocal8Bit();
  const pid_t pid = ::fork();
  if (pid == 0) {  // only async-signal-safe calls from here
    const rlimit limit{limitBytes, limitBytes};
    if (limitBytes) ::setrlimit(RLIMIT_AS, &limit);
    const int err = ::open(errPath.constData(), O_WRONLY | O_CREAT | O_TRUNC, 0644), out = ::open("/dev/null", O_WRONLY);
    ::dup2(err, 2);
    ::dup2(out, 1);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  Measured m;
  int status = 0;
  rusage usage{};
  if (pid < 0 || ::wait4(pid, &status, 0, &usage) != pid) return m;
  m.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  m.peakKiB = usage.ru_maxrss;
  m.err = QString::fromUtf8(bytes(errFile));
  return m;
}

}  // namespace

class TestRunSafety : public cas::test::RunFolderSuite {
  Q_OBJECT

 private slots:
  // Hardening, fourth probe: a SIGINT in the first milliseconds of `train --out k` ended the
  // process (exit 130, no message) after k had its config.toml and lock but before any
  // checkpoint: a folder that is no run to resume. Interrupted at any moment, k is now either
  // absent (removed again, and said so) or a run with a checkpoint.
  void anEarlyInterruptLeavesNoHalfRun() {
    for (int delay : {0, 1, 2, 4, 8, 15, 30, 60, 120}) {
      const QString out = dir_.filePath(QStringLiteral("early-%1").arg(delay));
      QProcess p;
      p.start(kCli, QStringList{QStringLiteral("train"), kExample, QStringLiteral("--iterations"), QStringLiteral("1"), QStringLiteral("--out"), out} + kQuick);
      QVERIFY(p.waitForStarted());
      QThread::msleep(delay);
      ::kill(pid_t(p.processId()), SIGINT);
      QVERIFY(p.waitForFinished(60000));
      const QString err = QString::fromUtf8(p.readAllStandardError());
      if (!QFileInfo::exists(out)) continue;  // killed before it made the folder, or removed again
      QVERIFY2(!QDir(out + QStringLiteral("/checkpoints")).entryList({QStringLiteral("iter-*.ckpt")}, QDir::Files).isEmpty(),
               qPrintable(QStringLiteral("%1 ms: %2 holds %3; stderr: %4").arg(delay).arg(out, QDir(out).entryList(QDir::AllEntries | QDir::NoDotAndDotDot).join(QLatin1Char(' ')), err)));
    }
  }

  // A training stopped by SIGTERM or Ctrl-C ("stopping after this iteration") exited 0, like one
  // that trained all it was asked, so a script could not tell them apart. It now exits 130, as a
  // stop before the first iteration does, once its last iteration is checkpointed.
  void aStoppedTrainingExits130() {
    const QString run = trained(QStringLiteral("stop-status"), 1);
    for (int signal : {SIGTERM, SIGINT}) {
      QProcess p;
      p.start(kCli, {QStringLiteral("train"), QStringLiteral("--resume"), run, QStringLiteral("--iterations"), QStringLiteral("100000")});
      QVERIFY(p.waitForStarted());
      QByteArray out;
      while (!out.contains("iter ") && p.waitForReadyRead(60000)) out += p.readAllStandardOutput();
      QVERIFY2(out.contains("iter "), out.constData());
      ::kill(pid_t(p.processId()), signal);
      QVERIFY(p.waitForFinished(60000));
      const QString err = QString::fromUtf8(p.readAllStandardError());
      QVERIFY2(err.contains(QStringLiteral("stopping after this iteration (the run will be checkpointed)...\n")), qPrintable(err));
      QCOMPARE(p.exitStatus(), QProcess::NormalExit);
      QCOMPARE(p.exitCode(), 130);
    }
    const Result r = cli({QStringLiteral("train"), QStringLiteral("--resume"), run, QStringLiteral("--iterations"), QStringLiteral("1")});
    QCOMPARE(r.status, 0);  // the stopped run goes on; one that trains all it was asked exits 0
  }

  // Hardening, fifth probe (D8): a metrics.jsonl whose lines end in a lone CR (rewritten by a
  // tool with old Mac line ends) was read as one partial line and deleted whole on resume ("dropped
  // a partial last line"). Each CR now ends a line, in metrics.jsonl and changes.jsonl alike: every
  // record stays, and the logs go on with LF line ends.
  void crOnlyLogsKeepTheirRecords() {
    const QString run = trained(QStringLiteral("cr-only"), 3);
    QByteArray metrics = bytes(run + QStringLiteral("/metrics.jsonl"));
    const QByteArray lf = metrics;
    metrics.replace('\n', '\r');
    QFile m(run + QStringLiteral("/metrics.jsonl"));
    QVERIFY(m.open(QIODevice::WriteOnly | QIODevice::Truncate));
    m.write(metrics);
    m.close();
    const QByteArray change2 = "{\"iteration\": 2, \"parameter\": \"search.c_puct\", \"from\": \"1.5\", \"to\": \"2\"}";
    const QByteArray change3 = "{\"iteration\": 3, \"parameter\": \"search.c_puct\", \"from\": \"2\", \"to\": \"2.5\"}";
    append(run + QStringLiteral("/changes.jsonl"), change2 + '\r' + change3 + '\r');
    Result r = cli({QStringLiteral("train"), QStringLiteral("--resume"), run, QStringLiteral("--iterations"), QStringLiteral("1")});
    QCOMPARE(r.status, 0);
    QCOMPARE(r.err, QStringLiteral("note: applied again the 2 parameter change(s) logged up to iteration 4\n"
                                   "resumed from %1/checkpoints/iter-00000003.ckpt (iteration 3)\nrun folder: %1\n").arg(run));
    verifyMetrics(run, 4);
    QVERIFY(bytes(run + QStringLiteral("/metrics.jsonl")).startsWith(lf));
    QCOMPARE(bytes(run + QStringLiteral("/changes.jsonl")), change2 + '\n' + change3 + '\n');
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
    // Issue 44, round 3: PPO's rollout is counted too (it ended in "std::bad_alloc").
    const QString rolloutRun = dir_.filePath(QStringLiteral("huge-rollout"));
    r = cli({QStringLiteral("train"), cas::test::sourcePath(QStringLiteral("projects/cartpole-ppo")), QStringLiteral("--out"), rolloutRun,
             QStringLiteral("--set"), QStringLiteral("ppo.envs=65536"), QStringLiteral("--set"), QStringLiteral("ppo.rollout_steps=100000"),
             QStringLiteral("--set"), QStringLiteral("ppo.minibatches=65536")});
    QCOMPARE(r.status, 1);
    QVERIFY2(QRegularExpression(shape.arg(QStringLiteral("the rollout \\(65536 x 100000 steps of 11 floats\\), 268\\.6 GiB: "
                                                         "reduce ppo\\.envs or ppo\\.rollout_steps\n")))
                 .match(r.err)
                 .hasMatch(),
             qPrintable(r.err));
    QVERIFY(!QDir(rolloutRun).exists());
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
    // The iteration-1 change after the later ones is as valid (found by the held-out probe: it
    // was dropped as "malformed"); changes apply in the order of their iterations.
    append(run + QStringLiteral("/changes.jsonl"), "{\"iteration\":2,\"parameter\":\"search.c_puct\",\"from\":\"1.5\",\"to\":\"2.5\"}\r\n"
                                                  "{\"to\": \"3\", \"from\": \"2.5\", \"parameter\": \"search.c_puct\", \"iteration\": 3} \n"
                                                  "{\"iteration\": 1, \"parameter\": \"search.c_puct\", \"from\": \"1.5\", \"to\": \"1.75\"}\n");
    cas::engine::TrainedRun resumed = cas::engine::openTrainedRun(run.toStdString(), cas::exec::makeCpuBackend(), {cas::engine::RunUse::Resume, false});
    QVERIFY2(resumed.trainer, resumed.error.message.c_str());
    QCOMPARE(resumed.trainer->iteration(), std::int64_t(3));
    QCOMPARE(resumed.trainer->parameters().getFloat("search.c_puct"), 3.0);
    QStringList notices;
    for (const cas::Diagnostic& d : resumed.notices) notices << QString::fromStdString(cas::formatHeadline(d));
    QCOMPARE(notices, QStringList({QStringLiteral("note: applied again the 3 parameter change(s) logged up to iteration 4")}));
    verifyMetrics(run, 3);
    QCOMPARE(lines(metrics).value(2).toUtf8(), compact);
    const QStringList changes = lines(run + QStringLiteral("/changes.jsonl"));
    QCOMPARE(changes.size(), 3);
    QVERIFY2(changes[0].contains(QStringLiteral("\"to\": \"1.75\"")), qPrintable(changes.join(QLatin1Char('\n'))));
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

  // Issue 44: resuming a PPO run that has reached its ppo.total_steps says so.
  void resumingAFinishedRunSaysSo() {
    const QString run = dir_.filePath(QStringLiteral("finished"));
    Result r = cli({QStringLiteral("train"), cas::test::sourcePath(QStringLiteral("projects/cartpole-ppo")), QStringLiteral("--out"), run,
                    QStringLiteral("--set"), QStringLiteral("ppo.total_steps=512")});
    QCOMPARE(r.status, 0);
    r = cli({QStringLiteral("train"), QStringLiteral("--resume"), run, QStringLiteral("--iterations"), QStringLiteral("3")});
    QCOMPARE(r.status, 0);
    QVERIFY2(r.err.endsWith(QStringLiteral("note: %1 has reached the end of the training its configuration sets (ppo.total_steps = 512 environment "
                                           "steps): there is nothing to train; raise ppo.total_steps in %1/config.toml to train it further\n").arg(run)),
             qPrintable(r.err));
    QCOMPARE(lines(run + QStringLiteral("/metrics.jsonl")).size(), 1);
  }

  // Issue 44, round 3: resume counts the logged changes it could not apply again, and quotes a
  // refused value as the line wrote it (a number 1e3 as 1e3, found by the held-out probe).
  void refusedChangesAreCountedOnResume() {
    const QString run = trained(QStringLiteral("refused-changes"), 2);
    append(run + QStringLiteral("/changes.jsonl"), "{\"iteration\": 2, \"parameter\": \"search.c_puct\", \"from\": \"1.5\", \"to\": \"2.5\"}\n"
                                                  "{\"iteration\": 2, \"parameter\": \"search.c_puct\", \"from\": \"2.5\", \"to\": 1e3}\n"
                                                  "{\"iteration\": 3, \"parameter\": \"search.no_such\", \"from\": \"1\", \"to\": \"2\"}\n");
    cas::engine::TrainedRun resumed = cas::engine::openTrainedRun(run.toStdString(), cas::exec::makeCpuBackend(), {cas::engine::RunUse::Resume, false});
    QVERIFY2(resumed.trainer, resumed.error.message.c_str());
    QCOMPARE(resumed.trainer->parameters().getFloat("search.c_puct"), 2.5);
    QStringList notices;
    for (const cas::Diagnostic& d : resumed.notices) notices << QString::fromStdString(d.message);
    QCOMPARE(notices, QStringList({QStringLiteral("the change of search.c_puct at iteration 2 is not applied again: search.c_puct = 1e3 is out of "
                                                  "range: expected a number in [0, 100]"),
                                   QStringLiteral("the change of 'search.no_such' at iteration 3 is not applied again: unknown parameter 'search.no_such'"),
                                   QStringLiteral("applied again 1 of the 3 parameter change(s) logged up to iteration 3; 2 refused (see the "
                                                  "warnings above)")}));
  }

  // Found by the second held-out probe: train.batch_size was marked live, but the training
  // network is compiled for one batch, so a logged change of it stopped every resume ("input
  // 'obs' has 576 elements, not 288"). It applies when a run starts; the logged change is refused
  // with that reason and the run resumes.
  void aLoggedBatchSizeChangeDoesNotStopTheRun() {
    const QString run = trained(QStringLiteral("batch-change"), 2);
    append(run + QStringLiteral("/changes.jsonl"), "{\"iteration\": 2, \"parameter\": \"train.batch_size\", \"from\": \"32\", \"to\": \"16\"}\n");
    const Result r = cli({QStringLiteral("train"), QStringLiteral("--resume"), run, QStringLiteral("--iterations"), QStringLiteral("1")});
    QVERIFY2(r.status == 0, qPrintable(r.err));
    QVERIFY2(r.err.contains(QStringLiteral("the change of train.batch_size at iteration 2 is not applied again: train.batch_size applies only when "
                                           "a run starts; restart the run to change it")),
             qPrintable(r.err));
    verifyMetrics(run, 3);
  }

  // Found by the second held-out probe: --restart removed the checkpoints, then stopped at a
  // folder where metrics.jsonl should be ("Directory not empty", naming nothing), leaving a run
  // with its logs and no checkpoints. It now names the folder and discards nothing.
  void aRestartThatCannotFinishDiscardsNothing() {
    const QString run = trained(QStringLiteral("restart-blocked"), 2);
    QVERIFY(QFile::rename(run + QStringLiteral("/metrics.jsonl"), run + QStringLiteral("/metrics-kept")));
    QVERIFY(QDir().mkpath(run + QStringLiteral("/metrics.jsonl/inside")));
    const QMap<QString, QByteArray> before = contents(run);
    const Result r = cli({QStringLiteral("train"), QStringLiteral("--restart"), run, QStringLiteral("--iterations"), QStringLiteral("1")});
    QCOMPARE(r.status, 1);
    QCOMPARE(r.err, QStringLiteral("error: cannot discard the progress of %1: %1/metrics.jsonl is a folder, not a file the run wrote; move it "
                                   "out of the run folder and try again (nothing was discarded)\n").arg(run));
    QCOMPARE(contents(run), before);
  }

  // Hardening 3, item 1: --out beside --resume or --restart was ignored, and --restart then
  // discarded the run's progress; it is refused before the run is opened.
  void outCannotBeCombinedWithResumeOrRestart() {
    const QString run = trained(QStringLiteral("out-with-resume"), 1);
    const QMap<QString, QByteArray> before = contents(run);
    const QString elsewhere = dir_.filePath(QStringLiteral("out-elsewhere"));
    for (const QString& how : {QStringLiteral("--resume"), QStringLiteral("--restart")}) {
      const Result r = cli({QStringLiteral("train"), how, run, QStringLiteral("--out"), elsewhere, QStringLiteral("--iterations"), QStringLiteral("1")});
      QCOMPARE(r.status, 2);
      QCOMPARE(r.err, QStringLiteral("error: --out cannot be combined with --resume or --restart: the run is trained on in its own folder, %1; to "
                                     "train the project into a new folder, give the project folder and --out instead\n").arg(run));
    }
    QCOMPARE(contents(run), before);
    QVERIFY(!QFileInfo::exists(elsewhere));
  }

  // Hardening 3, item 16: --minutes 100 --iterations 1 printed an ETA of 1h39m, the time limit's;
  // the ETA is the sooner of the limits.
  void theEtaIsTheSoonerOfTheLimits() {
    const Result r = cli(QStringList{QStringLiteral("train"), kExample, QStringLiteral("--out"), dir_.filePath(QStringLiteral("eta")), QStringLiteral("--minutes"),
                                     QStringLiteral("100"), QStringLiteral("--iterations"), QStringLiteral("1")} + kQuick);
    QCOMPARE(r.status, 0);
    QVERIFY2(r.out.endsWith(QStringLiteral(" | ETA 0s\n")), qPrintable(r.out));
  }

  // Hardening 3, item 17: a logged change that resume cannot apply again is warned about at its
  // line of changes.jsonl, as the resume leaves the log.
  void refusedChangesAreWarnedAboutAtTheirLine() {
    const QString run = trained(QStringLiteral("change-lines"), 2);
    append(run + QStringLiteral("/changes.jsonl"), "{\"iteration\": 2, \"parameter\": \"search.c_puct\", \"from\": \"1.5\", \"to\": \"2.5\"}\n"
                                                  "{\"iteration\": 3, \"parameter\": \"search.no_such\", \"from\": \"1\", \"to\": \"2\"}\n");
    const Result r = cli({QStringLiteral("train"), QStringLiteral("--resume"), run, QStringLiteral("--iterations"), QStringLiteral("1")});
    QCOMPARE(r.status, 0);
    QVERIFY2(r.err.contains(QStringLiteral("%1/changes.jsonl:2: warning: the change of 'search.no_such' at iteration 3 is not applied again: unknown "
                                           "parameter 'search.no_such'\n").arg(run)),
             qPrintable(r.err));
  }

  // Hardening 3, item 18: eval --episodes of an AlphaZero run said "is a alphazero run" after
  // loading its checkpoint, with status 2; it is refused before, with status 1 as `eval` of a
  // PPO run is, and says "an".
  void episodesOfATwoPlayerRunAreRefusedFirst() {
    const QString run = trained(QStringLiteral("episodes-of-alphazero"), 1);
    const Result r = cli({QStringLiteral("eval"), run, QStringLiteral("--episodes"), QStringLiteral("2")});
    QCOMPARE(r.status, 1);
    QCOMPARE(r.err, QStringLiteral("error: %1 is an alphazero run of a two-player game; --episodes evaluates single-agent runs: play it against an "
                                   "opponent with --opponent and --games\n").arg(run));
  }

  // Hardening 3, item 6: the estimate counted one trainer whatever --ranks said, though every
  // CPU rank builds a whole one: 4 ranks of a buffer that fits once ran out of memory (while the
  // ranks were built, advising --resume of a run that had no checkpoint). The ranks are counted
  // together, and the run is refused before anything is allocated.
  void theMemoryEstimateCountsEveryRank() {
    const QString out = dir_.filePath(QStringLiteral("ranks-memory"));
    const QString limited = QStringLiteral("ulimit -v 4194304; exec \"$0\" \"$@\"");
    const Result r = cli(QStringList{QStringLiteral("-c"), limited, kCli, QStringLiteral("train"), kExample, QStringLiteral("--out"), out,
                                     QStringLiteral("--device"), QStringLiteral("cpu"), QStringLiteral("--ranks"), QStringLiteral("4"),
                                     QStringLiteral("--iterations"), QStringLiteral("1")} +
                             kQuick + QStringList{QStringLiteral("--set"), QStringLiteral("train.replay_capacity=5000000")},
                         QStringLiteral("/bin/sh"));
    QCOMPARE(r.status, 1);
    QVERIFY2(QRegularExpression(QStringLiteral("^error: this configuration needs about [0-9.]+ GiB of memory, more than the [0-9.]+ [MG]iB available; "
                                               "the largest part is the replay buffer \\(5000000 positions of 28 floats, with its checkpoint\\) on each "
                                               "of the 4 ranks, 6\\.3 GiB: reduce train\\.replay_capacity, or give fewer --ranks\n$"))
                 .match(r.err)
                 .hasMatch(),
             qPrintable(r.err));
    QVERIFY(!QFileInfo::exists(out));
  }

  // Hardening 3, item 5: a run's metrics.jsonl could grow past the 256 MiB its reader takes, and
  // the run could then never be resumed. Training stops at the limit, the log still readable; a
  // log already past it (grown by an older version) is refused with what to do. (Sparse files:
  // the limit counts a file's size.)
  void logsStopAtTheLimitTheirReaderTakes() {
    const QString run = trained(QStringLiteral("log-limit"), 1);
    const QString metrics = run + QStringLiteral("/metrics.jsonl");
    const qint64 limit = qint64(256) << 20;
    QVERIFY(QFile::resize(metrics, limit - 10));
    {
      cas::project::Project project;
      cas::Diagnostic error;
      auto folder = cas::engine::RunFolder::open(run.toStdString(), cas::engine::RunAccess::Write, false, &project, &error, nullptr);
      QVERIFY2(folder, error.message.c_str());
      std::string problem;
      QVERIFY(!folder->appendMetrics("{\"iteration\": 2}", &problem));
      QCOMPARE(QString::fromStdString(problem), QStringLiteral("%1 has reached the 256.0 MiB a run's metrics or change log may hold; move it out of "
                                                              "the run folder (the run does not need it to go on) and resume the run: a new log is "
                                                              "begun").arg(metrics));
    }
    QCOMPARE(QFileInfo(metrics).size(), limit - 10);
    QVERIFY(QFile::resize(metrics, limit + 1));
    const Result r = cli({QStringLiteral("train"), QStringLiteral("--resume"), run, QStringLiteral("--iterations"), QStringLiteral("1")});
    QCOMPARE(r.status, 1);
    QCOMPARE(r.err, QStringLiteral("error: %1 is 268435457 bytes, more than the 268435456 bytes (256.0 MiB) a run's metrics or change log may hold; "
                                   "move it out of the run folder (the run does not need it to go on), or keep only its last lines (tail -n 100000 "
                                   "%1 > %1.new && mv %1.new %1), and try again\n").arg(metrics));
    QCOMPARE(QFileInfo(metrics).size(), limit + 1);
  }

  // A resume reads its logs a line at a time: a metrics.jsonl of 20 million short lines (60 MB)
  // once took over 600 MB (a view of every line), and 40 million took 1.2 GB. And when what a log
  // keeps does not fit in memory, the error names the log and what to do, not a configuration
  // that asks too much ("out of memory; ask for less (fewer threads, ...)").
  void logsAreReadInBoundedMemory() {
    const QString run = trained(QStringLiteral("log-memory"), 1);
    QByteArray junk;
    for (int i = 0; i < 1000000; ++i) junk += "{}\n";
    for (int i = 0; i < 20; ++i) append(run + QStringLiteral("/metrics.jsonl"), junk);
    const QString err = dir_.filePath(QStringLiteral("log-memory.err"));
    const QStringList resume{QStringLiteral("train"), QStringLiteral("--resume"), run, QStringLiteral("--iterations"), QStringLiteral("1")};
    Measured m = measuredCli(resume, err);
    QCOMPARE(m.status, 0);
    QVERIFY2(m.err.startsWith(
                 QStringLiteral("note: metrics.jsonl cut back to iteration 1: dropped 20000000 lines malformed or logging an iteration "
                                "again\n")),
             qPrintable(m.err));
    QVERIFY2(m.peakKiB < 300 * 1024, qPrintable(QStringLiteral("%1 KiB").arg(m.peakKiB)));

    const rlim_t limit = rlim_t(250) << 20;
    if (measuredCli(resume, err, limit).status != 0) QSKIP("a resume needs more than 250 MiB of address space here");
    const QByteArray change = "{\"iteration\": 3, \"parameter\": \"search.c_puct\", \"from\": \"1.5\", \"to\": \"2\"}\n";
    QByteArray changes;
    for (int i = 0; i < 100000; ++i) changes += change;
    for (int i = 0; i < 15; ++i) append(run + QStringLiteral("/changes.jsonl"), changes);
    m = measuredCli(resume, err, limit);
    const QString log = run + QStringLiteral("/changes.jsonl");
    QCOMPARE(m.status, 1);
    QCOMPARE(m.err,
             QStringLiteral("error: out of memory while reading %1 (%2); move it out of the run folder (the run does not need it to go "
                            "on), or keep only its last lines (tail -n 100000 %1 > %1.new && mv %1.new %1), and try again\n")
                 .arg(log, QString::fromStdString(cas::formatBytes(std::uint64_t(QFileInfo(log).size())))));
  }

  // A `train` started with SIGINT ignored (a job started with & from a script) installed its
  // handler only when its run began: a SIGINT before was lost, and the run trained on. It now
  // answers SIGINT from the start of main(): once the process catches it, a SIGINT stops the run
  // (its folder removed again, or checkpointed), exit 130.
  void anInterruptIgnoredAtStartIsAnsweredEarly() {
    const QString out = dir_.filePath(QStringLiteral("ignored-interrupt"));
    const QByteArray program = kCli.toLocal8Bit(), project = kExample.toLocal8Bit(), folder = out.toLocal8Bit();
    const char* argv[] = {program.constData(), "train", project.constData(), "--iterations", "100000", "--out",
                          folder.constData(),  nullptr};
    const pid_t pid = ::fork();
    if (pid == 0) {
      std::signal(SIGINT, SIG_IGN);
      const int null = ::open("/dev/null", O_WRONLY);
      ::dup2(null, 1);
      ::dup2(null, 2);
      ::execv(argv[0], const_cast<char* const*>(argv));
      ::_exit(127);
    }
    QVERIFY(pid > 0);
    auto catchesInterrupt =
        [&] {  // once it runs cuda-agent (not this test's copy), SigCgt: the signals it has handlers for; SIGINT is bit 1
          if (QFileInfo(QStringLiteral("/proc/%1/exe").arg(pid)).symLinkTarget() != QFileInfo(kCli).canonicalFilePath()) return false;
          const QByteArray status = bytes(QStringLiteral("/proc/%1/status").arg(pid));
          const int at = status.indexOf("SigCgt:");
          return at >= 0 && (status.mid(at + 7, status.indexOf('\n', at) - at - 7).trimmed().toULongLong(nullptr, 16) & 2) != 0;
        };
    QElapsedTimer timer;
    timer.start();
    while (!catchesInterrupt() && timer.elapsed() < 30000) QThread::usleep(50);
    ::kill(pid, SIGINT);
    int status = 0;
    while (::waitpid(pid, &status, WNOHANG) == 0 && timer.elapsed() < 90000) QThread::msleep(10);
    if (timer.elapsed() >= 90000) ::kill(pid, SIGKILL), ::waitpid(pid, &status, 0);
    QVERIFY2(WIFEXITED(status) && WEXITSTATUS(status) == 130, qPrintable(QStringLiteral("status %1").arg(status)));
    QVERIFY(!QFileInfo::exists(out) ||
            !QDir(out + QStringLiteral("/checkpoints")).entryList({QStringLiteral("iter-*.ckpt")}, QDir::Files).isEmpty());
  }

  // `train --ranks 64` under a memory limit the up-front estimate passes: a rank that could not
  // build its trainer, or whose thread could not be started, said to reduce search.node_budget
  // or "use fewer threads" (not --ranks), or the process aborted ("terminate called without an
  // active exception", a thread that could not start). Each now ends in a sentence that names
  // fewer --ranks, and leaves no run folder.
  void ranksThatDoNotFitSayFewerRanks() {
    const QString out = dir_.filePath(QStringLiteral("ranks-64"));
    const QStringList args{QStringLiteral("train"),        kExample,
                           QStringLiteral("--ranks"),      QStringLiteral("64"),
                           QStringLiteral("--iterations"), QStringLiteral("1"),
                           QStringLiteral("--out"),        out,
                           QStringLiteral("--set"),        QStringLiteral("train.replay_capacity=1000"),
                           QStringLiteral("--set"),        QStringLiteral("search.node_budget=1024")};
    for (rlim_t mib : {500, 700, 1200}) {
      const Measured m = measuredCli(args, dir_.filePath(QStringLiteral("ranks-64.err")), mib << 20);
      QVERIFY2(m.status == 1 && m.err.contains(QStringLiteral("give fewer --ranks")),
               qPrintable(QStringLiteral("%1 MiB: status %2: %3").arg(mib).arg(m.status).arg(m.err)));
      QVERIFY(!QFileInfo::exists(out));
    }
  }

  // Found by the second held-out probe: Ctrl-C and SIGTERM went unanswered through an evaluation
  // of 100,000 games (the run needed SIGKILL and lost its iteration). The evaluation asks the same
  // question self-play asks before every move, and counts only the games it finished.
  void anEvaluationStopsWhenAsked() {
    const QString run = trained(QStringLiteral("stop-evaluation"), 1);
    cas::engine::TrainedRun opened = cas::engine::openTrainedRun(run.toStdString(), cas::exec::makeCpuBackend(), {cas::engine::RunUse::Read, false});
    QVERIFY2(opened.trainer, opened.error.message.c_str());
    int asked = 0;
    const cas::train::EvaluationResult stopped = opened.trainer->evaluate("random", 100000, 1, [&] { return ++asked > 3; });
    QCOMPARE(stopped.games, 0);
    QCOMPARE(asked, 4);
    const cas::train::EvaluationResult whole = opened.trainer->evaluate("random", 4, 1, [] { return false; });
    QCOMPARE(whole.games, 4);
    QCOMPARE(whole.wins + whole.draws + whole.losses, 4);
  }
};

QTEST_GUILESS_MAIN(TestRunSafety)
#include "test_run_safety.moc"
