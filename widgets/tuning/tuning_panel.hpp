#pragma once
// The Tuning dock's contents: where the values come from (project.toml, or a run's values with
// its overrides in bold), the parameter table (parameter_table_model.hpp), Reset and Write to
// project.toml for the selected overrides, and the list of live changes made in the current run
// (a resumed run's list starts with the changes it logged before, from its changes.jsonl).
// Write to project.toml edits the file in place (core/project/project_file_edit.hpp), atomically,
// and refuses while the editor holds unsaved changes to it; projectFileWritten then lets the
// window read the project again.
// Thread-safety: GUI thread only.
#include <QStringList>
#include <QWidget>

#include "widgets/log_panel.hpp"
#include "widgets/metrics/run_metrics.hpp"

class QLabel;
class QListWidget;
class QPushButton;
class QTableView;

namespace cas::widgets {

class ParameterTableModel;
class PdlEditor;

class TuningPanel : public QWidget {
  Q_OBJECT
 public:
  TuningPanel(ParameterTableModel* model, PdlEditor* editor, QWidget* parent = nullptr);

  QTableView* table() const { return table_; }
  QListWidget* changeList() const { return changes_; }
  QString sourceText() const;  // the note saying where the values come from
  QStringList selectedOverrides() const;
  void setProjectFile(const QString& path) { projectFile_ = path; }
  // How a change reads in the list and in the Log.
  static QString describeChange(const MetricChange& change);
  // Shows the parameters the project's algorithm reads and hides the others: PPO reads its own
  // section, the checkpoint interval and the runtime's; AlphaZero every section but PPO's.
  void showAlgorithm(const std::string& algorithm);
  static bool readBy(const std::string& algorithm, const std::string& parameter);

 public slots:
  // The list of "Changes in this run" for a run that starts: its earlier changes when resumed.
  void showChanges(const std::vector<cas::widgets::MetricChange>& changes);
  void addChange(const cas::widgets::MetricChange& change);

  void updateSource();
  // Back to project.toml's values (during a run, live parameters are requested; see
  // ParameterTableModel::resetToProject).
  void resetOverrides(const QStringList& names);
  // Writes the values shown for `names` into project.toml; returns whether it was written.
  bool writeToProject(const QStringList& names);

 signals:
  void projectFileWritten(const QString& path);
  void messagePosted(cas::widgets::LogPanel::Level level, const QString& text);

 private:
  void updateButtons();

  ParameterTableModel* model_;
  PdlEditor* editor_;
  QString projectFile_;
  QLabel* source_;
  QTableView* table_;
  QPushButton *reset_, *write_;
  QListWidget* changes_;
};

}  // namespace cas::widgets
