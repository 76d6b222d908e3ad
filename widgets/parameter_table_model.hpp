#pragma once
// A table of every tuning parameter: name, value, allowed values, when it applies, with the help
// text as tooltip. Rows follow the registry's declaration order. During a run the live parameters'
// values are editable; an edit is only a request, and the "Applies" column follows it: "requested"
// until the engine applies it, then "applied at iteration N". Restart-only parameters say that
// they are fixed for the run.
// Thread-safety: GUI thread only.
#include <QAbstractTableModel>
#include <QHash>

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

 public slots:
  void showParameters(const cas::params::ParameterSet& values);
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

  cas::params::ParameterSet values_;
  bool liveEditing_ = false;
  // Per live parameter changed in the current run: what the Applies column says about it.
  QHash<QString, QString> requested_;   // value requested, not applied yet
  QHash<QString, qint64> appliedAt_;    // iteration of the last applied change
};

}  // namespace cas::widgets
