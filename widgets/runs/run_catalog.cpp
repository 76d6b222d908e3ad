#include "widgets/runs/run_catalog.hpp"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLocale>
#include <QStandardPaths>

#include <algorithm>

#include "core/env/environments.hpp"
#include "core/engine/run_folder.hpp"
#include "widgets/metrics/run_metrics.hpp"
#include "core/engine/run_lock.hpp"
#include "core/support/atomic_file.hpp"

namespace cas::widgets {
namespace {

// The last complete lines of a JSON-lines file: at most `tailBytes` from its end are read, so a
// long run's metrics cost no more than a short one's.
std::vector<QJsonObject> lastJsonLines(const QString& path, qint64 tailBytes) {
  std::vector<QJsonObject> lines;
  const QFileInfo info(path);
  if (!info.isFile() || info.isSymLink()) return lines;
  QFile file(path);
  if (!file.open(QIODevice::ReadOnly)) return lines;
  const qint64 start = std::max<qint64>(0, file.size() - tailBytes);
  file.seek(start);
  QList<QByteArray> parts = file.readAll().split('\n');
  if (start > 0 && !parts.isEmpty()) parts.removeFirst();  // began mid-line
  for (const QByteArray& part : parts) {
    const QJsonDocument doc = QJsonDocument::fromJson(part);
    if (doc.isObject()) lines.push_back(doc.object());  // a line cut short by a kill is skipped
  }
  return lines;
}

// "perfect 0.75, random 1.00": each opponent's score (wins + draws / 2) in the line.
QString scoresOf(const QJsonObject& line) {
  QStringList scores;
  const QLatin1String winPrefix("win_rate_");
  for (auto it = line.begin(); it != line.end(); ++it) {
    if (!it.key().startsWith(winPrefix) || !it.value().isDouble()) continue;
    const QString opponent = it.key().mid(winPrefix.size());
    const double score = it.value().toDouble() + 0.5 * line.value(QStringLiteral("draw_rate_") + opponent).toDouble();
    scores << QStringLiteral("%1 %2").arg(opponentName(opponent)).arg(score, 0, 'f', 2);
  }
  return scores.join(QStringLiteral(", "));
}

}  // namespace

QString studioRunsRoot() {
  return QStandardPaths::writableLocation(QStandardPaths::AppLocalDataLocation) + QStringLiteral("/runs");
}

QStringList runFoldersUnder(const QString& root) {
  QStringList out;
  const QDir dir(root);
  for (const QString& name : dir.entryList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name | QDir::Reversed))
    if (QFileInfo(dir.filePath(name) + QStringLiteral("/config.toml")).isFile()) out << QDir::cleanPath(dir.absoluteFilePath(name));
  return out;
}

bool runBelongsTo(const RunSummary& run, const QString& projectFolder) {
  if (run.projectFolder.isEmpty() || projectFolder.isEmpty()) return false;
  return QDir::cleanPath(QFileInfo(run.projectFolder).absoluteFilePath()) == QDir::cleanPath(QFileInfo(projectFolder).absoluteFilePath());
}

RunSummary readRunSummary(const QString& folder, const project::Project* current) {
  RunSummary s;
  s.folder = QDir::cleanPath(QFileInfo(folder).absoluteFilePath());
  s.name = QFileInfo(s.folder).fileName();
  const std::filesystem::path dir = s.folder.toStdString();
  s.started = QFileInfo(s.folder + QStringLiteral("/config.toml")).lastModified();

  project::Project recorded;
  Diagnostic error;
  std::vector<Diagnostic> notices;  // how the project's files differ from the run's copies: not needed for a listing
  if (!engine::RunFolder::open(dir, engine::RunAccess::Read, false, &recorded, &error, &notices)) {
    s.problem = QString::fromStdString(formatHeadline(error));
    return s;
  }
  s.projectFolder = QString::fromStdString(recorded.directory.string());
  const env::EnvironmentInfo* environment = env::findEnvironment(recorded.environment);
  s.singleAgent = environment && !environment->twoPlayer;

  const engine::RunLockState lock = engine::readRunLockState(dir);
  s.pid = lock.pid;
  s.status = lock.kind == engine::RunLockState::Held    ? RunSummary::Status::Running
             : lock.kind == engine::RunLockState::Stale ? RunSummary::Status::Crashed
                                                        : RunSummary::Status::Stopped;
  s.hasCheckpoint = !engine::checkpointFiles(dir).empty();

  const std::vector<QJsonObject> metrics = lastJsonLines(s.folder + QStringLiteral("/metrics.jsonl"), 64 * 1024);
  if (!metrics.empty()) s.iterations = qint64(metrics.back().value(QLatin1String("iteration")).toDouble());
  for (auto it = metrics.rbegin(); it != metrics.rend() && s.lastScore.isEmpty(); ++it) s.lastScore = scoresOf(*it);
  // A run without opponents (PPO, MuZero): its last mean episode return.
  for (auto it = metrics.rbegin(); it != metrics.rend() && s.lastScore.isEmpty(); ++it) {
    const QJsonValue mean = it->value(QLatin1String("episode_return_mean"));
    if (mean.isDouble())
      s.lastScore = QCoreApplication::translate("cas::widgets::RunCatalog", "return %1").arg(QLocale().toString(mean.toDouble(), 'f', 1));
  }

  if (current) {
    for (const params::ParameterSpec& spec : params::ParameterRegistry::standard().all()) {
      const std::string ran = params::formatValue(recorded.parameters.get(spec.name));
      const std::string now = params::formatValue(current->parameters.get(spec.name));
      if (ran != now)
        s.differences << QCoreApplication::translate("cas::widgets::RunCatalog", "%1 = %2 (project: %3)").arg(QString::fromStdString(spec.name), QString::fromStdString(ran), QString::fromStdString(now));
    }
  }
  for (const QJsonObject& change : lastJsonLines(s.folder + QStringLiteral("/changes.jsonl"), 64 * 1024))
    s.differences << QCoreApplication::translate("cas::widgets::RunCatalog", "%1 = %2 live from iteration %3")
                         .arg(change.value(QLatin1String("parameter")).toString(), change.value(QLatin1String("to")).toString())
                         .arg(qint64(change.value(QLatin1String("iteration")).toDouble()));
  return s;
}

}  // namespace cas::widgets
