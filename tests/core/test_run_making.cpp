// Making a run folder and holding it: one writer per folder (its lock, taken over from a killed
// process; a lock that is no lock file), only a new or empty folder becomes a run, a run whose
// making was stopped at once is made again, and a refused train leaves the user's folder as it
// was. Each asserts the exact message and what the folder holds afterwards.
#include <QDateTime>
#include <QDir>
#include <QFileInfo>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

#include <csignal>
#include <cstring>
#include <limits>
#include <sys/stat.h>
#include <unistd.h>

#include "core/engine/run_folder.hpp"
#include "core/engine/run_lock.hpp"
#include "core/engine/trained_run.hpp"
#include "core/project/project.hpp"

#include "support/cli_runs.hpp"
#include "support/run_files.hpp"

using namespace cas::test;  // the run-folder helpers of support/run_files.hpp and cli_runs.hpp

class TestRunMaking : public cas::test::RunFolderSuite {
  Q_OBJECT

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

  // Issue 44, round 3: train --out into a run says how to go on: --resume with a checkpoint to
  // resume from, --restart without one (it was said to --resume, which then said to --restart).
  void trainingIntoARunSaysHowToGoOn() {
    const QString run = trained(QStringLiteral("existing"), 1);
    const QStringList again = {QStringLiteral("train"), kExample, QStringLiteral("--iterations"), QStringLiteral("1"), QStringLiteral("--out"), run};
    Result r = cli(again);
    QCOMPARE(r.status, 1);
    QCOMPARE(r.err, QStringLiteral("error: %1 already holds a run; use --resume %1 to continue it, or another --out\n").arg(run));
    QVERIFY(QFile::remove(run + QStringLiteral("/checkpoints/iter-00000001.ckpt")));
    const auto before = contents(run);
    r = cli(again);
    QCOMPARE(r.status, 1);
    QCOMPARE(r.err, QStringLiteral("error: %1 already holds a run, stopped before its first checkpoint; `cuda-agent train --restart %1` trains it "
                                   "again from iteration 1, or give another --out\n").arg(run));
    QCOMPARE(contents(run), before);
    r = cli({QStringLiteral("train"), QStringLiteral("--restart"), run, QStringLiteral("--iterations"), QStringLiteral("1")});
    QCOMPARE(r.status, 0);
    verifyMetrics(run, 1);
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
    // Issue 44, round 3: a descriptor's link (stdout, a pipe here) is named for what it is.
    Result out = cli({QStringLiteral("train"), kExample, QStringLiteral("--out"), QStringLiteral("/proc/self/fd/1"), QStringLiteral("--iterations"),
                      QStringLiteral("1")});
    QCOMPARE(out.status, 1);
    QCOMPARE(out.err, QStringLiteral("error: /proc/self/fd/1 is a symbolic link to a named pipe (FIFO), not a folder; give the run a new or empty "
                                     "folder, such as runs/tictactoe-alphazero\n"));
    QCOMPARE(out.out, QString());
    const QString empty = dir_.filePath(QStringLiteral("empty-folder"));
    QVERIFY(QDir().mkpath(empty));
    QCOMPARE(cli({QStringLiteral("train"), kExample, QStringLiteral("--out"), empty, QStringLiteral("--iterations"), QStringLiteral("1")}).status, 0);
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

  // Found by the held-out probe: a lock that is a symbolic link, a named pipe or a folder was
  // reported as the system's error ("Too many levels of symbolic links"); the message names what
  // is there and what to do.
  void aLockThatIsNoLockFileIsNamed() {
    const QString run = trained(QStringLiteral("odd-lock"), 1);
    const QString lock = run + QStringLiteral("/lock");
    const QStringList resume = {QStringLiteral("train"), QStringLiteral("--resume"), run, QStringLiteral("--iterations"), QStringLiteral("1")};
    const QString advice = QStringLiteral(", not the regular file a run makes as its lock; remove it (it is no run's lock) and try again\n");
    QVERIFY(QFile::remove(lock));
    QVERIFY(QFile::link(dir_.filePath(QStringLiteral("elsewhere")), lock));
    Result r = cli(resume);
    QCOMPARE(r.status, 1);
    QCOMPARE(r.err, QStringLiteral("error: cannot lock %1: %1/lock is a symbolic link").arg(run) + advice);
    QVERIFY(QFile::remove(lock));
    QCOMPARE(::mkfifo(qPrintable(lock), 0644), 0);
    r = cli(resume);
    QCOMPARE(r.err, QStringLiteral("error: cannot lock %1: %1/lock is a named pipe (FIFO)").arg(run) + advice);
    QVERIFY(QFile::remove(lock));
    QVERIFY(QDir().mkdir(lock));
    r = cli(resume);
    QCOMPARE(r.err, QStringLiteral("error: cannot lock %1: %1/lock is a folder").arg(run) + advice);
    QVERIFY(QDir().rmdir(lock));
    r = cli(resume);
    QVERIFY2(r.status == 0, qPrintable(r.err));
    verifyMetrics(run, 2);
  }

  // Found by the held-out probe: a train --out that is refused after the run folder's making
  // began (a lock that is a named pipe, a config.toml that is a link) left checkpoints/ and a
  // lock in the user's folder; it now leaves the folder as it was.
  void aRefusedRunLeavesTheFolderAsItWas() {
    const QString piped = dir_.filePath(QStringLiteral("piped-lock"));
    QVERIFY(QDir().mkpath(piped));
    QCOMPARE(::mkfifo(qPrintable(piped + QStringLiteral("/lock")), 0644), 0);
    Result r = cli(QStringList{QStringLiteral("train"), kExample, QStringLiteral("--out"), piped} + kQuick);
    QCOMPARE(r.status, 1);
    QVERIFY2(r.err.startsWith(QStringLiteral("error: cannot lock %1: %1/lock is a named pipe (FIFO)").arg(piped)), qPrintable(r.err));
    QCOMPARE(QDir(piped).entryList(QDir::AllEntries | QDir::NoDotAndDotDot | QDir::System), QStringList({QStringLiteral("lock")}));

    const QString linked = dir_.filePath(QStringLiteral("linked-config"));
    QVERIFY(QDir().mkpath(linked));
    append(dir_.filePath(QStringLiteral("a-config")), "seed = 1\n");
    QVERIFY(QFile::link(dir_.filePath(QStringLiteral("a-config")), linked + QStringLiteral("/config.toml")));
    r = cli(QStringList{QStringLiteral("train"), kExample, QStringLiteral("--out"), linked} + kQuick);
    QCOMPARE(r.status, 1);
    QCOMPARE(r.err, QStringLiteral("error: %1/config.toml is a symbolic link; a run folder's files are read from the folder itself (put a copy "
                                   "of the file in place of the link)\n").arg(linked));
    QCOMPARE(QDir(linked).entryList(QDir::AllEntries | QDir::NoDotAndDotDot | QDir::System), QStringList({QStringLiteral("config.toml")}));
  }

  // Hardening, fifth probe (D2): of several `train --out SAME` started together, one that found
  // the folder missing, then lost the race for its lock, took back what it thought it had made:
  // it unlinked the winner's lock, removed its checkpoints/ and the folder, and every contender
  // failed. The winner now takes the lock just after the loser made the folders (the seam
  // gBeforeRunLock): the loser is refused as "in use", and the winner's lock (the same file),
  // checkpoints/ and folder stay. The winner that then takes back a run it could not make
  // removes its own lock and folders.
  void aContenderThatLosesTheLockRemovesNothing() {
    static std::optional<cas::engine::RunLock> winner;
    const QString run = dir_.filePath(QStringLiteral("contended"));
    auto loaded = cas::project::loadProject(kExample.toStdString());
    QVERIFY(loaded.project);
    cas::engine::gBeforeRunLock = [](const std::filesystem::path& dir) {
      std::string error, note;
      winner = cas::engine::RunLock::acquire(dir, &error, &note);
    };
    cas::Diagnostic refused;
    std::vector<cas::Diagnostic> notices;
    auto loser = cas::engine::RunFolder::create(run.toStdString(), *loaded.project, &refused, &notices);
    cas::engine::gBeforeRunLock = nullptr;
    QVERIFY(!loser);
    QVERIFY(winner);
    QCOMPARE(QString::fromStdString(refused.message), QStringLiteral("%1 is in use by process %2 (it holds %1/lock); wait for that run to end, or stop it")
                                                          .arg(run).arg(::getpid()));
    struct stat held {};
    QCOMPARE(::stat(qPrintable(run + QStringLiteral("/lock")), &held), 0);
    QVERIFY(QFileInfo(run + QStringLiteral("/checkpoints")).isDir());
    QCOMPARE(bytes(run + QStringLiteral("/lock")), QByteArray::number(qint64(::getpid())) + '\n');
    winner.reset();

    // The winner itself, refused later (its policy unreadable), takes back its own lock and folders.
    auto mine = cas::project::loadProject(kExample.toStdString());
    const QString fresh = dir_.filePath(QStringLiteral("contended-fresh"));
    mine.project->policyFile = dir_.filePath(QStringLiteral("no-such-policy.pdl")).toStdString();
    QVERIFY(!cas::engine::RunFolder::create(fresh.toStdString(), *mine.project, &refused, &notices));
    QVERIFY2(!QFileInfo::exists(fresh), qPrintable(QString::fromStdString(refused.message)));
  }

  // Found by the held-out probe: a train --out stopped in its first milliseconds left a folder
  // that --out called "not a run's" and --resume "not a run folder". A folder holding only an
  // empty checkpoints/ is made into the run; one with the lock too is named for what it is by
  // --resume and --restart, and made again by train --out, which removes what the stopped write
  // left behind.
  void aRunStoppedAtOnceIsMadeAgain() {
    const QString bare = dir_.filePath(QStringLiteral("stopped-bare"));
    QVERIFY(QDir().mkpath(bare + QStringLiteral("/checkpoints")));
    Result r = cli(QStringList{QStringLiteral("train"), kExample, QStringLiteral("--iterations"), QStringLiteral("1"), QStringLiteral("--out"), bare} + kQuick);
    QVERIFY2(r.status == 0, qPrintable(r.err));
    verifyMetrics(bare, 1);

    const QString locked = dir_.filePath(QStringLiteral("stopped-locked"));
    QVERIFY(QDir().mkpath(locked + QStringLiteral("/checkpoints")));
    append(locked + QStringLiteral("/lock"), "");
    append(locked + QStringLiteral("/project.toml.tmp.4242"), "name = ");
    const QString guidance = QStringLiteral("error: %1 holds the start of a run whose making was interrupted (it has no config.toml yet): nothing to "
                                            "resume or restart; `cuda-agent train PROJECT --out %1` makes the run in it again\n").arg(locked);
    for (const char* how : {"--resume", "--restart"}) {
      r = cli({QStringLiteral("train"), QLatin1String(how), locked});
      QCOMPARE(r.status, 1);
      QCOMPARE(r.err, guidance);
    }
    r = cli(QStringList{QStringLiteral("train"), kExample, QStringLiteral("--iterations"), QStringLiteral("1"), QStringLiteral("--out"), locked} + kQuick);
    QVERIFY2(r.status == 0, qPrintable(r.err));
    QVERIFY2(r.err.startsWith(QStringLiteral("note: %1 holds the start of a run whose making was interrupted (no config.toml); making it again\n"
                                             "note: removed %1/project.toml.tmp.4242, left by a write that was interrupted\n").arg(locked)),
             qPrintable(r.err));
    QVERIFY(!QFile::exists(locked + QStringLiteral("/project.toml.tmp.4242")));
    verifyMetrics(locked, 1);
  }

  // Found by the held-out probe: train --out onto a named pipe, a dangling link, or under a
  // regular file said only "Not a directory" or "File exists", and a path of 5 KB was quoted whole.
  void anOutThatIsNoFolderIsNamed() {
    const QString pipe = dir_.filePath(QStringLiteral("out-pipe"));
    QCOMPARE(::mkfifo(qPrintable(pipe), 0644), 0);
    const QString dangling = dir_.filePath(QStringLiteral("out-dangling"));
    QVERIFY(QFile::link(dir_.filePath(QStringLiteral("nowhere")), dangling));
    const QString file = dir_.filePath(QStringLiteral("out-file"));
    append(file, "x");
    const QString advice = QStringLiteral(", not a folder; give the run a new or empty folder, such as runs/tictactoe-alphazero\n");
    const QList<QPair<QString, QString>> cases = {{pipe, pipe + QStringLiteral(" is a named pipe (FIFO)")},
                                                 {dangling, dangling + QStringLiteral(" is a symbolic link to nothing")},
                                                 {file + QStringLiteral("/run"), file + QStringLiteral(" is a regular file")}};
    for (const auto& [out, named] : cases) {
      const Result r = cli(QStringList{QStringLiteral("train"), kExample, QStringLiteral("--out"), out} + kQuick);
      QCOMPARE(r.status, 1);
      QCOMPARE(r.err, QStringLiteral("error: ") + named + advice);
    }
    const Result r = cli({QStringLiteral("train"), kExample, QStringLiteral("--out"), QStringLiteral("/tmp/") + QString(5000, QLatin1Char('d'))});
    QCOMPARE(r.status, 2);
    QVERIFY2(r.err.startsWith(QStringLiteral("--out: expected a path of at most 4096 bytes (Linux's PATH_MAX), got '/tmp/%1... (5005 bytes)'\n")
                                  .arg(QString(59, QLatin1Char('d')))),
             qPrintable(r.err.left(300)));
  }

  // Found by the second held-out probe: a new run could be made inside another run's
  // checkpoints/ (through RUN/exports/../checkpoints/x), after which that run could not resume.
  void aRunIsNotMadeInsideAnother() {
    const QString run = trained(QStringLiteral("host"), 1);
    const QString out = run + QStringLiteral("/exports/../checkpoints/iter-00000009.ckpt");
    const Result r = cli(QStringList{QStringLiteral("train"), kExample, QStringLiteral("--out"), out} + kQuick);
    QCOMPARE(r.status, 1);
    QCOMPARE(r.err, QStringLiteral("error: %1 lies inside %2/checkpoints, a folder of the run %2; give the run a folder of its own, such as "
                                   "runs/tictactoe-alphazero\n").arg(out, run));
    QVERIFY(!QFile::exists(run + QStringLiteral("/checkpoints/iter-00000009.ckpt")));
  }

  // Found by the held-out probe: --out '' silently meant the default folder, and an empty run
  // folder was "Directory does not exist: " with nothing quoted.
  void anEmptyOutIsRefused() {
    Result r = cli({QStringLiteral("train"), kExample, QStringLiteral("--out"), QString()});
    QCOMPARE(r.status, 2);
    QVERIFY2(r.err.startsWith(QStringLiteral("--out: expected a path, got ''; leave the option out for the default (runs/NAME-DATE-TIME)\n")),
             qPrintable(r.err));
    r = cli({QStringLiteral("export"), kExample, QStringLiteral("--out"), QString()});
    QCOMPARE(r.status, 2);
    QVERIFY2(r.err.startsWith(QStringLiteral("--out: expected a path, got ''; leave the option out for the default (a file in DIR/exports/)\n")),
             qPrintable(r.err));
    r = cli({QStringLiteral("eval"), QString()});
    QCOMPARE(r.status, 2);
    QVERIFY2(r.err.startsWith(QStringLiteral("run: expected a path, got ''\n")), qPrintable(r.err));
  }

  // Hardening 3, item 11: runs started without --out within one second were given the same
  // folder, runs/NAME-STAMP, and the second was refused ("already holds a run"); it takes
  // NAME-STAMP-2. The stamps of the next half minute are taken here, as by runs started in them.
  void defaultFoldersOfRunsStartedTogetherDiffer() {
    const QString cwd = dir_.filePath(QStringLiteral("default-names"));
    const QDateTime now = QDateTime::currentDateTime();
    for (int second = -1; second < 30; ++second) {
      const QString taken = cwd + QStringLiteral("/runs/tictactoe-alphazero-") + now.addSecs(second).toString(QStringLiteral("yyyyMMdd-HHmmss"));
      QVERIFY(QDir().mkpath(taken));
      append(taken + QStringLiteral("/config.toml"), "project = \"elsewhere\"\n");
    }
    QProcess p;
    p.setWorkingDirectory(cwd);
    p.start(kCli, QStringList{QStringLiteral("train"), kExample, QStringLiteral("--iterations"), QStringLiteral("1")} + kQuick);
    QVERIFY(p.waitForFinished(120000));
    const QString err = QString::fromUtf8(p.readAllStandardError());
    QCOMPARE(p.exitCode(), 0);
    const QRegularExpressionMatch named = QRegularExpression(QStringLiteral("run folder: (runs/tictactoe-alphazero-[0-9]{8}-[0-9]{6})-2\n")).match(err);
    QVERIFY2(named.hasMatch(), qPrintable(err));
    QCOMPARE(bytes(cwd + QLatin1Char('/') + named.captured(1) + QStringLiteral("/config.toml")), QByteArray("project = \"elsewhere\"\n"));
    verifyMetrics(cwd + QLatin1Char('/') + named.captured(1) + QStringLiteral("-2"), 1);
  }
};

QTEST_GUILESS_MAIN(TestRunMaking)
#include "test_run_making.moc"
