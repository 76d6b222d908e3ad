#include "widgets/runs/train_prompt.hpp"

#include <QAbstractButton>
#include <QPushButton>
#include <QCoreApplication>
#include <QFileInfo>
#include <QMessageBox>

#include "core/project/project.hpp"
#include "widgets/editor/pdl_editor.hpp"

namespace cas::widgets {
TrainChoice askBeforeTraining(QWidget* parent, PdlEditor* editor, const project::Project& project) {
  const QFileInfo open(editor->currentFile());
  const bool projectFile = open == QFileInfo(QString::fromStdString(project.policyFile.string())) ||
                           open == QFileInfo(QString::fromStdString(project.projectFile.string()));
  if (!projectFile || !editor->isModified()) return TrainChoice::NothingToAsk;
  editor->compileNow();  // the diagnostics of the text as it is now, not as it was kCompileDelayMs ago
  const PdlEditor::Mark* firstError = nullptr;
  for (const PdlEditor::Mark& m : editor->marks())
    if (m.severity == Severity::Error) {
      firstError = &m;
      break;
    }
  QMessageBox box(QMessageBox::Question, QCoreApplication::translate("cas::widgets::TrainPrompt", "Train"), QString(), QMessageBox::Cancel, parent);
  box.setObjectName(QStringLiteral("trainUnsavedPrompt"));
  QString text = QCoreApplication::translate("cas::widgets::TrainPrompt", "%1 has changes that are not saved, and a run trains the file on disk.")
                     .arg(open.fileName());
  QAbstractButton* save = nullptr;
  if (firstError) {
    text += QLatin1Char('\n') + QCoreApplication::translate("cas::widgets::TrainPrompt",
                                                            "The changes do not compile (line %1: %2): fix them to train them, or train the saved file.")
                                    .arg(firstError->line)
                                    .arg(firstError->message);
  } else {
    save = box.addButton(QCoreApplication::translate("cas::widgets::TrainPrompt", "Save and Train"), QMessageBox::AcceptRole);
    save->setObjectName(QStringLiteral("saveAndTrain"));
  }
  QAbstractButton* saved = box.addButton(QCoreApplication::translate("cas::widgets::TrainPrompt", "Train the Saved File"), QMessageBox::AcceptRole);
  saved->setObjectName(QStringLiteral("trainSavedFile"));
  box.setText(text);
  box.setDefaultButton(QMessageBox::Cancel);
  box.exec();
  if (save && box.clickedButton() == save) return editor->save() ? TrainChoice::SaveAndTrain : TrainChoice::Cancel;
  if (box.clickedButton() == saved) return TrainChoice::TrainSavedFile;
  return TrainChoice::Cancel;
}

}  // namespace cas::widgets
