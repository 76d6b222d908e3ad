#include "widgets/runs/runs_dock.hpp"

#include <QAction>
#include <QPushButton>
#include <QDesktopServices>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QHeaderView>
#include <QInputDialog>
#include <QLabel>
#include <QMenu>
#include <QMessageBox>
#include <QTableView>
#include <QSize>
#include <QToolBar>
#include <QUrl>
#include <QVBoxLayout>

#include <functional>

#include "core/engine/run_lock.hpp"
#include "widgets/runs/runs_model.hpp"

namespace cas::widgets {

RunsDock::RunsDock(QWidget* parent) : QWidget(parent), model_(new RunsModel(this)), table_(new QTableView), empty_(new QLabel) {
  createControls();
  createLayout();
  connectSignals();
  updateActions();
}

// The tool bar's actions, each connected as it is made, which the table's context menu offers
// too; the table and the line shown instead of it when there are no runs.
void RunsDock::createControls() {
  toolBar_ = new QToolBar;
  toolBar_->setObjectName(QStringLiteral("runsToolBar"));
  toolBar_->setToolButtonStyle(Qt::ToolButtonTextOnly);
  auto action = [this](const QString& name, const QString& text, const QString& tip, std::function<void()> run) {
    auto* a = new QAction(text, this);
    a->setObjectName(name);
    a->setToolTip(tip);
    toolBar_->addAction(a);
    connect(a, &QAction::triggered, this, std::move(run));
    return a;
  };
  metricsAction_ = action(QStringLiteral("runMetricsAction"), tr("Metrics"),
                          tr("Shows the selected run's metrics in the Metrics dock. Tick the boxes beside the names to draw "
                             "several runs dashed beside it."),
                          [this] { showSelectedMetrics(); });
  resumeAction_ = action(QStringLiteral("runResumeAction"), tr("Resume"),
                         tr("Trains the selected run on from its newest valid checkpoint, with the project file and policy it was "
                            "trained with."),
                         [this] { resumeSelected(); });
  playAction_ = action(QStringLiteral("runPlayAction"), tr("Play"), tr("Loads the selected run on the Board to play against it."),
                       [this] { playSelected(); });
  analyseAction_ = action(QStringLiteral("runAnalyseAction"), tr("Analyse"),
                          tr("Loads the selected run on the Board in Set up mode, to analyse positions with it."), [this] { analyseSelected(); });
  toolBar_->addSeparator();
  renameAction_ = action(QStringLiteral("runRenameAction"), tr("Rename..."), tr("Renames the selected run's folder."), [this] { renameSelected(); });
  deleteAction_ = action(QStringLiteral("runDeleteAction"), tr("Delete..."),
                         tr("Deletes the selected run's folder (checkpoints, metrics, logs) after asking."), [this] { deleteSelected(); });
  openFolderAction_ = action(QStringLiteral("runOpenFolderAction"), tr("Open Folder"), tr("Opens the selected run's folder in the file manager."),
                             [this] { openSelectedFolder(); });
  toolBar_->addSeparator();
  addAction_ = action(QStringLiteral("runAddAction"), tr("Add Run Folder..."),
                      tr("Lists a run folder from elsewhere (such as one written by cuda-agent train --out)."), [this] { chooseRunFolder(); });
  refreshAction_ = action(QStringLiteral("runRefreshAction"), tr("Refresh"), tr("Reads the run folders again."), [this] { refresh(); });

  table_->setObjectName(QStringLiteral("runsTable"));
  table_->setModel(model_);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::SingleSelection);
  table_->verticalHeader()->hide();
  table_->verticalHeader()->setDefaultSectionSize(table_->fontMetrics().height() + 6);
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  table_->horizontalHeader()->setStretchLastSection(true);
  table_->setContextMenuPolicy(Qt::ActionsContextMenu);
  table_->addActions({metricsAction_, resumeAction_, playAction_, analyseAction_, renameAction_, deleteAction_, openFolderAction_});
  empty_->setObjectName(QStringLiteral("runsEmpty"));
  empty_->setWordWrap(true);
  empty_->setText(tr("No runs of this project yet. Run > Train starts one; Add Run Folder... lists a run trained elsewhere."));
}

void RunsDock::createLayout() {
  // The dock shares the Log's tab group, whose least height is the larger of the two: a table
  // that can shrink to a line keeps the default Log a few lines high (widgets/dock_layout.hpp).
  table_->setMinimumHeight(table_->fontMetrics().height() + 8);
  toolBar_->setIconSize(QSize(16, 16));
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(2, 2, 2, 2);
  layout->setSpacing(2);
  layout->addWidget(toolBar_);
  layout->addWidget(empty_);
  layout->addWidget(table_, 1);
}

// A double-click shows the run's metrics; the model's overlay ticks go out; the actions follow the
// selection and the runs' states.
void RunsDock::connectSignals() {
  connect(table_, &QTableView::doubleClicked, this, [this] { showSelectedMetrics(); });
  connect(model_, &RunsModel::overlayToggled, this, &RunsDock::overlayToggled);
  connect(model_, &QAbstractItemModel::modelReset, this, &RunsDock::updateActions);
  connect(model_, &QAbstractItemModel::dataChanged, this, &RunsDock::updateActions);
  connect(table_->selectionModel(), &QItemSelectionModel::selectionChanged, this, &RunsDock::updateActions);
}

QString RunsDock::selectedRun() const {
  const QModelIndexList rows = table_->selectionModel()->selectedRows();
  return rows.isEmpty() ? QString() : rows.first().data(RunsModel::FolderRole).toString();
}

void RunsDock::selectRun(const QString& folder) {
  const int row = model_->rowOf(folder);
  if (row >= 0) table_->selectRow(row);
}

void RunsDock::setTraining(bool training) {
  training_ = training;
  updateActions();
}

void RunsDock::updateActions() {
  const int row = model_->rowOf(selectedRun());
  const RunSummary* run = row >= 0 ? &model_->run(row) : nullptr;
  const bool readable = run && run->status != RunSummary::Status::Unreadable;
  const bool writing = run && run->status == RunSummary::Status::Running;
  metricsAction_->setEnabled(readable && !training_);
  resumeAction_->setEnabled(readable && !writing && !training_ && run->hasCheckpoint);
  playAction_->setEnabled(readable && run->hasCheckpoint);
  // A single-agent run has no positions to set up: Play records an episode instead.
  analyseAction_->setEnabled(readable && run->hasCheckpoint && !run->singleAgent);
  const bool episodic = run && run->singleAgent;
  playAction_->setToolTip(episodic ? tr("Records an episode of the selected run in the Episode dock.")
                                   : tr("Loads the selected run on the Board to play against it."));
  analyseAction_->setToolTip(episodic ? tr("Analyse sets up positions on the Board: for board-game runs only.")
                                      : tr("Loads the selected run on the Board in Set up mode, to analyse positions with it."));
  renameAction_->setEnabled(readable && !writing);
  deleteAction_->setEnabled(run && !writing);
  openFolderAction_->setEnabled(run && QFileInfo(run->folder).isDir());
  empty_->setVisible(model_->rowCount() == 0);
}

void RunsDock::refresh() {
  const QString selected = selectedRun();
  model_->refresh();
  if (!selected.isEmpty()) selectRun(selected);
  updateActions();
}

void RunsDock::showSelectedMetrics() {
  if (metricsAction_->isEnabled()) emit metricsRequested(selectedRun());
}

void RunsDock::resumeSelected() {
  if (resumeAction_->isEnabled()) emit resumeRequested(selectedRun());
}

void RunsDock::playSelected() {
  if (playAction_->isEnabled()) emit playRequested(selectedRun());
}

void RunsDock::analyseSelected() {
  if (analyseAction_->isEnabled()) emit analyseRequested(selectedRun());
}

qint64 RunsDock::trainingProcess(const QString& folder) const {
  // Read again now: the listing may be older than the run's state.
  const engine::RunLockState lock = engine::readRunLockState(folder.toStdString());
  return lock.kind == engine::RunLockState::Held ? lock.pid : 0;
}

bool RunsDock::renameSelected() {
  const QString folder = selectedRun();
  if (folder.isEmpty() || !renameAction_->isEnabled()) return false;
  bool ok = false;
  const QString name = QInputDialog::getText(this, tr("Rename Run"), tr("New name of the run folder:"), QLineEdit::Normal,
                                             QFileInfo(folder).fileName(), &ok);
  return ok && renameRun(folder, name.trimmed());
}

bool RunsDock::renameRun(const QString& folder, const QString& newName) {
  const QString target = QDir(QFileInfo(folder).absolutePath()).filePath(newName);
  QString problem;
  if (const qint64 pid = trainingProcess(folder))
    problem = tr("%1 was not renamed: process %2 is training it now. Stop that run first.").arg(QDir::toNativeSeparators(folder)).arg(pid);
  else {
    if (newName.isEmpty() || newName == QLatin1String(".") || newName == QLatin1String("..") || newName.contains(QLatin1Char('/')) ||
        newName.contains(QLatin1Char('\\')))
      problem = tr("%1 was not renamed: \"%2\" is not a folder name; use letters, digits, '-' or '_', without '/'.")
                    .arg(QDir::toNativeSeparators(folder), newName);
    else if (QFileInfo::exists(target))
      problem = tr("%1 was not renamed: %2 already exists; choose another name.").arg(QDir::toNativeSeparators(folder), QDir::toNativeSeparators(target));
    else if (!QDir().rename(folder, target))
      problem = tr("%1 could not be renamed to %2; check that its parent folder is writable.")
                    .arg(QDir::toNativeSeparators(folder), QDir::toNativeSeparators(target));
  }
  if (!problem.isEmpty()) {
    emit messagePosted(LogPanel::Level::Error, problem);
    return false;
  }
  const bool external = model_->externalRuns().contains(folder);
  const bool overlaid = model_->data(model_->index(model_->rowOf(folder), RunsModel::Name), Qt::CheckStateRole).toInt() == Qt::Checked;
  if (overlaid) emit overlayToggled(folder, false);
  model_->forgetRunFolder(folder);
  emit runRemoved(folder);
  if (external) model_->addRunFolder(target);
  model_->refresh();
  if (overlaid) emit overlayToggled(target, true);
  selectRun(target);
  emit messagePosted(LogPanel::Level::Info, tr("Renamed the run %1 to %2.").arg(QDir::toNativeSeparators(folder), newName));
  return true;
}

bool RunsDock::deleteSelected() {
  const QString folder = selectedRun();
  if (folder.isEmpty() || !deleteAction_->isEnabled()) return false;
  if (const qint64 pid = trainingProcess(folder)) {
    emit messagePosted(LogPanel::Level::Error,
                       tr("%1 was not deleted: process %2 is training it now. Stop that run first.").arg(QDir::toNativeSeparators(folder)).arg(pid));
    return false;
  }
  QMessageBox confirm(QMessageBox::Warning, tr("Delete Run"),
                      tr("Delete the run %1?\n\nIts folder, with its checkpoints, metrics and logs, is removed from the disk; this "
                         "cannot be undone.\n\n%2")
                          .arg(QFileInfo(folder).fileName(), QDir::toNativeSeparators(folder)),
                      QMessageBox::Cancel, this);
  confirm.setObjectName(QStringLiteral("deleteRunConfirmation"));
  QAbstractButton* remove = confirm.addButton(tr("Delete"), QMessageBox::DestructiveRole);
  remove->setObjectName(QStringLiteral("confirmDelete"));
  confirm.setDefaultButton(QMessageBox::Cancel);
  confirm.exec();
  if (confirm.clickedButton() != remove) return false;
  const bool overlaid = model_->data(model_->index(model_->rowOf(folder), RunsModel::Name), Qt::CheckStateRole).toInt() == Qt::Checked;
  if (overlaid) emit overlayToggled(folder, false);
  // Only a folder that holds a run is removed whole; one already gone is only forgotten.
  if (QFileInfo(folder + QStringLiteral("/config.toml")).isFile() && !QDir(folder).removeRecursively()) {
    emit messagePosted(LogPanel::Level::Error, tr("%1 could not be deleted completely; what is left is in that folder.").arg(QDir::toNativeSeparators(folder)));
    refresh();
    return false;
  }
  model_->forgetRunFolder(folder);
  emit runRemoved(folder);
  refresh();
  emit messagePosted(LogPanel::Level::Info, tr("Deleted the run %1.").arg(QDir::toNativeSeparators(folder)));
  return true;
}

void RunsDock::openSelectedFolder() {
  const QString folder = selectedRun();
  if (folder.isEmpty()) return;
  if (!QDesktopServices::openUrl(QUrl::fromLocalFile(folder)))
    emit messagePosted(LogPanel::Level::Error,
                       tr("No file manager could open %1; open it by hand.").arg(QDir::toNativeSeparators(folder)));
}

void RunsDock::chooseRunFolder() {
  const QString folder = QFileDialog::getExistingDirectory(this, tr("Add Run Folder"), QDir::currentPath());
  if (folder.isEmpty()) return;
  QString problem;
  if (!model_->addRunFolder(folder, &problem)) {
    emit messagePosted(LogPanel::Level::Error, tr("%1 was not added to the runs: %2").arg(QDir::toNativeSeparators(folder), problem));
    return;
  }
  selectRun(folder);
}

}  // namespace cas::widgets
