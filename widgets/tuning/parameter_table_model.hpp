#pragma once
// A table of every tuning parameter: name, value, allowed values, when it applies, with the help
// text as tooltip. Rows follow the registry's declaration order. During a run the live parameters'
// values are editable; an edit is only a request, and the "Applies" column follows it: "requested"
// until the engine applies it, then "applied at iteration N". Restart-only parameters say that
// they are fixed for the run.
// Provenance: the model holds project.toml's values and the values shown. They are the same until a
// run starts; then the values shown are the run's (its start values, then its live changes), and a
// value that differs from project.toml's is an override of that run: bold, with a tooltip saying
// so. Overrides stay in view after the run ends, until reset or until the next run, which starts
// from project.toml again.
// Thread-safety: GUI thread only.
#include <QAbstractTableModel>
#include <QHash>
#include <QStringList>

#include "core/params/parameters.hpp"

namespace cas::widgets {

class ParameterTableModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column { Name, Value, Allowed, Applies, ColumnCount };
  explicit ParameterTableModel(QObject* parent = nullptr);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override;
  Qt::ItemFlags flags(const QModelIndex& index) const override;
  // Edits do not change the model: they are requested (parameterEditRequested) and shown once
  // the engine applies them (applyChange).
  bool setData(const QModelIndex& index, const QVariant& value, int role) override;
  const cas::params::ParameterSet& values() const { return values_; }
  const cas::params::ParameterSet& projectValues() const { return projectValues_; }
  // The parameters whose value shown differs from project.toml's, in registry order.
  QStringList overrides() const;
  bool isOverride(const QString& name) const;
  QString runName() const { return runName_; }  // the run whose values are shown; empty: project.toml's

 public slots:
  // A project was opened: its values, and nothing overridden.
  void showParameters(const cas::params::ParameterSet& values);
  // project.toml was read again: the values overrides are measured against. Without a run in view
  // the values shown follow.
  void setProjectValues(const cas::params::ParameterSet& values);
  // A run started (or resumed) with `values`; they are shown as that run's.
  void showRunValues(const cas::params::ParameterSet& values, const QString& runName);
  // Back to project.toml's value. During a run a live parameter is requested (parameterEditRequested)
  // and one fixed for the run is refused (false); without a run the value shown is reset at once.
  bool resetToProject(const QString& name);
  void setLiveEditing(bool on);  // live parameters become editable during a run
  // The engine accepted a request for `value`; it applies at the next iteration.
  void markRequested(const QString& name, const QString& value);
  // The engine applied `value`: iteration `iteration` is the first that runs with it.
  void applyChange(const QString& name, const QString& value, qint64 iteration);

 signals:
  void parameterEditRequested(const QString& name, const QString& value);

 private:
  int rowOf(const std::string& name) const;
  void refreshRow(int row);

  cas::params::ParameterSet values_, projectValues_;
  QString runName_;
  bool liveEditing_ = false;
  // Per live parameter changed in the current run: what the Applies column says about it.
  QHash<QString, QString> requested_;   // value requested, not applied yet
  QHash<QString, qint64> appliedAt_;    // iteration of the last applied change
};

}  // namespace cas::widgets
