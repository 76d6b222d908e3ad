#include "widgets/runs/runs_model.hpp"

#include <QDir>
#include <QFileInfo>
#include <QLocale>
#include <QSettings>

#include <algorithm>

namespace cas::widgets {
namespace {
const QString kExternalRunsKey = QStringLiteral("runs/external");
constexpr int kDifferencesShown = 2;  // in the cell; the tooltip lists them all
}  // namespace

RunsModel::RunsModel(QObject* parent) : QAbstractTableModel(parent), root_(studioRunsRoot()) {
  for (const QString& folder : QSettings().value(kExternalRunsKey).toStringList())
    if (!folder.isEmpty() && !external_.contains(folder)) external_ << folder;
}

int RunsModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : int(runs_.size()); }

int RunsModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant RunsModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || !checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
  const RunSummary& r = runs_[size_t(index.row())];
  if (role == FolderRole) return r.folder;
  if (role == Qt::CheckStateRole && index.column() == Name)
    return r.status == RunSummary::Status::Unreadable ? QVariant() : QVariant(int(overlaid_.contains(r.folder) ? Qt::Checked : Qt::Unchecked));
  if (role == Qt::ToolTipRole) {
    switch (index.column()) {
      case Name:
        return tr("%1\nTick the box to draw this run's metrics in the Metrics dock beside the current run.").arg(QDir::toNativeSeparators(r.folder));
      case Differences:
        return r.differences.isEmpty() ? tr("Trained with the project's current values.")
                                       : tr("How this run's configuration differs from the open project:\n%1").arg(r.differences.join(QLatin1Char('\n')));
      case Status:
        switch (r.status) {
          case RunSummary::Status::Running: return tr("Process %1 is training this run now.").arg(r.pid);
          case RunSummary::Status::Stopped:
            return r.hasCheckpoint ? tr("Not running; it can be resumed from its newest checkpoint.")
                                   : tr("Not running, and it has no checkpoint to resume from.");
          case RunSummary::Status::Crashed:
            return tr("Process %1, which trained this run, ended without stopping it (killed or crashed). Resume continues "
                      "from the newest valid checkpoint.")
                .arg(r.pid);
          case RunSummary::Status::Unreadable: return r.problem;
        }
        return {};
      default: return {};
    }
  }
  if (role == Qt::TextAlignmentRole && index.column() == Iterations) return int(Qt::AlignRight | Qt::AlignVCenter);
  if (role != Qt::DisplayRole) return {};
  switch (index.column()) {
    case Name: return r.name;
    case Started: return QLocale().toString(r.started, QLocale::ShortFormat);
    case Iterations: return r.status == RunSummary::Status::Unreadable ? QVariant() : QVariant(r.iterations);
    case LastScore: return r.lastScore;
    case Differences: {
      if (r.status == RunSummary::Status::Unreadable) return {};
      if (r.differences.isEmpty()) return tr("none");
      QStringList shown = r.differences.mid(0, kDifferencesShown);
      if (r.differences.size() > kDifferencesShown) shown << tr("%n more", nullptr, int(r.differences.size() - kDifferencesShown));
      return shown.join(QStringLiteral("; "));
    }
    case Status:
      switch (r.status) {
        case RunSummary::Status::Running: return tr("running");
        case RunSummary::Status::Stopped: return tr("stopped");
        case RunSummary::Status::Crashed: return tr("crashed");
        case RunSummary::Status::Unreadable: return tr("unreadable");
      }
      return {};
  }
  return {};
}

QVariant RunsModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return QAbstractTableModel::headerData(section, orientation, role);
  switch (section) {
    case Name: return tr("Run");
    case Started: return tr("Started");
    case Iterations: return tr("Iterations");
    case LastScore: return tr("Last score");
    case Differences: return tr("Differs from project");
    case Status: return tr("Status");
  }
  return {};
}

Qt::ItemFlags RunsModel::flags(const QModelIndex& index) const {
  Qt::ItemFlags f = QAbstractTableModel::flags(index);
  if (index.isValid() && checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid) && index.column() == Name &&
      runs_[size_t(index.row())].status != RunSummary::Status::Unreadable)
    f |= Qt::ItemIsUserCheckable;
  return f;
}

bool RunsModel::setData(const QModelIndex& index, const QVariant& value, int role) {
  if (role != Qt::CheckStateRole || !(flags(index) & Qt::ItemIsUserCheckable)) return false;
  // The box follows the Metrics dock (setOverlaid), which may refuse a run without metrics.
  emit overlayToggled(runs_[size_t(index.row())].folder, value.toInt() == Qt::Checked);
  return true;
}

int RunsModel::rowOf(const QString& folder) const {
  const QString clean = QDir::cleanPath(QFileInfo(folder).absoluteFilePath());
  for (size_t i = 0; i < runs_.size(); ++i)
    if (runs_[i].folder == clean) return int(i);
  return -1;
}

void RunsModel::setProject(const project::Project& project) {
  project_ = project;
  refresh();
}

bool RunsModel::addRunFolder(const QString& folder, QString* problem) {
  const QString clean = QDir::cleanPath(QFileInfo(folder).absoluteFilePath());
  const RunSummary run = readRunSummary(clean, project_ ? &*project_ : nullptr);
  if (run.status == RunSummary::Status::Unreadable) {
    if (problem) *problem = run.problem;
    return false;
  }
  if (!external_.contains(clean) && !QDir::cleanPath(QFileInfo(clean).absolutePath()).startsWith(QDir::cleanPath(root_))) {
    external_ << clean;
    saveExternalRuns();
  }
  refresh();
  return true;
}

void RunsModel::forgetRunFolder(const QString& folder) {
  if (external_.removeAll(QDir::cleanPath(QFileInfo(folder).absoluteFilePath())) > 0) saveExternalRuns();
  overlaid_.remove(folder);
}

void RunsModel::setOverlaid(const QString& folder, bool overlaid) {
  if (overlaid) overlaid_.insert(folder);
  else overlaid_.remove(folder);
  if (const int row = rowOf(folder); row >= 0) emit dataChanged(index(row, Name), index(row, Name), {Qt::CheckStateRole});
}

void RunsModel::setOverlaidRuns(const QStringList& folders) {
  overlaid_ = QSet<QString>(folders.begin(), folders.end());
  if (!runs_.empty()) emit dataChanged(index(0, Name), index(rowCount() - 1, Name), {Qt::CheckStateRole});
}

void RunsModel::saveExternalRuns() const { QSettings().setValue(kExternalRunsKey, external_); }

void RunsModel::refreshRun(const QString& folder) {
  const int row = rowOf(folder);
  if (row < 0) return;
  runs_[size_t(row)] = readRunSummary(runs_[size_t(row)].folder, project_ ? &*project_ : nullptr);
  emit dataChanged(index(row, 0), index(row, ColumnCount - 1));
}

void RunsModel::refresh() {
  QStringList folders = project_ ? runFoldersUnder(root_) : QStringList();
  for (const QString& folder : external_)
    if (!folders.contains(folder)) folders << folder;
  std::vector<RunSummary> fresh;
  for (const QString& folder : folders) {
    RunSummary run = readRunSummary(folder, project_ ? &*project_ : nullptr);
    // The studio's folder holds the runs of every project: only this project's are listed. A run
    // opened from elsewhere stays listed, whichever project it trains (or if it became unreadable).
    const bool external = external_.contains(folder);
    if (!external && project_ && !runBelongsTo(run, QString::fromStdString(project_->directory.string()))) continue;
    if (!external && run.status == RunSummary::Status::Unreadable) continue;
    fresh.push_back(std::move(run));
  }
  std::stable_sort(fresh.begin(), fresh.end(), [](const RunSummary& a, const RunSummary& b) { return a.started > b.started; });
  const bool sameRows = fresh.size() == runs_.size() &&
                        std::equal(fresh.begin(), fresh.end(), runs_.begin(), [](const RunSummary& a, const RunSummary& b) { return a.folder == b.folder; });
  if (sameRows) {
    runs_ = std::move(fresh);
    if (!runs_.empty()) emit dataChanged(index(0, 0), index(rowCount() - 1, ColumnCount - 1));
    return;
  }
  beginResetModel();
  runs_ = std::move(fresh);
  endResetModel();
}

}  // namespace cas::widgets
