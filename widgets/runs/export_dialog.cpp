#include "widgets/runs/export_dialog.hpp"

#include <algorithm>

#include <QComboBox>
#include <QDialogButtonBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>

#include "core/engine/run_folder.hpp"
#include "core/export/policy_loader.hpp"

namespace cas::widgets {
namespace {

QString nativePath(const std::filesystem::path& p) { return QDir::toNativeSeparators(QString::fromStdString(p.string())); }

// The iteration a checkpoint file is named after (iter-00000012.ckpt: 12); 0 when it is not one.
qint64 iterationOf(const std::filesystem::path& file) {
  const QString stem = QString::fromStdString(file.stem().string());
  return stem.startsWith(QLatin1String("iter-")) ? stem.mid(5).toLongLong() : 0;
}

}  // namespace

ExportDialog::ExportDialog(const QString& source, QWidget* parent)
    : QDialog(parent),
      source_(source),
      format_(new QComboBox),
      checkpoint_(new QComboBox),
      batch_(new QSpinBox),
      opset_(new QSpinBox),
      output_(new QLineEdit),
      browse_(new QPushButton(tr("Browse…"))),
      export_(new QPushButton(tr("Export"))),
      progress_(new QProgressBar),
      summary_(new QPlainTextEdit),
      worker_(new ExportWorker) {
  setWindowTitle(tr("Export Policy"));
  setObjectName(QStringLiteral("exportDialog"));
  createControls();
  createLayout();
  connectSignals();

  // The worker, on a thread of its own.
  qRegisterMetaType<exports::ExportRequest>();
  qRegisterMetaType<exports::ExportResult>();
  worker_->moveToThread(&thread_);
  connect(&thread_, &QThread::finished, worker_, &QObject::deleteLater);
  connect(this, &ExportDialog::exportRequested, worker_, &ExportWorker::exportPolicy);
  connect(worker_, &ExportWorker::exportFinished, this, &ExportDialog::showWritten);
  connect(worker_, &ExportWorker::exportFailed, this, &ExportDialog::showRefusal);
  thread_.setObjectName(QStringLiteral("export"));
  thread_.start();
}

ExportDialog::~ExportDialog() {
  thread_.quit();
  thread_.wait();
}

// What is exported (a run's, or a project's initial weights) decides the source line and the
// choice of weights; the format, batch, opset and output file; the busy bar, the summary and the
// buttons.
void ExportDialog::createControls() {
  const std::filesystem::path folder = source_.toStdString();
  const bool isRun = exports::policySourceOf(folder) == exports::PolicySource::Run;

  sourceLabel_ = new QLabel((isRun ? tr("Run %1") : tr("Project %1 (the initial weights its training starts from)")).arg(QDir::toNativeSeparators(source_)));
  sourceLabel_->setObjectName(QStringLiteral("exportSource"));
  sourceLabel_->setTextInteractionFlags(Qt::TextSelectableByMouse);

  format_->setObjectName(QStringLiteral("exportFormat"));
  format_->addItem(tr("ONNX model (.onnx)"), int(exports::ExportFormat::Onnx));
  format_->addItem(tr("Standalone C99 source (.c and .h)"), int(exports::ExportFormat::C));
  format_->addItem(tr("Standalone CUDA source (.cu and .h)"), int(exports::ExportFormat::Cuda));

  checkpoint_->setObjectName(QStringLiteral("exportCheckpoint"));
  if (isRun) {
    checkpoint_->addItem(tr("The newest valid checkpoint"), qint64(0));
    const std::vector<std::filesystem::path> files = engine::checkpointFiles(folder);
    for (auto f = files.rbegin(); f != files.rend(); ++f)
      if (const qint64 iteration = iterationOf(*f); iteration > 0) checkpoint_->addItem(tr("Iteration %1").arg(iteration), iteration);
  } else {
    checkpoint_->addItem(tr("None: a project's initial weights"), qint64(0));
    checkpoint_->setEnabled(false);
  }

  batch_->setObjectName(QStringLiteral("exportBatch"));
  batch_->setRange(0, int(exports::kMaxOnnxBatch));  // 0: dynamic
  batch_->setSpecialValueText(tr("dynamic"));
  batch_->setToolTip(tr("ONNX: a fixed batch size, or dynamic (the batch axis is named 'batch').\n"
                        "CUDA: the most observations per call (the pass is captured at this size)."));
  opset_->setObjectName(QStringLiteral("exportOpset"));
  opset_->setRange(exports::kMinOnnxOpset, exports::kMaxOnnxOpset);
  opset_->setValue(exports::kDefaultOnnxOpset);

  output_->setObjectName(QStringLiteral("exportOutput"));
  output_->setText(nativePath(exports::defaultExportPath(folder, exports::ExportFormat::Onnx)));
  output_->setMinimumWidth(output_->fontMetrics().averageCharWidth() * 60);
  browse_->setObjectName(QStringLiteral("exportBrowse"));
  browse_->setAutoDefault(false);  // Return exports, wherever the focus is
  progress_->setObjectName(QStringLiteral("exportProgress"));
  progress_->setRange(0, 0);  // busy: an export takes a moment and has no steps worth counting
  progress_->setTextVisible(false);
  progress_->hide();
  summary_->setObjectName(QStringLiteral("exportSummary"));
  summary_->setReadOnly(true);
  summary_->setWordWrapMode(QTextOption::WrapAtWordBoundaryOrAnywhere);  // long paths break anywhere
  summary_->setMinimumHeight(summary_->fontMetrics().lineSpacing() * 8);

  export_->setObjectName(QStringLiteral("exportButton"));
  export_->setDefault(true);
  buttons_ = new QDialogButtonBox(QDialogButtonBox::Close);
  buttons_->addButton(export_, QDialogButtonBox::ActionRole);
  buttons_->button(QDialogButtonBox::Close)->setAutoDefault(false);
}

// The choices in a form over the busy bar, the summary and the buttons.
void ExportDialog::createLayout() {
  auto* outputRow = new QHBoxLayout;
  outputRow->addWidget(output_, 1);
  outputRow->addWidget(browse_);

  auto* form = new QFormLayout;
  form->addRow(tr("Source:"), sourceLabel_);
  form->addRow(tr("Format:"), format_);
  form->addRow(tr("Weights:"), checkpoint_);
  form->addRow(tr("Batch size:"), batch_);
  form->addRow(tr("ONNX opset:"), opset_);
  form->addRow(tr("Output file:"), outputRow);

  auto* layout = new QVBoxLayout(this);
  layout->addLayout(form);
  layout->addWidget(progress_);
  layout->addWidget(summary_, 1);
  layout->addWidget(buttons_);
}

void ExportDialog::connectSignals() {
  connect(format_, &QComboBox::currentIndexChanged, this, &ExportDialog::switchFormat);
  connect(browse_, &QPushButton::clicked, this, &ExportDialog::chooseOutput);
  connect(export_, &QPushButton::clicked, this, &ExportDialog::startExport);
  connect(buttons_, &QDialogButtonBox::rejected, this, &QDialog::reject);
}

QString ExportDialog::summaryText() const { return summary_->toPlainText(); }

exports::ExportFormat ExportDialog::format() const { return exports::ExportFormat(format_->currentData().toInt()); }

exports::ExportRequest ExportDialog::request() const {
  exports::ExportRequest r;
  r.source = source_.toStdString();
  r.format = format();
  r.checkpoint = checkpoint_->currentData().toLongLong();
  r.batch = batch_->value();
  r.opset = opset_->value();
  r.out = QDir::fromNativeSeparators(output_->text().trimmed()).toStdString();
  return r;
}

void ExportDialog::switchFormat() {
  const exports::ExportFormat f = format();
  const bool onnx = f == exports::ExportFormat::Onnx, cuda = f == exports::ExportFormat::Cuda;
  batch_->setEnabled((onnx || cuda) && !busy_);
  // CUDA has no dynamic batch (a spin box shows its special text at its minimum).
  batch_->setMinimum(cuda ? 1 : 0);
  batch_->setSpecialValueText(cuda ? QString() : tr("dynamic"));
  opset_->setEnabled(onnx && !busy_);
  // The output keeps its folder and name; the ending follows the format (the CUDA files end in
  // "_cuda.cu", so that their header does not replace the C export's).
  const QString path = output_->text();
  for (const QString& ending : {QStringLiteral("_cuda.cu"), QStringLiteral(".onnx"), QStringLiteral(".c")}) {
    if (!path.endsWith(ending)) continue;
    const QString wanted = onnx ? QStringLiteral(".onnx") : cuda ? QStringLiteral("_cuda.cu") : QStringLiteral(".c");
    output_->setText(path.left(path.size() - ending.size()) + wanted);
    break;
  }
}

void ExportDialog::chooseOutput() {
  const exports::ExportFormat f = format();
  const QString filter = f == exports::ExportFormat::Onnx ? tr("ONNX models (*.onnx)")
                         : f == exports::ExportFormat::C  ? tr("C source files (*.c)")
                                                          : tr("CUDA source files (*.cu)");
  const QString chosen = QFileDialog::getSaveFileName(this, tr("Export To"), output_->text(), filter);
  if (!chosen.isEmpty()) output_->setText(QDir::toNativeSeparators(chosen));
}

void ExportDialog::startExport() {
  if (busy_) return;
  summary_->clear();
  setBusy(true);
  sent_ = request();
  emit exportRequested(sent_);
}

void ExportDialog::setBusy(bool busy) {
  busy_ = busy;
  progress_->setVisible(busy);
  for (QWidget* w : std::initializer_list<QWidget*>{format_, output_, browse_, export_}) w->setEnabled(!busy);
  checkpoint_->setEnabled(!busy && checkpoint_->count() > 1);
  switchFormat();
}

QString ExportDialog::skippedText(const exports::ExportResult& result) const {
  QStringList lines;
  for (const std::string& s : result.skipped) lines << tr("Skipped checkpoint %1").arg(QString::fromStdString(s));
  for (const Diagnostic& d : result.notices) lines << QString::fromStdString(formatHeadline(d));
  return lines.join(QLatin1Char('\n'));
}

void ExportDialog::showWritten(const exports::ExportResult& result) {
  setBusy(false);
  const exports::ExportRequest& r = sent_;
  QStringList lines{tr("Written:")};
  for (const exports::WrittenFile& f : result.files)
    lines << QStringLiteral("    %1 (%2)").arg(nativePath(f.path), locale().formattedDataSize(qint64(f.bytes)));
  if (r.format == exports::ExportFormat::Onnx)
    lines << tr("Format: ONNX, opset %1, %2").arg(r.opset).arg(r.batch > 0 ? tr("batch %1").arg(r.batch) : tr("dynamic batch"));
  else if (r.format == exports::ExportFormat::C)
    lines << tr("Format: C99 (libm only); build with cc -std=c99 -O2 -c %1, link with -lm").arg(nativePath(result.files.front().path));
  else
    lines << tr("Format: CUDA (the CUDA runtime only), observations per call: at most %1; build with nvcc -arch=sm_90 -O3 -c %2")
                 .arg(std::max<qint64>(1, r.batch))
                 .arg(nativePath(result.files.front().path));
  const QString project = QString::fromStdString(result.project);
  lines << (result.checkpoint.empty() ? tr("Weights: the initial weights of project %1 (iteration 0)").arg(project)
                                      : tr("Weights: checkpoint %1 of project %2, iteration %3").arg(nativePath(result.checkpoint), project).arg(result.iteration));
  if (const QString skipped = skippedText(result); !skipped.isEmpty()) lines << skipped;
  summary_->setPlainText(lines.join(QLatin1Char('\n')));
}

void ExportDialog::showRefusal(const exports::ExportResult& result) {
  setBusy(false);
  QString text = tr("Nothing was written: %1").arg(QString::fromStdString(result.error->message));
  if (const QString skipped = skippedText(result); !skipped.isEmpty()) text += QLatin1Char('\n') + skipped;
  summary_->setPlainText(text);
}

}  // namespace cas::widgets
