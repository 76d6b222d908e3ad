#pragma once
// The runs the Runs dock lists, one row each (run_catalog.hpp's RunSummary): the runs of the open
// project that the studio keeps under studioRunsRoot(), and the run folders opened from elsewhere
// (a CLI's runs/ttt), which are remembered across sessions (QSettings). Newest first.
// Columns: name (with a check box: drawn in Metrics beside the current run), start time,
// iterations, last score, the configuration's differences from the project, status.
// refresh() reads the folders again; a listing whose folders did not change is updated in place
// (dataChanged), otherwise the model is reset.
// Thread-safety: GUI thread only.
#include <QAbstractTableModel>
#include <QSet>
#include <QStringList>

#include <optional>
#include <vector>

#include "core/project/project.hpp"
#include "widgets/runs/run_catalog.hpp"

namespace cas::widgets {

class RunsModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column { Name, Started, Iterations, LastScore, Differences, Status, ColumnCount };
  static constexpr int FolderRole = Qt::UserRole;  // the run's folder, in every column

  explicit RunsModel(QObject* parent = nullptr);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override;
  Qt::ItemFlags flags(const QModelIndex& index) const override;
  // The Name column's check box: emits overlayToggled; the box follows setOverlaid.
  bool setData(const QModelIndex& index, const QVariant& value, int role) override;

  const RunSummary& run(int row) const { return runs_[size_t(row)]; }
  int rowOf(const QString& folder) const;  // -1 when not listed
  QStringList externalRuns() const { return external_; }
  // Where the studio's own runs are looked for (studioRunsRoot() unless a test moves it).
  void setRunsRoot(const QString& root) { root_ = root; }

 public slots:
  void setProject(const cas::project::Project& project);
  // Lists a run folder from elsewhere and remembers it; false with `problem` when it holds no run.
  bool addRunFolder(const QString& folder, QString* problem = nullptr);
  // Forgets a run folder from elsewhere (after it was deleted or renamed).
  void forgetRunFolder(const QString& folder);
  void setOverlaid(const QString& folder, bool overlaid);
  void setOverlaidRuns(const QStringList& folders);  // exactly these, as the Metrics dock draws them
  void refresh();
  // Reads one listed run again (the one being trained, after each iteration).
  void refreshRun(const QString& folder);

 signals:
  void overlayToggled(const QString& folder, bool overlaid);

 private:
  void saveExternalRuns() const;

  QString root_;
  std::optional<cas::project::Project> project_;
  QStringList external_;
  QSet<QString> overlaid_;
  std::vector<RunSummary> runs_;
};

}  // namespace cas::widgets
