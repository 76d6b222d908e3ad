// The CUDA backend's NCCL communicator (gpu/nccl/nccl_communicator.hpp) and data-parallel
// AlphaZero on it: one rank's collectives (bucketed all-reduces, a broadcast in pieces, an
// all-gather, a barrier, fail()); tic-tac-toe on the CUDA backend through a one-rank NCCL group
// against the plain path, ten optimizer steps with the same seeds and the same losses within float
// rounding (both lists printed, and whether they agree to the bit); `cuda-agent train --gpus 1` end to end, its checkpoint resumed by a plain run; and
// with two visible GPUs, two ranks in two threads (each its own backend on its own device) holding
// the same weights after every step, and through the CLI a rank made to fail (CAS_DIST_FAIL)
// ending the run with an error naming it.
#include <QCoreApplication>
#include <QDir>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <cstring>
#include <thread>

#include "core/collective/communicator.hpp"
#include "core/exec/backend.hpp"
#include "core/project/project.hpp"
#include "core/train/alphazero.hpp"
#include "support/source_dir.hpp"

using namespace cas;

namespace {

std::shared_ptr<exec::Backend> cuda() { return exec::BackendRegistry::instance().find("cuda")->backend; }

QString cli() { return QCoreApplication::applicationDirPath() + QStringLiteral("/cuda-agent"); }

const std::vector<std::string> kQuick = {"train.parallel_games=8", "train.games_per_iteration=8", "search.simulations=16", "train.batch_size=32",
                                         "train.steps_per_iteration=1", "train.eval_games=0", "train.overlap=false", "dist.checksum_every=1",
                                         "dist.bucket_kib=2", "dist.timeout_seconds=120"};

project::Project tictactoe() {
  project::LoadResult loaded = project::loadProject((cas::test::sourcePath(QStringLiteral("projects/tictactoe-alphazero"))).toStdString());
  if (!loaded.project) qFatal("the tic-tac-toe project does not load");
  for (const std::string& s : kQuick)
    if (auto problem = loaded.project->parameters.assign(s)) qFatal("%s", problem->c_str());
  return *loaded.project;
}

// A one-rank group on `backend`.
std::unique_ptr<dist::Communicator> soloGroup(exec::Backend& backend) {
  std::string reason;
  const std::string id = backend.deviceServices()->makeCommunicatorId(&reason);
  if (id.empty()) qFatal("no group id: %s", reason.c_str());
  auto communicator = backend.deviceServices()->createCommunicator(id, 0, 1, 60, &reason);
  if (!communicator) qFatal("no communicator: %s", reason.c_str());
  return communicator;
}

// The losses of the first `steps` optimizer steps (one per iteration).
std::vector<float> lossesOf(train::AlphaZeroTrainer& trainer, int steps) {
  std::vector<float> losses;
  for (int i = 0; i < 100 && int(losses.size()) < steps; ++i) {
    const train::IterationReport r = trainer.runIteration();
    if (r.trainingSteps > 0) losses.push_back(r.loss);
  }
  return losses;
}

QString listText(const std::vector<float>& v) {
  QStringList items;
  for (float x : v) items << QString::number(double(x), 'g', 9);
  return items.join(QStringLiteral(", "));
}

// The first stored tensor whose bits differ between two trainers; empty when none does.
std::string firstDifference(const train::AlphaZeroTrainer& a, const train::AlphaZeroTrainer& b) {
  for (const ir::Node& n : a.updater().stateProgram().graph().nodes)
    if (n.op == ir::Op::Input && n.attrs.role != ir::InputRole::Data && !n.shape.empty()) {
      std::vector<float> x(size_t(ir::numel(n.shape))), y(x.size());
      a.updater().stateProgram().readInput(n.attrs.name, x.data(), x.size());
      b.updater().stateProgram().readInput(n.attrs.name, y.data(), y.size());
      if (std::memcmp(x.data(), y.data(), x.size() * sizeof(float)) != 0) return n.attrs.name;
    }
  return {};
}

}  // namespace

class TestNcclCommunicator : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;

 private slots:
  void initTestCase() {
    const exec::BackendEntry* entry = exec::BackendRegistry::instance().find("cuda");
    if (!entry->available()) QSKIP(qPrintable("no usable CUDA device: " + QString::fromStdString(entry->unavailableReason)));
  }

  void oneRankCollectives() {
    auto communicator = soloGroup(*cuda());
    QCOMPARE(communicator->rank(), 0);
    QCOMPARE(communicator->size(), 1);
    // Two buckets in flight at once, waited for in the other order: each comes back as it went.
    std::vector<float> a(1000), b(300000);
    for (size_t i = 0; i < a.size(); ++i) a[i] = float(i) * 0.5f - 7.0f;
    for (size_t i = 0; i < b.size(); ++i) b[i] = float(i % 977) * 1e-3f;
    const std::vector<float> a0 = a, b0 = b;
    communicator->startAllReduceSum(0, a.data(), a.size());
    communicator->startAllReduceSum(1, b.data(), b.size());
    communicator->waitAllReduce(1);
    communicator->waitAllReduce(0);
    QVERIFY(a == a0);
    QVERIFY(b == b0);
    QVERIFY_THROWS_EXCEPTION(std::logic_error, communicator->waitAllReduce(0));  // nothing in flight
    // A broadcast larger than one staging piece (64 MiB).
    std::vector<unsigned char> big((std::size_t(64) << 20) + 12345);
    for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<unsigned char>(i * 31 + 7);
    const std::vector<unsigned char> big0 = big;
    communicator->broadcast(big.data(), big.size(), 0);
    QVERIFY(big == big0);
    const std::int64_t mine = 42;
    std::int64_t gathered = 0;
    communicator->allGather(&mine, &gathered, sizeof mine);
    QCOMPARE(gathered, std::int64_t(42));
    communicator->barrier();
    float x = 2.5f;
    communicator->allReduceSum(&x, 1);
    QCOMPARE(x, 2.5f);
    // After fail(), every call throws with the rank and the reason.
    communicator->fail("it ran out of disk");
    try {
      communicator->barrier();
      QFAIL("a failed communicator went on");
    } catch (const dist::CommunicatorError& e) {
      QCOMPARE(std::string(e.what()), std::string("rank 0 failed: it ran out of disk"));
    }
  }

  // Acceptance: on one GPU the NCCL path with one rank gives the plain path's losses, step for
  // step. Within float rounding, not demanded bit for bit: the plain path's fused update program
  // and the rank's gradient program are compiled apart, and each times its own cuDNN convolution
  // algorithms, which may round differently (the CPU suite checks the one-rank path bit for bit,
  // test_data_parallel). Whether they agree to the bit is printed.
  void oneRankTrainsAsThePlainPath() {
    const project::Project p = tictactoe();
    std::vector<float> plainLosses, rankLosses;
    std::string plainState;
    {
      train::AlphaZeroTrainer plain(p, cuda());
      plainLosses = lossesOf(plain, 10);
      plainState = plain.checkpoint();
    }
    auto communicator = soloGroup(*cuda());
    train::AlphaZeroTrainer rank(p, cuda(), train::DataParallelRank{communicator.get(), {}});
    rankLosses = lossesOf(rank, 10);
    qInfo("plain path losses:        %s", qPrintable(listText(plainLosses)));
    qInfo("one-rank NCCL path losses: %s", qPrintable(listText(rankLosses)));
    QCOMPARE(plainLosses.size(), size_t(10));
    QCOMPARE(rankLosses.size(), size_t(10));
    for (size_t i = 0; i < plainLosses.size(); ++i)
      QVERIFY2(std::abs(plainLosses[i] - rankLosses[i]) <= 1e-5f * std::abs(plainLosses[i]),
               qPrintable(QStringLiteral("step %1: plain %2, one rank %3").arg(i + 1).arg(double(plainLosses[i]), 0, 'g', 9).arg(double(rankLosses[i]), 0, 'g', 9)));
    train::AlphaZeroTrainer restored(p, cuda());
    std::string error;
    QVERIFY2(restored.restore(plainState, &error), error.c_str());
    const std::string differs = firstDifference(restored, rank);
    qInfo("losses bit for bit equal: %s; weights after 10 steps bit for bit equal: %s", plainLosses == rankLosses ? "yes" : "no",
          differs.empty() ? "yes" : qPrintable(QStringLiteral("no, first %1").arg(QString::fromStdString(differs))));
  }

  // `cuda-agent train --gpus 1`: the launcher, one rank process, an ordinary run folder.
  void theCliTrainsOnOneGpu() {
    const QString run = dir_.filePath(QStringLiteral("one-gpu"));
    QStringList sets;
    for (const std::string& s : kQuick) sets << QStringLiteral("--set") << QString::fromStdString(s);
    QProcess p;
    p.start(cli(), QStringList{QStringLiteral("train"), cas::test::sourcePath(QStringLiteral("projects/tictactoe-alphazero")), QStringLiteral("--gpus"),
                               QStringLiteral("1"), QStringLiteral("--iterations"), QStringLiteral("3"), QStringLiteral("--out"), run} +
                       sets);
    QVERIFY(p.waitForFinished(300000));
    const QString err = QString::fromUtf8(p.readAllStandardError());
    QVERIFY2(p.exitCode() == 0, qPrintable(err));
    QVERIFY2(err.contains(QStringLiteral("data-parallel: 1 GPU, one process (rank 0 writes the checkpoints and metrics)")), qPrintable(err));
    QVERIFY(QString::fromUtf8(p.readAllStandardOutput()).contains(QStringLiteral("iter 3 |")));
    QVERIFY(!QDir(run + QStringLiteral("/checkpoints")).entryList({QStringLiteral("iter-*.ckpt")}, QDir::Files).isEmpty());
    // An ordinary checkpoint: a plain run resumes it.
    p.start(cli(), {QStringLiteral("train"), QStringLiteral("--resume"), run, QStringLiteral("--iterations"), QStringLiteral("1")});
    QVERIFY(p.waitForFinished(300000));
    QVERIFY2(p.exitCode() == 0, qPrintable(QString::fromUtf8(p.readAllStandardError())));
    QVERIFY(QString::fromUtf8(p.readAllStandardOutput()).contains(QStringLiteral("iter 4 |")));
  }

  // Two GPUs: two ranks in two threads, each on its own device, hold the same bits after every step.
  void twoRanksOnTwoGpusStayEqual() {
    if (cuda()->deviceServices()->deviceCount() < 2) QSKIP("needs two visible CUDA devices");
    std::string reason;
    std::shared_ptr<exec::Backend> second = cuda()->deviceServices()->onDevice(1, &reason);
    QVERIFY2(second, reason.c_str());
    const std::string id = cuda()->deviceServices()->makeCommunicatorId(&reason);
    QVERIFY2(!id.empty(), reason.c_str());
    const project::Project p = tictactoe();
    std::unique_ptr<dist::Communicator> communicators[2];
    std::unique_ptr<train::AlphaZeroTrainer> trainers[2];
    std::string errors[2];
    auto onBoth = [&](const std::function<void(int)>& work) {
      std::thread other([&] {
        try {
          work(1);
        } catch (const std::exception& e) {
          errors[1] = e.what();
        }
      });
      try {
        work(0);
      } catch (const std::exception& e) {
        errors[0] = e.what();
      }
      other.join();
    };
    onBoth([&](int r) {
      exec::Backend& backend = r == 0 ? *cuda() : *second;
      std::string why;
      communicators[r] = backend.deviceServices()->createCommunicator(id, r, 2, 120, &why);
      if (!communicators[r]) throw std::runtime_error(why);
      trainers[r] = std::make_unique<train::AlphaZeroTrainer>(p, r == 0 ? cuda() : second, train::DataParallelRank{communicators[r].get(), {}});
    });
    QVERIFY2(errors[0].empty() && errors[1].empty(), (errors[0] + " | " + errors[1]).c_str());
    std::int64_t steps = 0;
    for (int i = 0; i < 8; ++i) {
      train::IterationReport reports[2];
      onBoth([&](int r) { reports[r] = trainers[r]->runIteration(); });
      QVERIFY2(errors[0].empty() && errors[1].empty(), (errors[0] + " | " + errors[1]).c_str());
      steps += reports[0].trainingSteps;
      QCOMPARE(trainers[1]->updater().steps(), steps);
      const std::string differs = firstDifference(*trainers[0], *trainers[1]);
      QVERIFY2(differs.empty(), ("after step " + std::to_string(steps) + ": " + differs).c_str());
    }
    QVERIFY2(steps >= 6, "the ranks should have trained");
  }

  // Two GPUs through the CLI: rank 1 fails before step 3; the launcher names it and exits non-zero.
  void aFailingRankEndsTheGpuRun() {
    if (cuda()->deviceServices()->deviceCount() < 2) QSKIP("needs two visible CUDA devices");
    const QString run = dir_.filePath(QStringLiteral("two-gpus"));
    QStringList sets;
    for (const std::string& s : kQuick) sets << QStringLiteral("--set") << QString::fromStdString(s);
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("CAS_DIST_FAIL"), QStringLiteral("1:3"));
    p.setProcessEnvironment(env);
    p.start(cli(), QStringList{QStringLiteral("train"), cas::test::sourcePath(QStringLiteral("projects/tictactoe-alphazero")), QStringLiteral("--gpus"),
                               QStringLiteral("2"), QStringLiteral("--iterations"), QStringLiteral("20"), QStringLiteral("--out"), run} +
                       sets);
    QVERIFY(p.waitForFinished(300000));
    const QString err = QString::fromUtf8(p.readAllStandardError());
    QCOMPARE(p.exitCode(), 1);
    QVERIFY2(err.contains(QStringLiteral("error: data-parallel training stopped: rank 1 failed: fault injected (CAS_DIST_FAIL=1:3)")), qPrintable(err));
  }
};

QTEST_GUILESS_MAIN(TestNcclCommunicator)
#include "test_nccl_communicator.moc"
