// Data-parallel training with processes started by mpirun, on the CPU backend (core/collective/mpi_world.hpp,
// plugins/mpi/, app/cli/mpi_ranks.hpp): the MPI communicator's collectives across three processes
// (this test started again under mpirun, as a rank): the same sum's bits on every rank, two
// buckets in flight together, a broadcast of megabytes, an all-gather, a failing rank's notice,
// a rank that does not answer in time, the bootstrap calls. Through the CLI: two tic-tac-toe
// ranks under mpirun train bit for bit as two CPU-thread ranks (--ranks 2) do; a rank made to
// fail, and a rank killed outright, end every rank with the failing rank named and leave a
// checkpoint that resumes under mpirun with another rank count and without mpirun; what `train`
// under mpirun refuses; `bench allreduce` across processes. Skips when this build has no MPI plugin or mpirun is not on the PATH.
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>

#include <signal.h>

#include <cmath>
#include <cstring>
#include <iostream>
#include <thread>

#include "core/collective/mpi_world.hpp"

#include "support/cli_runs.hpp"
#include "support/source_dir.hpp"

using cas::dist::CommunicatorError;

namespace {

const QString kPlugin = QStringLiteral(CAS_BIN_DIR "/libcas_mpi.so");
const char* kRoleVariable = "CAS_TEST_MPI_ROLE";

// Checks `condition` on one rank of the collectives role; a failed one ends the process non-zero.
#define RANK_CHECK(condition, what)                                                              \
  do {                                                                                           \
    if (!(condition)) {                                                                          \
      std::cerr << "rank " << world->rank() << ": check failed: " << (what) << " (" #condition ")\n"; \
      return 1;                                                                                  \
    }                                                                                            \
  } while (0)

// The checks of the collectives role, on one rank; returns non-zero when one fails.
int collectives(cas::dist::MpiWorld* world);

// The collectives role: run by each of three processes under mpirun. Ends the process through
// MPI_Abort; returns only when MPI did not start.
int collectivesRole() {
  std::string reason;
  std::unique_ptr<cas::dist::MpiWorld> world = cas::dist::loadMpiWorld(&reason);
  if (!world) {
    std::cerr << "no MPI world: " << reason << "\n";
    return 1;
  }
  int status = 1;
  try {
    status = collectives(world.get());
  } catch (const std::exception& e) {
    std::cerr << "rank " << world->rank() << ": " << e.what() << "\n";
  }
  // After the failures above, collective threads may still wait inside MPI: the ranks leave as a
  // failed run's do, through MPI_Abort (status 0, which mpirun passes on, once all are here).
  if (status == 0) {
    world->allGatherText("done");
    std::cout.flush();
  }
  world->abort(status);  // ends every rank (GCC does not see [[noreturn]] through the virtual call)
  return status;
}

int collectives(cas::dist::MpiWorld* world) {
  RANK_CHECK(world->size() == 3, "three ranks");
  const int rank = world->rank();
  {
    auto c = world->createCommunicator(30);
    RANK_CHECK(c->rank() == rank && c->size() == 3, "the communicator's place");
    // Two buckets in flight at once; values whose float sum depends on the order of addition.
    std::vector<float> a(1000), b(7);
    for (size_t i = 0; i < a.size(); ++i) a[i] = float(rank + 1) * 0.1f + float(i) * 1e-3f + (rank == 2 ? 1e7f : 0.f);
    for (size_t i = 0; i < b.size(); ++i) b[i] = float(i) - float(rank);
    c->startAllReduceSum(0, a.data(), a.size());
    c->startAllReduceSum(1, b.data(), b.size());
    c->waitAllReduce(0);
    c->waitAllReduce(1);
    for (size_t i = 0; i < b.size(); ++i) RANK_CHECK(b[i] == 3.f * float(i) - 3.f, "the small bucket's sum");
    for (size_t i = 0; i < a.size(); ++i) {
      const double expected = 0.6 + 3.0 * double(i) * 1e-3 + 1e7;
      RANK_CHECK(std::fabs(double(a[i]) - expected) <= 2.0, "the large bucket's sum");
    }
    // The same bits on every rank.
    std::vector<float> all(a.size() * 3);
    c->allGather(a.data(), all.data(), a.size() * sizeof(float));
    for (int r = 0; r < 3; ++r) RANK_CHECK(std::memcmp(all.data() + size_t(r) * a.size(), a.data(), a.size() * sizeof(float)) == 0, "identical sums");
    // A broadcast of megabytes from the last rank.
    std::vector<unsigned char> bytes(3 << 20);
    for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = rank == 2 ? (unsigned char)(i * 7 + 1) : 0;
    c->broadcast(bytes.data(), bytes.size(), 2);
    for (size_t i = 0; i < bytes.size(); i += 4099) RANK_CHECK(bytes[i] == (unsigned char)(i * 7 + 1), "the broadcast bytes");
    c->barrier();
  }
  {
    // Rank 2 fails: once its notice has arrived (the bootstrap call lets MPI deliver it), the
    // others' next collective throws with its reason; so do its own later calls. (A wait that
    // the notice interrupts is the CLI tests': the ranks then leave through MPI_Abort.)
    auto c = world->createCommunicator(30);
    if (rank == 2) c->fail("disk full");
    world->allGatherText("notice sent");
    std::string message;
    try {
      c->barrier();
    } catch (const CommunicatorError& e) {
      message = e.what();
    }
    RANK_CHECK(message == "rank 2 failed: disk full", "a failed rank's notice: got '" + message + "'");
  }
  {
    // Rank 1 does not answer for a while: the others give up after their timeout, naming the
    // collective. Then all meet in a blocking bootstrap call, which lets MPI complete the barrier.
    auto c = world->createCommunicator(rank == 1 ? 60 : 0.5);
    if (rank == 1) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1500));
      c->barrier();  // late: the others' barriers are posted, so this completes once they call MPI again
    } else {
      QElapsedTimer clock;
      clock.start();
      std::string message;
      try {
        c->barrier();
      } catch (const CommunicatorError& e) {
        message = e.what();
      }
      RANK_CHECK(message == "rank " + std::to_string(rank) + ": the barrier did not complete within 0.5 s (dist.timeout_seconds): another rank stopped answering",
                 "the timeout: got '" + message + "'");
      RANK_CHECK(clock.elapsed() >= 450 && clock.elapsed() < 5000, "the timeout's time");
    }
    world->allGatherText("met");
  }
  // The bootstrap calls.
  std::string id = rank == 0 ? std::string("\x00group\xff", 7) : std::string();
  world->broadcast(id, 0);
  RANK_CHECK(id == std::string("\x00group\xff", 7), "the bootstrap broadcast");
  const std::vector<std::string> names = world->allGatherText(std::string(size_t(rank), 'x'));
  RANK_CHECK(names.size() == 3 && names[0].empty() && names[2] == "xx", "the bootstrap all-gather");
  std::cout << "rank " << rank << ": collectives ok\n";
  return 0;
}

}  // namespace

class TestMpiTraining : public QObject {
  Q_OBJECT

  QTemporaryDir dir_;
  QString mpirun_;

  // mpirun with `ranks` processes of `program` and `args`, with `extra` in their environment.
  // Open MPI refuses root and more ranks than cores unless told; a container's ptrace limits
  // break its shared-memory single copy, which these small messages do not need.
  void startMpi(QProcess& p, int ranks, const QString& program, const QStringList& args, const QStringList& extra = {}) {
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("OMPI_ALLOW_RUN_AS_ROOT"), QStringLiteral("1"));
    env.insert(QStringLiteral("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"), QStringLiteral("1"));
    env.insert(QStringLiteral("OMPI_MCA_rmaps_base_oversubscribe"), QStringLiteral("1"));
    env.insert(QStringLiteral("OMPI_MCA_btl_vader_single_copy_mechanism"), QStringLiteral("none"));
    QStringList exported;
    for (const QString& e : extra) {
      env.insert(e.section(QLatin1Char('='), 0, 0), e.section(QLatin1Char('='), 1));
      exported << QStringLiteral("-x") << e.section(QLatin1Char('='), 0, 0);
    }
    p.setProcessEnvironment(env);
    p.start(mpirun_, QStringList{QStringLiteral("-np"), QString::number(ranks)} + exported + QStringList{program} + args);
  }

  // Status -1 when mpirun crashed or did not finish within three minutes (then it is killed).
  cas::test::Result mpi(int ranks, const QStringList& args, const QStringList& extra = {}) {
    QProcess p;
    startMpi(p, ranks, cas::test::kCli, args, extra);
    const bool finished = p.waitForFinished(180000);
    if (!finished) {
      p.kill();
      p.waitForFinished();
    }
    return {finished && p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, QString::fromUtf8(p.readAllStandardOutput()),
            QString::fromUtf8(p.readAllStandardError())};
  }

  QStringList trainArgs(const QString& run, int iterations) {
    return QStringList{QStringLiteral("train"), cas::test::kExample, QStringLiteral("--device"), QStringLiteral("cpu"), QStringLiteral("--iterations"),
                       QString::number(iterations), QStringLiteral("--out"), run, QStringLiteral("--set"), QStringLiteral("dist.checksum_every=1")} +
           cas::test::kQuick;
  }

  static QString newestCheckpoint(const QString& run) {
    const QStringList all = QDir(run + QStringLiteral("/checkpoints")).entryList({QStringLiteral("iter-*.ckpt")}, QDir::Files, QDir::Name);
    return all.isEmpty() ? QString() : all.back();
  }

  // After a run ended by a failure: its newest checkpoint resumes under mpirun with 3 ranks, then without mpirun.
  void resumesAfterwards(const QString& run) {
    const QString newest = newestCheckpoint(run);
    QVERIFY(!newest.isEmpty());
    const int last = newest.mid(5, 8).toInt();
    cas::test::Result r = mpi(3, {QStringLiteral("train"), QStringLiteral("--resume"), run, QStringLiteral("--iterations"), QStringLiteral("1")});
    QVERIFY2(r.status == 0, qPrintable(r.err));
    QVERIFY2(r.err.contains(newest + QStringLiteral(" (iteration %1)").arg(last)), qPrintable(r.err));
    QVERIFY2(r.err.contains(QStringLiteral("data-parallel: 3 processes started by mpirun")), qPrintable(r.err));
    QVERIFY2(r.out.contains(QStringLiteral("iter %1 |").arg(last + 1)), qPrintable(r.out));
    r = cas::test::cli({QStringLiteral("train"), QStringLiteral("--resume"), run, QStringLiteral("--iterations"), QStringLiteral("1")});
    QVERIFY2(r.status == 0, qPrintable(r.err));
    QVERIFY2(r.out.contains(QStringLiteral("iter %1 |").arg(last + 2)), qPrintable(r.out));
  }

 private slots:
  void initTestCase() {
    QVERIFY(dir_.isValid());
    mpirun_ = QStandardPaths::findExecutable(QStringLiteral("mpirun"));
    if (!QFile::exists(kPlugin)) QSKIP("this build has no MPI plugin (the MPI development files were not found when it was configured)");
    if (mpirun_.isEmpty()) QSKIP("no mpirun on the PATH (Debian: openmpi-bin)");
  }

  void theCollectivesAgreeAcrossProcesses() {
    QProcess p;
    startMpi(p, 3, QCoreApplication::applicationFilePath(), {}, {QString::fromLatin1(kRoleVariable) + QStringLiteral("=collectives")});
    QVERIFY(p.waitForFinished(120000));
    const QString out = QString::fromUtf8(p.readAllStandardOutput()), err = QString::fromUtf8(p.readAllStandardError());
    QVERIFY2(p.exitCode() == 0, qPrintable(out + err));
    for (int r = 0; r < 3; ++r) QVERIFY2(out.contains(QStringLiteral("rank %1: collectives ok").arg(r)), qPrintable(out + err));
  }

  // Two ranks under mpirun sum their gradients through MPI as two threads do through the
  // threaded communicator (for two ranks both sums are one addition): the same checkpoint bytes.
  void twoProcessesTrainAsTwoThreads() {
    const QString processes = dir_.filePath(QStringLiteral("processes")), threads = dir_.filePath(QStringLiteral("threads"));
    const cas::test::Result r = mpi(2, trainArgs(processes, 3));
    QVERIFY2(r.status == 0, qPrintable(r.err));
    QVERIFY2(r.err.contains(QStringLiteral("data-parallel: 2 processes started by mpirun (")) && r.err.contains(QStringLiteral("), gradients summed through MPI")),
             qPrintable(r.err));
    QCOMPARE(r.out.count(QStringLiteral("iter ")), 3);  // rank 0 alone reports
    const cas::test::Result t = cas::test::cli(trainArgs(threads, 3) + QStringList{QStringLiteral("--ranks"), QStringLiteral("2")});
    QVERIFY2(t.status == 0, qPrintable(t.err));
    const QString checkpoint = QStringLiteral("/checkpoints/iter-00000003.ckpt");
    QFile a(processes + checkpoint), b(threads + checkpoint);
    QVERIFY(a.open(QIODevice::ReadOnly) && b.open(QIODevice::ReadOnly));
    QVERIFY2(a.readAll() == b.readAll(), "the checkpoints of two processes and of two threads differ");
  }

  // Rank 1 fails before step 5: it says so, rank 0 names it, every rank ends at once.
  void aFailingRankEndsEveryRank() {
    const QString run = dir_.filePath(QStringLiteral("failed"));
    QElapsedTimer clock;
    clock.start();
    const cas::test::Result r = mpi(2, trainArgs(run, 20), {QStringLiteral("CAS_DIST_FAIL=1:5")});
    QVERIFY2(r.status != 0, qPrintable(r.err));
    QVERIFY2(r.err.contains(QStringLiteral("error: fault injected (CAS_DIST_FAIL=1:5): rank 1 stops before optimizer step 5")), qPrintable(r.err));
    // Rank 0, the run, names the rank that failed first and why (its notice came through MPI).
    QVERIFY2(r.err.contains(QStringLiteral("error: the run stopped: rank 1 failed: fault injected (CAS_DIST_FAIL=1:5)")), qPrintable(r.err));
    QVERIFY2(clock.elapsed() < 60000, "the run did not end soon after the failure");
    resumesAfterwards(run);
  }

  // Rank 1 killed outright (SIGKILL): mpirun ends the others and names it.
  void aKilledRankEndsTheRun() {
    const QString run = dir_.filePath(QStringLiteral("killed"));
    QProcess p;
    startMpi(p, 2, cas::test::kCli, trainArgs(run, 100000));
    QVERIFY(p.waitForStarted());
    // Rank 1: the cuda-agent process of this run whose environment says so, once rank 0 has checkpointed.
    qint64 victim = 0;
    for (int wait = 0; wait < 1200 && !victim; ++wait) {
      QThread::msleep(100);
      if (newestCheckpoint(run).isEmpty()) continue;
      for (const QString& pid : QDir(QStringLiteral("/proc")).entryList(QDir::Dirs)) {
        QFile cmdline(QStringLiteral("/proc/%1/cmdline").arg(pid)), environ(QStringLiteral("/proc/%1/environ").arg(pid));
        if (!cmdline.open(QIODevice::ReadOnly) || !cmdline.readAll().contains(run.toUtf8())) continue;
        if (environ.open(QIODevice::ReadOnly) && environ.readAll().split('\0').contains("OMPI_COMM_WORLD_RANK=1")) victim = pid.toLongLong();
      }
    }
    QVERIFY2(victim > 0, "rank 1 was not found");
    QVERIFY(::kill(pid_t(victim), SIGKILL) == 0);
    QElapsedTimer clock;
    clock.start();
    QVERIFY2(p.waitForFinished(60000), "the run went on after a rank was killed");
    QVERIFY(p.exitCode() != 0);
    const QString err = QString::fromUtf8(p.readAllStandardError());
    QVERIFY2(err.contains(QStringLiteral("rank 1")) && err.contains(QStringLiteral("signal 9")), qPrintable(err));
    QVERIFY2(clock.elapsed() < 30000, "the run did not end soon after the kill");
    resumesAfterwards(run);
  }

  // bench allreduce across two processes: one JSON object from rank 0, the sizes asked for, and
  // nccl-tests' bus bandwidth (for two ranks, the algorithm bandwidth).
  void theAllReduceBenchRunsUnderMpi() {
    const cas::test::Result r = mpi(2, {QStringLiteral("bench"), QStringLiteral("allreduce"), QStringLiteral("--device"), QStringLiteral("cpu"),
                                        QStringLiteral("--max-bytes"), QStringLiteral("65536"), QStringLiteral("--iterations"), QStringLiteral("5"),
                                        QStringLiteral("--json")});
    QVERIFY2(r.status == 0, qPrintable(r.err));
    const QJsonObject o = QJsonDocument::fromJson(r.out.toUtf8()).object();
    QCOMPARE(o.value(QStringLiteral("ranks")).toInt(), 2);
    QCOMPARE(o.value(QStringLiteral("communicator")).toString(), QStringLiteral("MPI across processes started by mpirun"));
    const QJsonArray results = o.value(QStringLiteral("results")).toArray();
    QCOMPARE(results.size(), 3);
    for (int i = 0; i < 3; ++i) {
      const QJsonObject row = results[i].toObject();
      QCOMPARE(row.value(QStringLiteral("bytes")).toInt(), 4096 << (2 * i));
      const double seconds = row.value(QStringLiteral("seconds")).toDouble(), alg = row.value(QStringLiteral("algbw_gbps")).toDouble();
      QVERIFY(seconds > 0);
      QVERIFY(std::fabs(alg - double(4096 << (2 * i)) / seconds / 1e9) <= 1e-6 * alg);
      QVERIFY(std::fabs(row.value(QStringLiteral("busbw_gbps")).toDouble() - alg) <= 1e-6 * alg);
    }
  }

  void trainUnderMpiRefusesWhatItCannotRun() {
    const QString run = dir_.filePath(QStringLiteral("refused"));
    cas::test::Result r = mpi(2, trainArgs(run, 1) + QStringList{QStringLiteral("--ranks"), QStringLiteral("2")});
    QVERIFY(r.status != 0);
    QVERIFY2(r.err.contains(QStringLiteral("error: under mpirun each process is one rank, and mpirun -np N chooses how many: leave out --ranks")), qPrintable(r.err));
    r = mpi(2, {QStringLiteral("train"), cas::test::sourcePath(QStringLiteral("projects/cartpole-ppo")), QStringLiteral("--out"), run});
    QVERIFY(r.status != 0);
    QVERIFY2(r.err.contains(QStringLiteral("error: data-parallel training (mpirun) is built for AlphaZero; a ppo run trains in one process: start it without mpirun")),
             qPrintable(r.err));
    r = mpi(2, trainArgs(run, 1), {QStringLiteral("CAS_MPI_PLUGIN=/nonexistent/libcas_mpi.so")});
    QVERIFY(r.status != 0);
    QVERIFY2(r.err.contains(QStringLiteral("error: this process was started by mpirun, but the MPI plugin is missing ('/nonexistent/libcas_mpi.so'); "
                                           "without mpirun, cuda-agent trains in one process")),
             qPrintable(r.err));
    // Two ranks on this host, one GPU listed: the second has none of its own (refused before CUDA starts).
    QStringList onCuda = trainArgs(run, 1);
    onCuda[onCuda.indexOf(QStringLiteral("cpu"))] = QStringLiteral("cuda");
    r = mpi(2, onCuda, {QStringLiteral("CUDA_VISIBLE_DEVICES=3")});
    QVERIFY(r.status != 0);
    QVERIFY2(r.err.contains(QStringLiteral("error: this rank is process 2 of 2 on its host, whose CUDA_VISIBLE_DEVICES lists 1 GPU: "
                                           "start at most one rank per GPU on each host")),
             qPrintable(r.err));
    r = mpi(2, trainArgs(run, 1), {QStringLiteral("CAS_DIST_FAIL=2:1")});
    QVERIFY(r.status != 0);
    QVERIFY2(r.err.contains(QStringLiteral("error: CAS_DIST_FAIL names rank 2, but the run has ranks 0 to 1")), qPrintable(r.err));
    QVERIFY(!QDir(run).exists());  // nothing was started
  }
};

int main(int argc, char** argv) {
  if (const char* role = std::getenv(kRoleVariable); role && std::strcmp(role, "collectives") == 0) return collectivesRole();
  QCoreApplication app(argc, argv);
  TestMpiTraining test;
  return QTest::qExec(&test, argc, argv);
}

#include "test_mpi_training.moc"
