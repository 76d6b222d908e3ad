#include "widgets/metrics/run_metrics.hpp"

#include <QCoreApplication>
#include <QDir>
#include <QJsonDocument>
#include <QJsonObject>

#include <algorithm>
#include <iterator>
#include <optional>

#include "core/support/atomic_file.hpp"

namespace cas::widgets {
namespace {

// The legend texts keep the Metrics dock's translation context, where they were first translated.
constexpr const char* kContext = "cas::widgets::MetricsPanel";

// One plotted quantity of an iteration: where it is drawn, its key in metrics.jsonl (so an
// earlier run's file can be overlaid), its legend text and how to read it from a report.
struct Quantity {
  MetricPlots::Plot plot;
  const char* key;
  const char* name;  // translated in kContext
  QRgb colour;
  double (*fromReport)(const train::IterationReport&);
};

const Quantity kQuantities[] = {
    {MetricPlots::Loss, "loss", QT_TRANSLATE_NOOP("cas::widgets::MetricsPanel", "total"), qRgb(30, 30, 30),
     [](const train::IterationReport& r) { return double(r.loss); }},
    {MetricPlots::Loss, "loss_policy", QT_TRANSLATE_NOOP("cas::widgets::MetricsPanel", "policy"), qRgb(31, 119, 180),
     [](const train::IterationReport& r) { return double(r.policyLoss); }},
    {MetricPlots::Loss, "loss_value", QT_TRANSLATE_NOOP("cas::widgets::MetricsPanel", "value"), qRgb(214, 39, 40),
     [](const train::IterationReport& r) { return double(r.valueLoss); }},
    {MetricPlots::Loss, "loss_l2", QT_TRANSLATE_NOOP("cas::widgets::MetricsPanel", "L2"), qRgb(127, 127, 127),
     [](const train::IterationReport& r) { return double(r.l2); }},
    {MetricPlots::Simulations, "simulations_per_second", QT_TRANSLATE_NOOP("cas::widgets::MetricsPanel", "simulations/s"),
     qRgb(44, 160, 44), [](const train::IterationReport& r) { return r.simulationsPerSecond; }},
    {MetricPlots::Games, "games_per_second", QT_TRANSLATE_NOOP("cas::widgets::MetricsPanel", "games/s"), qRgb(148, 103, 189),
     [](const train::IterationReport& r) { return r.gamesPerSecond; }},
    // Host-device copies of the network's inputs and outputs (the CPU search with a GPU network)
    // are not timed on their own: they are part of the inference time, and the label says so.
    // Data exchange: the samples' moves (recording, committing, drawing batches) and the weights'
    // copy to self-play.
    {MetricPlots::StageTimes, "seconds_inference", QT_TRANSLATE_NOOP("cas::widgets::MetricsPanel", "inference incl. copies"),
     qRgb(31, 119, 180), [](const train::IterationReport& r) { return r.inferenceSeconds; }},
    {MetricPlots::StageTimes, "seconds_search", QT_TRANSLATE_NOOP("cas::widgets::MetricsPanel", "tree search"), qRgb(255, 127, 14),
     [](const train::IterationReport& r) { return r.searchSeconds; }},
    {MetricPlots::StageTimes, "seconds_data", QT_TRANSLATE_NOOP("cas::widgets::MetricsPanel", "data exchange"), qRgb(44, 160, 44),
     [](const train::IterationReport& r) { return r.dataSeconds; }},
    {MetricPlots::StageTimes, "seconds_train", QT_TRANSLATE_NOOP("cas::widgets::MetricsPanel", "training"), qRgb(214, 39, 40),
     [](const train::IterationReport& r) { return r.trainSeconds; }},
};

// metrics.jsonl writes an opponent's name with ':' as '_' ("mcts:200" -> "win_rate_mcts_200");
// keying both runs the same way gives an opponent the same series key in the live run and an overlay.
QString scoreKey(QString opponent) { return QStringLiteral("score:") + opponent.replace(QLatin1Char(':'), QLatin1Char('_')); }

// Keeps every second point of the older half, so memory stays bounded while the newest points
// keep full resolution and the first point (where the run began) stays.
void thinOlderHalf(MetricSeries& s) {
  const qsizetype half = s.y.size() / 2;
  qsizetype kept = 0;
  for (qsizetype i = 0; i < s.y.size(); ++i) {
    if (i < half && i % 2 == 1) continue;
    s.iteration[kept] = s.iteration[i];
    s.trainingSeconds[kept] = s.trainingSeconds[i];
    s.wallClock[kept] = s.wallClock[i];
    s.y[kept] = s.y[i];
    ++kept;
  }
  for (QVector<double>* v : {&s.iteration, &s.trainingSeconds, &s.wallClock, &s.y}) v->resize(kept);
}

std::optional<QByteArray> readRunLog(const QString& path, QString* problem) {
  std::string error;
  const auto text = readFile(path.toStdString(), kRunLogLimit, &error);  // a regular file of bounded size
  if (!text) {
    if (problem) *problem = QString::fromStdString(error);
    return std::nullopt;
  }
  return QByteArray(text->data(), qsizetype(text->size()));
}

std::vector<QJsonObject> jsonLines(const QByteArray& text) {
  std::vector<QJsonObject> lines;
  for (const QByteArray& line : text.split('\n')) {
    const QJsonDocument doc = QJsonDocument::fromJson(line);
    if (doc.isObject() && doc.object().value(QLatin1String("iteration")).isDouble()) lines.push_back(doc.object());
  }
  return lines;
}

// A change's value as the log wrote it: a string, or a number or boolean from a hand-edited file.
QString valueText(const QJsonValue& v) { return v.isString() ? v.toString() : v.toVariant().toString(); }

}  // namespace

// core's opponent names: train/baselines.cpp.
QString opponentName(const QString& opponent) {
  if (opponent == QLatin1String("random")) return QCoreApplication::translate("cas::widgets::MetricsPanel", "random", "the random baseline");
  if (opponent == QLatin1String("perfect")) return QCoreApplication::translate("cas::widgets::MetricsPanel", "perfect", "the perfect player");
  return opponent;
}

const QVector<double>& MetricSeries::x(MetricPlots::Axis axis) const {
  switch (axis) {
    case MetricPlots::TrainingTimeAxis: return trainingSeconds;
    case MetricPlots::WallClockAxis: return wallClock;
    default: return iteration;
  }
}

QColor quantityColour(const QString& key) {
  for (const Quantity& q : kQuantities)
    if (key == QLatin1String(q.key)) return QColor(q.colour);
  static const QRgb opponents[] = {qRgb(255, 127, 14), qRgb(148, 103, 189), qRgb(23, 190, 207), qRgb(140, 86, 75), qRgb(227, 119, 194)};
  return QColor(opponents[qHash(key) % std::size(opponents)]);
}

bool RunMetrics::empty() const {
  return std::all_of(std::begin(series_), std::end(series_), [](const std::vector<MetricSeries>& list) { return list.empty(); });
}

MetricSeries& RunMetrics::seriesFor(MetricPlots::Plot plot, const QString& key, const QString& name) {
  std::vector<MetricSeries>& list = series_[plot];
  for (MetricSeries& s : list)
    if (s.key == key) return s;
  MetricSeries s;
  s.key = key;
  s.name = name;
  s.order = int(list.size());
  list.push_back(std::move(s));
  return list.back();
}

void RunMetrics::beginPoint(double iteration, double iterationSeconds, double wallClock) {
  iteration_ = iteration;
  // Once an iteration's time is missing, the run's training time is unknown from there on.
  trainingSeconds_ += iterationSeconds;
  wallClock_ = wallClock;
}

void RunMetrics::append(MetricPlots::Plot plot, const QString& key, const QString& name, double y) {
  MetricSeries& s = seriesFor(plot, key, name);
  s.iteration.push_back(iteration_);
  s.trainingSeconds.push_back(trainingSeconds_);
  s.wallClock.push_back(wallClock_);
  s.y.push_back(y);
  if (s.y.size() > kMaxPoints) thinOlderHalf(s);
}

void RunMetrics::addIteration(const train::IterationReport& r, double wallClock) {
  beginPoint(double(r.iteration), r.wallSeconds, r.finishedAt > 0 ? r.finishedAt : wallClock);
  if (r.episodes) {  // a single-agent run (PPO): its episodes take the self-play plots' places
    appendEpisodes(r.trainingSteps > 0 ? std::optional<double>(r.loss) : std::nullopt, r.policyLoss, r.valueLoss, r.episodes->episodes,
                   r.episodes->returnMean, r.episodes->lengthMean, r.episodes->stepsPerSecond, r.episodes->rolloutSeconds, r.trainSeconds);
    return;
  }
  for (const Quantity& q : kQuantities) {
    if (q.plot == MetricPlots::Loss && r.trainingSteps == 0) continue;  // no training step yet (the replay buffer is filling)
    append(q.plot, QLatin1String(q.key), QCoreApplication::translate(kContext, q.name), q.fromReport(r));
  }
  for (const auto& e : r.evaluations)
    if (e.games > 0) {
      const QString opponent = QString::fromStdString(e.opponent);
      append(MetricPlots::Score, scoreKey(opponent), opponentName(opponent), (e.wins + 0.5 * e.draws) / e.games);
    }
}

void RunMetrics::appendEpisodes(std::optional<double> loss, double policyLoss, double valueLoss, std::int64_t episodes, double returnMean,
                                double lengthMean, double stepsPerSecond, double rolloutSeconds, double trainSeconds) {
  singleAgent_ = true;
  auto name = [](const char* text) { return QCoreApplication::translate(kContext, text); };
  if (loss) {
    append(MetricPlots::Loss, QStringLiteral("loss"), name("total"), *loss);
    append(MetricPlots::Loss, QStringLiteral("loss_policy"), name("policy"), policyLoss);
    append(MetricPlots::Loss, QStringLiteral("loss_value"), name("value"), valueLoss);
  }
  if (episodes > 0) {  // no episode ended: no return to draw (not a return of 0)
    append(MetricPlots::Score, QStringLiteral("episode_return_mean"), name(QT_TRANSLATE_NOOP("cas::widgets::MetricsPanel", "mean return")), returnMean);
    append(MetricPlots::Games, QStringLiteral("episode_length_mean"), name(QT_TRANSLATE_NOOP("cas::widgets::MetricsPanel", "mean length")), lengthMean);
  }
  append(MetricPlots::Simulations, QStringLiteral("env_steps_per_second"), name(QT_TRANSLATE_NOOP("cas::widgets::MetricsPanel", "environment steps/s")),
         stepsPerSecond);
  append(MetricPlots::StageTimes, QStringLiteral("seconds_rollout"), name(QT_TRANSLATE_NOOP("cas::widgets::MetricsPanel", "rollout")), rolloutSeconds);
  append(MetricPlots::StageTimes, QStringLiteral("seconds_train"), name("training"), trainSeconds);
}

void RunMetrics::appendMetricsLine(const QJsonObject& line) {
  const QJsonValue seconds = line.value(QLatin1String("seconds_wall")), time = line.value(QLatin1String("time"));
  beginPoint(line.value(QLatin1String("iteration")).toDouble(), seconds.isDouble() ? seconds.toDouble() : kUnknown,
             time.isDouble() ? time.toDouble() : kUnknown);
  if (line.contains(QLatin1String("env_steps"))) {  // a single-agent run's line (PPO)
    auto number = [&](const char* key) { return line.value(QLatin1String(key)).toDouble(); };
    const bool trained = number("training_steps") > 0;
    appendEpisodes(trained ? std::optional<double>(number("loss")) : std::nullopt, number("loss_policy"), number("loss_value"),
                   std::int64_t(number("episodes_in_iteration")), number("episode_return_mean"), number("episode_length_mean"),
                   number("env_steps_per_second"), number("seconds_rollout"), number("seconds_train"));
    return;
  }
  const bool trained = line.value(QLatin1String("loss")).toDouble() > 0;
  for (const Quantity& q : kQuantities) {
    const QJsonValue v = line.value(QLatin1String(q.key));
    if (v.isDouble() && (q.plot != MetricPlots::Loss || trained))
      append(q.plot, QLatin1String(q.key), QCoreApplication::translate(kContext, q.name), v.toDouble());
  }
  const QLatin1String winPrefix("win_rate_");
  for (auto it = line.begin(); it != line.end(); ++it) {
    if (!it.key().startsWith(winPrefix) || !it.value().isDouble()) continue;
    const QString opponent = it.key().mid(winPrefix.size());
    const double draws = line.value(QStringLiteral("draw_rate_") + opponent).toDouble();
    append(MetricPlots::Score, scoreKey(opponent), opponentName(opponent), it.value().toDouble() + 0.5 * draws);
  }
}

bool RunMetrics::load(const QString& runFolder, QString* error) {
  const QString path = QDir(runFolder).filePath(QStringLiteral("metrics.jsonl"));
  QString problem;
  const auto text = readRunLog(path, &problem);
  if (!text) {
    if (error)
      *error = QCoreApplication::translate("cas::widgets::MetricsPanel", "%1 cannot be read (%2); choose a run folder, the one holding config.toml and metrics.jsonl.")
                   .arg(QDir::toNativeSeparators(path), problem);
    return false;
  }
  const std::vector<QJsonObject> lines = jsonLines(*text);
  if (lines.empty()) {
    if (error) *error = QCoreApplication::translate("cas::widgets::MetricsPanel", "%1 holds no metrics yet.").arg(QDir::toNativeSeparators(path));
    return false;
  }
  *this = RunMetrics();
  for (const QJsonObject& line : lines) appendMetricsLine(line);
  // The change log is optional: a run nobody tuned has none.
  if (const auto changes = readRunLog(QDir(runFolder).filePath(QStringLiteral("changes.jsonl")), nullptr))
    for (const QJsonObject& line : jsonLines(*changes))
      changes_.push_back({qint64(line.value(QLatin1String("iteration")).toDouble()), line.value(QLatin1String("parameter")).toString(),
                          valueText(line.value(QLatin1String("from"))), valueText(line.value(QLatin1String("to")))});
  return true;
}

double RunMetrics::position(qint64 iteration, MetricPlots::Axis axis) const {
  // Every iteration has a simulations/s point, so that series knows where each iteration stands.
  for (const std::vector<MetricSeries>& list : series_)
    for (const MetricSeries& s : list) {
      const auto it = std::lower_bound(s.iteration.begin(), s.iteration.end(), double(iteration));
      if (it != s.iteration.end() && *it == double(iteration)) return s.x(axis)[it - s.iteration.begin()];
    }
  return kUnknown;
}

}  // namespace cas::widgets
