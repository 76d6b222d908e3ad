#pragma once
// A read-only table of every tuning parameter: name, value, allowed values, when it applies,
// with the help text as tooltip. Rows follow the registry's declaration order.
// Thread-safety: GUI thread only.
#include <QAbstractTableModel>

#include "core/engine/parameters.hpp"

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
  const cas::engine::ParameterSet& values() const { return values_; }

 public slots:
  void showParameters(const cas::engine::ParameterSet& values);
  void setLiveEditing(bool on);  // live parameters become editable during a run
  void applyChange(const QString& name, const QString& value);

 signals:
  void parameterEditRequested(const QString& name, const QString& value);

 private:
  cas::engine::ParameterSet values_;
  bool liveEditing_ = false;
};

}  // namespace cas::widgets
