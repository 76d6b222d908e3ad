// The trading environments (core/env/trading.hpp) against gym-anytrading's StocksEnv and
// ForexEnv, step for step, on the package's own bundled series (STOCKS_GOOGL.csv,
// FOREX_EURUSD_1H_ASK.csv) read from the installed package at test time, replaying the traces
// tests/golden/make_trading_traces.py recorded; the episode windows reset() draws; the scalars a
// recorded episode keeps per step (position, profits, buy and hold); and the CSV reader
// (core/env/price_series.hpp) refusing each kind of bad file at its file:line.
// Tolerances: rewards and total profits are float32 on both sides, computed by the same
// operations in the same order, so they agree exactly in practice; the test allows a relative
// 1e-5 (floor 1), for a numpy that computes a step in float64. The observation checksums are
// float32 values summed in float64 in one order on both sides: relative 1e-9.
#include <QElapsedTimer>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <filesystem>
#include <map>
#include <random>
#include <set>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sys/stat.h>

#include "core/env/environments.hpp"
#include "core/env/price_series.hpp"
#include "core/env/trading.hpp"
#include "support/source_dir.hpp"

using cas::env::PriceSeries;
using cas::env::PriceSeriesError;
using cas::env::PriceSeriesLimits;
using cas::env::PriceSeriesNeed;
using cas::env::TradingEnvironments;
using cas::env::TradingMarket;
using cas::env::TradingSetup;

namespace {

// gym-anytrading's bundled data folder, from the installed package (find_spec does not import
// it, so this takes no longer than python3's start); empty with `why` set when it is missing.
std::string bundledDataDir(QString& why) {
  QProcess python;
  python.start(QStringLiteral("python3"),
               {QStringLiteral("-c"), QStringLiteral("import importlib.util as u; s = u.find_spec('gym_anytrading'); "
                                                     "print(s.submodule_search_locations[0] if s else '')")});
  if (!python.waitForFinished(30000) || python.exitCode() != 0) {
    why = QStringLiteral("python3 did not run: ") + python.errorString() + QString::fromUtf8(python.readAllStandardError());
    return {};
  }
  const QString dir = QString::fromUtf8(python.readAllStandardOutput()).trimmed();
  if (dir.isEmpty()) why = QStringLiteral("gym-anytrading is not installed for python3: run scripts/deps (pip install gym-anytrading)");
  return dir.isEmpty() ? std::string() : dir.toStdString() + "/datasets/data/";
}

bool near(double ours, double theirs, double relative, double floor) { return std::fabs(ours - theirs) <= relative * std::max(floor, std::fabs(theirs)); }

std::pair<double, double> checksums(const std::vector<float>& obs) {
  double plain = 0, weighted = 0;
  for (size_t k = 0; k < obs.size(); ++k) {
    plain += double(obs[k]);
    weighted += double(k + 1) * double(obs[k]);
  }
  return {plain, weighted};
}

// A file of `text` in `dir`, its path.
std::string writeFile(const QTemporaryDir& dir, const char* name, const std::string& text) {
  const std::string path = dir.filePath(QString::fromUtf8(name)).toStdString();
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

// The message readPriceSeries refuses `path` with; empty when it reads it.
std::string refusal(const std::string& path, const PriceSeriesNeed& need = {}, const PriceSeriesLimits& limits = {}) {
  try {
    (void)cas::env::readPriceSeries(path, need, limits);
  } catch (const PriceSeriesError& e) {
    return e.what();
  }
  return {};
}

const char* const kHeader = "Date,Open,High,Low,Close,Volume\n";

std::string bars(int count) {
  std::string text = kHeader;
  for (int i = 0; i < count; ++i) text += "2020-01-" + std::string(i + 1 < 10 ? "0" : "") + std::to_string(i + 1) + ",10,11,9," + std::to_string(10 + i) + ",100\n";
  return text;
}

// What replaying one recorded trace on a copy found: the first difference (empty: none), the
// trades and whether the episode reached its truncation.
struct Replay {
  std::string difference;
  int trades = 0;
  bool truncated = false;
};

std::string differs(const std::string& where, const char* what, double ours, double theirs) {
  return where + ": " + what + ": ours " + QString::number(ours, 'g', 9).toStdString() + ", gym-anytrading's " + QString::number(theirs, 'g', 9).toStdString();
}

// The first of a step's recorded columns that ours differ from; empty when none does.
std::string stepDifference(const std::string& where, const nlohmann::json& row, const cas::env::StepResult& r, const TradingEnvironments& env,
                           const std::vector<float>& obs) {
  const auto [plain, weighted] = checksums(obs);
  if (!near(r.reward, row[1].get<double>(), 1e-5, 1)) return differs(where, "reward", r.reward, row[1].get<double>());
  if (!near(env.totalProfit(0), row[2].get<double>(), 1e-5, 1)) return differs(where, "total profit", env.totalProfit(0), row[2].get<double>());
  if (int(env.position(0)) != row[3].get<int>()) return differs(where, "position", int(env.position(0)), row[3].get<int>());
  if (r.truncated != (row[4].get<int>() != 0)) return differs(where, "truncated", r.truncated, row[4].get<int>());
  if (r.terminated) return differs(where, "terminated", 1, 0);
  if (!near(plain, row[5].get<double>(), 1e-9, 1)) return differs(where, "observation sum", plain, row[5].get<double>());
  if (!near(weighted, row[6].get<double>(), 1e-9, 1)) return differs(where, "observation weighted sum", weighted, row[6].get<double>());
  return {};
}

Replay replay(const nlohmann::json& trace, const std::shared_ptr<const PriceSeries>& series, int index) {
  const TradingMarket market = trace["market"] == "stocks" ? TradingMarket::Stocks : TradingMarket::Forex;
  TradingEnvironments env(series, TradingSetup{market, trace["window"].get<int>(), 1}, 1, 0);
  env.resetToFrame(0, trace["frame_bound"][0].get<int>(), trace["frame_bound"][1].get<int>());
  const std::string name = "trace " + std::to_string(index) + " (" + trace["market"].get<std::string>() + " on " + trace["data"].get<std::string>() + ")";
  std::vector<float> obs(size_t(env.observationSize()));
  env.observe(0, obs.data());
  const auto& initial = trace["initial"];
  if (initial.size() != obs.size()) return {name + ": the initial observation has " + std::to_string(initial.size()) + " values"};
  for (size_t k = 0; k < obs.size(); ++k)
    if (obs[k] != initial[k].get<float>()) return {differs(name + " initial observation [" + std::to_string(k) + "]", "value", obs[k], initial[k].get<double>())};
  Replay out;
  int step = 0;
  for (const auto& row : trace["steps"]) {
    const auto before = env.position(0);
    const auto r = env.step(0, row[0].get<int>());
    env.observe(0, obs.data());
    out.difference = stepDifference(name + " step " + std::to_string(step++), row, r, env, obs);
    if (!out.difference.empty()) return out;
    out.trades += before != env.position(0);
    out.truncated = r.truncated;
  }
  return out;
}

// The bundled series the golden traces name, read from the installed package; null with `why`.
std::map<std::string, std::shared_ptr<const PriceSeries>> bundledSeries(const nlohmann::json& golden, QString& why) {
  const std::string dataDir = bundledDataDir(why);
  if (dataDir.empty()) return {};
  std::map<std::string, std::shared_ptr<const PriceSeries>> series;
  for (const auto& [name, facts] : golden["files"].items()) {
    auto s = std::make_shared<PriceSeries>(cas::env::readPriceSeries(dataDir + name));
    if (s->size() != facts["bars"].get<int>() || s->close.front() != facts["first close"].get<double>() || s->close.back() != facts["last close"].get<double>()) {
      why = QString::fromStdString(dataDir + name) + QStringLiteral(" is not the file the traces were recorded on (bars, first or last close differ)");
      return {};
    }
    series[name] = std::move(s);
  }
  return series;
}

nlohmann::json goldenTraces() {
  std::ifstream in(cas::test::sourceFile("tests/golden/trading/traces.json"));
  return in.good() ? nlohmann::json::parse(in) : nlohmann::json();
}

}  // namespace

class TestTrading : public QObject {
  Q_OBJECT
 private slots:
  void matchesGymAnytradingStepForStep();
  void checkedAgainstTheGoldenData();
  void episodeWindowsAreDrawnFromTheSeed();
  void episodesEndWhereTheirWindowEnds();
  void equityRewardsSumToTheProfit();
  void scalarsHoldThePositionAndTheProfits();
  void theCatalogueNamesTradingStocks();
  void readsTheTimeFormats();
  void refusesMissingColumns();
  void refusesBadNumbers();
  void refusesUnsortedTimes();
  void refusesTooFewBars();
  void refusesFilesBeyondItsLimits();
  void refusesWhatIsNotAFile();
  void mangledFilesAreReadOrRefusedNeverCrash();
};

void TestTrading::matchesGymAnytradingStepForStep() {
  const nlohmann::json golden = goldenTraces();
  QVERIFY2(!golden.is_null(), "tests/golden/trading/traces.json is missing: run tests/golden/make_trading_traces.py");
  QString why;
  const auto series = bundledSeries(golden, why);
  if (series.empty()) QFAIL(qPrintable(why));  // never skipped: CI must have the package
  int steps = 0, trades = 0, truncations = 0, forex = 0;
  for (size_t t = 0; t < golden["traces"].size(); ++t) {
    const auto& trace = golden["traces"][t];
    const Replay r = replay(trace, series.at(trace["data"].get<std::string>()), int(t));
    QVERIFY2(r.difference.empty(), r.difference.c_str());
    steps += int(trace["steps"].size());
    trades += r.trades;
    truncations += r.truncated;
    forex += trace["market"] == "forex";
  }
  qInfo("%d steps of %zu gym-anytrading traces replayed: %d trades, %d episodes to their truncation", steps, golden["traces"].size(), trades, truncations);
  QVERIFY(steps >= 2000 && trades >= 300 && truncations >= 4 && forex >= 3);  // what the traces must cover
}

// The comparison can fail: a trace with one reward, one profit or one position changed is told
// apart at that step.
void TestTrading::checkedAgainstTheGoldenData() {
  nlohmann::json golden = goldenTraces();
  QString why;
  const auto series = bundledSeries(golden, why);
  if (series.empty()) QFAIL(qPrintable(why));
  nlohmann::json& steps = golden["traces"][0]["steps"];
  size_t rewarded = 0;
  while (rewarded < steps.size() && steps[rewarded][1].get<double>() == 0) ++rewarded;
  QVERIFY(rewarded < steps.size());
  const auto data = series.at(golden["traces"][0]["data"].get<std::string>());
  for (const auto& [column, what] : {std::pair{1, "reward"}, std::pair{2, "total profit"}, std::pair{3, "position"}}) {
    nlohmann::json changed = golden["traces"][0];
    nlohmann::json& cell = changed["steps"][rewarded][size_t(column)];
    cell = column == 3 ? nlohmann::json(1 - cell.get<int>()) : nlohmann::json(cell.get<double>() * (1 + 1e-4) + 1e-4);
    const std::string expected = "step " + std::to_string(rewarded) + ": " + what + ":";
    const std::string difference = replay(changed, data, 0).difference;
    QVERIFY2(difference.find(expected) != std::string::npos, (difference + " (expected " + expected + ")").c_str());
  }
}

void TestTrading::episodeWindowsAreDrawnFromTheSeed() {
  auto series = std::make_shared<PriceSeries>();
  for (int i = 0; i < 500; ++i) series->close.push_back(100 + i);
  const TradingSetup setup{TradingMarket::Stocks, 10, 20};
  TradingEnvironments a(series, setup, 64, 7), b(series, setup, 64, 7), c(series, setup, 64, 8);
  std::set<int> begins;
  int differ = 0;
  for (int g = 0; g < 64; ++g) {
    QCOMPARE(a.frameBegin(g), b.frameBegin(g));
    QVERIFY(a.frameBegin(g) >= 0 && a.frameBegin(g) + setup.barsNeeded() <= 500);
    begins.insert(a.frameBegin(g));
    differ += a.frameBegin(g) != c.frameBegin(g);
  }
  QVERIFY(begins.size() >= 50);
  QVERIFY(differ >= 50);
  std::vector<float> obs(20);
  a.observe(0, obs.data());
  QCOMPARE(obs[2 * 9], float(100 + a.frameBegin(0) + 10));  // the newest row: the bar at tick W
  QCOMPARE(obs[2 * 9 + 1], 1.0f);
}

// trading.reward = "equity": a step's reward is the change of the equity in percent of the
// starting money, so an episode's rewards sum to 100 (final total profit - 1); a buy costs its
// fees at once; the price-change rules' results (position, total profit) do not change.
void TestTrading::equityRewardsSumToTheProfit() {
  auto series = std::make_shared<PriceSeries>();
  for (int i = 0; i < 400; ++i) series->close.push_back(100 + 10 * std::sin(i / 7.0) + 0.05 * i);
  TradingSetup setup{TradingMarket::Stocks, 10, 120};
  TradingEnvironments price(series, setup, 16, 5);
  setup.reward = cas::env::TradingReward::Equity;
  TradingEnvironments equity(series, setup, 16, 5);
  std::mt19937 rng(3);
  for (int g = 0; g < 16; ++g) {
    double sum = 0;
    bool ended = false;
    for (int step = 0; !ended; ++step) {
      const int action = int(rng() % 2);
      const cas::env::StepResult a = price.step(g, action), b = equity.step(g, action);
      QCOMPARE(equity.position(g), price.position(g));
      QCOMPARE(equity.totalProfit(g), price.totalProfit(g));
      if (step == 0 && action == TradingEnvironments::kBuy)  // the fees, paid at once: 0.5% and 1%
        QVERIFY2(std::abs(b.reward - 100 * (0.995f * 0.99f - 1)) < 1e-3, qPrintable(QString::number(b.reward)));
      sum += b.reward;
      ended = a.truncated;
      QCOMPARE(b.truncated, a.truncated);
    }
    const double want = 100 * (double(equity.totalProfit(g)) - 1);
    QVERIFY2(std::abs(sum - want) < 1e-3, qPrintable(QStringLiteral("copy %1: rewards %2, profit %3").arg(g).arg(sum).arg(want)));
  }
}

void TestTrading::episodesEndWhereTheirWindowEnds() {
  auto series = std::make_shared<PriceSeries>();
  for (int i = 0; i < 40; ++i) series->close.push_back(10 + i);
  TradingEnvironments env(series, TradingSetup{TradingMarket::Stocks, 5, 6}, 2, 3);
  // Buy at once, hold: the only trade is the truncation's sale at the last step.
  for (int s = 1; s <= 6; ++s) {
    const auto r = env.step(0, TradingEnvironments::kBuy);
    QCOMPARE(r.truncated, s == 6);
    QCOMPARE(r.reward, 0.0f);
  }
  const float bought = float(10 + env.frameBegin(0) + 6), sold = float(10 + env.frameBegin(0) + 11);
  QCOMPARE(env.totalProfit(0), (1.0f * float(1.0 - 0.005)) / bought * float(1.0 - 0.01) * sold);
  const auto after = env.step(0, TradingEnvironments::kSell);  // ended: nothing moves until reset
  QVERIFY(after.truncated && after.reward == 0 && env.tick(0) == 11);
  env.reset(0);
  QCOMPARE(env.tick(0), 5);
  QCOMPARE(env.totalProfit(0), 1.0f);
  QVERIFY_THROWS_EXCEPTION(std::invalid_argument, TradingEnvironments(series, TradingSetup{TradingMarket::Stocks, 30, 10}, 1, 0));
  QVERIFY_THROWS_EXCEPTION(std::invalid_argument, env.resetToFrame(0, 4, 20));
  QVERIFY_THROWS_EXCEPTION(std::invalid_argument, env.resetToFrame(0, 30, 41));
}

// The equity at a step is what the same actions over a frame cut there end with (an open long
// sold at the step's close), and buy and hold's is the equity of a copy that always buys; at the
// last step both are the total profits the episodes end with.
void TestTrading::scalarsHoldThePositionAndTheProfits() {
  auto series = std::make_shared<PriceSeries>();
  for (int i = 0; i < 120; ++i) series->close.push_back(100 + 20 * std::sin(i / 7.0) + 0.3 * i);
  const TradingSetup setup{TradingMarket::Stocks, 5, 20};
  const int first = 15, last = 75;  // ticks 5 .. 64: 59 steps
  TradingEnvironments policy(series, setup, 1, 0), hold(series, setup, 1, 0);
  policy.resetToFrame(0, first, last);
  hold.resetToFrame(0, first, last);
  QCOMPARE(policy.scalarNames(), (std::vector<std::string>{"position", "total_profit", "equity", "buy_and_hold"}));
  std::mt19937 random(5);
  std::vector<int> actions;
  int trades = 0, longSteps = 0, compared = 0;
  bool wasLong = false;
  for (bool ended = false; !ended;) {
    const std::vector<float> s = policy.scalars(0);
    const bool isLong = policy.position(0) == cas::env::TradingPosition::Long;
    QCOMPARE(s.size(), size_t(4));
    QCOMPARE(s[0], isLong ? 1.0f : 0.0f);
    QCOMPARE(s[1], policy.totalProfit(0));
    QCOMPARE(s[3], hold.scalars(0)[2]);
    // A buy on a frame's last step is never sold (gym-anytrading ends holding it), so the cut
    // frame is compared where the step into this tick bought nothing.
    if (policy.tick(0) > setup.window && !(isLong && !wasLong)) {
      TradingEnvironments cut(series, setup, 1, 0);
      cut.resetToFrame(0, first, first - setup.window + policy.tick(0) + 1);
      for (const int a : actions) cut.step(0, a);
      QCOMPARE(s[2], cut.totalProfit(0));
      ++compared;
    }
    const int keep = isLong ? TradingEnvironments::kBuy : TradingEnvironments::kSell;
    actions.push_back(random() % 4 == 0 ? 1 - keep : keep);
    trades += actions.back() != keep;
    longSteps += isLong;
    wasLong = isLong;
    ended = policy.step(0, actions.back()).truncated;
    hold.step(0, TradingEnvironments::kBuy);
  }
  const std::vector<float> end = policy.scalars(0);
  QCOMPARE(end[2], policy.totalProfit(0));
  QCOMPARE(end[3], hold.totalProfit(0));
  QVERIFY(trades >= 8 && longSteps >= 10 && compared >= 40);  // the walk held both positions and traded
}

void TestTrading::theCatalogueNamesTradingStocks() {
  const cas::env::EnvironmentInfo* e = cas::env::findEnvironment("trading-stocks");
  QVERIFY(e);
  QCOMPARE(e->observationShape, (std::vector<int>{30, 2}));
  QCOMPARE(e->actionCount, TradingEnvironments::kActions);
  QVERIFY(!e->twoPlayer);
  QCOMPARE(e->actionNames.size(), size_t(2));
  QCOMPARE(std::string(e->actionNames[0]), std::string("sell"));
}

void TestTrading::readsTheTimeFormats() {
  std::int64_t a = 0, b = 0;
  QVERIFY(cas::env::parseBarTime("1970-01-02", a));
  QCOMPARE(a, std::int64_t(86'400'000));
  QVERIFY(cas::env::parseBarTime("01.01.2017 22:00:00.000", a));
  QVERIFY(cas::env::parseBarTime("2017-01-01T22:00:00.5", b));
  QCOMPARE(b - a, std::int64_t(500));
  QVERIFY(cas::env::parseBarTime("2020-02-29 10:30", a));
  for (const char* bad : {"2019-02-29", "2020-13-01", "2020-1-01", "01/02/2020", "2020-01-01 25:00", "2020-01-01x", "2020-01-01 10:30:00.", ""})
    QVERIFY2(!cas::env::parseBarTime(bad, a), bad);
}

void TestTrading::refusesMissingColumns() {
  QTemporaryDir dir;
  const std::string noClose = writeFile(dir, "a.csv", "Date,Open,High,Low,Adj Close,Volume\n2020-01-01,1,1,1,1,1\n");
  std::string m = refusal(noClose);
  QVERIFY2(m.find(noClose + ":1: no Close column in the header") == 0 && m.find("Date,Open,High,Low,Close,Volume") != std::string::npos, m.c_str());
  m = refusal(writeFile(dir, "b.csv", "Open,High,Low,Close,Volume\n1,1,1,1,1\n"));
  QVERIFY2(m.find(":1: no Date (or Time, Datetime, Timestamp) column") != std::string::npos, m.c_str());
  m = refusal(writeFile(dir, "c.csv", "\n\nTime,Open,High,Low,Close,Close,Volume\n"));
  QVERIFY2(m.find(":3: two columns name the Close") != std::string::npos, m.c_str());
  m = refusal(writeFile(dir, "d.csv", std::string(kHeader) + "2020-01-01,1,1,1,1\n"));
  QVERIFY2(m.find(":2: 5 fields where the header has 6") != std::string::npos, m.c_str());
  m = refusal(writeFile(dir, "e.csv", ""));
  QVERIFY2(m.find(":1: no header") != std::string::npos, m.c_str());
}

void TestTrading::refusesBadNumbers() {
  QTemporaryDir dir;
  const std::pair<const char*, const char*> cases[] = {
      {"2020-01-02,1,1,1,abc,1", ":3: Close 'abc' is not a number; expected a decimal number"},
      {"2020-01-02,1,1,1,nan,1", ":3: Close 'nan' is not finite"},
      {"2020-01-02,1,inf,1,1,1", ":3: High 'inf' is not finite"},
      {"2020-01-02,1,1,1e999,1,1", ":3: Low '1e999' is not"},
      {"2020-01-02,0,1,1,1,1", ":3: Open '0' is not above zero"},
      {"2020-01-02,1,1,1,-5,1", ":3: Close '-5' is not above zero"},
      {"2020-01-02,1,1,1,1,-1", ":3: Volume '-1' is negative"},
      {"2020-01-02,1,1,1,,1", ":3: Close is empty"},
      {"2020-01-02,1,1,1,\"1\",1", ":3: Close '\"1\"' is not a number"},
      {"2020-01-02,1,1,1,1\x1b[2J,1", ":3: Close '1\\x1b[2J' is not a number"},
  };
  for (const auto& [row, expected] : cases) {
    const std::string m = refusal(writeFile(dir, "bad.csv", std::string(kHeader) + "2020-01-01,1,1,1,1,1\n" + row + "\n"));
    QVERIFY2(m.find(expected) != std::string::npos, (m + " (expected " + expected + ")").c_str());
  }
}

void TestTrading::refusesUnsortedTimes() {
  QTemporaryDir dir;
  std::string m = refusal(writeFile(dir, "a.csv", std::string(kHeader) + "2020-01-02,1,1,1,1,1\n2020-01-01,1,1,1,1,1\n"));
  QVERIFY2(m.find(":3: time '2020-01-01' is before the row before's; expected times strictly increasing") != std::string::npos, m.c_str());
  m = refusal(writeFile(dir, "b.csv", std::string(kHeader) + "2020-01-02,1,1,1,1,1\n\n2020-01-02,1,1,1,1,1\n"));
  QVERIFY2(m.find(":4: time '2020-01-02' repeats the row before's") != std::string::npos, m.c_str());
  m = refusal(writeFile(dir, "c.csv", std::string(kHeader) + "2020-02-30,1,1,1,1,1\n"));
  QVERIFY2(m.find(":2: time '2020-02-30' is not a date") != std::string::npos, m.c_str());
}

void TestTrading::refusesTooFewBars() {
  QTemporaryDir dir;
  const std::string path = writeFile(dir, "short.csv", "\xEF\xBB\xBF" + bars(20));
  QCOMPARE(cas::env::readPriceSeries(path).size(), 20);
  const std::string m = refusal(path, {31, "one episode (a window of 30 bars and a step)"});
  QVERIFY2(m == path + ":21: 20 bars, fewer than the 31 one episode (a window of 30 bars and a step) needs; give a longer series or a shorter window", m.c_str());
  const std::string headerOnly = refusal(writeFile(dir, "h.csv", kHeader));
  QVERIFY2(headerOnly.find(":1: 0 bars, fewer than the 1 a series needs") != std::string::npos, headerOnly.c_str());
}

void TestTrading::refusesFilesBeyondItsLimits() {
  QTemporaryDir dir;
  const std::string path = writeFile(dir, "many.csv", bars(20));
  PriceSeriesLimits limits;
  limits.maxRows = 10;
  std::string m = refusal(path, {}, limits);
  QVERIFY2(m.find(":12: more than 10 bars, the most a price series may have") != std::string::npos, m.c_str());
  limits = {};
  limits.maxFileBytes = 200;
  m = refusal(path, {}, limits);
  QVERIFY2(m.find(path + ":0: the file is ") == 0 && m.find("more than the 200 a price series may have") != std::string::npos, m.c_str());
  m = refusal(writeFile(dir, "long.csv", std::string(kHeader) + "2020-01-01,1,1,1,1," + std::string(2000, '1') + "\n"));
  QVERIFY2(m.find(":2: a line of 2019 bytes, more than the 1024 a line may have") != std::string::npos, m.c_str());
  // The default limits refuse a file over 64 MiB before reading it: a sparse file costs no disk.
  const std::string huge = writeFile(dir, "huge.csv", kHeader);
  std::filesystem::resize_file(huge, (std::uintmax_t(64) << 20) + 1);
  QElapsedTimer timer;
  timer.start();
  m = refusal(huge);
  QVERIFY2(m.find("more than the 67108864 a price series may have") != std::string::npos, m.c_str());
  QVERIFY(timer.elapsed() < 1000);
}

void TestTrading::refusesWhatIsNotAFile() {
  QTemporaryDir dir;
  std::string m = refusal(dir.path().toStdString());
  QVERIFY2(m.find(":0: not a readable file") != std::string::npos, m.c_str());
  m = refusal(dir.filePath(QStringLiteral("absent.csv")).toStdString());
  QVERIFY2(m.find(":0: not a readable file") != std::string::npos, m.c_str());
  const std::string fifo = dir.filePath(QStringLiteral("pipe.csv")).toStdString();
  QCOMPARE(mkfifo(fifo.c_str(), 0600), 0);
  m = refusal(fifo);  // refused without opening it (a FIFO's open would wait for a writer)
  QVERIFY2(m.find(":0: not a readable file") != std::string::npos, m.c_str());
}

// Random damage to a good file (bytes changed, inserted or cut, lines repeated): each result is
// either a series that keeps the format's promises or a refusal at this file's line.
void TestTrading::mangledFilesAreReadOrRefusedNeverCrash() {
  QTemporaryDir dir;
  const std::string good = bars(28), path = dir.filePath(QStringLiteral("m.csv")).toStdString();
  std::mt19937 random(40);
  const char alphabet[] = "0123456789.,-:eE \n\r\tnaifNAIF\"x\x00\xff";
  int read = 0, refused = 0;
  for (int i = 0; i < 3000; ++i) {
    std::string text = good;
    for (int edits = 1 + int(random() % 4); edits > 0; --edits) {
      const size_t at = random() % text.size();
      const char c = alphabet[random() % (sizeof(alphabet) - 1)];
      switch (random() % 4) {
        case 0: text[at] = c; break;
        case 1: text.insert(at, 1, c); break;
        case 2: text.erase(at, 1 + random() % 20); break;
        default: text.insert(at, text.substr(at, random() % 60)); break;
      }
      if (text.empty()) text = "\n";
    }
    std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
    try {
      const PriceSeries s = cas::env::readPriceSeries(path);
      for (int k = 0; k < s.size(); ++k) {
        QVERIFY(std::isfinite(s.close[size_t(k)]) && s.close[size_t(k)] > 0 && s.open[size_t(k)] > 0 && s.volume[size_t(k)] >= 0);
        QVERIFY(k == 0 || s.times[size_t(k)] > s.times[size_t(k - 1)]);
      }
      ++read;
    } catch (const PriceSeriesError& e) {
      QVERIFY2(std::string(e.what()).rfind(path + ":", 0) == 0, e.what());
      ++refused;
    }
  }
  qInfo("3000 mangled files: %d read, %d refused", read, refused);
  QVERIFY(read > 0 && refused > 1000);
}

QTEST_GUILESS_MAIN(TestTrading)
#include "test_trading.moc"
