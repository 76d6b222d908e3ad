// The commands that read a trained run (play, analyze, eval --opponent, export) given hostile
// input: bounded lines, positions files read as text, long folder names quoted cut, exports that
// would replace the run's own files or go through a link out of it, and a failed export that
// leaves no folder behind.
#include <QDir>
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

#include "support/cli_runs.hpp"
#include "support/run_files.hpp"

using namespace cas::test;  // the run-folder helpers of support/run_files.hpp and cli_runs.hpp

class TestRunReaders : public cas::test::RunFolderSuite {
  Q_OBJECT

 private slots:
  // Hardening, fifth probe (D1): a run that lost its config.toml still holds the copy of its
  // project.toml, and export and bench policy took it for a project: they wrote (or timed) its
  // initial random weights and exited 0. They now refuse it as eval and --resume do, and the
  // export writes nothing.
  void aRunWithoutItsConfigIsNoProject() {
    const QString run = trained(QStringLiteral("lost-config"), 1);
    QVERIFY(QFile::remove(run + QStringLiteral("/config.toml")));
    const QString refusal = QStringLiteral("%1 holds a run's checkpoints or logs but no config.toml (it was removed, or never written): it is no "
                                           "project folder, and cannot be read as a run; put the run's config.toml back, or train the project "
                                           "anew in another folder").arg(run);
    const QString out = dir_.filePath(QStringLiteral("lost-config.onnx"));
    Result r = cli({QStringLiteral("export"), run, QStringLiteral("--out"), out});
    QCOMPARE(r.status, 2);
    QVERIFY2(r.err.contains(refusal), qPrintable(r.err));
    QVERIFY(!QFile::exists(out));
    r = cli({QStringLiteral("bench"), QStringLiteral("policy"), run, QStringLiteral("--device"), QStringLiteral("cpu"), QStringLiteral("--decisions"),
             QStringLiteral("10"), QStringLiteral("--warmup"), QStringLiteral("0")});
    QCOMPARE(r.status, 1);
    QCOMPARE(r.err, QStringLiteral("error: ") + refusal + QLatin1Char('\n'));
    for (const QStringList& reader : {QStringList{QStringLiteral("eval"), run, QStringLiteral("--games"), QStringLiteral("2")},
                                      QStringList{QStringLiteral("train"), QStringLiteral("--resume"), run}}) {
      r = cli(reader);
      QCOMPARE(r.status, 1);
      QVERIFY2(r.err.contains(refusal), qPrintable(r.err));
    }
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

  // Found by the held-out probe: eval --opponent run:FOLDER quoted a 100 KB folder whole.
  void opponentFoldersAreQuotedCut() {
    const QString run = trained(QStringLiteral("opponent"), 1);
    const Result r = cli({QStringLiteral("eval"), run, QStringLiteral("--opponent"), QStringLiteral("run:") + QString(100000, QLatin1Char('z'))});
    QCOMPARE(r.status, 1);
    QVERIFY2(r.err.endsWith(QStringLiteral("error: the run folder '%1... (100000 bytes)' is longer than the 4096 bytes a path may have\n")
                                .arg(QString(64, QLatin1Char('z')))),
             qPrintable(r.err.left(400)));
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

  // Issue 44, round 3: a run's exports/ that is a symbolic link out of the run is never written
  // or deleted through, as checkpoints/ is not.
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

  // Found by the held-out probe: a failed export left the folders it made for its file, and a
  // named pipe in place of exports/ was reported as "Not a directory".
  void aFailedExportLeavesNoFolderBehind() {
    const QString run = trained(QStringLiteral("failed-export"), 1);
    const QString name = QString(250, QLatin1Char('y')) + QStringLiteral(".onnx");  // 255 bytes: no room for the temporary name
    Result r = cli({QStringLiteral("export"), run, QStringLiteral("--out"), dir_.filePath(QStringLiteral("made/for/")) + name});
    QCOMPARE(r.status, 2);
    QVERIFY2(r.err.endsWith(QStringLiteral(": its name of 255 bytes is too long to write safely (the file is first written beside it under a "
                                           "name up to 18 bytes longer, and names here have at most 255 bytes); give a name of at most 237 bytes\n")),
             qPrintable(r.err));
    QVERIFY(!QFile::exists(dir_.filePath(QStringLiteral("made"))));
    QCOMPARE(::mkfifo(qPrintable(run + QStringLiteral("/exports")), 0644), 0);
    r = cli({QStringLiteral("export"), run});
    QCOMPARE(r.status, 2);
    QVERIFY2(r.err.endsWith(QStringLiteral("error: %1/exports is a named pipe (FIFO), not a folder; the export is written into a folder there: "
                                           "move it away, or export to another path\n").arg(run)),
             qPrintable(r.err));
  }

  // Found by the held-out probe: a position with a move after the game's end named the move by
  // its character position ("before move 11" of six moves).
  void aMoveAfterTheEndIsCountedInMoves() {
    const QString run = trained(QStringLiteral("over"), 1);
    const Result r = cli({QStringLiteral("analyze"), run, QStringLiteral("--position"), QStringLiteral("1 4 2 5 3 9")});
    QCOMPARE(r.status, 1);
    QVERIFY2(r.err.endsWith(QStringLiteral("error: position '1 4 2 5 3 9': the game is already over before move 6 ('9' at position 11)\n")),
             qPrintable(r.err));
  }

  // Found by the second held-out probe: 16 MB of lines that are no positions took 1.9 GB, every
  // line kept as a position before the first was analysed; they are now analysed as they are
  // read, within 1 GB of address space.
  void aPositionsFileIsAnalysedLineByLine() {
    const QString run = trained(QStringLiteral("many-lines"), 1);
    const QString file = dir_.filePath(QStringLiteral("many-lines.txt"));
    QByteArray lines;
    for (int i = 0; i < 8000000; ++i) lines += "x\n";
    append(file, lines);
    QProcess p;
    p.start(QStringLiteral("sh"), {QStringLiteral("-c"), QStringLiteral("ulimit -v 1000000; exec \"$0\" \"$@\""), kCli, QStringLiteral("analyze"), run,
                                   QStringLiteral("--positions"), file});
    QVERIFY(p.waitForFinished(120000));
    const QString err = QString::fromUtf8(p.readAllStandardError());
    QCOMPARE(p.exitCode(), 1);
    QVERIFY2(err.endsWith(QStringLiteral("error: ... and 7999980 more positions that are not valid (the first 20 are shown)\n")), qPrintable(err.right(300)));
  }

  // Hardening 3, item 19: a line of only spaces or tabs in a positions file was analysed as the
  // start position; it is skipped as an empty line is.
  void blankPositionLinesAreSkipped() {
    const QString run = trained(QStringLiteral("blank-positions"), 1);
    const QString file = dir_.filePath(QStringLiteral("blank-positions.txt"));
    append(file, "   \n\t\n \t \r\n5\n");
    const Result r = cli({QStringLiteral("analyze"), run, QStringLiteral("--positions"), file, QStringLiteral("--json")});
    QCOMPARE(r.status, 0);
    const QStringList out = r.out.split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    QCOMPARE(out.size(), 1);
    QVERIFY2(out[0].startsWith(QStringLiteral("{\"position\": \"5\",")), qPrintable(out[0]));
  }

  // Hardening 3, item 20: at the end of its input `play` stopped right after "your move: ",
  // without a line break or a word; and the hint for a line that is no move did not say that q
  // quits.
  void playSaysWhenItsInputEnds() {
    const QString run = trained(QStringLiteral("play-eof"), 1);
    QProcess p;
    p.start(kCli, {QStringLiteral("play"), run, QStringLiteral("--sims"), QStringLiteral("2")});
    QVERIFY(p.waitForStarted());
    p.write("x\n");
    p.closeWriteChannel();
    QVERIFY(p.waitForFinished(60000));
    QCOMPARE(p.exitCode(), 0);
    const QString out = QString::fromUtf8(p.readAllStandardOutput());
    QVERIFY2(out.contains(QStringLiteral("your move: enter one digit from 1 to 9, or q to quit\n")), qPrintable(out));
    QVERIFY2(out.endsWith(QStringLiteral("your move: \nend of input; the game is left unfinished\n")), qPrintable(out));
  }

  // Hardening, fourth probe: unknown keys in a run's config.toml (a typo such as `simulatons`, a
  // stray key or section) were accepted silently, and the run used the default; they are warned
  // about at their line and column, as in project.toml.
  void unknownRunConfigKeysAreWarnedAbout() {
    const QString run = trained(QStringLiteral("config-typos"), 1);
    const QString config = run + QStringLiteral("/config.toml");
    QByteArray text = "bogus_top = 1\n" + bytes(config) + "\n[nosuch]\nx = 1\n";
    const int typo = text.indexOf("\nsimulations = ");
    QVERIFY(typo > 0);
    text.replace("\nsimulations = ", "\nsimulatons = ");
    QFile::remove(config);
    append(config, text);
    const int typoLine = int(text.left(typo + 1).count('\n')) + 1, nosuchLine = int(text.count('\n')) - 1;
    const QString file = dir_.filePath(QStringLiteral("config-typos.txt"));
    append(file, "5\n");
    const Result r = cli({QStringLiteral("analyze"), run, QStringLiteral("--positions"), file, QStringLiteral("--json")});
    QCOMPARE(r.status, 0);
    const QString sections = QStringLiteral("is ignored; a run's config.toml holds project and the sections [search], [train], [ppo], [runtime]");
    QVERIFY2(r.err.contains(QStringLiteral("%1:1:1: warning: unknown key 'bogus_top' %2\n").arg(config, sections)), qPrintable(r.err));
    QVERIFY2(r.err.contains(QStringLiteral("%1:%2:1: warning: unknown key 'simulatons' in [search] is ignored (the run uses the default); known keys: ")
                                .arg(config).arg(typoLine)),
             qPrintable(r.err));
    QVERIFY2(r.err.contains(QStringLiteral("%1:%2:2: warning: unknown key 'nosuch' %3\n").arg(config).arg(nosuchLine).arg(sections)), qPrintable(r.err));
  }

  // Hardening, fourth probe: `--opponent run:nope` said "nope is not a run folder" without
  // saying that nope does not exist.
  void missingOpponentRunsAreNamed() {
    const QString run = trained(QStringLiteral("missing-opponent"), 1);
    const QString missing = dir_.filePath(QStringLiteral("nope"));
    const Result r = cli({QStringLiteral("eval"), run, QStringLiteral("--opponent"), QStringLiteral("run:") + missing});
    QVERIFY(r.status != 0);
    QVERIFY2(r.err.contains(QStringLiteral("%1 does not exist; give a run folder (made by cuda-agent train)").arg(missing)), qPrintable(r.err));
  }

  // Hardening, fourth probe: an empty positions file (or one of comments) analysed nothing and
  // exited 0 without a word.
  void anEmptyPositionsFileIsNamed() {
    const QString run = trained(QStringLiteral("empty-positions"), 1);
    const QString empty = dir_.filePath(QStringLiteral("empty.txt")), comments = dir_.filePath(QStringLiteral("comments.txt"));
    append(empty, QByteArray());
    append(comments, "# nothing\n\n");
    for (const QString& file : {empty, comments}) {
      const Result r = cli({QStringLiteral("analyze"), run, QStringLiteral("--positions"), file});
      QCOMPARE(r.status, 1);
      QCOMPARE(r.out, QString());
      QVERIFY2(r.err.endsWith(QStringLiteral("\nerror: %1 holds no positions; write one a line (blank lines and lines starting with # are skipped)\n").arg(file)),
               qPrintable(r.err));
    }
  }

  // Hardening, fourth probe (left then): a logged change of an unknown parameter printed its name
  // whole (100 KB, escape sequences and all); it is quoted and cut.
  void unknownLoggedParametersAreQuotedCut() {
    const QString run = trained(QStringLiteral("huge-parameter"), 1);
    append(run + QStringLiteral("/changes.jsonl"),
           "{\"iteration\": 1, \"parameter\": \"\\u001b[2J" + QByteArray(100000, 'p') + "\", \"from\": \"1\", \"to\": \"2\"}\n");
    const Result r = cli(QStringList{QStringLiteral("train"), QStringLiteral("--resume"), run, QStringLiteral("--iterations"), QStringLiteral("1")});
    QCOMPARE(r.status, 0);
    const QString shown = QStringLiteral("'\\x1b[2J%1... (100004 bytes)'").arg(QString(60, QLatin1Char('p')));
    QVERIFY2(r.err.startsWith(QStringLiteral("%1/changes.jsonl:1: warning: the change of %2 at iteration 1 is not applied again: unknown parameter %2")
                                  .arg(run, shown)) &&
                 !r.err.contains(QLatin1Char('\x1b')) && r.err.size() < 4000,
             qPrintable(r.err.left(2000)));
  }

  // Hardening, fourth probe: a logged change to a value that must be one of a list was quoted
  // whole in the resume's warning (100 KB); it is quoted cut.
  void refusedLoggedChoicesAreQuotedCut() {
    const QString run = trained(QStringLiteral("huge-change"), 1);
    append(run + QStringLiteral("/changes.jsonl"),
           "{\"iteration\": 1, \"parameter\": \"search.root_policy\", \"from\": \"puct\", \"to\": \"" + QByteArray(100000, 'a') + "\"}\n");
    const Result r = cli(QStringList{QStringLiteral("train"), QStringLiteral("--resume"), run, QStringLiteral("--iterations"), QStringLiteral("1")});
    QCOMPARE(r.status, 0);
    QVERIFY2(r.err.startsWith(QStringLiteral("%1/changes.jsonl:1: warning: the change of search.root_policy at iteration 1 is not applied again: "
                                             "search.root_policy = '%2... (100000 bytes)' is not allowed: expected one of: ")
                                  .arg(run, QString(64, QLatin1Char('a')))) &&
                 r.err.size() < 4000,
             qPrintable(r.err.left(2000)));
  }

  // Hardening 3, item 15: empty paths were not named as such: `--opponent run:` said "error:  is
  // not a run folder", and a run's config.toml with project = "" read the current folder's
  // project.toml with --use-project ("no project.toml here").
  void emptyPathsAreNamed() {
    const QString run = trained(QStringLiteral("empty-paths"), 1);
    Result r = cli({QStringLiteral("eval"), run, QStringLiteral("--opponent"), QStringLiteral("run:")});
    QCOMPARE(r.status, 2);
    QCOMPARE(r.err, QStringLiteral("error: --opponent run:DIR: expected a path after run:, got ''; give another trained run of the same game\n"));
    QFile config(run + QStringLiteral("/config.toml"));
    QVERIFY(config.open(QIODevice::ReadWrite));
    QByteArray text = config.readAll();
    const int at = text.indexOf("project = \"");
    QVERIFY(at >= 0);
    text.replace(at, text.indexOf('\n', at) - at, "project = \"\"");
    config.resize(0);
    config.write(text);
    config.close();
    const int line = text.left(at).count('\n') + 1;
    for (const QStringList& args : {QStringList{QStringLiteral("eval"), run, QStringLiteral("--use-project")}, QStringList{QStringLiteral("eval"), run}}) {
      r = cli(args);
      QCOMPARE(r.status, 1);
      QCOMPARE(r.err, QStringLiteral("%1/config.toml:%2:11: error: 'project': expected a path, got ''; a run's config.toml names the project folder "
                                     "it trains\n").arg(run).arg(line));
    }
  }
};

QTEST_GUILESS_MAIN(TestRunReaders)
#include "test_run_readers.moc"
