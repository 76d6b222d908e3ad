#include "widgets/tuning/parameter_table_model.hpp"

#include <QCoreApplication>
#include <QFont>

namespace cas::widgets {

static const std::vector<params::ParameterSpec>& specs() { return params::ParameterRegistry::standard().all(); }

ParameterTableModel::ParameterTableModel(QObject* parent) : QAbstractTableModel(parent) {}

int ParameterTableModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(specs().size());
}

int ParameterTableModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant ParameterTableModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
  const params::ParameterSpec& spec = specs()[static_cast<size_t>(index.row())];
  if (role == Qt::ToolTipRole && index.column() == Applies)
    return spec.live ? tr("Changed during a run, it applies at the next iteration; the change is logged with that iteration.")
                     : tr("Takes effect when a run starts; to change it, stop the run and start a new one.");
  const QString name = QString::fromStdString(spec.name);
  if (role == Qt::ToolTipRole && index.column() == Value && isOverride(name))
    return tr("Bold: %1's value differs from project.toml, which has %2. Reset goes back to it; Write to project.toml keeps %3.")
        .arg(runName_, QString::fromStdString(params::formatValue(projectValues_.get(spec.name))),
             QString::fromStdString(params::formatValue(values_.get(spec.name))));
  if (role == Qt::ToolTipRole) return QCoreApplication::translate("cas::Parameters", spec.help.c_str());
  if (role == Qt::FontRole && index.column() == Value && isOverride(name)) {
    QFont bold;
    bold.setBold(true);
    return bold;
  }
  if (role != Qt::DisplayRole && role != Qt::EditRole) return {};
  switch (index.column()) {
    case Name: return QString::fromStdString(spec.name);
    case Value: return QString::fromStdString(params::formatValue(values_.get(spec.name)));
    case Allowed:
      switch (spec.type) {
        case params::ParamType::Int:
          return QStringLiteral("[%1, %2]").arg(qint64(spec.min)).arg(qint64(spec.max));
        case params::ParamType::Float:
          return QStringLiteral("[%1, %2]").arg(spec.min).arg(spec.max);
        case params::ParamType::Bool: return QStringLiteral("true / false");
        case params::ParamType::Choice: {
          QStringList c;
          for (const std::string& s : spec.choices) c << QString::fromStdString(s);
          return c.join(QStringLiteral(" / "));
        }
      }
      return {};
    case Applies: {
      if (!spec.live) return liveEditing_ ? tr("on restart (fixed for this run)") : tr("on restart");
      if (requested_.contains(name)) return tr("live: %1 requested, applies at the next iteration").arg(requested_.value(name));
      if (appliedAt_.contains(name)) return tr("live: applied at iteration %1").arg(appliedAt_.value(name));
      return tr("live");
    }
  }
  return {};
}

QVariant ParameterTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return QAbstractTableModel::headerData(section, orientation, role);
  switch (section) {
    case Name: return tr("Parameter");
    case Value: return tr("Value");
    case Allowed: return tr("Allowed");
    case Applies: return tr("Applies");
  }
  return {};
}

Qt::ItemFlags ParameterTableModel::flags(const QModelIndex& index) const {
  Qt::ItemFlags f = QAbstractTableModel::flags(index);
  if (index.isValid() && index.column() == Value && liveEditing_ && specs()[size_t(index.row())].live) f |= Qt::ItemIsEditable;
  return f;
}

bool ParameterTableModel::setData(const QModelIndex& index, const QVariant& value, int role) {
  if (role != Qt::EditRole || !(flags(index) & Qt::ItemIsEditable)) return false;
  emit parameterEditRequested(QString::fromStdString(specs()[size_t(index.row())].name), value.toString().trimmed());
  return false;
}

void ParameterTableModel::setLiveEditing(bool on) {
  liveEditing_ = on;
  // A new run starts with no changes of its own; requests a finished run never applied are void.
  if (on) appliedAt_.clear();
  requested_.clear();
  if (rowCount() > 0) emit dataChanged(index(0, Value), index(rowCount() - 1, Applies));
}

int ParameterTableModel::rowOf(const std::string& name) const {
  for (int r = 0; r < rowCount(); ++r)
    if (specs()[size_t(r)].name == name) return r;
  return -1;
}

void ParameterTableModel::refreshRow(int row) {
  if (row >= 0) emit dataChanged(index(row, Value), index(row, Applies));
}

void ParameterTableModel::markRequested(const QString& name, const QString& value) {
  const params::ParameterSpec* spec = params::ParameterRegistry::standard().find(name.toStdString());
  std::string error;
  const auto v = spec ? params::parseValue(*spec, value.toStdString(), &error) : std::nullopt;
  if (!v) return;
  // Kept in the engine's spelling ("3.50" reads "3.5"), which is what the applied change reports.
  requested_.insert(name, QString::fromStdString(params::formatValue(*v)));
  refreshRow(rowOf(spec->name));
}

void ParameterTableModel::applyChange(const QString& name, const QString& value, qint64 iteration) {
  const params::ParameterSpec* spec = params::ParameterRegistry::standard().find(name.toStdString());
  if (!spec) return;
  std::string error;
  if (auto v = params::parseValue(*spec, value.toStdString(), &error)) values_.set(spec->name, *v);
  // Requests apply in order, so the newest request is still pending unless this is its value.
  if (requested_.value(name) == value) requested_.remove(name);
  appliedAt_.insert(name, iteration);
  refreshRow(rowOf(spec->name));
}

void ParameterTableModel::showParameters(const params::ParameterSet& values) {
  values_ = projectValues_ = values;
  runName_.clear();
  appliedAt_.clear();
  requested_.clear();
  if (rowCount() > 0) emit dataChanged(index(0, 0), index(rowCount() - 1, ColumnCount - 1));
}

void ParameterTableModel::setProjectValues(const params::ParameterSet& values) {
  projectValues_ = values;
  if (runName_.isEmpty()) values_ = values;
  if (rowCount() > 0) emit dataChanged(index(0, 0), index(rowCount() - 1, ColumnCount - 1));
}

void ParameterTableModel::showRunValues(const params::ParameterSet& values, const QString& runName) {
  values_ = values;
  runName_ = runName;
  if (rowCount() > 0) emit dataChanged(index(0, 0), index(rowCount() - 1, ColumnCount - 1));
}

bool ParameterTableModel::isOverride(const QString& name) const {
  const std::string key = name.toStdString();
  return params::ParameterRegistry::standard().find(key) &&
         params::formatValue(values_.get(key)) != params::formatValue(projectValues_.get(key));
}

QStringList ParameterTableModel::overrides() const {
  QStringList out;
  for (const params::ParameterSpec& spec : specs())
    if (isOverride(QString::fromStdString(spec.name))) out << QString::fromStdString(spec.name);
  return out;
}

bool ParameterTableModel::resetToProject(const QString& name) {
  const params::ParameterSpec* spec = params::ParameterRegistry::standard().find(name.toStdString());
  if (!spec || !isOverride(name)) return false;
  const QString projectValue = QString::fromStdString(params::formatValue(projectValues_.get(spec->name)));
  if (liveEditing_) {
    if (!spec->live) return false;  // fixed for the run
    emit parameterEditRequested(name, projectValue);
    return true;
  }
  values_.set(spec->name, projectValues_.get(spec->name));
  appliedAt_.remove(name);
  refreshRow(rowOf(spec->name));
  return true;
}

}  // namespace cas::widgets
