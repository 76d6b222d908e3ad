// project.toml loading: the example projects are accepted; each kind of mistake is reported at
// its line and column. Writing tuning values into project.toml keeps the rest of the file.
#include <QDir>
#include <QTemporaryDir>
#include <QTest>

#include <fstream>

#include "core/project/project.hpp"
#include "core/project/project_file_edit.hpp"
#include "support/price_fixture.hpp"
#include "support/source_dir.hpp"

using cas::project::loadProject;

class TestProject : public QObject {
  Q_OBJECT

  QTemporaryDir dir_;

  // Writes a project folder with the given project.toml (and a policy.pdl) and loads it.
  cas::project::LoadResult load(const std::string& toml, bool withPolicy = true) {
    static int n = 0;
    const std::string folder = dir_.filePath(QString::number(++n)).toStdString();
    std::filesystem::create_directories(folder);
    std::ofstream(folder + "/project.toml") << toml;
    if (withPolicy) std::ofstream(folder + "/policy.pdl") << "def policy(obs):\n    return obs\n";
    return loadProject(folder);
  }

  static std::string only(const cas::project::LoadResult& r, cas::Severity s = cas::Severity::Error) {
    std::string out;
    for (const cas::Diagnostic& d : r.diagnostics.items())
      if (d.severity == s) out += (out.empty() ? "" : "\n") + std::to_string(d.location.line) + ":" +
                                  std::to_string(d.location.column) + " " + d.message;
    return out;
  }

  // A trading project (trading-stocks, PPO) whose project.toml ends with `lines`, beside its
  // policy and `files` (name, text), loaded; `folder` receives its folder.
  cas::project::LoadResult loadTrading(const std::string& lines, const std::vector<std::pair<std::string, std::string>>& files,
                                       std::string* folder = nullptr) {
    static int n = 0;
    const std::string f = dir_.filePath(QStringLiteral("trading-") + QString::number(++n)).toStdString();
    std::filesystem::create_directories(f);
    std::ofstream(f + "/project.toml") << "name = \"t\"\nenvironment = \"trading-stocks\"\nalgorithm = \"ppo\"\npolicy = \"policy.pdl\"\n" << lines;
    std::ofstream(f + "/policy.pdl") << "def policy(obs):\n    return obs\n";
    for (const auto& [name, text] : files) std::ofstream(f + "/" + name) << text;
    if (folder) *folder = f;
    return loadProject(f);
  }

  const std::string header = "name = \"t\"\nenvironment = \"tictactoe\"\nalgorithm = \"alphazero\"\npolicy = \"policy.pdl\"\n";

 private slots:
  void examplesAreAccepted() {
    QDir projects(cas::test::sourcePath(QStringLiteral("projects")));
    const QStringList names = projects.entryList(QDir::Dirs | QDir::NoDotAndDotDot);
    QVERIFY(names.size() >= 2);
    for (const QString& name : names) {
      // trading-ppo's series is fetched (scripts/trading-data), not committed: a synthetic one stands in.
      auto r = loadProject(cas::test::loadableExample(projects.filePath(name), dir_.filePath(QStringLiteral("examples"))).toStdString());
      QVERIFY2(r.project.has_value(), qPrintable(name + ": " + QString::fromStdString(only(r))));
      QVERIFY2(r.diagnostics.empty(), qPrintable(name + " has warnings: " + QString::fromStdString(only(r, cas::Severity::Warning))));
      QCOMPARE(r.project->name, name.toStdString());
    }
  }

  // A trading project names its price series: read whole at load, in the project folder, with
  // the file's own file:line errors under project.toml's line.
  void tradingProjectsNameTheirSeries() {
    std::string folder;
    auto r = loadTrading("series = \"prices.csv\"\n", {{"prices.csv", cas::test::syntheticPrices(400)}}, &folder);
    QVERIFY2(r.project && r.diagnostics.empty(), only(r).c_str());
    QCOMPARE(r.project->series->size(), 400);
    QCOMPARE(r.project->seriesFile, std::filesystem::path(folder) / "prices.csv");
    QCOMPARE(cas::project::environmentData(*r.project).trainFraction, 0.8);

    r = loadTrading("", {});
    QCOMPARE(only(r), std::string("1:1 missing required key 'series': 'trading-stocks' trades over a price series; name its CSV file, relative to the "
                                  "project folder (series = \"prices.csv\")"));
    r = loadTrading("series = \"prices.csv\"\n", {}, &folder);
    QCOMPARE(only(r), "5:10 series file 'prices.csv' not found in " + folder);
    r = loadTrading("series = 3\n", {});
    QCOMPARE(only(r), std::string("5:10 series must be a string, got an integer"));
    std::ofstream(dir_.filePath(QStringLiteral("outside.csv")).toStdString()) << cas::test::syntheticPrices(400);
    r = loadTrading("series = \"../outside.csv\"\n", {});
    QVERIFY2(only(r).find("5:10 series '../outside.csv' is outside the project folder (it resolves to ") == 0, only(r).c_str());
    QVERIFY2(only(r).find("; keep the price series in the project folder, or pass --allow-outside-project to allow it") != std::string::npos, only(r).c_str());
  }

  void badSeriesAreRefusedAtTheirLine() {
    QStringList rows = QString::fromStdString(cas::test::syntheticPrices(400)).split(u'\n');
    QStringList fields = rows[2].split(u',');  // line 3: Date,Open,High,Low,Close,Volume
    fields[4] = QStringLiteral("abc");
    rows[2] = fields.join(u',');
    const std::string csv = rows.join(u'\n').toStdString();
    std::string folder;
    auto r = loadTrading("series = \"prices.csv\"\n", {{"prices.csv", csv}}, &folder);
    QVERIFY2(only(r).find("5:10 " + folder + "/prices.csv:3: Close 'abc' is not a number; expected a decimal number such as 101.25") == 0, only(r).c_str());
    QVERIFY(!r.project);
    // Too short for an episode of 256 steps in its first 80% and a held-out step: 359 bars needed.
    r = loadTrading("series = \"prices.csv\"\n", {{"prices.csv", cas::test::syntheticPrices(358)}}, &folder);
    QVERIFY2(only(r).find(folder + "/prices.csv:359: 358 bars, fewer than the 359 a series split for training (trading.train_fraction = 0.8: one episode, "
                                   "a window of 30 bars, 256 steps and the bar before, in the training part; a step in the held-out part) needs") != std::string::npos,
             only(r).c_str());
    r = loadTrading("series = \"prices.csv\"\n", {{"prices.csv", cas::test::syntheticPrices(359)}});
    QVERIFY2(r.project, only(r).c_str());
    // [trading] is read before the series: half of 400 bars is too short a training part.
    r = loadTrading("series = \"prices.csv\"\n[trading]\ntrain_fraction = 0.5\n", {{"prices.csv", cas::test::syntheticPrices(400)}});
    QVERIFY2(only(r).find("400 bars, fewer than the 574 a series split for training (trading.train_fraction = 0.5") != std::string::npos, only(r).c_str());
  }

  void otherEnvironmentsIgnoreASeries() {
    auto r = load("name = \"t\"\nenvironment = \"cartpole\"\nalgorithm = \"ppo\"\npolicy = \"policy.pdl\"\nseries = \"prices.csv\"\n");
    QVERIFY(r.project);
    QCOMPARE(only(r, cas::Severity::Warning), std::string("5:10 series is ignored: 'cartpole' reads no price series"));
  }

  void valuesOverrideDefaults() {
    auto r = load(header + "[search]\nc_puct = 2\nsimulations = 100\n[runtime]\ndevice = \"cpu\"\n");
    QVERIFY(r.project);
    QCOMPARE(r.project->parameters.getFloat("search.c_puct"), 2.0);  // an integer is a valid number
    QCOMPARE(r.project->parameters.getInt("search.simulations"), std::int64_t(100));
    QCOMPARE(r.project->parameters.getChoice("runtime.device"), std::string("cpu"));
    QCOMPARE(r.project->parameters.getFloat("train.grad_clip"), 5.0);  // untouched default
  }

  void syntaxError() {
    auto r = load(header + "[search\nc_puct = 1\n");
    QVERIFY(!r.project);
    const std::string e = only(r);
    QVERIFY2(e.rfind("5:8 TOML syntax error:", 0) == 0, e.c_str());
  }

  void wrongType() {
    auto r = load(header + "[search]\nc_puct = \"high\"\n");
    QVERIFY(!r.project);
    QCOMPARE(only(r), std::string("6:10 search.c_puct must be a number in [0, 100], got a string"));
  }

  void integerParameterRejectsFraction() {
    auto r = load(header + "[search]\nsimulations = 6.5\n");
    QCOMPARE(only(r), std::string("6:15 search.simulations must be an integer in [1, 100000], got a number"));
  }

  void outOfRange() {
    auto r = load(header + "[train]\nlearning_rate = -0.5\n");
    QVERIFY(!r.project);
    QCOMPARE(only(r), std::string("6:17 train.learning_rate = -0.5 is out of range: expected a number in [1e-07, 10]"));
  }

  void badChoice() {
    auto r = load(header + "[runtime]\ndevice = \"tpu\"\n");
    QCOMPARE(only(r), std::string("6:10 runtime.device = 'tpu' is not allowed: expected one of: auto, cpu, cuda"));
  }

  void unknownEnvironment() {
    auto r = load("name = \"t\"\nenvironment = \"chess\"\nalgorithm = \"alphazero\"\npolicy = \"policy.pdl\"\n");
    QVERIFY(!r.project);
    QCOMPARE(only(r), std::string("2:15 unknown environment 'chess'; known environments: tictactoe, connect4, cartpole, minatar-asterix, minatar-breakout, minatar-freeway, minatar-seaquest, minatar-space-invaders, trading-stocks, market-making"));
  }

  void algorithmChecks() {
    auto ppo = load("name = \"t\"\nenvironment = \"tictactoe\"\nalgorithm = \"ppo\"\npolicy = \"policy.pdl\"\n");
    QCOMPARE(only(ppo), std::string("3:13 algorithm 'ppo' needs a single-agent environment, but 'tictactoe' is a two-player board game; use 'alphazero'"));
    for (const char* game : {"minatar-asterix", "minatar-breakout", "minatar-freeway", "minatar-seaquest", "minatar-space-invaders"})
      QVERIFY2(load("name = \"t\"\nenvironment = \"" + std::string(game) + "\"\nalgorithm = \"ppo\"\npolicy = \"policy.pdl\"\n").project, game);
    QVERIFY(load("name = \"t\"\nenvironment = \"cartpole\"\nalgorithm = \"ppo\"\npolicy = \"policy.pdl\"\n").project);
    // trading-stocks trains with PPO on the price series the project names (tradingProjectsNameTheirSeries).
    auto trading = load("name = \"t\"\nenvironment = \"trading-stocks\"\nalgorithm = \"ppo\"\npolicy = \"policy.pdl\"\n");
    QVERIFY2(only(trading).find("1:1 missing required key 'series'") == 0, only(trading).c_str());
    auto single = load("name = \"t\"\nenvironment = \"cartpole\"\nalgorithm = \"alphazero\"\npolicy = \"policy.pdl\"\n");
    QCOMPARE(only(single), std::string("3:13 algorithm 'alphazero' needs a two-player board game, but 'cartpole' is a single-agent environment"));
    auto unknown = load("name = \"t\"\nenvironment = \"tictactoe\"\nalgorithm = \"dqn\"\npolicy = \"policy.pdl\"\n");
    QCOMPARE(only(unknown), std::string("3:13 unknown algorithm 'dqn'; known algorithms: alphazero, ppo, muzero"));
    // MuZero's self-play plays a single-agent environment's CPU twin without a price series.
    auto board = load("name = \"t\"\nenvironment = \"connect4\"\nalgorithm = \"muzero\"\npolicy = \"policy.pdl\"\n");
    QVERIFY2(only(board).rfind("3:13 algorithm 'muzero' needs a single-agent environment without a price series, but 'connect4' is not one; "
                               "it trains on: cartpole, minatar-asterix", 0) == 0, only(board).c_str());
    auto series = load("name = \"t\"\nenvironment = \"trading-stocks\"\nalgorithm = \"muzero\"\npolicy = \"policy.pdl\"\n");
    QVERIFY2(only(series).find("algorithm 'muzero' needs a single-agent environment without a price series, but 'trading-stocks'") !=
                 std::string::npos, only(series).c_str());
    QVERIFY(load("name = \"t\"\nenvironment = \"minatar-breakout\"\nalgorithm = \"muzero\"\npolicy = \"policy.pdl\"\n").project);
  }

  void missingPolicyFile() {
    auto r = load(header, /*withPolicy=*/false);
    QVERIFY(!r.project);
    const std::string e = only(r);
    QVERIFY2(e.rfind("4:10 policy file 'policy.pdl' not found in ", 0) == 0, e.c_str());
  }

  void missingKeys() {
    auto r = load("name = \"t\"\n");
    QCOMPARE(only(r), std::string("1:1 missing required key 'environment'\n1:1 missing required key 'algorithm'\n1:1 missing required key 'policy'"));
  }

  void unknownKeysAreWarnings() {
    auto r = load(header + "colour = \"blue\"\n[search]\nc_put = 1.0\n");
    QVERIFY(r.project);  // warnings do not reject a project
    const std::string w = only(r, cas::Severity::Warning);
    QVERIFY2(w.find("5:1 unknown key 'colour' is ignored") == 0, w.c_str());
    QVERIFY2(w.find("\n7:1 unknown key 'c_put' in [search] is ignored; known keys: simulations, c_puct,") != std::string::npos, w.c_str());
  }

  void sectionMustBeTable() {
    auto r = load(header + "search = 3\n");
    QCOMPARE(only(r), std::string("5:10 'search' must be a table ([search]), got an integer"));
  }

  void missingProjectFile() {
    auto r = loadProject(dir_.filePath(QStringLiteral("nowhere")).toStdString());
    QVERIFY(!r.project);
    QVERIFY(r.diagnostics.hasErrors());
  }

  void severalErrorsInOnePass() {
    auto r = load("name = \"t\"\nenvironment = \"go\"\nalgorithm = \"alphazero\"\npolicy = \"none.pdl\"\n[search]\nc_puct = -1\n");
    QCOMPARE(r.diagnostics.errorCount(), 3);
  }

  void diagnosticFormatting() {
    auto r = load(header + "[search]\nc_puct = \"high\"\n");
    const std::string text = cas::formatDiagnostic(r.diagnostics.items().at(0), r.source);
    QVERIFY2(text.find("/project.toml:6:10: error: search.c_puct must be a number") != std::string::npos, text.c_str());
    QVERIFY2(text.find("\n    c_puct = \"high\"\n             ^") != std::string::npos, text.c_str());
  }

  void parameterValuesAreWrittenInPlace() {
    using cas::project::withParameterValues;
    const std::string text = header + "# tuned by hand\n[search]\nsimulations = 64   # per move\nc_puct = 1.5\n\n[train]\nbatch_size = 128\n";
    std::string error;
    // A value replaced in place, its comment kept; a key added at the end of its section; a
    // section added at the end; a choice quoted, a float with its point.
    const auto edited = withParameterValues(text,
                                            {{"search.simulations", std::int64_t(32)},
                                             {"search.c_puct", 2.0},
                                             {"search.root_policy", std::string("gumbel")},
                                             {"runtime.seed", std::int64_t(7)}},
                                            &error);
    QVERIFY2(edited, error.c_str());
    QCOMPARE(*edited, header + "# tuned by hand\n[search]\nsimulations = 32   # per move\nc_puct = 2.0\nroot_policy = \"gumbel\"\n\n[train]\n"
                               "batch_size = 128\n\n[runtime]\nseed = 7\n");
    const cas::project::LoadResult loaded = load(*edited);
    QVERIFY(loaded.project);
    QCOMPARE(loaded.project->parameters.getInt("search.simulations"), std::int64_t(32));
    QCOMPARE(loaded.project->parameters.getChoice("search.root_policy"), std::string("gumbel"));
    // A file that defines the section another way (an inline table) is refused, not broken.
    QVERIFY(!withParameterValues(header + "search = { c_puct = 1.5 }\n", {{"search.c_puct", 2.0}}, &error));
    QVERIFY2(error.find("set the values by hand") != std::string::npos || error.find("set it by hand") != std::string::npos, error.c_str());
    QVERIFY(!withParameterValues(text, {{"search.no_such", 1.0}}, &error));
    QCOMPARE(error, std::string("unknown parameter 'search.no_such'"));
  }
};

QTEST_GUILESS_MAIN(TestProject)
#include "test_project.moc"
