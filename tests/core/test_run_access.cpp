// Run folders the user cannot read or write in full (a checkpoints/ or a checkpoint of mode 000,
// a checkpoints/ without write permission): training refuses before it changes anything, naming
// the folder or file, instead of discarding or cutting back the run's progress and failing at its
// first checkpoint; a reader names the folder it cannot read, and skips a checkpoint it cannot
// read for the one before it. Root is bound by file permissions here through setpriv
// (cliBoundByPermissions in support/run_files.hpp).
#include <QDir>
#include <QFile>
#include <QTest>

#include <sys/stat.h>

#include "support/cli_runs.hpp"
#include "support/run_files.hpp"

using namespace cas::test;  // the run-folder helpers of support/run_files.hpp and cli_runs.hpp

class TestRunAccess : public cas::test::RunFolderSuite {
  Q_OBJECT

  // `path` of mode `mode` while `work` runs, then of the mode it had (so the temporary folder can
  // be removed whatever the test found).
  template <class F>
  static void withMode(const QString& path, mode_t mode, F work) {
    struct stat st {};
    QCOMPARE(::stat(qPrintable(path), &st), 0);
    QCOMPARE(::chmod(qPrintable(path), mode), 0);
    work();
    QCOMPARE(::chmod(qPrintable(path), st.st_mode & 07777), 0);
  }

 private slots:
  // Hardening 3, item 2: --restart of a run whose checkpoints/ could not be listed removed the
  // logs, found no checkpoints to remove, then failed to write its first checkpoint: the old
  // checkpoints were left beside the new logs. It is now refused first, the folder named, and so
  // is a checkpoints/ that can be listed but not written.
  void aRestartThatCannotReachTheCheckpointsDiscardsNothing() {
    const QString run = trained(QStringLiteral("restart-unreadable"), 2);
    const QString checkpoints = run + QStringLiteral("/checkpoints");
    const QMap<QString, QByteArray> before = contents(run);
    std::optional<Result> r;
    withMode(checkpoints, 0, [&] { r = cliBoundByPermissions({QStringLiteral("train"), QStringLiteral("--restart"), run, QStringLiteral("--iterations"), QStringLiteral("1")}); });
    if (!r) QSKIP("running as root without setpriv: file permissions do not bind this process");
    QCOMPARE(r->status, 1);
    QCOMPARE(r->err, QStringLiteral("error: cannot read %1: Permission denied; give yourself access to it (chmod u+rwx %1) and try again\n").arg(checkpoints));
    QCOMPARE(contents(run), before);
    withMode(checkpoints, 0555, [&] { r = cliBoundByPermissions({QStringLiteral("train"), QStringLiteral("--restart"), run, QStringLiteral("--iterations"), QStringLiteral("1")}); });
    QCOMPARE(r->status, 1);
    QCOMPARE(r->err, QStringLiteral("error: cannot write %1: Permission denied; training writes its checkpoints and logs there; give yourself access "
                                    "to it (chmod u+rwx %1) and try again (nothing was changed)\n").arg(checkpoints));
    QCOMPARE(contents(run), before);
  }

  // Hardening 3, item 3: --resume skipped a checkpoint it could not read (Permission denied) as
  // if it were damaged, cut the metrics back to the one before, and later replaced it. It now
  // refuses, naming the file, and changes nothing; a reader still falls back, with the warning.
  void aResumeRefusesACheckpointItCannotRead() {
    const QString run = trained(QStringLiteral("resume-unreadable"), 2);
    const QString newest = run + QStringLiteral("/checkpoints/iter-00000002.ckpt");
    const QMap<QString, QByteArray> before = contents(run);
    std::optional<Result> resumed, evaluated;
    withMode(newest, 0, [&] {
      resumed = cliBoundByPermissions({QStringLiteral("train"), QStringLiteral("--resume"), run, QStringLiteral("--iterations"), QStringLiteral("1")});
      evaluated = cliBoundByPermissions({QStringLiteral("eval"), run, QStringLiteral("--games"), QStringLiteral("2")});
    });
    if (!resumed) QSKIP("running as root without setpriv: file permissions do not bind this process");
    QCOMPARE(resumed->status, 1);
    QCOMPARE(resumed->err, QStringLiteral("error: cannot read %1: Permission denied; fix its permissions (chmod u+r %1), or move it out of "
                                          "%2/checkpoints to resume from the checkpoint before it (nothing was changed)\n").arg(newest, run));
    QCOMPARE(contents(run), before);
    QCOMPARE(evaluated->status, 0);
    QVERIFY2(evaluated->err.startsWith(QStringLiteral("warning: skipping checkpoint iter-00000002.ckpt: cannot open %1: Permission denied\n"
                                                      "using %2/checkpoints/iter-00000001.ckpt (iteration 1)\n").arg(newest, run)),
             qPrintable(evaluated->err));
  }

  // Hardening 3, item 12: eval of a run whose checkpoints/ it cannot read said "RUN has no valid
  // checkpoint yet"; it names the folder and why.
  void aReaderNamesTheFolderItCannotRead() {
    const QString run = trained(QStringLiteral("eval-unreadable"), 1);
    const QString checkpoints = run + QStringLiteral("/checkpoints");
    std::optional<Result> r;
    withMode(checkpoints, 0, [&] { r = cliBoundByPermissions({QStringLiteral("eval"), run, QStringLiteral("--games"), QStringLiteral("2")}); });
    if (!r) QSKIP("running as root without setpriv: file permissions do not bind this process");
    QCOMPARE(r->status, 1);
    QCOMPARE(r->err, QStringLiteral("error: cannot read %1: Permission denied; give yourself access to it (chmod u+rwx %1) and try again\n").arg(checkpoints));
  }

  // Hardening, fourth probe: a run the user may not write (another user's) was refused with the
  // system's words alone: "cannot open RUN/lock: Permission denied" for --resume, and "cannot
  // create RUN/exports: Permission denied" for export. They say what to do, and that nothing
  // was changed.
  void permissionErrorsSayWhatToDo() {
    const QString run = trained(QStringLiteral("others-run"), 1);
    const QString lock = run + QStringLiteral("/lock");
    const QMap<QString, QByteArray> before = contents(run);
    std::optional<Result> resumed, exported;
    withMode(lock, 0444, [&] {
      resumed = cliBoundByPermissions({QStringLiteral("train"), QStringLiteral("--resume"), run, QStringLiteral("--iterations"), QStringLiteral("1")});
    });
    if (!resumed) QSKIP("running as root without setpriv: file permissions do not bind this process");
    QCOMPARE(resumed->status, 1);
    QCOMPARE(resumed->err, QStringLiteral("error: cannot lock %1: cannot open %2: Permission denied; give yourself write access to the run (chmod u+rw %2, "
                                          "and u+rwx on %1), or train a copy of it (nothing was changed)\n").arg(run, lock));
    withMode(run, 0555, [&] { exported = cliBoundByPermissions({QStringLiteral("export"), run}); });
    QVERIFY(exported->status != 0);
    QCOMPARE(exported->err, QStringLiteral("error: cannot create %1/exports: Permission denied; give yourself write access to %1, or export elsewhere "
                                           "with --out (nothing was changed)\n").arg(run));
    QCOMPARE(contents(run), before);
  }

  // Hardening, fifth probe (D13): a metrics.jsonl that could not be written (immutable, or without
  // write permission) stopped a resume after "resumed from ...", without a remedy; one that could
  // only be appended to failed the cut back with "cannot rename ...". Both logs are tried for
  // writing before anything is changed, for --resume and --restart, and the refusal says what to do.
  void aLogThatCannotBeWrittenIsRefusedFirst() {
    const QString run = trained(QStringLiteral("read-only-log"), 2);
    const QMap<QString, QByteArray> before = contents(run);
    for (const QString& log : {QStringLiteral("metrics.jsonl"), QStringLiteral("changes.jsonl")}) {
      const QString path = run + QLatin1Char('/') + log;
      if (!QFile::exists(path)) append(path, "");
      for (const char* how : {"--resume", "--restart"}) {
        std::optional<Result> r;
        withMode(path, 0444, [&] { r = cliBoundByPermissions({QStringLiteral("train"), QLatin1String(how), run, QStringLiteral("--iterations"), QStringLiteral("1")}); });
        if (!r) QSKIP("running as root without setpriv: file permissions do not bind this process");
        QCOMPARE(r->status, 1);
        QCOMPARE(r->err, QStringLiteral("error: cannot write %1: Permission denied; training appends to it, and a resume may cut it back: make it "
                                        "writable (chmod u+w %1; a file made immutable or append-only: chattr -i -a %1), or move it out of the run "
                                        "folder (the run does not need it to go on), and try again (nothing was changed)\n").arg(path));
      }
      if (log == QStringLiteral("changes.jsonl")) QVERIFY(QFile::remove(path));
    }
    QCOMPARE(contents(run), before);
  }
};

QTEST_GUILESS_MAIN(TestRunAccess)
#include "test_run_access.moc"
