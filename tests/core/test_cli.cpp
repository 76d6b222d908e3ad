// The cuda-agent executable driven as a user would: exit codes, messages, and what it links.
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <csignal>

#include "core/exec/backend.hpp"
#include "support/price_fixture.hpp"
#include "support/source_dir.hpp"

namespace {

struct Run {
  int status = -1;
  QString out, err;
};

Run run(const QString& program, const QStringList& args) {
  QProcess p;
  p.start(program, args);
  if (!p.waitForFinished(120000)) return {};
  return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, QString::fromUtf8(p.readAllStandardOutput()),
          QString::fromUtf8(p.readAllStandardError())};
}

Run cli(const QStringList& args) { return run(QStringLiteral(CAS_BIN_DIR "/cuda-agent"), args); }

void write(const QString& path, const QByteArray& text) {
  QFile f(path);
  QVERIFY(f.open(QIODevice::WriteOnly));
  f.write(text);
}

}  // namespace

class TestCli : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;

  QString project(const QString& name, const QByteArray& toml, bool policy = true) {
    const QString folder = dir_.filePath(name);
    QDir().mkpath(folder);
    write(folder + QStringLiteral("/project.toml"), toml);
    if (policy)
      write(folder + QStringLiteral("/policy.pdl"),
            "def policy(obs):\n    h = relu(dense(obs, units=8))\n    return dense(h, units=action_dim), tanh(dense(h, units=1))\n");
    return folder;
  }

 private slots:
  // Hardening, fifth probe (D14): `export --out DIR/` where nothing is said "DIR/ is a folder,
  // not a regular file". It names a folder, and the refusal now says so; nothing is made.
  void anOutputEndingInASlashIsNamedForWhatItIs() {
    const QString pdl = dir_.filePath(QStringLiteral("slash.pdl"));
    write(pdl, "def policy(obs):\n    h = relu(dense(obs, units=8))\n    return dense(h, units=action_dim), tanh(dense(h, units=1))\n");
    const QString out = dir_.filePath(QStringLiteral("newdir/"));
    Run r = cli({QStringLiteral("export"), pdl, QStringLiteral("--obs-shape"), QStringLiteral("4"), QStringLiteral("--action-dim"), QStringLiteral("2"),
                 QStringLiteral("--out"), out});
    QCOMPARE(r.status, 2);
    QCOMPARE(r.err, QStringLiteral("error: %1 names a folder (it ends in '/'), not a file; give the path of a file to write, without the trailing "
                                   "'/'\n").arg(out));
    QVERIFY(!QFile::exists(dir_.filePath(QStringLiteral("newdir"))));
  }

  // Hardening, fifth probe (D6): SIGTERM or Ctrl-C to `bench policy --device c` left the compiled
  // harness running (orphaned) and its temporary folder (sources, binary) behind. The harness is
  // now killed with the process, the folder removed, and the signal ends the process as before.
  void aStoppedCBenchLeavesNothing() {
    const QString tmp = dir_.filePath(QStringLiteral("bench-tmp"));
    QVERIFY(QDir().mkpath(tmp));
    for (int signal : {SIGTERM, SIGINT}) {
      QProcess p;
      QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
      environment.insert(QStringLiteral("TMPDIR"), tmp);
      p.setProcessEnvironment(environment);
      p.start(QStringLiteral(CAS_BIN_DIR "/cuda-agent"),
              {QStringLiteral("bench"), QStringLiteral("policy"), cas::test::sourcePath(QStringLiteral("projects/tictactoe-alphazero")), QStringLiteral("--device"),
               QStringLiteral("c"), QStringLiteral("--decisions"), QStringLiteral("1000000"), QStringLiteral("--warmup"), QStringLiteral("100000")});
      QVERIFY(p.waitForStarted());
      qint64 harnessPid = 0;
      QString folder;  // the harness's temporary folder, once it runs
      auto findHarness = [&] {
        for (const QString& pid : QDir(QStringLiteral("/proc")).entryList(QDir::Dirs)) {
          QFile stat(QStringLiteral("/proc/%1/stat").arg(pid)), cmdline(QStringLiteral("/proc/%1/cmdline").arg(pid));
          if (!stat.open(QIODevice::ReadOnly) || !cmdline.open(QIODevice::ReadOnly)) continue;
          const QByteArray fields = stat.readAll();
          const QList<QByteArray> after = fields.mid(fields.lastIndexOf(')') + 2).split(' ');  // state, ppid, ...
          const QByteArray program = cmdline.readAll().split('\0').value(0);
          if (after.size() > 1 && after[1].toLongLong() == p.processId() && program.endsWith("/harness")) {
            harnessPid = pid.toLongLong();
            folder = QFileInfo(QString::fromUtf8(program)).path();
            return true;
          }
        }
        return false;
      };
      QTRY_VERIFY_WITH_TIMEOUT(findHarness() || p.state() == QProcess::NotRunning, 60000);
      if (!harnessPid) {
        p.waitForFinished(30000);
        if (QString::fromUtf8(p.readAllStandardOutput()).contains(QStringLiteral("no C compiler"))) QSKIP("no C compiler to build the harness with");
        QFAIL("the harness was not seen running");
      }
      ::kill(pid_t(p.processId()), signal);
      QVERIFY(p.waitForFinished(30000));
      const bool harnessLeft = ::kill(pid_t(harnessPid), 0) == 0;
      if (harnessLeft) ::kill(pid_t(harnessPid), SIGKILL);  // not left running past the test
      QCOMPARE(p.exitStatus(), QProcess::CrashExit);  // ended by the signal
      QVERIFY2(!harnessLeft, "the harness was left running");
      QVERIFY2(!QFileInfo::exists(folder), qPrintable(folder));
      QCOMPARE(QDir(tmp).entryList(QDir::AllEntries | QDir::NoDotAndDotDot | QDir::Hidden), QStringList());
    }
  }

  void versionAndHelp() {
    Run v = cli({QStringLiteral("--version")});
    QCOMPARE(v.status, 0);
    QVERIFY2(v.out.startsWith(QStringLiteral("cuda-agent 0.")), qPrintable(v.out));
    Run h = cli({QStringLiteral("--help")});
    QCOMPARE(h.status, 0);
    for (const char* sub : {"devices", "check", "params"}) QVERIFY2(h.out.contains(QLatin1String(sub)), qPrintable(h.out));
    Run none = cli({});
    QCOMPARE(none.status, 2);
  }

  // `bench env` steps the CPU twins: every environment every step, with resets, and the same
  // totals with one thread or two (each game draws from its own generator).
  void benchEnvStepsEveryEnvironment() {
    for (const char* env : {"minatar-asterix", "minatar-breakout", "minatar-freeway", "minatar-seaquest", "minatar-space-invaders", "cartpole"}) {
      QJsonObject results[2];
      for (int threads : {1, 2}) {
        const Run r = cli({QStringLiteral("bench"), QStringLiteral("env"), QStringLiteral("--env"), QLatin1String(env), QStringLiteral("--envs"),
                           QStringLiteral("300"), QStringLiteral("--steps"), QStringLiteral("600"), QStringLiteral("--threads"),
                           QString::number(threads), QStringLiteral("--json")});
        QVERIFY2(r.status == 0, qPrintable(r.err));
        results[threads - 1] = QJsonDocument::fromJson(r.out.toUtf8()).object();
        QCOMPARE(results[threads - 1].value(QStringLiteral("threads")).toInt(), threads);
        QVERIFY(results[threads - 1].value(QStringLiteral("steps_per_second")).toDouble() > 0);
      }
      // Random play ends episodes and resets follow (a Freeway episode lasts 2500 steps: it scores instead).
      if (QLatin1String(env) == QLatin1String("minatar-freeway")) QVERIFY(results[0].value(QStringLiteral("reward")).toDouble() > 0);
      else QVERIFY(results[0].value(QStringLiteral("episodes")).toInteger() > 300);
      QCOMPARE(results[0].value(QStringLiteral("episodes")), results[1].value(QStringLiteral("episodes")));
      QCOMPARE(results[0].value(QStringLiteral("reward")), results[1].value(QStringLiteral("reward")));
    }
    const Run bad = cli({QStringLiteral("bench"), QStringLiteral("env"), QStringLiteral("--env"), QStringLiteral("pong")});
    QCOMPARE(bad.status, 2);
    QVERIFY2(bad.err.contains(QStringLiteral("pong")), qPrintable(bad.err));
  }

  // `bench ppo --json` is one JSON object even for a project whose name holds quotes and a tab,
  // and it names the policy file it timed.
  void benchPpoJsonNamesTheProjectAndPolicy() {
    const QString folder = project(QStringLiteral("odd-name"), "name = \"a \\\"quoted\\\"\\tname\"\nenvironment = \"cartpole\"\nalgorithm = \"ppo\"\n"
                                                             "policy = \"policy.pdl\"\n");
    const Run r = cli({QStringLiteral("bench"), QStringLiteral("ppo"), folder, QStringLiteral("--device"), QStringLiteral("cpu"), QStringLiteral("--set"),
                       QStringLiteral("ppo.envs=4"), QStringLiteral("--set"), QStringLiteral("ppo.rollout_steps=8"), QStringLiteral("--set"),
                       QStringLiteral("ppo.minibatches=1"), QStringLiteral("--iterations"), QStringLiteral("1"), QStringLiteral("--json")});
    QVERIFY2(r.status == 0, qPrintable(r.err));
    QJsonParseError error;
    const QJsonObject o = QJsonDocument::fromJson(r.out.toUtf8(), &error).object();
    QVERIFY2(error.error == QJsonParseError::NoError, qPrintable(r.out));
    QCOMPARE(o.value(QStringLiteral("project")).toString(), QStringLiteral("a \"quoted\"\tname"));
    QCOMPARE(o.value(QStringLiteral("policy")).toString(), QStringLiteral("policy.pdl"));
    QCOMPARE(o.value(QStringLiteral("envs")).toInt(), 4);
  }

  // Hardening, fourth probe: a bench ppo in which no episode ended printed "0 episodes ended,
  // mean return 0"; it says no episode ended, and its JSON has no mean (null).
  void benchPpoGivesNoMeanOfNoEpisodes() {
    const QStringList args = {QStringLiteral("bench"), QStringLiteral("ppo"), cas::test::sourcePath(QStringLiteral("projects/cartpole-ppo")),
                              QStringLiteral("--device"), QStringLiteral("cpu"), QStringLiteral("--set"), QStringLiteral("ppo.envs=1"), QStringLiteral("--set"),
                              QStringLiteral("ppo.rollout_steps=1"), QStringLiteral("--set"), QStringLiteral("ppo.minibatches=1"), QStringLiteral("--iterations"),
                              QStringLiteral("1")};
    Run r = cli(args);
    QVERIFY2(r.status == 0, qPrintable(r.err));
    QVERIFY2(r.out.contains(QStringLiteral("; no episode ended (no mean return: raise --iterations or ppo.rollout_steps)\n")) &&
                 !r.out.contains(QStringLiteral("mean return 0")),
             qPrintable(r.out));
    r = cli(args + QStringList{QStringLiteral("--json")});
    QVERIFY2(r.status == 0, qPrintable(r.err));
    const QJsonObject o = QJsonDocument::fromJson(r.out.toUtf8()).object();
    QVERIFY2(o.contains(QStringLiteral("mean_return")) && o.value(QStringLiteral("mean_return")).isNull(), qPrintable(r.out));
    QCOMPARE(o.value(QStringLiteral("episodes")).toInt(), 0);
  }

  // Issue 38: bench search --model learned times the learned-model search (muzero_mlp256 over
  // MinAtar Breakout by default); a board game is refused for it.
  void benchSearchTimesALearnedModel() {
    const Run r = cli({QStringLiteral("bench"), QStringLiteral("search"), QStringLiteral("--model"), QStringLiteral("learned"), QStringLiteral("--device"),
                       QStringLiteral("cpu"), QStringLiteral("--games"), QStringLiteral("4"), QStringLiteral("--sims"), QStringLiteral("8"),
                       QStringLiteral("--seconds"), QStringLiteral("0.01"), QStringLiteral("--json")});
    QVERIFY2(r.status == 0, qPrintable(r.err));
    const QJsonObject o = QJsonDocument::fromJson(r.out.toUtf8()).object();
    QCOMPARE(o.value(QStringLiteral("model")).toString(), QStringLiteral("learned"));
    QCOMPARE(o.value(QStringLiteral("env")).toString(), QStringLiteral("minatar-breakout"));
    QCOMPARE(o.value(QStringLiteral("net")).toString(), QStringLiteral("muzero_mlp256"));
    QCOMPARE(o.value(QStringLiteral("device")).toString(), QStringLiteral("cpu"));
    QVERIFY2(o.value(QStringLiteral("simulations_per_second")).toDouble() > 0, qPrintable(r.out));
    const Run board = cli({QStringLiteral("bench"), QStringLiteral("search"), QStringLiteral("--model"), QStringLiteral("learned"), QStringLiteral("--env"),
                           QStringLiteral("connect4")});
    QCOMPARE(board.status, 2);
    QVERIFY2(board.err.contains(QStringLiteral("a learned model plans a single-agent environment, and 'connect4' is not one")), qPrintable(board.err));
  }

  // Issue 37: bench decision splits a decision's wall time into inference, search and the rest
  // (the data exchange), which add up to it; a project that does not search is refused.
  void benchDecisionSplitsADecision() {
    const QString tictactoe = cas::test::sourcePath(QStringLiteral("projects/tictactoe-alphazero"));
    const Run r = cli({QStringLiteral("bench"), QStringLiteral("decision"), tictactoe, QStringLiteral("--device"), QStringLiteral("cpu"),
                       QStringLiteral("--set"), QStringLiteral("train.parallel_games=8"), QStringLiteral("--decisions"), QStringLiteral("3"),
                       QStringLiteral("--json")});
    QVERIFY2(r.status == 0, qPrintable(r.err));
    const QJsonObject o = QJsonDocument::fromJson(r.out.toUtf8()).object();
    QCOMPARE(o.value(QStringLiteral("search")).toString(), QStringLiteral("cpu"));
    QCOMPARE(o.value(QStringLiteral("games")).toInt(), 8);
    QCOMPARE(o.value(QStringLiteral("decisions")).toInt(), 3);
    const double inference = o.value(QStringLiteral("inference_ms")).toDouble(), search = o.value(QStringLiteral("search_ms")).toDouble(),
                 exchange = o.value(QStringLiteral("exchange_ms")).toDouble(), decision = o.value(QStringLiteral("decision_ms")).toDouble();
    QVERIFY2(inference > 0 && search > 0 && exchange >= 0, qPrintable(r.out));
    QVERIFY2(std::abs(inference + search + exchange - decision) <= 1e-3 * decision, qPrintable(r.out));
    QVERIFY(std::abs(o.value(QStringLiteral("exchange_share")).toDouble() - exchange / decision) < 1e-4);

    const Run text = cli({QStringLiteral("bench"), QStringLiteral("decision"), tictactoe, QStringLiteral("--device"), QStringLiteral("cpu"),
                          QStringLiteral("--set"), QStringLiteral("train.parallel_games=2"), QStringLiteral("--decisions"), QStringLiteral("1")});
    QCOMPARE(text.status, 0);
    QVERIFY2(text.out.contains(QStringLiteral("1 decisions of 2 games x 64 simulations")) && text.out.contains(QStringLiteral("  search (host) ")),
             qPrintable(text.out));
    const Run ppo = cli({QStringLiteral("bench"), QStringLiteral("decision"), cas::test::sourcePath(QStringLiteral("projects/cartpole-ppo"))});
    QCOMPARE(ppo.status, 2);
    QCOMPARE(ppo.err, QStringLiteral("error: bench decision needs a project that searches (algorithm alphazero); %1 trains with ppo\n")
                          .arg(cas::test::sourcePath(QStringLiteral("projects/cartpole-ppo"))));
  }

  // Issue 40: bench policy times decisions on the CPU backend and as exported C (compiled with
  // cc), with percentiles in order; a missing compiler and a batch the C export cannot take are
  // said, not timed; a target that is neither run nor project is refused.
  void benchPolicyTimesEachDecision() {
    const QString cartpole = cas::test::sourcePath(QStringLiteral("projects/cartpole-ppo"));
    const Run r = cli({QStringLiteral("bench"), QStringLiteral("policy"), cartpole, QStringLiteral("--device"), QStringLiteral("all"),
                       QStringLiteral("--decisions"), QStringLiteral("300"), QStringLiteral("--json")});
    QVERIFY2(r.status == 0, qPrintable(r.err));
    const QJsonObject o = QJsonDocument::fromJson(r.out.toUtf8()).object();
    QCOMPARE(o.value(QStringLiteral("decisions")).toInt(), 300);
    int timed = 0;
    for (const QJsonValue& v : o.value(QStringLiteral("rows")).toArray()) {
      const QJsonObject row = v.toObject();
      const QString where = row.value(QStringLiteral("where")).toString();
      if (where == QStringLiteral("cuda") && row.contains(QStringLiteral("not_timed"))) continue;  // no CUDA here
      const double median = row.value(QStringLiteral("median_us")).toDouble(), p99 = row.value(QStringLiteral("p99_us")).toDouble(),
                   p999 = row.value(QStringLiteral("p999_us")).toDouble(), largest = row.value(QStringLiteral("max_us")).toDouble();
      QVERIFY2(median > 0 && median <= p99 && p99 <= p999 && p999 <= largest, qPrintable(r.out));
      ++timed;
    }
    QVERIFY2(timed >= 2, qPrintable(r.out));  // cpu and c at least
    QProcess noCompiler;
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    environment.insert(QStringLiteral("CC"), QStringLiteral("/no/such/cc"));
    noCompiler.setProcessEnvironment(environment);
    noCompiler.start(QStringLiteral(CAS_BIN_DIR "/cuda-agent"), {QStringLiteral("bench"), QStringLiteral("policy"), cartpole, QStringLiteral("--device"),
                                                                   QStringLiteral("c"), QStringLiteral("--decisions"), QStringLiteral("10")});
    QVERIFY(noCompiler.waitForFinished(60000));
    QVERIFY2(noCompiler.readAllStandardOutput().contains("c: not timed: no C compiler: '/no/such/cc' could not be started (set CC)"), "CC");
    const Run batch = cli({QStringLiteral("bench"), QStringLiteral("policy"), cartpole, QStringLiteral("--device"), QStringLiteral("c"),
                           QStringLiteral("--batch"), QStringLiteral("4")});
    QVERIFY2(batch.status == 0 && batch.out.contains(QStringLiteral("c: not timed: the C export answers one observation a call; use --batch 1")),
             qPrintable(batch.out));
    const Run missing = cli({QStringLiteral("bench"), QStringLiteral("policy"), cartpole + QStringLiteral("/no-such-run")});
    QCOMPARE(missing.status, 1);
    QVERIFY2(missing.err.contains(QStringLiteral("is neither a run folder")), qPrintable(missing.err));
  }

  void devicesNamesBackendsAndReasons() {
    Run d = cli({QStringLiteral("devices")});
    QCOMPARE(d.status, 0);
    QVERIFY2(d.out.contains(QStringLiteral("cpu: CPU reference backend — available")), qPrintable(d.out));
    const auto* cuda = cas::exec::BackendRegistry::instance().find("cuda");
    if (cuda->available()) {
      QVERIFY2(d.out.contains(QStringLiteral("probe: passed")), qPrintable(d.out));
    } else {
      QVERIFY2(d.out.contains(QStringLiteral("cuda: CUDA backend — unavailable\n  reason: ") +
                              QString::fromStdString(cuda->unavailableReason)),
               qPrintable(d.out));
      QVERIFY2(d.out.contains(QStringLiteral("in use by default: CPU backend (CUDA unavailable: ")), qPrintable(d.out));
    }
  }

  void checkAcceptsExamples() {
    QDir projects(cas::test::sourcePath(QStringLiteral("projects")));
    QStringList args{QStringLiteral("check")};
    // trading-ppo's series is fetched (scripts/trading-data), not committed: a synthetic one stands in.
    for (const QString& n : projects.entryList(QDir::Dirs | QDir::NoDotAndDotDot))
      args << cas::test::loadableExample(projects.filePath(n), dir_.filePath(QStringLiteral("examples")));
    Run c = cli(args);
    QCOMPARE(c.status, 0);
    QCOMPARE(c.out.count(QStringLiteral(": ok\n")), args.size() - 1);
  }

  // A policy over tokens (an embedding of the observation) runs its forward pass on token ids:
  // a normal observation would hold no valid id. The output layer stays fp32 under @precision.
  void checkRunsATransformerOnTokens() {
    const QString file = dir_.filePath(QStringLiteral("tokens.pdl"));
    QFile f(file);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("@precision('bf16')\n@parallel(axis='batch')\ndef policy(obs):\n"
            "    x = embedding(obs, vocab=3, dim=16)\n"
            "    x = x + attention(linear(x, units=16), linear(x, units=16), linear(x, units=16), heads=2, causal=True)\n"
            "    return dense(mean(layer_norm(x), axis=0), units=action_dim)\n");
    f.close();
    Run c = cli({QStringLiteral("check"), file, QStringLiteral("--obs-shape"), QStringLiteral("42"), QStringLiteral("--action-dim"), QStringLiteral("7")});
    QCOMPARE(c.status, 0);
    QVERIFY2(c.out.contains(QStringLiteral("CPU forward pass, batch 1:")), qPrintable(c.out + c.err));
    QVERIFY2(c.err.contains(QStringLiteral("'policy/dense_0' computes an output of the policy and stays fp32")), qPrintable(c.err));
  }

  // A learned model (represent, dynamics, predict): check runs its three programs, and a next
  // state of another shape than represent's is refused at its line with a note at represent's.
  void checkTakesALearnedModel() {
    const QString file = dir_.filePath(QStringLiteral("model.pdl"));
    auto write = [&](int nextStateUnits) {
      QFile f(file);
      QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
      f.write(QStringLiteral("def represent(obs):\n    return relu(dense(flatten(obs), units=32))\n"
                             "def dynamics(state, action):\n    return relu(dense(concat(state, action), units=%1)), dense(state, units=1)\n"
                             "def predict(state):\n    return dense(state, units=action_dim), dense(state, units=1)\n")
                  .arg(nextStateUnits)
                  .toUtf8());
    };
    const QStringList args{QStringLiteral("check"), file, QStringLiteral("--algorithm"), QStringLiteral("muzero"), QStringLiteral("--obs-shape"),
                           QStringLiteral("4,10,10"), QStringLiteral("--action-dim"), QStringLiteral("3")};
    write(32);
    Run ok = cli(args);
    QCOMPARE(ok.status, 0);
    QVERIFY2(ok.out.contains(QStringLiteral("ok, a learned model (observation [4, 10, 10], 3 actions, state [32]")), qPrintable(ok.out + ok.err));
    QCOMPARE(ok.out.count(QStringLiteral("CPU forward pass, batch 1:")), 3);
    QVERIFY2(ok.out.contains(QStringLiteral("outputs: state [32], reward [1], logits [3], value [1]")), qPrintable(ok.out));
    write(31);
    Run bad = cli(args);
    QCOMPARE(bad.status, 1);
    QVERIFY2(bad.err.contains(QStringLiteral("model.pdl:4:12: error: the next state has shape [31], but 'represent' makes states of shape [32]")),
             qPrintable(bad.err));
    QVERIFY2(bad.err.contains(QStringLiteral("model.pdl:2:12: note: 'represent' returns its state here")), qPrintable(bad.err));
  }

  // The training step's schedule and its cost floor, for a project: the products' arithmetic
  // counted here from the layer shapes (minatar-breakout-ppo: a 16-filter 3x3 convolution over
  // 4 channels of 10x10, then dense 1600 -> 128 -> 3 and 128 -> 1; forward, and the weight and
  // input gradients, no input gradient into the observation).
  void checkPrintsTheTrainingStepAndItsCost() {
    const std::int64_t rows = 65536, pixels = 100;
    const double conv = 2.0 * rows * pixels * 16 * (4 * 3 * 3);
    const double dense = 2.0 * rows * (1600 * 128 + 128 * 3 + 128 * 1);
    const double flops = 2 * conv + 3 * dense;
    Run c = cli({QStringLiteral("check"), cas::test::sourcePath(QStringLiteral("projects/minatar-breakout-ppo")), QStringLiteral("--ir"),
                 QStringLiteral("--update"), QStringLiteral("--batch"), QString::number(rows)});
    QCOMPARE(c.status, 0);
    QVERIFY2(c.out.contains(QStringLiteral("CPU forward pass, batch 1:")), qPrintable(c.out));
    QVERIFY2(c.out.contains(QStringLiteral("the training step at batch 65536:\ngraph policy_update")), qPrintable(c.out));
    QVERIFY2(c.out.contains(QStringLiteral("conv2d_grad_weight")), qPrintable(c.out));
    // The convolution reads the observations (65,536 x 400 floats) once and, with the bias and
    // ReLU as its epilogue (a generated kernel over these small images), writes the activation
    // and its mask (2 x 65,536 x 1,600 floats).
    QVERIFY2(c.out.contains(QStringLiteral("implicit-conv  k0_conv2d_add_relu_etc: 104.9 MB read, 838.9 MB written, 7.55 GFLOP")), qPrintable(c.out));
    const QString total = QStringLiteral(" GFLOP in products\n");
    const qsizetype end = c.out.indexOf(total);
    QVERIFY2(end > 0, qPrintable(c.out));
    const qsizetype start = c.out.lastIndexOf(QLatin1Char(' '), end - 1) + 1;
    QCOMPARE(c.out.mid(start, end - start), QString::number(flops / 1e9, 'f', 2));

    Run pdlFile = cli({QStringLiteral("check"), cas::test::sourcePath(QStringLiteral("projects/cartpole-ppo/policy.pdl")), QStringLiteral("--obs-shape"),
                       QStringLiteral("4"), QStringLiteral("--action-dim"), QStringLiteral("2"), QStringLiteral("--ir"), QStringLiteral("--update")});
    QCOMPARE(pdlFile.status, 2);
    QVERIFY2(pdlFile.err.contains(QStringLiteral("--update needs a project")), qPrintable(pdlFile.err));
  }

  void checkRejectsWithLocations_data() {
    QTest::addColumn<QByteArray>("toml");
    QTest::addColumn<bool>("policy");
    QTest::addColumn<QString>("expected");
    const QByteArray head = "name = \"t\"\nenvironment = \"tictactoe\"\nalgorithm = \"alphazero\"\npolicy = \"policy.pdl\"\n";
    QTest::newRow("syntax") << head + "[search\n" << true << "project.toml:5:8: error: TOML syntax error";
    QTest::newRow("type") << head + "[search]\nc_puct = \"x\"\n" << true
                          << "project.toml:6:10: error: search.c_puct must be a number in [0, 100], got a string";
    QTest::newRow("range") << head + "[search]\nsimulations = 0\n" << true
                           << "project.toml:6:15: error: search.simulations = 0 is out of range: expected an integer in [1, 100000]";
    QTest::newRow("environment") << QByteArray("name = \"t\"\nenvironment = \"go\"\nalgorithm = \"alphazero\"\npolicy = \"policy.pdl\"\n")
                                 << true << "project.toml:2:15: error: unknown environment 'go'";
    QTest::newRow("policy") << head << false << "project.toml:4:10: error: policy file 'policy.pdl' not found";
  }

  void checkRejectsWithLocations() {
    QFETCH(QByteArray, toml);
    QFETCH(bool, policy);
    QFETCH(QString, expected);
    const QString folder = project(QString::fromLatin1(QTest::currentDataTag()), toml, policy);
    Run c = cli({QStringLiteral("check"), folder});
    QCOMPARE(c.status, 1);
    QVERIFY2(c.err.contains(folder + QStringLiteral("/") + expected), qPrintable(c.err));
    QVERIFY2(c.err.contains(QStringLiteral(": rejected (1 error)")), qPrintable(c.err));
  }

  void unknownKeyWarnsWithLine() {
    const QString folder = project(QStringLiteral("warn"),
                                   "name = \"t\"\nenvironment = \"tictactoe\"\nalgorithm = \"alphazero\"\npolicy = \"policy.pdl\"\nspeed = 3\n");
    Run c = cli({QStringLiteral("check"), folder});
    QCOMPARE(c.status, 0);
    QVERIFY2(c.err.contains(folder + QStringLiteral("/project.toml:5:1: warning: unknown key 'speed' is ignored")), qPrintable(c.err));
  }

  void executablesLinkNoCudaOrVulkan() {
    const QStringList forbidden{QStringLiteral("libcuda.so"),  QStringLiteral("libcudart"), QStringLiteral("libnvrtc"),
                                QStringLiteral("libcublas"),   QStringLiteral("libcudnn"),  QStringLiteral("libnccl"),
                                QStringLiteral("libvulkan")};
    QStringList executables{QStringLiteral(CAS_BIN_DIR "/cuda-agent")};
    if (QFile::exists(QStringLiteral(CAS_BIN_DIR "/cuda-agent-studio"))) executables << QStringLiteral(CAS_BIN_DIR "/cuda-agent-studio");
    for (const QString& exe : executables) {
      Run l = run(QStringLiteral("ldd"), {exe});
      QCOMPARE(l.status, 0);
      for (const QString& lib : forbidden) QVERIFY2(!l.out.contains(lib), qPrintable(exe + " links " + lib + ":\n" + l.out));
    }
  }
};

QTEST_GUILESS_MAIN(TestCli)
#include "test_cli.moc"
