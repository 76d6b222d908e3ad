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

 public slots:
  void showParameters(const cas::engine::ParameterSet& values);

 private:
  cas::engine::ParameterSet values_;
};

}  // namespace cas::widgets
