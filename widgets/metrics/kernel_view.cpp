#include "widgets/metrics/kernel_view.hpp"

#include <QCheckBox>
#include <QCoreApplication>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QStackedWidget>
#include <QTableView>
#include <QVBoxLayout>

#include <algorithm>
#include <qcustomplot.h>

#include "widgets/metrics/backend_status.hpp"
#include "widgets/metrics/sm_timeline.hpp"

namespace cas::widgets {
namespace {

// KernelReport leaves what a backend cannot measure negative.
QString orNa(double value, const QString& text) { return value < 0 ? KernelTableModel::tr("n/a") : text; }
QString percent(double fraction) { return orNa(fraction, QStringLiteral("%1%").arg(fraction * 100, 0, 'f', 0)); }

// The kernel and stage tables: whole rows, one at a time, read-only, rows as high as a line.
void configureTable(QTableView* table) {
  table->verticalHeader()->hide();
  table->verticalHeader()->setDefaultSectionSize(table->fontMetrics().height() + 6);
  table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  table->setSelectionBehavior(QAbstractItemView::SelectRows);
  table->setSelectionMode(QAbstractItemView::SingleSelection);
  table->setEditTriggers(QAbstractItemView::NoEditTriggers);
}

}  // namespace

KernelTableModel::KernelTableModel(QObject* parent) : QAbstractTableModel(parent) {}

int KernelTableModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : int(kernels_.size()); }

int KernelTableModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant KernelTableModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
  const exec::KernelReport& k = kernels_[size_t(index.row())];
  // A search kernel's share is of the search's step, an inference kernel's of the graph's run.
  const double group = k.kind == "search" ? searchUs_ : totalUs_;
  const double share = k.timeUs >= 0 && group > 0 ? k.timeUs / group : -1;
  if (role == SortRole) {
    switch (index.column()) {
      case Index: return index.row();
      case Time: return k.timeUs;
      case Share: return share;
      case Nodes: return k.nodes;
      case Registers: return k.registers;
      case SharedMemory: return k.sharedBytes;
      case TheoreticalOccupancy: return k.theoreticalOccupancy;
      case AchievedOccupancy: return k.achievedOccupancy;
      case SimtEfficiency: return k.simtEfficiency;
      default: role = Qt::DisplayRole;  // text columns sort by their text
    }
  }
  if (role == Qt::TextAlignmentRole)
    return index.column() == Kernel || index.column() == Kind || index.column() == Launch || index.column() == Layers
               ? QVariant(Qt::AlignLeft | Qt::AlignVCenter)
               : QVariant(Qt::AlignRight | Qt::AlignVCenter);
  if (role == Qt::ToolTipRole && index.column() == Kernel) return QString::fromStdString(k.label);
  if (role != Qt::DisplayRole) return {};
  switch (index.column()) {
    case Index: return index.row();
    case Kernel: return QString::fromStdString(k.name);
    case Kind: return QString::fromStdString(k.kind);
    case Time: return orNa(k.timeUs, QString::number(k.timeUs, 'f', 2));
    case Share: return percent(share);
    case Nodes: return k.nodes;
    case Registers: return orNa(k.registers, QString::number(k.registers));
    case SharedMemory: return orNa(k.sharedBytes, QString::number(k.sharedBytes));
    case TheoreticalOccupancy: return percent(k.theoreticalOccupancy);
    case AchievedOccupancy: return percent(k.achievedOccupancy);
    case SimtEfficiency: return percent(k.simtEfficiency);
    case Launch: return QString::fromStdString(k.launch);
    case Layers: return QString::fromStdString(k.label);
  }
  return {};
}

QVariant KernelTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || (role != Qt::DisplayRole && role != Qt::ToolTipRole))
    return QAbstractTableModel::headerData(section, orientation, role);
  if (role == Qt::ToolTipRole) {
    switch (section) {
      case Time: return tr("Mean time per run, measured with CUDA events while the kernels are launched one by one.");
      case Share: return tr("Share of the summed kernel time: of the inference graph's run, or of the search's simulation step.");
      case TheoreticalOccupancy: return tr("Active warps per SM over the maximum, from the occupancy calculator.");
      case AchievedOccupancy: return tr("Measured active warps per SM over the maximum; n/a while the backend does not collect it.");
      case SimtEfficiency:
        return tr("The share of a warp's 32 lanes active at each sampled step (100%: no divergence); measured in the device search's "
                  "instrumented kernels, n/a for the others.");
      default: return {};
    }
  }
  switch (section) {
    case Index: return tr("#");
    case Kernel: return tr("Kernel");
    case Kind: return tr("Kind");
    case Time: return tr("Time (µs)");
    case Share: return tr("Share");
    case Nodes: return tr("Nodes");
    case Registers: return tr("Registers");
    case SharedMemory: return tr("Shared memory (B)");
    case TheoreticalOccupancy: return tr("Theoretical occupancy");
    case AchievedOccupancy: return tr("Achieved occupancy");
    case SimtEfficiency: return tr("SIMT efficiency");
    case Launch: return tr("Launch");
    case Layers: return tr("Layers");
  }
  return {};
}

void KernelTableModel::setKernels(std::vector<exec::KernelReport> kernels) {
  beginResetModel();
  kernels_ = std::move(kernels);
  totalUs_ = searchUs_ = 0;
  for (const exec::KernelReport& k : kernels_) (k.kind == "search" ? searchUs_ : totalUs_) += std::max(k.timeUs, 0.0);
  endResetModel();
}

StageTimeModel::StageTimeModel(QObject* parent) : QAbstractTableModel(parent) {}

int StageTimeModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : int(rows_.size()); }

int StageTimeModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant StageTimeModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
  if (role == Qt::TextAlignmentRole) return QVariant(Qt::AlignRight | Qt::AlignVCenter);
  if (role != Qt::DisplayRole) return {};
  const Row& r = rows_[size_t(index.row())];
  auto seconds = [](double s) { return QString::number(s, 'f', 3); };
  switch (index.column()) {
    case Iteration: return r.iteration;
    case Inference: return seconds(r.inference);
    case Search: return seconds(r.search);
    case Records: return seconds(r.records);
    case Training: return seconds(r.training);
    case Total: return seconds(r.inference + r.search + r.records + r.training);
  }
  return {};
}

QVariant StageTimeModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || (role != Qt::DisplayRole && role != Qt::ToolTipRole))
    return QAbstractTableModel::headerData(section, orientation, role);
  if (role == Qt::ToolTipRole) {
    switch (section) {
      case Inference: return tr("The network's forward passes during self-play, copies of its inputs and outputs included.");
      case Search: return tr("Tree search during self-play, inference left out.");
      case Records: return tr("Recording self-play positions and writing finished games to the replay buffer.");
      case Training: return tr("Training steps on replay-buffer samples.");
      default: return {};
    }
  }
  switch (section) {
    case Iteration: return tr("Iteration");
    case Inference: return tr("Inference (s)");
    case Search: return tr("Tree search (s)");
    case Records: return tr("Game records (s)");
    case Training: return tr("Training (s)");
    case Total: return tr("Total (s)");
  }
  return {};
}

void StageTimeModel::addIteration(const train::IterationReport& r) {
  beginInsertRows({}, 0, 0);
  rows_.push_front({r.iteration, r.inferenceSeconds, r.searchSeconds, r.dataSeconds, r.trainSeconds});
  endInsertRows();
  if (rows_.size() > size_t(kMaxRows)) {
    beginRemoveRows({}, kMaxRows, int(rows_.size()) - 1);
    rows_.resize(size_t(kMaxRows));
    endRemoveRows();
  }
}

void StageTimeModel::clear() {
  if (rows_.empty()) return;
  beginResetModel();
  rows_.clear();
  endResetModel();
}

KernelView::KernelView(QWidget* parent)
    : QWidget(parent),
      kernels_(new KernelTableModel(this)),
      stages_(new StageTimeModel(this)),
      sortedKernels_(new QSortFilterProxyModel(this)),
      pages_(new QStackedWidget),
      kernelSummary_(new QLabel),
      cpuExplanation_(new QLabel),
      profileButton_(new QPushButton(tr("Profile Again"))),
      kernelTable_(new QTableView),
      timeline_(new SmTimeline),
      historyPlot_(new QCustomPlot),
      live_(new QCheckBox(tr("L&ive"))),
      source_(new QPlainTextEdit) {
  setObjectName(QStringLiteral("kernelView"));
  createControls();
  createLayout();
  connectSignals();
  setDevice(device_);
}

// The kernel table over its sorted model, the SM timeline, the history plot and the source; the
// CPU page's explanation.
void KernelView::createControls() {
  sortedKernels_->setSourceModel(kernels_);
  sortedKernels_->setSortRole(KernelTableModel::SortRole);
  kernelTable_->setObjectName(QStringLiteral("kernelTable"));
  kernelTable_->setModel(sortedKernels_);
  kernelTable_->setSortingEnabled(true);
  kernelTable_->sortByColumn(KernelTableModel::Index, Qt::AscendingOrder);
  configureTable(kernelTable_);
  source_->setObjectName(QStringLiteral("kernelSource"));
  source_->setReadOnly(true);
  source_->setLineWrapMode(QPlainTextEdit::NoWrap);
  source_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  source_->setPlaceholderText(tr("Select a kernel to see its CUDA source."));
  profileButton_->setObjectName(QStringLiteral("profileKernels"));
  profileButton_->setToolTip(tr("Time every kernel again at the end of the current iteration."));
  kernelSummary_->setWordWrap(true);
  kernelSummary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  historyPlot_->setObjectName(QStringLiteral("kernelHistory"));
  historyPlot_->setMinimumHeight(140);
  historyPlot_->plotLayout()->insertRow(0);
  historyPlot_->plotLayout()->addElement(0, 0, new QCPTextElement(historyPlot_, tr("Device search kernels over the iterations profiled"),
                                                                  QFont(QString(), 9, QFont::Bold)));
  historyPlot_->xAxis->setLabel(tr("iteration"));
  historyPlot_->yAxis->setLabel(tr("% (time-weighted)"));
  historyPlot_->yAxis->setRange(0, 100);
  historyPlot_->legend->setVisible(true);
  historyPlot_->legend->setFont(QFont(QString(), 8));
  for (const auto& [name, colour] : {std::pair{tr("SIMT efficiency"), QColor(86, 180, 233)}, std::pair{tr("occupancy"), QColor(230, 159, 0)}}) {
    QCPGraph* graph = historyPlot_->addGraph();
    graph->setName(name);
    graph->setPen(QPen(colour, 2));
    graph->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, 5));
  }
  live_->setObjectName(QStringLiteral("liveKernels"));
  live_->setToolTip(tr("Profile the kernels again every %1 s while the run trains, at the end of an iteration.").arg(kLiveIntervalMs / 1000));
  liveTimer_.setInterval(kLiveIntervalMs);
  cpuExplanation_->setObjectName(QStringLiteral("kernelExplanation"));
  cpuExplanation_->setWordWrap(true);
  cpuExplanation_->setTextInteractionFlags(Qt::TextSelectableByMouse);
}

// Two pages: the kernels (the summary and buttons over the table, timeline, history and source)
// and the CPU backend's (its explanation over the stage times).
void KernelView::createLayout() {
  auto* kernelPage = new QWidget;
  auto* kernelLayout = new QVBoxLayout(kernelPage);
  kernelLayout->setContentsMargins(4, 4, 4, 4);
  auto* summaryRow = new QHBoxLayout;
  summaryRow->addWidget(kernelSummary_, 1);
  auto* buttons = new QVBoxLayout;
  buttons->addWidget(profileButton_);
  buttons->addWidget(live_);
  buttons->addStretch(1);
  summaryRow->addLayout(buttons);
  kernelLayout->addLayout(summaryRow);
  auto* split = new QSplitter(Qt::Vertical);
  split->addWidget(kernelTable_);
  split->addWidget(timeline_);
  split->addWidget(historyPlot_);
  split->addWidget(source_);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 2);
  split->setStretchFactor(2, 2);
  split->setStretchFactor(3, 2);
  timeline_->hide();     // until a profile carries one
  historyPlot_->hide();  // until a profile carries the search's kernels
  kernelLayout->addWidget(split, 1);

  auto* cpuPage = new QWidget;
  auto* cpuLayout = new QVBoxLayout(cpuPage);
  cpuLayout->setContentsMargins(4, 4, 4, 4);
  auto* stageTable = new QTableView;
  stageTable->setObjectName(QStringLiteral("stageTable"));
  stageTable->setModel(stages_);
  configureTable(stageTable);
  cpuLayout->addWidget(cpuExplanation_);
  cpuLayout->addWidget(stageTable, 1);

  pages_->addWidget(kernelPage);
  pages_->addWidget(cpuPage);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(pages_);
}

void KernelView::connectSignals() {
  connect(&liveTimer_, &QTimer::timeout, this, [this] { emit profileRequested(kProfileRuns); });
  connect(live_, &QCheckBox::toggled, this, &KernelView::updateLiveTimer);
  connect(kernelTable_->selectionModel(), &QItemSelectionModel::currentRowChanged, this, &KernelView::showSelectedSource);
  connect(sortedKernels_, &QAbstractItemModel::modelReset, this, &KernelView::showSelectedSource);
  connect(profileButton_, &QPushButton::clicked, this, [this] { emit profileRequested(kProfileRuns); });
}

bool KernelView::showsKernels() const { return pages_->currentIndex() == 0; }

QString KernelView::explanation() const { return showsKernels() ? kernelSummary_->text() : cpuExplanation_->text(); }

QString KernelView::selectedSource() const { return source_->toPlainText(); }

void KernelView::setDevice(const QString& device) {
  device_ = device;
  const exec::BackendStatus status = exec::BackendRegistry::instance().status(device.toStdString());
  showBackend(status.backend && status.backend->id() == "cuda", backendStatusText(status));
}

void KernelView::updateLiveTimer() {
  if (live_->isChecked() && runActive_ && cudaRun_) liveTimer_.start();
  else liveTimer_.stop();
}

void KernelView::runStarted(const QString& backendId) {
  runActive_ = true;
  cudaRun_ = backendId == QLatin1String("cuda");
  stages_->clear();
  kernels_->setKernels({});
  history_.clear();
  for (int g = 0; g < historyPlot_->graphCount(); ++g) historyPlot_->graph(g)->data()->clear();
  historyPlot_->hide();
  updateLiveTimer();
  if (backendId == QLatin1String("cuda")) {
    showBackend(true, QString());
    emit profileRequested(kProfileRuns);
  } else {
    setDevice(device_);
  }
}

void KernelView::runFinished() {
  runActive_ = false;
  profileButton_->setEnabled(false);
  updateLiveTimer();
}

void KernelView::showBackend(bool cuda, const QString& status) {
  pages_->setCurrentIndex(cuda ? 0 : 1);
  profileButton_->setEnabled(cuda && runActive_);
  if (cuda) {
    if (kernels_->rowCount() == 0)
      kernelSummary_->setText(runActive_ ? tr("The kernels of the self-play inference graph are timed at the end of the current iteration.")
                                         : tr("Start a run to time the kernels of its self-play inference graph on the CUDA backend."));
    return;
  }
  cpuExplanation_->setText(tr("GPU kernel metrics need the CUDA backend. Backend in use: %1. The CPU backend interprets the graph "
                              "node by node and has no kernels to time; below are the stage times of the latest iterations.")
                               .arg(status));
}

void KernelView::showProfile(const KernelProfile& profile) {
  std::vector<exec::KernelReport> all = profile.kernels;
  all.insert(all.end(), profile.searchKernels.begin(), profile.searchKernels.end());
  kernels_->setKernels(std::move(all));
  timeline_->setKernels(profile.searchKernels);
  timeline_->setVisible(timeline_->hasTimeline());
  addToHistory(profile);
  QStringList lines;
  lines << tr("Self-play inference graph '%1' at batch %2, after iteration %3: %4 kernels, %5 µs per run when launched one by one "
              "(mean of %6 runs).")
               .arg(profile.graph)
               .arg(profile.batch)
               .arg(profile.iteration)
               .arg(profile.kernels.size())
               .arg(kernels_->totalMicroseconds(), 0, 'f', 1)
               .arg(profile.runs);
  if (!profile.searchKernels.empty())
    lines << tr("Then the device search's %n kernel(s), instrumented, each timed per simulation step over %1 steps of every game (steps "
                "that add simulations to the games' current trees).", nullptr,
                int(profile.searchKernels.size()))
                 .arg(profile.searchSteps);
  for (const cas::exec::RuntimeStat& stat : profile.runtimeStats) {
    // The backend's template in the interface's language, filled with its arguments as given.
    const QString format = QCoreApplication::translate("cas::RuntimeStats", stat.format.c_str());
    lines << tr("%1: %2").arg(QCoreApplication::translate("cas::RuntimeStats", stat.name.c_str()),
                              QString::fromStdString(cas::exec::fillPlaceholders(format.toStdString(), stat.args)));
  }
  kernelSummary_->setText(lines.join(QLatin1Char('\n')));
  if (sortedKernels_->rowCount() > 0) kernelTable_->selectRow(0);
}

void KernelView::addToHistory(const KernelProfile& profile) {
  HistoryPoint point;
  point.iteration = profile.iteration;
  double simt = 0, simtWeight = 0, occupancy = 0, occupancyWeight = 0;
  for (const exec::KernelReport& k : profile.searchKernels) {
    const double weight = std::max(k.timeUs, 0.0);
    if (k.simtEfficiency >= 0) simt += weight * k.simtEfficiency, simtWeight += weight;
    const double o = k.achievedOccupancy >= 0 ? k.achievedOccupancy : k.theoreticalOccupancy;
    if (o >= 0) occupancy += weight * o, occupancyWeight += weight;
  }
  if (simtWeight <= 0 && occupancyWeight <= 0) return;
  if (simtWeight > 0) point.simtEfficiency = simt / simtWeight;
  if (occupancyWeight > 0) point.occupancy = occupancy / occupancyWeight;
  history_.push_back(point);
  if (point.simtEfficiency >= 0) historyPlot_->graph(0)->addData(double(point.iteration), 100 * point.simtEfficiency);
  if (point.occupancy >= 0) historyPlot_->graph(1)->addData(double(point.iteration), 100 * point.occupancy);
  historyPlot_->xAxis->setRange(double(history_.front().iteration) - 1, double(history_.back().iteration) + 1);
  historyPlot_->show();
  historyPlot_->replot(QCustomPlot::rpQueuedReplot);
}

void KernelView::addIteration(const train::IterationReport& report) { stages_->addIteration(report); }

void KernelView::showSelectedSource() {
  const QModelIndex current = sortedKernels_->mapToSource(kernelTable_->currentIndex());
  if (!current.isValid()) {
    source_->clear();
    return;
  }
  const exec::KernelReport& k = kernels_->kernel(current.row());
  if (k.source.empty()) {
    source_->setPlainText(tr("%1 is a %2 call; it has no generated source.").arg(QString::fromStdString(k.name), QString::fromStdString(k.kind)));
    return;
  }
  source_->setPlainText(QStringLiteral("// %1  [%2]  %3\n%4").arg(QString::fromStdString(k.name), QString::fromStdString(k.label),
                                                                  QString::fromStdString(k.launch), QString::fromStdString(k.source)));
}

}  // namespace cas::widgets
