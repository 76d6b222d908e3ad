// Data-parallel training on CPU ranks (core/collective, core/train/data_parallel.hpp): the threaded
// communicator's collectives (bucketed sums, broadcast, all-gather, barrier, disagreement, a
// failed rank, a rank that never answers), the split update (gradient and optimizer programs)
// against the fused one, two tic-tac-toe ranks whose weights and optimizer state are the same
// bits after every step, the weight check catching ranks that differ, and through the CLI a rank
// made to fail (CAS_DIST_FAIL) ending the run with a clear error, its checkpoint then resumed
// with other rank counts. One rank through a communicator trains as the plain path does; the
// protocol of one process per rank (process_group.hpp: rank 0 leads, the others follow its
// restores, parameter changes, iterations and stop) on threads; and the refusals of
// `train --gpus` that a machine without a GPU can see.
#include <QDir>
#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <cstring>
#include <thread>

#include "core/collective/threaded_communicator.hpp"
#include "core/exec/initialise.hpp"
#include "core/train/data_parallel.hpp"
#include "core/train/gradient_exchange.hpp"
#include "core/train/process_group.hpp"

#include "support/cli_runs.hpp"
#include "support/source_dir.hpp"

using cas::dist::CommunicatorError;
using cas::dist::ThreadedGroup;
using namespace std::chrono_literals;

namespace {

// Runs `work(rank)` on one thread per rank and returns each rank's exception message ("" when it
// returned).
std::vector<std::string> onThreads(int ranks, const std::function<void(int)>& work) {
  std::vector<std::string> errors(static_cast<size_t>(ranks));
  std::vector<std::thread> threads;
  for (int r = 0; r < ranks; ++r)
    threads.emplace_back([&, r] {
      try {
        work(r);
      } catch (const std::exception& e) {
        errors[size_t(r)] = e.what();
      }
    });
  for (auto& t : threads) t.join();
  return errors;
}

// The tic-tac-toe project, small enough for seconds of training, with `sets` applied after.
cas::project::Project quickProject(const QStringList& sets = {}) {
  auto loaded = cas::project::loadProject(cas::test::kExample.toStdString());
  if (!loaded.project) qFatal("the example project does not load");
  cas::project::Project p = *loaded.project;
  for (const QString& a : cas::test::kQuick + sets)
    if (a != QLatin1String("--set"))
      if (auto problem = p.parameters.assign(a.toStdString())) qFatal("%s", problem->c_str());
  return p;
}

std::shared_ptr<cas::exec::Backend> cpu() { return cas::exec::BackendRegistry::instance().find("cpu")->backend; }

// Every stored tensor (parameters, optimizer state) of a program, by name.
std::vector<std::pair<std::string, std::vector<float>>> storedTensors(const cas::exec::Executable& program) {
  std::vector<std::pair<std::string, std::vector<float>>> tensors;
  for (const cas::ir::Node& n : program.graph().nodes)
    if (n.op == cas::ir::Op::Input && n.attrs.role != cas::ir::InputRole::Data && !n.shape.empty()) {
      std::vector<float> v(size_t(cas::ir::numel(n.shape)));
      program.readInput(n.attrs.name, v.data(), v.size());
      tensors.emplace_back(n.attrs.name, std::move(v));
    }
  return tensors;
}

// The first tensor whose bits differ between two programs' stored tensors; empty when none does.
std::string firstDifference(const cas::exec::Executable& a, const cas::exec::Executable& b) {
  const auto x = storedTensors(a), y = storedTensors(b);
  if (x.size() != y.size()) return "the programs hold different tensors";
  for (size_t i = 0; i < x.size(); ++i)
    if (x[i].first != y[i].first || std::memcmp(x[i].second.data(), y[i].second.data(), x[i].second.size() * sizeof(float)) != 0) return x[i].first;
  return {};
}

}  // namespace

class TestDataParallel : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;

 private slots:
  void allReduceSumsEveryBucketOnEveryRank() {
    constexpr int kRanks = 3;
    ThreadedGroup group(kRanks, 30s);
    const std::vector<size_t> sizes = {5, 1000, 1, 77};
    std::vector<std::vector<std::vector<float>>> data(kRanks);
    const auto errors = onThreads(kRanks, [&](int r) {
      auto& comm = group.communicator(r);
      if (comm.size() != kRanks || comm.rank() != r) throw std::logic_error("the communicator's rank or size is wrong");
      auto& mine = data[size_t(r)];
      for (size_t b = 0; b < sizes.size(); ++b) {
        mine.emplace_back(sizes[b]);
        for (size_t i = 0; i < sizes[b]; ++i) mine[b][i] = float(r + 1) * float(i + 1) + 0.25f * float(b);
        comm.startAllReduceSum(int(b), mine[b].data(), sizes[b]);  // every bucket in flight at once
      }
      for (size_t b = sizes.size(); b-- > 0;) comm.waitAllReduce(int(b));  // waited in another order
    });
    for (const auto& e : errors) QVERIFY2(e.empty(), e.c_str());
    for (int r = 0; r < kRanks; ++r)
      for (size_t b = 0; b < sizes.size(); ++b)
        for (size_t i = 0; i < sizes[b]; ++i) {
          // (1 + 2 + 3) (i + 1) + 3 * 0.25 b, summed in rank order
          float expected = 0;
          for (int k = 0; k < kRanks; ++k) expected += float(k + 1) * float(i + 1) + 0.25f * float(b);
          QCOMPARE(data[size_t(r)][b][i], expected);
        }
  }

  void broadcastGatherAndBarrier() {
    constexpr int kRanks = 4;
    ThreadedGroup group(kRanks, 30s);
    std::vector<std::vector<std::int64_t>> gathered(kRanks);
    std::vector<double> received(kRanks);
    const auto errors = onThreads(kRanks, [&](int r) {
      auto& comm = group.communicator(r);
      double value = r == 2 ? 3.5 : -1.0;
      comm.broadcast(&value, sizeof value, 2);
      received[size_t(r)] = value;
      const std::int64_t mine = 10 * r + 1;
      gathered[size_t(r)].resize(kRanks);
      comm.allGather(&mine, gathered[size_t(r)].data(), sizeof mine);
      comm.barrier();
    });
    for (const auto& e : errors) QVERIFY2(e.empty(), e.c_str());
    for (int r = 0; r < kRanks; ++r) {
      QCOMPARE(received[size_t(r)], 3.5);
      QCOMPARE(gathered[size_t(r)], (std::vector<std::int64_t>{1, 11, 21, 31}));
    }
  }

  void ranksThatDisagreeAreStopped() {
    ThreadedGroup group(2, 30s);
    const auto errors = onThreads(2, [&](int r) {
      std::vector<float> v(r == 0 ? 4 : 5, 1.0f);
      group.communicator(r).allReduceSum(v.data(), v.size());
    });
    for (const auto& e : errors) QVERIFY2(e.find("the ranks disagree about collective #0") != std::string::npos, e.c_str());
  }

  void aFailedRankEndsTheOthersAtOnce() {
    ThreadedGroup group(3, 60s);
    QElapsedTimer clock;
    clock.start();
    const auto errors = onThreads(3, [&](int r) {
      std::vector<float> v(8, 1.0f);
      if (r == 1) {
        std::this_thread::sleep_for(50ms);
        group.communicator(r).fail("it ran out of disk");
        return;
      }
      group.communicator(r).startAllReduceSum(0, v.data(), v.size());
      group.communicator(r).waitAllReduce(0);
    });
    QVERIFY2(clock.elapsed() < 10000, "the ranks waited for the timeout instead of hearing of the failure");
    QVERIFY(errors[1].empty());
    for (int r : {0, 2}) QCOMPARE(errors[size_t(r)], std::string("rank 1 failed: it ran out of disk"));
    QCOMPARE(group.failure().value_or(""), std::string("rank 1 failed: it ran out of disk"));
  }

  void aRankThatNeverAnswersTimesOut() {
    ThreadedGroup group(2, 300ms);
    QElapsedTimer clock;
    clock.start();
    const auto errors = onThreads(2, [&](int r) {
      if (r == 1) return;  // never joins
      group.communicator(r).barrier();
    });
    QVERIFY(clock.elapsed() >= 250 && clock.elapsed() < 10000);
    QVERIFY2(errors[0].find("rank 0 waited 0.3 s for a barrier (collective #0) that rank 1 never joined") != std::string::npos, errors[0].c_str());
    // Later calls fail at once with the same cause.
    bool refused = false;
    try {
      group.communicator(1).barrier();
    } catch (const CommunicatorError& e) {
      refused = std::string(e.what()).find("never joined") != std::string::npos;
    }
    QVERIFY(refused);
  }

  // One rank's split update (gradient program, its exchange, optimizer program) takes the fused
  // update graph's steps, bit for bit: the single-rank arithmetic is unchanged by the split.
  void splitUpdateMatchesTheFusedOne() {
    const cas::project::Project p = quickProject();
    auto compiled = cas::project::compilePolicy(p, 32, nullptr, true);
    QVERIFY(compiled.policy);
    cas::train::OptimizerConfig config;
    config.weightDecay = 1e-4f;
    cas::train::Updater fused(*cpu(), *compiled.policy, cas::train::LossKind::AlphaZero, config, 9, 3);
    ThreadedGroup group(1, 30s);
    cas::params::DistParams dist{1, 1, 30};  // 1 KiB buckets, a check every step
    cas::train::GradientExchange exchange(group.communicator(0), dist);
    cas::train::Updater split(*cpu(), *compiled.policy, cas::train::LossKind::AlphaZero, config, 9, 3, &exchange);
    QVERIFY2(exchange.buckets().size() > 1, "the test wants several buckets");
    std::vector<float> obs(32 * 18), pi(32 * 9), z(32);
    for (int step = 0; step < 4; ++step) {
      for (size_t i = 0; i < obs.size(); ++i) obs[i] = float((i * 7 + size_t(step)) % 3 == 0);
      for (size_t i = 0; i < pi.size(); ++i) pi[i] = float((i + size_t(step)) % 9 == 0);
      for (size_t i = 0; i < z.size(); ++i) z[i] = float(int(i % 3) - 1);
      for (auto* u : {&fused, &split}) {
        u->executable().setInput("obs", obs.data(), obs.size());
        u->executable().setInput("policy_targets", pi.data(), pi.size());
        u->executable().setInput("value_targets", z.data(), z.size());
      }
      QCOMPARE(split.step(), fused.step());
      const std::string differs = firstDifference(fused.stateProgram(), split.stateProgram());
      QVERIFY2(differs.empty(), differs.c_str());
      // The buckets' all-reduces started while the backward pass ran: all but the last (whose
      // last gradient is the backward pass's last) before the last gradient was handed over.
      QCOMPARE(exchange.bucketsStartedEarly(), exchange.buckets().size() - 1);
    }
    // The gradient program's hand-over: each output once, its values those readOutput gives
    // after the run, in the order the program makes them; an unknown name refused before a run.
    std::vector<std::string> names;
    for (const auto& parameter : split.parameters()) names.push_back("grad/" + parameter.name);
    std::vector<std::vector<float>> handed(names.size());
    std::vector<size_t> order;
    split.executable().runHandingOver(names, [&](size_t i, const float* values, size_t count) {
      handed[i].assign(values, values + count);
      order.push_back(i);
    });
    QCOMPARE(order.size(), names.size());
    QVERIFY2(order.front() == names.size() - 1 && order.back() == 0, "the backward pass makes the last parameter's gradient first");
    for (size_t i = 0; i < names.size(); ++i) {
      std::vector<float> read(handed[i].size());
      split.executable().readOutput(names[i], read.data(), read.size());
      QVERIFY(read == handed[i]);
    }
    bool refused = false;
    try {
      split.executable().runHandingOver({"grad/nothing"}, [](size_t, const float*, size_t) {});
    } catch (const std::invalid_argument& e) {
      refused = std::string(e.what()) == "the graph has no output named 'grad/nothing'";
    }
    QVERIFY(refused);
  }

  // The weight check: ranks whose state differs are stopped, every one with the same error.
  void theWeightCheckCatchesRanksThatDiffer() {
    const cas::project::Project p = quickProject();
    auto compiled = cas::project::compilePolicy(p, 8, nullptr, true);
    QVERIFY(compiled.policy);
    ThreadedGroup group(2, 30s);
    const auto errors = onThreads(2, [&](int r) {
      cas::train::GradientExchange exchange(group.communicator(r), {4096, 2, 30});
      cas::train::Updater u(*cpu(), *compiled.policy, cas::train::LossKind::AlphaZero, {}, 9, 5, &exchange);
      exchange.checkEqualState(u.stateProgram(), 2);  // equal: passes
      exchange.checkEqualState(u.stateProgram(), 3);  // not a checking step: nothing compared
      if (r == 1) {
        const std::string name = u.parameters().front().name;
        std::vector<float> w = u.parameter(name);
        w[0] = std::nextafter(w[0], 1.0f);  // one bit
        u.setParameter(name, w);
      }
      exchange.checkEqualState(u.stateProgram(), 4);
    });
    for (const auto& e : errors)
      QVERIFY2(e.find("the ranks' weights and optimizer state differ after optimizer step 4") != std::string::npos, e.c_str());
  }

  // Acceptance: two ranks train tic-tac-toe, one step per iteration, and hold the same bits in
  // every parameter and optimizer state after every step, while playing different games.
  void twoRanksHoldTheSameWeightsAfterEveryStep() {
    const cas::project::Project p = quickProject({QStringLiteral("train.steps_per_iteration=1"), QStringLiteral("dist.bucket_kib=2"),
                                                  QStringLiteral("dist.checksum_every=1"), QStringLiteral("train.overlap=false")});
    cas::train::ParallelOptions options;
    options.ranks = 2;
    cas::train::DataParallelTrainer trainer(p, cpu(), options);
    std::int64_t steps = 0, games = 0;
    for (int i = 0; i < 8; ++i) {
      cas::train::IterationReport report;
      try {
        report = trainer.runIteration();  // checks the ranks' checksums after every step too
      } catch (const std::exception& e) {
        QFAIL(e.what());
      }
      QVERIFY(report.gamesPlayed >= games + 16);  // at least 8 games on each rank, counted together
      games = report.gamesPlayed;
      steps += report.trainingSteps;
      QCOMPARE(trainer.rank(0).updater().steps(), steps);
      QCOMPARE(trainer.rank(1).updater().steps(), steps);
      const std::string differs = firstDifference(trainer.rank(0).updater().stateProgram(), trainer.rank(1).updater().stateProgram());
      QVERIFY2(differs.empty(), ("after step " + std::to_string(steps) + ": " + differs).c_str());
    }
    QVERIFY2(steps >= 6, "the ranks should have trained");
    // Their own games: the replay shards differ.
    const std::string a = trainer.rank(0).checkpoint(), b = trainer.rank(1).checkpoint();
    QVERIFY(a != b);
    // Rank 0's checkpoint restores into one rank, and into three, with these weights.
    cas::train::AlphaZeroTrainer single(p, cpu());
    std::string error;
    QVERIFY2(single.restore(a, &error), error.c_str());
    QVERIFY(firstDifference(single.updater().stateProgram(), trainer.rank(0).updater().stateProgram()).empty());
    options.ranks = 3;
    cas::train::DataParallelTrainer three(p, cpu(), options);
    QVERIFY2(three.restore(a, &error), error.c_str());
    QCOMPARE(three.iteration(), std::int64_t(8));
    three.runIteration();
    for (int r = 1; r < 3; ++r) QVERIFY(firstDifference(three.rank(0).updater().stateProgram(), three.rank(r).updater().stateProgram()).empty());
  }

  // Through the CLI: rank 1 fails before step 5; the run ends at once with an error naming it,
  // the checkpoint on disk resumes with 3 ranks and with 1.
  void aFailingRankEndsTheRunAndItResumes() {
    const QString run = dir_.filePath(QStringLiteral("failed"));
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("CAS_DIST_FAIL"), QStringLiteral("1:5"));
    p.setProcessEnvironment(env);
    QElapsedTimer clock;
    clock.start();
    p.start(cas::test::kCli, QStringList{QStringLiteral("train"), cas::test::kExample, QStringLiteral("--ranks"), QStringLiteral("2"),
                                         QStringLiteral("--iterations"), QStringLiteral("20"), QStringLiteral("--out"), run} +
                                 cas::test::kQuick);
    QVERIFY(p.waitForFinished(120000));
    const QString err = QString::fromUtf8(p.readAllStandardError());
    QCOMPARE(p.exitCode(), 1);
    QVERIFY2(err.contains(QStringLiteral("error: the run stopped: data-parallel training stopped, every rank with it: rank 1 failed: "
                                         "fault injected (CAS_DIST_FAIL=1:5): rank 1 stops before optimizer step 5")),
             qPrintable(err));
    QVERIFY2(clock.elapsed() < 60000, "the run did not end soon after the failure");
    // The iterations before the failing one finished, each checkpointed; the failing one left nothing.
    const QStringList finished = QString::fromUtf8(p.readAllStandardOutput()).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    QVERIFY(finished.size() >= 2);
    const int last = finished.back().section(QLatin1Char(' '), 1, 1).toInt();
    const QString newest = QStringLiteral("iter-%1.ckpt").arg(last, 8, 10, QLatin1Char('0'));
    QCOMPARE(QDir(run + QStringLiteral("/checkpoints")).entryList({QStringLiteral("iter-*.ckpt")}, QDir::Files, QDir::Name).back(), newest);
    cas::test::Result r = cas::test::cli({QStringLiteral("train"), QStringLiteral("--resume"), run, QStringLiteral("--ranks"), QStringLiteral("3"),
                                          QStringLiteral("--iterations"), QStringLiteral("2")});
    QVERIFY2(r.status == 0, qPrintable(r.err));
    QVERIFY2(r.err.contains(newest + QStringLiteral(" (iteration %1)").arg(last)), qPrintable(r.err));
    QVERIFY2(r.out.contains(QStringLiteral("iter %1 |").arg(last + 2)), qPrintable(r.out));
    r = cas::test::cli({QStringLiteral("train"), QStringLiteral("--resume"), run, QStringLiteral("--iterations"), QStringLiteral("1")});
    QVERIFY2(r.status == 0, qPrintable(r.err));
    QVERIFY2(r.out.contains(QStringLiteral("iter %1 |").arg(last + 3)), qPrintable(r.out));
  }

  // One rank through a communicator (the split update, the exchange) gives the plain path's
  // losses and weights, step for step: what the NCCL path with one rank must do on a GPU.
  void oneRankTrainsAsThePlainPath() {
    const cas::project::Project p = quickProject({QStringLiteral("train.steps_per_iteration=1"), QStringLiteral("train.overlap=false")});
    auto lossesOf = [](cas::train::AlphaZeroTrainer& trainer) {
      std::vector<float> losses;
      for (int i = 0; i < 100 && losses.size() < 10; ++i)
        if (const cas::train::IterationReport r = trainer.runIteration(); r.trainingSteps > 0) losses.push_back(r.loss);
      return losses;
    };
    cas::train::AlphaZeroTrainer plain(p, cpu());
    ThreadedGroup group(1, 30s);
    cas::train::AlphaZeroTrainer rank(p, cpu(), cas::train::DataParallelRank{&group.communicator(0), {}});
    const std::vector<float> a = lossesOf(plain), b = lossesOf(rank);
    QCOMPARE(a.size(), size_t(10));
    QVERIFY(a == b);
    const std::string differs = firstDifference(plain.updater().stateProgram(), rank.updater().stateProgram());
    QVERIFY2(differs.empty(), differs.c_str());
  }

  // One process per rank, here on threads: rank 0 (a LeadingRank, as the engine drives it)
  // restores a checkpoint and takes a live change; rank 1 follows both, runs the same iterations,
  // holds the same weights, and returns when rank 0 stops.
  void theLeadingRankKeepsItsFollowersInStep() {
    const cas::project::Project p = quickProject({QStringLiteral("train.steps_per_iteration=1"), QStringLiteral("dist.checksum_every=1")});
    cas::train::AlphaZeroTrainer source(p, cpu());
    for (int i = 0; i < 4; ++i) source.runIteration();
    const std::string saved = source.checkpoint();
    ThreadedGroup group(2, 60s);
    std::unique_ptr<cas::train::LeadingRank> leader;
    std::unique_ptr<cas::train::AlphaZeroTrainer> follower;
    const auto errors = onThreads(2, [&](int r) {
      // Each rank its own backend, as each process has: a backend is driven by one thread at a time.
      auto backend = r == 0 ? cpu() : cas::exec::makeCpuBackend();
      auto trainer = std::make_unique<cas::train::AlphaZeroTrainer>(p, backend, cas::train::DataParallelRank{&group.communicator(r), {}});
      if (r == 1) {
        cas::train::followLeadingRank(*trainer, group.communicator(1));
        follower = std::move(trainer);
        return;
      }
      leader = std::make_unique<cas::train::LeadingRank>(std::move(trainer), group.communicator(0));
      std::string error;
      if (!leader->restore(saved, &error)) throw std::runtime_error(error);
      if (auto problem = leader->setParameter("search.c_puct", cas::params::ParamValue(2.5))) throw std::runtime_error(*problem);
      for (int i = 0; i < 3; ++i) leader->runIteration();
      leader->stopRanks();
    });
    QVERIFY2(errors[0].empty() && errors[1].empty(), (errors[0] + " | " + errors[1]).c_str());
    QCOMPARE(leader->iteration(), std::int64_t(7));
    QCOMPARE(follower->iteration(), std::int64_t(7));
    QCOMPARE(follower->searchParams().cPuct, 2.5);
    const std::string differs = firstDifference(leader->rank().updater().stateProgram(), follower->updater().stateProgram());
    QVERIFY2(differs.empty(), differs.c_str());
    // The group id's hex, as the launcher passes it.
    const std::string bytes("\x00\x7f\x80\xff id", 7);
    QCOMPARE(cas::train::fromHex(cas::train::toHex(bytes)).value_or(""), bytes);
    QVERIFY(!cas::train::fromHex("abc"));
    QVERIFY(!cas::train::fromHex("zz"));
  }

  // `train --gpus`: what it refuses before starting a rank, with what to do instead.
  void theGpuLauncherRefusesWhatItCannotRun() {
    const QString run = dir_.filePath(QStringLiteral("gpus-refused"));
    auto train = [&](const QStringList& more) {
      return cas::test::cli(QStringList{QStringLiteral("train"), cas::test::kExample, QStringLiteral("--out"), run} + more);
    };
    cas::test::Result r = train({QStringLiteral("--gpus"), QStringLiteral("2"), QStringLiteral("--device"), QStringLiteral("cpu")});
    QCOMPARE(r.status, 2);
    QVERIFY2(r.err.contains(QStringLiteral("error: --gpus runs one process per GPU on the CUDA backend, and --device cpu asks for the CPU: "
                                           "use --ranks 2 for data-parallel ranks on CPU threads, or --device cuda")),
             qPrintable(r.err));
    r = train({QStringLiteral("--gpus"), QStringLiteral("0")});
    QCOMPARE(r.status, 2);
    QVERIFY2(r.err.contains(QStringLiteral("--gpus: expected a whole number in [1, 64], got '0'")), qPrintable(r.err));
    r = train({QStringLiteral("--gpus"), QStringLiteral("2"), QStringLiteral("--ranks"), QStringLiteral("2")});
    QCOMPARE(r.status, 2);
    QVERIFY2(r.err.contains(QStringLiteral("--ranks excludes --gpus")), qPrintable(r.err));
    if (!cas::exec::BackendRegistry::instance().find("cuda")->available()) {
      r = train({QStringLiteral("--gpus"), QStringLiteral("2")});
      QCOMPARE(r.status, 2);
      QVERIFY2(r.err.contains(QStringLiteral("error: --gpus needs the CUDA backend: ")) &&
                   r.err.contains(QStringLiteral("; --ranks 2 trains data-parallel ranks on CPU threads instead")),
               qPrintable(r.err));
    }
    // A rank's environment that is not a launcher's.
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("CAS_RANK"), QStringLiteral("1"));
    env.insert(QStringLiteral("CAS_WORLD_SIZE"), QStringLiteral("2"));
    env.insert(QStringLiteral("CAS_NCCL_ID"), QStringLiteral("not hex"));
    p.setProcessEnvironment(env);
    p.start(cas::test::kCli, {QStringLiteral("train"), cas::test::kExample, QStringLiteral("--gpus"), QStringLiteral("2"), QStringLiteral("--out"), run});
    QVERIFY(p.waitForFinished(60000));
    QCOMPARE(p.exitCode(), 2);
    QVERIFY2(QString::fromUtf8(p.readAllStandardError()).contains(QStringLiteral("error: CAS_RANK, CAS_WORLD_SIZE and CAS_NCCL_ID are set by")), "");
    QVERIFY(!QDir(run).exists());  // nothing was started
  }

  // bench allreduce on three CPU-thread ranks: the sizes asked for (the sums are checked by the
  // bench), nccl-tests' bus bandwidth (algbw * 2(n-1)/n), and its refusals.
  void theAllReduceBenchTimesTheThreadedGroup() {
    cas::test::Result r = cas::test::cli({QStringLiteral("bench"), QStringLiteral("allreduce"), QStringLiteral("--ranks"), QStringLiteral("3"),
                                          QStringLiteral("--min-bytes"), QStringLiteral("1024"), QStringLiteral("--max-bytes"), QStringLiteral("8192"),
                                          QStringLiteral("--factor"), QStringLiteral("2"), QStringLiteral("--json")});
    QVERIFY2(r.status == 0, qPrintable(r.err));
    const QJsonObject o = QJsonDocument::fromJson(r.out.toUtf8()).object();
    QCOMPARE(o.value(QStringLiteral("ranks")).toInt(), 3);
    const QJsonArray results = o.value(QStringLiteral("results")).toArray();
    QCOMPARE(results.size(), 4);
    for (int i = 0; i < 4; ++i) {
      const QJsonObject row = results[i].toObject();
      QCOMPARE(row.value(QStringLiteral("bytes")).toInt(), 1024 << i);
      const double alg = row.value(QStringLiteral("algbw_gbps")).toDouble();
      QVERIFY(alg > 0);
      QVERIFY(std::fabs(row.value(QStringLiteral("busbw_gbps")).toDouble() - alg * 4 / 3) <= 1e-6 * alg);
    }
    r = cas::test::cli({QStringLiteral("bench"), QStringLiteral("allreduce"), QStringLiteral("--max-bytes"), QStringLiteral("16384")});
    QVERIFY2(r.status == 0, qPrintable(r.err));
    QVERIFY2(r.out.contains(QStringLiteral("all-reduce (sum of floats) over 2 ranks: CPU threads of one process")) && r.out.contains(QStringLiteral("16.0 KiB")),
             qPrintable(r.out));
    r = cas::test::cli({QStringLiteral("bench"), QStringLiteral("allreduce"), QStringLiteral("--min-bytes"), QStringLiteral("8192"), QStringLiteral("--max-bytes"),
                        QStringLiteral("4096")});
    QCOMPARE(r.status, 2);
    QVERIFY2(r.err.contains(QStringLiteral("error: --min-bytes 8192 is more than --max-bytes 4096")), qPrintable(r.err));
    if (!cas::exec::BackendRegistry::instance().find("cuda")->available()) {
      r = cas::test::cli({QStringLiteral("bench"), QStringLiteral("allreduce"), QStringLiteral("--gpus"), QStringLiteral("2")});
      QCOMPARE(r.status, 2);
      QVERIFY2(r.err.contains(QStringLiteral("error: --gpus needs the CUDA backend: ")), qPrintable(r.err));
    }
  }

  void theCliRefusesWhatItCannotRun() {
    const QString run = dir_.filePath(QStringLiteral("refused"));
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("CAS_DIST_FAIL"), QStringLiteral("one:5"));
    p.setProcessEnvironment(env);
    p.start(cas::test::kCli, {QStringLiteral("train"), cas::test::kExample, QStringLiteral("--ranks"), QStringLiteral("2"), QStringLiteral("--out"), run});
    QVERIFY(p.waitForFinished(60000));
    QCOMPARE(p.exitCode(), 2);
    QVERIFY2(QString::fromUtf8(p.readAllStandardError()).contains(QStringLiteral("error: CAS_DIST_FAIL: 'one:5' is not RANK:STEP")), "");
    const cas::test::Result r = cas::test::cli({QStringLiteral("train"), cas::test::sourcePath(QStringLiteral("projects/cartpole-ppo")),
                                                QStringLiteral("--ranks"), QStringLiteral("2"), QStringLiteral("--out"), run});
    QCOMPARE(r.status, 1);
    QVERIFY2(r.err.contains(QStringLiteral("data-parallel training (--ranks) is built for AlphaZero; a ppo run trains on one rank")), qPrintable(r.err));
  }
};

QTEST_GUILESS_MAIN(TestDataParallel)
#include "test_data_parallel.moc"
