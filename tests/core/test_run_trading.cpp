// A trading run's folder: it keeps a copy of the project's price series (series.csv) beside its
// copy of the policy, and a resumed or evaluated run reads its copy, so editing or damaging the
// project's CSV later changes nothing for it; a few PPO iterations on a small made-up series, and
// `eval --episodes` reporting the held-out part against buy and hold.
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QTest>

#include "support/cli_runs.hpp"
#include "support/price_fixture.hpp"
#include "support/run_files.hpp"

using namespace cas::test;  // the run-folder helpers of support/run_files.hpp and cli_runs.hpp

namespace {

// Small enough for a few seconds on two cores: 2 copies x 64 steps per rollout.
const QStringList kQuickPpo = {QStringLiteral("--device"), QStringLiteral("cpu"), QStringLiteral("--set"), QStringLiteral("ppo.envs=2"),
                               QStringLiteral("--set"), QStringLiteral("ppo.rollout_steps=64"), QStringLiteral("--set"),
                               QStringLiteral("ppo.minibatches=2")};

const char* const kPolicy =
    "def policy(obs):\n"
    "    x = flatten(layer_norm(transpose(obs)))\n"
    "    h = tanh(dense(x, units=16))\n"
    "    return dense(h, units=action_dim), dense(h, units=1)\n";

}  // namespace

class TestRunTrading : public cas::test::RunFolderSuite {
  Q_OBJECT

  // A trading project of `bars` made-up bars in the folder `name`.
  QString tradingProject(const QString& name, int bars) {
    const QString folder = dir_.filePath(name);
    QDir().mkpath(folder);
    writeText(folder + QStringLiteral("/project.toml"), "name = \"t\"\nenvironment = \"trading-stocks\"\nalgorithm = \"ppo\"\n"
                                                        "policy = \"policy.pdl\"\nseries = \"prices.csv\"\n");
    writeText(folder + QStringLiteral("/policy.pdl"), kPolicy);
    writeText(folder + QStringLiteral("/prices.csv"), syntheticPrices(bars));
    return folder;
  }

  static QStringList heldOutLines(const QString& out) {
    QStringList kept;
    for (const QString& line : out.split(u'\n'))
      if (line.startsWith(QStringLiteral("  greedy policy:")) || line.startsWith(QStringLiteral("  buy and hold:"))) kept << line;
    return kept;
  }

 private slots:
  // PPO trains on the series' first 80% and eval trades the last 20% once, beside buy and hold.
  void ppoTrainsAndEvalReportsTheHeldOutPart() {
    const QString project = tradingProject(QStringLiteral("p"), 400);
    const QString run = dir_.filePath(QStringLiteral("run"));
    const Result train = cli(QStringList{QStringLiteral("train"), project, QStringLiteral("--iterations"), QStringLiteral("3"), QStringLiteral("--out"), run} + kQuickPpo);
    QVERIFY2(train.status == 0, qPrintable(train.err));
    QVERIFY2(train.out.contains(QStringLiteral("iter 3 | steps 384 | return ")), qPrintable(train.out));
    QCOMPARE(bytes(run + QStringLiteral("/series.csv")), bytes(project + QStringLiteral("/prices.csv")));

    const Result eval = cli({QStringLiteral("eval"), run, QStringLiteral("--episodes"), QStringLiteral("2"), QStringLiteral("--device"), QStringLiteral("cpu")});
    QVERIFY2(eval.status == 0, qPrintable(eval.err));
    QVERIFY2(eval.out.contains(QStringLiteral("(those episodes trade windows drawn from bars 0-319, the training part)\n")), qPrintable(eval.out));
    QVERIFY2(eval.out.contains(QStringLiteral("held out: bars 320-399 of ") + run + QStringLiteral("/series.csv (80 bars, the last 20% of the series, never trained on), 79 steps\n")),
             qPrintable(eval.out));
    QCOMPARE(heldOutLines(eval.out).size(), 2);
    QVERIFY2(QRegularExpression(QStringLiteral("  the policy (beat|lost to) buy and hold by [0-9.]+ percentage points\n")).match(eval.out).hasMatch(), qPrintable(eval.out));

    const Result json = cli({QStringLiteral("eval"), run, QStringLiteral("--episodes"), QStringLiteral("2"), QStringLiteral("--device"), QStringLiteral("cpu"), QStringLiteral("--json")});
    QVERIFY2(json.status == 0, qPrintable(json.err));
    const QJsonObject heldOut = QJsonDocument::fromJson(json.out.toUtf8()).object().value(QLatin1String("held_out")).toObject();
    QCOMPARE(heldOut.value(QLatin1String("first_bar")).toInt(), 320);
    QCOMPARE(heldOut.value(QLatin1String("steps")).toInt(), 79);
    QVERIFY(heldOut.value(QLatin1String("buy_and_hold_profit")).toDouble() > 0);
  }

  // A share set on the command line that leaves the training part too short is refused before
  // anything trains, naming the project's file, and no run folder is left behind.
  void aShareTooSmallForTheSeriesIsRefused() {
    const QString project = tradingProject(QStringLiteral("r"), 400);
    const QString run = dir_.filePath(QStringLiteral("refused"));
    const Result r = cli(QStringList{QStringLiteral("train"), project, QStringLiteral("--iterations"), QStringLiteral("1"), QStringLiteral("--out"), run,
                                     QStringLiteral("--set"), QStringLiteral("trading.train_fraction=0.5")} + kQuickPpo);
    QVERIFY(r.status != 0);
    QVERIFY2(r.err.contains(project + QStringLiteral("/prices.csv: 400 bars, of which the training part (trading.train_fraction = 0.5) holds 200, fewer "
                                                     "than the 287 one episode needs")),
             qPrintable(r.err));
    QVERIFY2(!QFileInfo::exists(run), qPrintable(QDir(run).entryList().join(u',')));
  }

  // Hardening, fifth probe (D5): prices that are finite but extreme (1e300 beside 1e-300, or
  // 1.79e308) passed `check`, and `train` then stopped with a NaN loss blamed on the policy. A
  // series is now refused where it is read, at its file:line with the range a price may take, by
  // `check` as by `train` (which leaves no folder).
  void extremePricesAreRefusedAtTheirLine() {
    const QString project = tradingProject(QStringLiteral("extreme"), 400);
    QStringList rows = QString::fromStdString(syntheticPrices(400)).split(u'\n');
    for (int i = 1; i < rows.size(); ++i) {
      QStringList fields = rows[i].split(u',');
      if (fields.size() < 6) continue;
      for (int f = 1; f <= 4; ++f) fields[f] = i % 2 ? QStringLiteral("1e-300") : QStringLiteral("1e300");
      rows[i] = fields.join(u',');
    }
    writeText(project + QStringLiteral("/prices.csv"), rows.join(u'\n').toStdString());
    const QString refusal = project + QStringLiteral("/prices.csv:2: Open '1e-300' is below 1e-9, outside the prices a series may hold (1e-9 to 1e9, "
                                                     "which training computes with in float32); rescale the series' prices (say, in another "
                                                     "unit) or fix the row");
    Result r = cli({QStringLiteral("check"), project});
    QVERIFY(r.status != 0);
    QVERIFY2((r.out + r.err).contains(refusal), qPrintable(r.out + r.err));
    const QString run = dir_.filePath(QStringLiteral("extreme-run"));
    r = cli(QStringList{QStringLiteral("train"), project, QStringLiteral("--iterations"), QStringLiteral("1"), QStringLiteral("--out"), run} + kQuickPpo);
    QVERIFY(r.status != 0);
    QVERIFY2(r.err.contains(refusal), qPrintable(r.err));
    QVERIFY(!QFileInfo::exists(run));

    QStringList huge = QString::fromStdString(syntheticPrices(400)).split(u'\n');
    QStringList third = huge[3].split(u',');
    third[4] = QStringLiteral("1.7976931348623157e308");
    huge[3] = third.join(u',');
    writeText(project + QStringLiteral("/prices.csv"), huge.join(u'\n').toStdString());
    r = cli({QStringLiteral("check"), project});
    QVERIFY(r.status != 0);
    QVERIFY2((r.out + r.err).contains(project + QStringLiteral("/prices.csv:4: Close '1.7976931348623157e308' is above 1e9")), qPrintable(r.out + r.err));
  }

  // The run reads its own copy: the project's CSV edited, then damaged, changes nothing for eval
  // or a resume, which note that the project's file differs.
  void aRunKeepsItsOwnSeries() {
    const QString project = tradingProject(QStringLiteral("q"), 400);
    const QString run = dir_.filePath(QStringLiteral("kept"));
    QVERIFY(cli(QStringList{QStringLiteral("train"), project, QStringLiteral("--iterations"), QStringLiteral("2"), QStringLiteral("--out"), run} + kQuickPpo).status == 0);
    const QStringList evalArgs{QStringLiteral("eval"), run, QStringLiteral("--episodes"), QStringLiteral("2"), QStringLiteral("--device"), QStringLiteral("cpu")};
    const Result before = cli(evalArgs);
    QVERIFY2(before.status == 0, qPrintable(before.err));

    writeText(project + QStringLiteral("/prices.csv"), syntheticPrices(600, 7));  // other prices
    const Result edited = cli(evalArgs);
    QVERIFY2(edited.status == 0, qPrintable(edited.err));
    QCOMPARE(heldOutLines(edited.out), heldOutLines(before.out));
    QVERIFY2(edited.err.contains(QStringLiteral("prices.csv has changed since this run started")), qPrintable(edited.err));

    writeText(project + QStringLiteral("/prices.csv"), "Date,Open,High,Low,Close,Volume\n2020-01-01,1,1,1,abc,1\n");  // damaged
    const Result damaged = cli(evalArgs);
    QVERIFY2(damaged.status == 0, qPrintable(damaged.err));
    QCOMPARE(heldOutLines(damaged.out), heldOutLines(before.out));
    const Result resumed = cli(QStringList{QStringLiteral("train"), QStringLiteral("--resume"), run, QStringLiteral("--iterations"), QStringLiteral("3"), QStringLiteral("--device"), QStringLiteral("cpu")});
    QVERIFY2(resumed.status == 0, qPrintable(resumed.err));
    QVERIFY2(resumed.out.contains(QStringLiteral("iter 3 | steps 384 | return ")), qPrintable(resumed.out));
    // --use-project takes the project's files, and the damaged series is refused at its line.
    const Result useProject = cli(evalArgs + QStringList{QStringLiteral("--use-project")});
    QVERIFY(useProject.status != 0);
    QVERIFY2(useProject.err.contains(project + QStringLiteral("/prices.csv:2: Close 'abc' is not a number")), qPrintable(useProject.err));

    // Hardening, fifth probe (D10): a run without its series.csv was said to miss the project's
    // prices.csv, with no remedy.
    QVERIFY(QFile::remove(run + QStringLiteral("/series.csv")));
    const Result missing = cli(evalArgs);
    QVERIFY(missing.status != 0);
    QVERIFY2(missing.err.startsWith(QStringLiteral("error: %1/series.csv is missing: a trading run trains and is evaluated on its own copy of the price "
                                                   "series; put the series it was trained on back there, or give --use-project to use the "
                                                   "project's series\n").arg(run)),
             qPrintable(missing.err));
  }
};

QTEST_GUILESS_MAIN(TestRunTrading)
#include "test_run_trading.moc"
