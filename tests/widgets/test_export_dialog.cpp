// File > Export..., offscreen: the dialog exports a tic-tac-toe run trained for two iterations
// (the quick settings of tests/support/cli_runs.hpp) to ONNX and to C, from the newest checkpoint
// and from a chosen one, and summarises the files, format and weights; a project exports its
// initial weights; a bad output path shows the error and writes nothing; the main window offers
// the open project when no run is open.
#include <QAction>
#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include "core/engine/run_folder.hpp"
#include "core/train/alphazero.hpp"
#include "support/cli_runs.hpp"
#include "widgets/main_window.hpp"
#include "widgets/runs/export_dialog.hpp"

using cas::widgets::ExportDialog;

namespace {

constexpr int kTrainedIterations = 2;

template <typename T>
T* child(QObject& parent, const char* name) {
  T* found = parent.findChild<T*>(QLatin1String(name));
  if (!found) qFatal("no child %s", name);
  return found;
}

// Sets the output, presses Export and waits for the worker's answer.
bool exportTo(ExportDialog& dialog, const QString& output) {
  child<QLineEdit>(dialog, "exportOutput")->setText(output);
  QTest::mouseClick(child<QPushButton>(dialog, "exportButton"), Qt::LeftButton);
  if (!dialog.busy() || !child<QProgressBar>(dialog, "exportProgress")->isVisible()) return false;  // it runs on the worker's thread
  return QTest::qWaitFor([&] { return !dialog.busy(); }, 60000) && !child<QProgressBar>(dialog, "exportProgress")->isVisible();
}

QStringList filesIn(const QString& folder) { return QDir(folder).entryList(QDir::Files | QDir::Dirs | QDir::NoDotAndDotDot); }

}  // namespace

class TestExportDialog : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;
  QString run_;

  QString path(const QString& name) const { return dir_.filePath(name); }

 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("CUDA-Agent-Test"));
    QCoreApplication::setApplicationName(QStringLiteral("test_export_dialog"));
    QVERIFY(dir_.isValid());
    auto loaded = cas::project::loadProject(cas::test::kExample.toStdString());
    QVERIFY(loaded.project);
    cas::project::Project project = *loaded.project;
    for (qsizetype i = 1; i < cas::test::kQuick.size(); i += 2) QVERIFY(!project.parameters.assign(cas::test::kQuick[i].toStdString()));
    run_ = path(QStringLiteral("ttt-run"));
    cas::Diagnostic refused;
    auto run = cas::engine::RunFolder::create(run_.toStdString(), project, &refused, nullptr);
    QVERIFY2(run, refused.message.c_str());
    cas::train::AlphaZeroTrainer trainer(project, cas::exec::makeCpuBackend());
    std::string error;
    for (int i = 0; i < kTrainedIterations; ++i) {
      trainer.runIteration();
      QVERIFY2(run->writeCheckpoint(trainer.iteration(), trainer.checkpoint(), &error), error.c_str());
    }
  }

  void exportsARunToOnnxCAndCuda() {
    ExportDialog dialog(run_);
    dialog.show();
    auto* checkpoint = child<QComboBox>(dialog, "exportCheckpoint");
    QCOMPARE(checkpoint->count(), 3);  // the newest valid one, then each the run keeps, newest first
    QCOMPARE(checkpoint->itemText(1), QStringLiteral("Iteration 2"));
    QCOMPARE(child<QLineEdit>(dialog, "exportOutput")->text(), QDir::toNativeSeparators(run_ + QStringLiteral("/exports/policy.onnx")));

    const QString onnx = path(QStringLiteral("onnx/ttt.onnx"));
    child<QSpinBox>(dialog, "exportOpset")->setValue(13);
    QVERIFY(exportTo(dialog, onnx));
    QVERIFY(QFileInfo(onnx).size() > 1000);
    QString summary = dialog.summaryText();
    QVERIFY2(summary.contains(QStringLiteral("%1 (%2)").arg(QDir::toNativeSeparators(onnx), dialog.locale().formattedDataSize(QFileInfo(onnx).size()))),
             qPrintable(summary));
    QVERIFY2(summary.contains(QStringLiteral("Format: ONNX, opset 13, dynamic batch")), qPrintable(summary));
    QVERIFY2(summary.contains(QStringLiteral("Weights: checkpoint %1 of project tictactoe-alphazero, iteration 2")
                                  .arg(QDir::toNativeSeparators(run_ + QStringLiteral("/checkpoints/iter-00000002.ckpt")))),
             qPrintable(summary));

    // C from the older checkpoint: the output follows the format, batch and opset are ONNX's only.
    child<QComboBox>(dialog, "exportFormat")->setCurrentIndex(1);
    const QString c = path(QStringLiteral("onnx/ttt.c"));
    QCOMPARE(child<QLineEdit>(dialog, "exportOutput")->text(), QDir::toNativeSeparators(c));
    QVERIFY(!child<QSpinBox>(dialog, "exportBatch")->isEnabled());
    QVERIFY(!child<QSpinBox>(dialog, "exportOpset")->isEnabled());
    checkpoint->setCurrentIndex(2);
    QVERIFY(exportTo(dialog, c));
    QFile source(c);
    QVERIFY(source.open(QIODevice::ReadOnly));
    QVERIFY(source.readAll().contains("int policy_forward(const float* obs, float* logits, float* value)"));
    const QString header = path(QStringLiteral("onnx/ttt.h"));
    QVERIFY(QFileInfo(header).size() > 0);
    summary = dialog.summaryText();
    QVERIFY2(summary.contains(QDir::toNativeSeparators(c) + QStringLiteral(" (")) && summary.contains(QDir::toNativeSeparators(header) + QStringLiteral(" (")),
             qPrintable(summary));
    QVERIFY2(summary.contains(QStringLiteral("Format: C99 (libm only)")), qPrintable(summary));
    QVERIFY2(summary.contains(QStringLiteral("iter-00000001.ckpt of project tictactoe-alphazero, iteration 1")), qPrintable(summary));

    // CUDA at batch 16: its own file name, a batch but no opset, and no dynamic batch.
    child<QComboBox>(dialog, "exportFormat")->setCurrentIndex(2);
    const QString cu = path(QStringLiteral("onnx/ttt_cuda.cu"));
    QCOMPARE(child<QLineEdit>(dialog, "exportOutput")->text(), QDir::toNativeSeparators(cu));
    auto* batch = child<QSpinBox>(dialog, "exportBatch");
    QVERIFY(batch->isEnabled());
    QVERIFY(!child<QSpinBox>(dialog, "exportOpset")->isEnabled());
    QCOMPARE(batch->minimum(), 1);
    QCOMPARE(batch->text(), QStringLiteral("1"));  // not "dynamic"
    batch->setValue(16);
    QVERIFY(exportTo(dialog, cu));
    QFile cudaSource(cu);
    QVERIFY(cudaSource.open(QIODevice::ReadOnly));
    QVERIFY(cudaSource.readAll().contains("cudaError_t policy_cuda_forward(policy_cuda* p, const float* obs, float* logits, float* value"));
    QFile cudaHeader(path(QStringLiteral("onnx/ttt_cuda.h")));
    QVERIFY(cudaHeader.open(QIODevice::ReadOnly));
    QVERIFY(cudaHeader.readAll().contains("#define POLICY_CUDA_BATCH 16 "));
    summary = dialog.summaryText();
    QVERIFY2(summary.contains(QStringLiteral("Format: CUDA (the CUDA runtime only), observations per call: at most 16")), qPrintable(summary));
    // Back to C: the name loses its "_cuda"; and ONNX can be dynamic again.
    child<QComboBox>(dialog, "exportFormat")->setCurrentIndex(1);
    QCOMPARE(child<QLineEdit>(dialog, "exportOutput")->text(), QDir::toNativeSeparators(c));
    child<QComboBox>(dialog, "exportFormat")->setCurrentIndex(0);
    batch->setValue(0);
    QCOMPARE(batch->text(), QStringLiteral("dynamic"));
  }

  void exportsAProjectsInitialWeights() {
    ExportDialog dialog(cas::test::kExample);
    dialog.show();
    QVERIFY(!child<QComboBox>(dialog, "exportCheckpoint")->isEnabled());
    const QString onnx = path(QStringLiteral("project/initial.onnx"));
    child<QSpinBox>(dialog, "exportBatch")->setValue(4);
    QVERIFY(exportTo(dialog, onnx));
    QVERIFY(QFileInfo::exists(onnx));
    const QString summary = dialog.summaryText();
    QVERIFY2(summary.contains(QStringLiteral("Format: ONNX, opset 17, batch 4")), qPrintable(summary));
    QVERIFY2(summary.contains(QStringLiteral("Weights: the initial weights of project tictactoe-alphazero (iteration 0)")), qPrintable(summary));
  }

  // A folder that cannot be made (a file is in its way), and a C export not named .c: the sentence
  // saying why, and no file written.
  void badOutputShowsTheErrorAndWritesNothing() {
    const QString blocked = path(QStringLiteral("bad"));
    QVERIFY(QDir().mkpath(blocked));
    QFile blocker(blocked + QStringLiteral("/file"));
    QVERIFY(blocker.open(QIODevice::WriteOnly));
    blocker.close();
    ExportDialog dialog(run_);
    dialog.show();
    QVERIFY(exportTo(dialog, blocked + QStringLiteral("/file/policy.onnx")));
    QVERIFY2(dialog.summaryText().startsWith(
                 QStringLiteral("Nothing was written: %1/file is a regular file, not a folder; the export is written into a folder there").arg(blocked)),
             qPrintable(dialog.summaryText()));
    QCOMPARE(filesIn(blocked), QStringList{QStringLiteral("file")});
    QCOMPARE(QFileInfo(blocker.fileName()).size(), 0);

    child<QComboBox>(dialog, "exportFormat")->setCurrentIndex(1);
    QVERIFY(exportTo(dialog, blocked + QStringLiteral("/policy.txt")));
    QVERIFY2(dialog.summaryText().contains(QStringLiteral("the C export is a .c file")), qPrintable(dialog.summaryText()));
    QCOMPARE(filesIn(blocked), QStringList{QStringLiteral("file")});
  }

  void mainWindowExportsTheOpenProjectWithoutARun() {
    cas::widgets::MainWindow window;
    auto* action = child<QAction>(window, "exportAction");
    QVERIFY(!action->isEnabled());  // nothing to export yet
    QVERIFY(window.openProject(cas::test::kExample));
    QVERIFY(action->isEnabled());
    QCOMPARE(window.exportSource(), cas::test::kExample);
    action->trigger();
    auto* dialog = window.findChild<ExportDialog*>();
    QVERIFY(dialog && dialog->isVisible());
    QVERIFY(child<QLabel>(*dialog, "exportSource")->text().contains(QStringLiteral("initial weights")));
    dialog->close();
  }
};

QTEST_MAIN(TestExportDialog)
#include "test_export_dialog.moc"
