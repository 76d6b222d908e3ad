#include "widgets/tuning/tuning_panel.hpp"

#include <algorithm>
#include <set>

#include <QDir>
#include <QFileInfo>
#include <QHeaderView>
#include <QLabel>
#include <QListWidget>
#include <QPushButton>
#include <QTableView>
#include <QVBoxLayout>

#include "core/project/project_file_edit.hpp"
#include "core/support/atomic_file.hpp"
#include "widgets/editor/pdl_editor.hpp"
#include "widgets/tuning/parameter_table_model.hpp"

namespace cas::widgets {

TuningPanel::TuningPanel(ParameterTableModel* model, PdlEditor* editor, QWidget* parent)
    : QWidget(parent),
      model_(model),
      editor_(editor),
      source_(new QLabel),
      table_(new QTableView),
      reset_(new QPushButton(tr("Reset"))),
      write_(new QPushButton(tr("Write to project.toml"))),
      changes_(new QListWidget) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  source_->setObjectName(QStringLiteral("tuningSource"));
  source_->setWordWrap(true);
  table_->setObjectName(QStringLiteral("parameterTable"));
  table_->setModel(model_);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::ExtendedSelection);
  table_->verticalHeader()->hide();
  table_->verticalHeader()->setDefaultSectionSize(table_->fontMetrics().height() + 6);
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  // The names are long ("search.dirichlet_fraction") and the side column narrow at 1280x800: the
  // name column starts at most 112 px wide, cut at the left, where the section is (a drag widens
  // it), so that the values stay in view.
  table_->setTextElideMode(Qt::ElideLeft);
  table_->horizontalHeader()->setSectionResizeMode(ParameterTableModel::Name, QHeaderView::Interactive);
  auto fitNames = [this] {
    constexpr int kNameWidth = 112;
    table_->resizeColumnToContents(ParameterTableModel::Name);
    table_->setColumnWidth(ParameterTableModel::Name, std::min(table_->columnWidth(ParameterTableModel::Name), kNameWidth));
  };
  fitNames();
  connect(model_, &QAbstractItemModel::modelReset, this, fitNames);
  reset_->setObjectName(QStringLiteral("resetOverrides"));
  reset_->setToolTip(tr("Sets the selected bold values back to project.toml's. During a run a live parameter changes at the next "
                        "iteration; one fixed for the run keeps its value until the run ends."));
  write_->setObjectName(QStringLiteral("writeOverrides"));
  write_->setToolTip(tr("Writes the selected bold values into project.toml, so the next run starts with them."));
  // One above the other: side by side they would set the side column's least width, which at
  // 1280x800 is taken from the editor's 80 columns (widgets/dock_layout.hpp).
  auto* buttons = new QVBoxLayout;
  buttons->addWidget(reset_);
  buttons->addWidget(write_);
  changes_->setObjectName(QStringLiteral("changeLog"));
  layout->addWidget(source_);
  layout->addWidget(table_, 3);
  layout->addLayout(buttons);
  layout->addWidget(new QLabel(tr("Changes in this run:")));
  layout->addWidget(changes_, 1);

  connect(reset_, &QPushButton::clicked, this, [this] { resetOverrides(selectedOverrides()); });
  connect(write_, &QPushButton::clicked, this, [this] { writeToProject(selectedOverrides()); });
  connect(table_->selectionModel(), &QItemSelectionModel::selectionChanged, this, &TuningPanel::updateButtons);
  connect(model_, &QAbstractItemModel::dataChanged, this, &TuningPanel::updateSource);
  updateSource();
}

QString TuningPanel::sourceText() const { return source_->text(); }

QString TuningPanel::describeChange(const MetricChange& change) {
  return tr("%1 = %2 (was %3), applied at iteration %4").arg(change.parameter, change.to, change.from).arg(change.iteration);
}

void TuningPanel::showChanges(const std::vector<MetricChange>& changes) {
  changes_->clear();
  for (const MetricChange& change : changes) addChange(change);
}

void TuningPanel::addChange(const MetricChange& change) { changes_->addItem(describeChange(change)); }

void TuningPanel::updateSource() {
  const QStringList overrides = model_->overrides();
  if (model_->runName().isEmpty())
    source_->setText(tr("Values from project.toml; a run starts with them. During a run, double-click a live parameter's value to "
                        "change it; it applies at the next iteration."));
  else if (overrides.isEmpty())
    source_->setText(tr("Values of the run %1, the same as project.toml's. During a run, double-click a live parameter's value to "
                        "change it; it applies at the next iteration.")
                         .arg(model_->runName()));
  else
    source_->setText(tr("Values of the run %1. <b>Bold</b>: differs from project.toml (%n value(s)); select them to Reset them or "
                        "to Write them to project.toml. The next run starts from project.toml.",
                        nullptr, int(overrides.size()))
                         .arg(model_->runName().toHtmlEscaped()));
  updateButtons();
}

QStringList TuningPanel::selectedOverrides() const {
  QStringList out;
  for (const QModelIndex& row : table_->selectionModel()->selectedRows()) {
    const QString name = model_->index(row.row(), ParameterTableModel::Name).data().toString();
    if (model_->isOverride(name)) out << name;
  }
  return out;
}

void TuningPanel::updateButtons() {
  const bool any = !selectedOverrides().isEmpty();
  reset_->setEnabled(any);
  write_->setEnabled(any && !projectFile_.isEmpty());
}

void TuningPanel::resetOverrides(const QStringList& names) {
  for (const QString& name : names)
    if (!model_->resetToProject(name) && model_->isOverride(name))
      emit messagePosted(LogPanel::Level::Warning,
                         tr("%1 is fixed for the running run; it goes back to project.toml's value when the next run starts.").arg(name));
  updateSource();
}

bool TuningPanel::writeToProject(const QStringList& names) {
  if (names.isEmpty() || projectFile_.isEmpty()) return false;
  const QString file = QDir::toNativeSeparators(projectFile_);
  if (editor_ && QFileInfo(editor_->currentFile()) == QFileInfo(projectFile_) && editor_->isModified()) {
    emit messagePosted(LogPanel::Level::Error,
                       tr("%1 was not written: the Policy editor holds unsaved changes to it. Save or undo them, then write again.").arg(file));
    return false;
  }
  std::string problem;
  const auto text = readFile(projectFile_.toStdString(), kProjectFileLimit, &problem);
  std::vector<project::ParameterAssignment> assignments;
  for (const QString& name : names) assignments.push_back({name.toStdString(), model_->values().get(name.toStdString())});
  const auto edited = text ? project::withParameterValues(*text, assignments, &problem) : std::nullopt;
  if (!edited || !writeFileAtomic(projectFile_.toStdString(), *edited, &problem)) {
    emit messagePosted(LogPanel::Level::Error, tr("%1 was not written: %2").arg(file, QString::fromStdString(problem)));
    return false;
  }
  QStringList written;
  for (const auto& a : assignments) written << QStringLiteral("%1 = %2").arg(QString::fromStdString(a.name), QString::fromStdString(params::formatValue(a.value)));
  emit messagePosted(LogPanel::Level::Info, tr("Wrote %1 to %2.").arg(written.join(QStringLiteral(", ")), file));
  // The editor shows the file as it is now, when it has it open (and unmodified, checked above).
  if (editor_ && QFileInfo(editor_->currentFile()) == QFileInfo(projectFile_)) editor_->openFile(projectFile_);
  emit projectFileWritten(projectFile_);
  return true;
}

bool TuningPanel::readBy(const std::string& algorithm, const std::string& parameter) {
  auto in = [&](const char* section) { return parameter.rfind(section, 0) == 0; };
  if (algorithm == "ppo") return in("ppo.") || parameter == "train.checkpoint_every" || in("runtime.");
  if (algorithm == "muzero") {  // its search, [train]'s optimizer, batch and replay (docs/project-format.md)
    static const std::set<std::string> unread = {"train.parallel_games", "train.games_per_iteration", "train.steps_per_iteration",
                                                 "train.overlap", "train.eval_every", "train.eval_games", "search.temperature",
                                                 "search.temperature_moves", "search.subtree_reuse", "search.virtual_loss"};
    return (in("muzero.") || in("search.") || in("train.") || in("runtime.")) && !unread.contains(parameter);
  }
  return !in("ppo.") && !in("muzero.");
}

void TuningPanel::showAlgorithm(const std::string& algorithm) {
  for (int row = 0; row < model_->rowCount(); ++row) {
    const std::string name = model_->index(row, ParameterTableModel::Name).data(Qt::EditRole).toString().toStdString();
    table_->setRowHidden(row, !readBy(algorithm, name));
  }
}

}  // namespace cas::widgets
