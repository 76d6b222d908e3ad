// Numbers that are not finite: a loss that becomes NaN is traced to its cause (the data, the
// policy's own computation, or the learning rate) for PPO and AlphaZero, and analyze --json of a
// network whose outputs are NaN prints JSON (null, with "not_finite" saying why).
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

class TestRunNotFinite : public cas::test::RunFolderSuite {
  Q_OBJECT

 private slots:
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
                                           "ppo.learning_rate will not help: check the policy (no checkpoint was written: nothing of the run can be "
                                           "resumed)\n")),
             qPrintable(r.err));
  }

  // Issue 44, round 3: replay value targets made NaN in the checkpoint a run resumes from made
  // the loss NaN; such a checkpoint is now refused when it is restored (the held-out probe found
  // NaN weights blamed on the policy), so the loss never sees them.
  void aCheckpointWithReplayTargetsThatAreNotNumbersIsRefused() {
    const QString run = trained(QStringLiteral("nan-targets"), 1, kExample, {QStringLiteral("--set"), QStringLiteral("train.replay_capacity=64")});
    const QString file = run + QStringLiteral("/checkpoints/iter-00000001.ckpt");
    const QByteArray good = bytes(file);
    QByteArray payload = good.left(good.size() - 16);
    // The ring ends before the algorithm's section (AlphaZero's is empty: its u64 length, 0); the
    // ring's last part is the 64 value targets (a u64 count, floats).
    const qsizetype ringEnd = payload.size() - 8;
    quint64 count = 0;
    std::memcpy(&count, payload.constData() + ringEnd - 64 * 4 - 8, sizeof count);
    QCOMPARE(count, quint64(64));
    const float nan = std::numeric_limits<float>::quiet_NaN();
    for (int i = 0; i < 64; ++i) std::memcpy(payload.data() + ringEnd - 64 * 4 + i * 4, &nan, sizeof nan);
    QFile::remove(file);
    append(file, withChecksum(payload));
    const Result r = cli({QStringLiteral("train"), QStringLiteral("--resume"), run, QStringLiteral("--iterations"), QStringLiteral("1")});
    QCOMPARE(r.status, 1);
    const QString why = QStringLiteral("the checkpoint's replay buffer holds values that are not finite numbers (NaN or infinite); training "
                                       "never writes them, so the file was altered after it was written\n");
    QCOMPARE(r.err, QStringLiteral("warning: skipping checkpoint iter-00000001.ckpt: ") + why +
                        QStringLiteral("error: checkpoint iter-00000001.ckpt cannot be used: ") + why);
  }

  // A checkpoint re-sealed with replay targets self-play never writes (an outcome outside -1 to 1,
  // a negative policy target) is refused naming the field, as one with NaN targets is: resuming
  // from it trained on them (a negative policy loss).
  void aCheckpointWithImpossibleReplayTargetsIsRefused() {
    const QString run =
        trained(QStringLiteral("impossible-targets"), 1, kExample, {QStringLiteral("--set"), QStringLiteral("train.replay_capacity=64")});
    const QString file = run + QStringLiteral("/checkpoints/iter-00000001.ckpt");
    const QByteArray good = bytes(file);
    const QByteArray payload = good.left(good.size() - 16);
    // The ring ends before the algorithm's (empty) section: the 64 x 9 policy targets, then the 64
    // value targets (each a u64 count, floats).
    const qsizetype values = payload.size() - 8 - 64 * 4, policies = values - 8 - 64 * 9 * 4;
    quint64 count = 0;
    std::memcpy(&count, payload.constData() + policies - 8, sizeof count);
    QCOMPARE(count, quint64(64 * 9));
    auto resumeWith = [&](qsizetype at, int floats, float v) {
      QByteArray altered = payload;
      for (int i = 0; i < floats; ++i) std::memcpy(altered.data() + at + i * 4, &v, sizeof v);
      QFile::remove(file);
      append(file, withChecksum(altered));
      return cli({QStringLiteral("train"), QStringLiteral("--resume"), run, QStringLiteral("--iterations"), QStringLiteral("1")});
    };
    const QString value = QStringLiteral(
        "the checkpoint's replay buffer holds value target 7 at position 0, outside -1 to 1 (a game's outcome); "
        "training never writes it, so the file was altered after it was written\n");
    Result r = resumeWith(values, 1, 7.0f);
    QCOMPARE(r.status, 1);
    QCOMPARE(r.err, QStringLiteral("warning: skipping checkpoint iter-00000001.ckpt: ") + value +
                        QStringLiteral("error: checkpoint iter-00000001.ckpt cannot be used: ") + value);
    const QString policy = QStringLiteral(
        "the checkpoint's replay buffer holds policy targets at position 0 that are not probabilities (each 0 "
        "to 1, summing to 1); training never writes them, so the file was altered after it was written\n");
    r = resumeWith(policies, 9, -3.0f);
    QCOMPARE(r.status, 1);
    QCOMPARE(r.err, QStringLiteral("warning: skipping checkpoint iter-00000001.ckpt: ") + policy +
                        QStringLiteral("error: checkpoint iter-00000001.ckpt cannot be used: ") + policy);
    r = resumeWith(policies, 9, 0.5f);  // each in range, summing to 4.5
    QVERIFY2(r.err.endsWith(policy), qPrintable(r.err));
    r = resumeWith(policies, 0, 0.0f);  // the checkpoint as written
    QCOMPARE(r.status, 0);
  }

  // Issue 44, round 3: an AlphaZero policy that computes NaN from its input is not blamed on the
  // learning rate; since the held-out probe (which found check refusing it and train playing a
  // whole iteration on NaN values) train refuses it before self-play, as check does, and leaves
  // no run folder.
  void anAlphaZeroNanPolicyIsRefusedBeforeSelfPlay() {
    const QString project = dir_.filePath(QStringLiteral("nan-alphazero"));
    QDir().mkpath(project);
    QVERIFY(QFile::copy(kExample + QStringLiteral("/project.toml"), project + QStringLiteral("/project.toml")));
    QByteArray policy = bytes(kExample + QStringLiteral("/policy.pdl"));
    QVERIFY(policy.contains("value = tanh(dense(relu(dense(h, units=32)), units=1))"));
    append(project + QStringLiteral("/policy.pdl"), policy.replace("value = tanh(dense(relu(dense(h, units=32)), units=1))",
                                                                   "value = log(tanh(dense(relu(dense(h, units=32)), units=1)) * 0 - 1)"));
    const QString run = dir_.filePath(QStringLiteral("nan-alphazero-run"));
    const Result r = cli(QStringList{QStringLiteral("train"), project, QStringLiteral("--out"), run, QStringLiteral("--iterations"), QStringLiteral("2")} +
                         kQuick);
    QCOMPARE(r.status, 1);
    QCOMPARE(r.err, QStringLiteral("error: the policy's value output is not a finite number (NaN or infinite) on the game's first position, before "
                                   "any training, so the policy computes it from its input (a log or square root of a negative number, a division "
                                   "by zero); check the policy (`cuda-agent check` shows where)\n"));
    QVERIFY(!QFile::exists(run));
    QCOMPARE(cli({QStringLiteral("check"), project}).status, 1);
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
};

QTEST_GUILESS_MAIN(TestRunNotFinite)
#include "test_run_not_finite.moc"
