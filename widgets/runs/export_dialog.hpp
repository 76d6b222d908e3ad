#pragma once
// File > Export...: the choices of `cuda-agent export` (format, checkpoint, batch, opset, output
// file) for one run folder, or for a project folder's initial weights. The export itself runs in
// core (core/export/export_job.hpp) on an ExportWorker's thread; meanwhile the dialog shows a busy
// bar, then a summary of what was written (the files and their sizes, the format, the weights'
// checkpoint and iteration) or the sentence saying why nothing was.
// Thread-safety: GUI thread only; the worker is reached through queued signals.
#include <QDialog>
#include <QThread>

#include "widgets/runs/export_worker.hpp"  // with the metatypes of the signals' arguments

class QComboBox;
class QDialogButtonBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;

namespace cas::widgets {

class ExportDialog : public QDialog {
  Q_OBJECT
 public:
  // `source`: a run folder or a project folder.
  explicit ExportDialog(const QString& source, QWidget* parent = nullptr);
  ~ExportDialog() override;  // waits for an export in progress to end, then stops the thread

  bool busy() const { return busy_; }
  QString summaryText() const;

 public slots:
  void startExport();
  void chooseOutput();

 signals:
  void exportRequested(const cas::exports::ExportRequest& request);  // to the worker

 private slots:
  void switchFormat();
  void showWritten(const cas::exports::ExportResult& result);
  void showRefusal(const cas::exports::ExportResult& result);

 private:
  void createControls();
  void createLayout();
  void connectSignals();
  exports::ExportFormat format() const;
  exports::ExportRequest request() const;
  void setBusy(bool busy);
  QString skippedText(const exports::ExportResult& result) const;

  QString source_;
  exports::ExportRequest sent_;  // the export in progress, or the last one
  QComboBox* format_;
  QComboBox* checkpoint_;
  QSpinBox* batch_;
  QSpinBox* opset_;
  QLineEdit* output_;
  QPushButton* browse_;
  QPushButton* export_;
  QProgressBar* progress_;
  QPlainTextEdit* summary_;
  QLabel* sourceLabel_ = nullptr;
  QDialogButtonBox* buttons_ = nullptr;
  QThread thread_;
  ExportWorker* worker_;
  bool busy_ = false;
};

}  // namespace cas::widgets
