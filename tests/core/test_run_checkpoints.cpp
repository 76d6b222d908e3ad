// A run's checkpoints as untrusted files: none to resume from, forged counters, checksums that
// hold over a payload that cannot be restored or weights that are not numbers, names past the
// padded width, two names for one iteration, and a checkpoints/ that is no folder. Each asserts
// the exact message and which checkpoint the run goes on from.
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

class TestRunCheckpoints : public cas::test::RunFolderSuite {
  Q_OBJECT

 private slots:
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
    // The logs it removed, and only those (hardening 3, item 18: changes.jsonl, which this run
    // never wrote, was listed too).
    QCOMPARE(r.err, QStringLiteral("note: discarded the progress of %1 (removed checkpoints/iter-00000001.ckpt, checkpoints/iter-00000002.ckpt "
                                   "and metrics.jsonl); training it again from iteration 1\nrun folder: %1\n").arg(run));
    verifyMetrics(run, 1);
    QCOMPARE(QDir(run + QStringLiteral("/checkpoints")).entryList(QDir::Files), QStringList({QStringLiteral("iter-00000001.ckpt")}));
  }

  // Hardening, fifth probe (D3, D4): `--restart` of a run whose checkpoints/ was gone discarded
  // the logs, then failed at its first checkpoint (the remedy `--resume` gives failed every
  // time); and it removed every file in checkpoints/ (the user's notes, a .bak copy), saying only
  // "5 files in checkpoints/". A restart now makes a missing checkpoints/, removes only what the
  // run reads as its checkpoints (iter-N.ckpt) and its logs, and names what it removed and kept.
  void aRestartRemovesOnlyTheRunsCheckpoints() {
    const QString gone = trained(QStringLiteral("restart-no-checkpoints"), 2);
    QVERIFY(QDir(gone + QStringLiteral("/checkpoints")).removeRecursively());
    Result r = cli({QStringLiteral("train"), QStringLiteral("--restart"), gone, QStringLiteral("--iterations"), QStringLiteral("1")});
    QVERIFY2(r.status == 0, qPrintable(r.err));
    QCOMPARE(r.err, QStringLiteral("note: discarded the progress of %1 (removed metrics.jsonl); training it again from iteration 1\nrun folder: %1\n")
                        .arg(gone));
    verifyMetrics(gone, 1);
    QCOMPARE(QDir(gone + QStringLiteral("/checkpoints")).entryList(QDir::Files), QStringList({QStringLiteral("iter-00000001.ckpt")}));

    const QString mixed = trained(QStringLiteral("restart-user-files"), 2);
    const QString folder = mixed + QStringLiteral("/checkpoints/");
    append(folder + QStringLiteral("notes.txt"), "notes\n");
    QVERIFY(QFile::copy(folder + QStringLiteral("iter-00000002.ckpt"), folder + QStringLiteral("iter-00000002.ckpt.bak")));
    QVERIFY(QFile::copy(folder + QStringLiteral("iter-00000002.ckpt"), folder + QStringLiteral("iter-3.ckpt")));
    r = cli({QStringLiteral("train"), QStringLiteral("--restart"), mixed, QStringLiteral("--iterations"), QStringLiteral("1")});
    QVERIFY2(r.status == 0, qPrintable(r.err));
    QCOMPARE(r.err, QStringLiteral("note: discarded the progress of %1 (removed checkpoints/iter-00000001.ckpt, checkpoints/iter-00000002.ckpt, "
                                   "checkpoints/iter-3.ckpt and metrics.jsonl; kept checkpoints/iter-00000002.ckpt.bak and checkpoints/notes.txt, "
                                   "which are not the run's checkpoints); training it again from iteration 1\nrun folder: %1\n").arg(mixed));
    QCOMPARE(QDir(folder).entryList(QDir::Files),
             QStringList({QStringLiteral("iter-00000001.ckpt"), QStringLiteral("iter-00000002.ckpt.bak"), QStringLiteral("notes.txt")}));
    QCOMPARE(bytes(folder + QStringLiteral("notes.txt")), QByteArray("notes\n"));
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

  // Found by the held-out probe: a checkpoint whose weights were set to NaN (checksum sealed
  // again) was blamed on the policy ("check the policy"); it is now skipped as altered, naming
  // the tensor, and the run goes on from the checkpoint before it.
  void aCheckpointWithWeightsThatAreNotNumbersIsSkipped() {
    const QString run = trained(QStringLiteral("nan-weights"), 2);
    const QString newest = run + QStringLiteral("/checkpoints/iter-00000002.ckpt");
    QByteArray payload = bytes(newest);
    payload.chop(16);
    // magic, version, three counters; the rng state; the tensor count; the first tensor's name,
    // rank, dimensions and value count; then its first value.
    auto u32At = [&](qsizetype at) { std::uint32_t v; std::memcpy(&v, payload.constData() + at, sizeof v); return qsizetype(v); };
    qsizetype at = 32;
    at += 4 + u32At(at);
    at += 4;
    const QString firstTensor = QString::fromUtf8(payload.mid(at + 4, u32At(at)));
    at += 4 + u32At(at);
    at += 4 + 8 * u32At(at) + 8;
    const float nan = std::numeric_limits<float>::quiet_NaN();
    std::memcpy(payload.data() + at, &nan, sizeof nan);
    QFile::remove(newest);
    append(newest, withChecksum(payload));
    const Result r = cli({QStringLiteral("eval"), run, QStringLiteral("--games"), QStringLiteral("2")});
    QCOMPARE(r.status, 0);
    QVERIFY2(r.err.startsWith(QStringLiteral("warning: skipping checkpoint iter-00000002.ckpt: %1: the checkpoint holds 1 value(s) that are "
                                             "not finite numbers (NaN or infinite); training never writes such a checkpoint, so the file "
                                             "was altered after it was written").arg(firstTensor)),
             qPrintable(r.err));
    const Result resumed = cli({QStringLiteral("train"), QStringLiteral("--resume"), run, QStringLiteral("--iterations"), QStringLiteral("1")});
    QVERIFY2(resumed.status == 0, qPrintable(resumed.err));
    QVERIFY2(!resumed.err.contains(QStringLiteral("check the policy")), qPrintable(resumed.err));
    verifyMetrics(run, 2);
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

    // From 2^40 - 1, a run trains one iteration, to 2^40, the most iterations a run can reach, and
    // says why it stops there; from 2^40 it is used, and not trained past.
    append(folder + QStringLiteral("iter-1099511627775.ckpt"), withIteration(good, (qint64(1) << 40) - 1));
    r = cli({QStringLiteral("train"), QStringLiteral("--resume"), run, QStringLiteral("--iterations"), QStringLiteral("3")});
    QCOMPARE(r.status, 0);
    QVERIFY2(r.err.endsWith(QStringLiteral("the run stops at iteration 1099511627776, the most iterations a run can have\n")), qPrintable(r.err));
    QVERIFY(lines(run + QStringLiteral("/metrics.jsonl")).last().startsWith(QStringLiteral("{\"iteration\": 1099511627776,")));
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

  // Found by the held-out probe: a named pipe in place of checkpoints/ was reported as "no valid
  // checkpoint to resume from" with advice to restart; it is named for what it is.
  void aCheckpointsThatIsNoFolderIsNamed() {
    const QString run = trained(QStringLiteral("piped-checkpoints"), 1);
    const QString folder = run + QStringLiteral("/checkpoints");
    QVERIFY(QDir().rename(folder, run + QStringLiteral("-kept")));
    QCOMPARE(::mkfifo(qPrintable(folder), 0644), 0);
    const QString named = QStringLiteral("error: %1 is a named pipe (FIFO), not a folder; a run keeps its checkpoints in the folder checkpoints/ "
                                         "(move it away and try again)\n").arg(folder);
    Result r = cli({QStringLiteral("train"), QStringLiteral("--resume"), run, QStringLiteral("--iterations"), QStringLiteral("2")});
    QCOMPARE(r.status, 1);
    QCOMPARE(r.err, named);
    r = cli({QStringLiteral("eval"), run, QStringLiteral("--games"), QStringLiteral("2")});
    QCOMPARE(r.status, 1);
    QCOMPARE(r.err, named);
  }

  // Found by the held-out probe: checkpoints whose checksum holds but whose content no run wrote
  // are skipped with the true reason: a random generator state that does not read (it was taken
  // silently, and the run went on differently), bytes after the end (called "truncated"), a
  // tensor of 2^31 dimensions (called "written for another network").
  void alteredCheckpointContentsAreNamed() {
    const QString run = trained(QStringLiteral("altered"), 2);
    const QString newest = run + QStringLiteral("/checkpoints/iter-00000002.ckpt");
    const QByteArray good = bytes(newest);
    const QByteArray payload = good.left(good.size() - 16);
    std::uint32_t rngBytes = 0;
    std::memcpy(&rngBytes, payload.constData() + 32, sizeof rngBytes);
    const qsizetype afterRng = 36 + qsizetype(rngBytes);
    auto skippedFor = [&](const QByteArray& altered) {
      QFile::remove(newest);
      append(newest, withChecksum(altered));
      const Result r = cli({QStringLiteral("eval"), run, QStringLiteral("--games"), QStringLiteral("2")});
      return r.err.section(QLatin1Char('\n'), 0, 0);
    };
    const std::uint32_t one = 1;
    QCOMPARE(skippedFor(payload.left(32) + QByteArray(reinterpret_cast<const char*>(&one), 4) + "5" + payload.mid(afterRng)),
             QStringLiteral("warning: skipping checkpoint iter-00000002.ckpt: the checkpoint's random generator state does not read as the "
                            "one a run writes; it was altered after it was written"));
    QCOMPARE(skippedFor(payload + QByteArray(13, 'x')),
             QStringLiteral("warning: skipping checkpoint iter-00000002.ckpt: the checkpoint has bytes after its end; it was altered after it "
                            "was written"));
    // The first tensor's rank follows the tensor count and its name.
    std::uint32_t nameBytes = 0;
    std::memcpy(&nameBytes, payload.constData() + afterRng + 4, sizeof nameBytes);
    const QString firstTensor = QString::fromUtf8(payload.mid(afterRng + 8, nameBytes));
    QByteArray ranked = payload;
    const std::uint32_t rank = 1u << 31;
    std::memcpy(ranked.data() + afterRng + 8 + nameBytes, &rank, sizeof rank);
    QCOMPARE(skippedFor(ranked), QStringLiteral("warning: skipping checkpoint iter-00000002.ckpt: %1: the checkpoint gives it 2147483648 "
                                                "dimensions; a tensor has at most 16").arg(firstTensor));
    // A value count that disagrees with the shape beside it (found by the second probe: called
    // "written for another network").
    std::uint32_t rankHeld = 0;
    std::memcpy(&rankHeld, payload.constData() + afterRng + 8 + nameBytes, sizeof rankHeld);
    const qsizetype countAt = afterRng + 8 + nameBytes + 4 + 8 * qsizetype(rankHeld);
    QByteArray miscounted = payload;
    quint64 values = 0;
    std::memcpy(&values, payload.constData() + countAt, sizeof values);
    const quint64 fewer = values - 1;
    std::memcpy(miscounted.data() + countAt, &fewer, sizeof fewer);
    QVERIFY2(skippedFor(miscounted).startsWith(QStringLiteral("warning: skipping checkpoint iter-00000002.ckpt: %1: the checkpoint gives it shape ")
                                                   .arg(firstTensor)),
             qPrintable(skippedFor(miscounted)));
    QVERIFY(skippedFor(miscounted).endsWith(QStringLiteral(" but %1 values; it was altered after it was written").arg(fewer)));
  }

  // Found by the held-out probe: resume went on past what would stop it later. A FIFO named as
  // a checkpoint made a resumed run train an iteration, then fail to write it ("give the path of
  // a regular file"), on every retry; the newest checkpoint of a newer format was skipped and then
  // replaced by an older one; a checkpoint at the most games a checkpoint may count was resumed,
  // and its next checkpoint skipped, so that every resume redid the same iteration. Each is now
  // refused before anything changes.
  void resumeRefusesWhatItCouldNotFinish() {
    const QString run = trained(QStringLiteral("blocked"), 2);
    const QString folder = run + QStringLiteral("/checkpoints/");
    const QStringList resume = {QStringLiteral("train"), QStringLiteral("--resume"), run, QStringLiteral("--iterations"), QStringLiteral("1")};
    const QMap<QString, QByteArray> before = contents(run);
    QCOMPARE(::mkfifo(qPrintable(folder + QStringLiteral("iter-00000003.ckpt")), 0644), 0);
    Result r = cli(resume);
    QCOMPARE(r.status, 1);
    QVERIFY2(r.err.endsWith(QStringLiteral("error: %1iter-00000003.ckpt is a named pipe (FIFO), not a checkpoint file; a run writes its checkpoints "
                                           "itself, as regular files, and could not write this one: move it out of %2/checkpoints and try "
                                           "again\n").arg(folder, run)),
             qPrintable(r.err));
    QVERIFY(QFile::remove(folder + QStringLiteral("iter-00000003.ckpt")));
    QCOMPARE(contents(run), before);

    const QByteArray good = bytes(folder + QStringLiteral("iter-00000002.ckpt"));
    QByteArray newer = good.left(good.size() - 16);
    const std::uint32_t version = 4;
    std::memcpy(newer.data() + 4, &version, sizeof version);
    std::memcpy(newer.data() + 8, "\3\0\0\0\0\0\0\0", 8);  // iteration 3
    append(folder + QStringLiteral("iter-00000003.ckpt"), withChecksum(newer));
    const QMap<QString, QByteArray> withNewer = contents(run);
    r = cli(resume);
    QCOMPARE(r.status, 1);
    QVERIFY2(r.err.endsWith(QStringLiteral("error: %1iter-00000003.ckpt is a checkpoint of format version 4, written by a newer cuda-agent (this one "
                                           "writes version 3); training the run here would replace it with an older format: resume it with "
                                           "that cuda-agent, or train into a new --out folder\n").arg(folder)),
             qPrintable(r.err));
    QCOMPARE(contents(run), withNewer);
    QVERIFY(QFile::remove(folder + QStringLiteral("iter-00000003.ckpt")));

    QByteArray counted = good.left(good.size() - 16);
    const qint64 games = qint64(1) << 56;
    std::memcpy(counted.data() + 16, &games, sizeof games);
    QFile::remove(folder + QStringLiteral("iter-00000002.ckpt"));
    append(folder + QStringLiteral("iter-00000002.ckpt"), withChecksum(counted));
    r = cli(resume);
    QCOMPARE(r.status, 1);
    QVERIFY2(r.err.endsWith(QStringLiteral("error: %1 counts 72057594037927936 games or optimizer steps (checkpoints/iter-00000002.ckpt), within one "
                                           "iteration of the 72057594037927936 a checkpoint may count; it cannot be trained further: train a "
                                           "new run, or this one again with --restart\n").arg(run)),
             qPrintable(r.err));
    verifyMetrics(run, 2);
  }
};

QTEST_GUILESS_MAIN(TestRunCheckpoints)
#include "test_run_checkpoints.moc"
