#pragma once
// What Train does when the Policy editor holds unsaved changes to the project's policy or
// project.toml: a run trains the files on disk, so the user is asked to save and train, train the
// saved file, or cancel. Changes that do not compile cannot be saved for training: the question
// says where the first error is and offers only the saved file or cancel.
// Thread-safety: GUI thread only.
#include <QString>

class QWidget;

namespace cas::project {
struct Project;
}

namespace cas::widgets {

class PdlEditor;

enum class TrainChoice {
  NothingToAsk,    // the editor holds no unsaved change to the project's files
  SaveAndTrain,    // saved (and saved well): train the new text
  TrainSavedFile,  // the unsaved changes stay in the editor; the run trains the file on disk
  Cancel,
};

// Asks when there is something to ask (a modal question, object name "trainUnsavedPrompt", its
// buttons "saveAndTrain" and "trainSavedFile"); with SaveAndTrain the file is saved first, and a
// save that fails returns Cancel (the editor says why).
TrainChoice askBeforeTraining(QWidget* parent, PdlEditor* editor, const project::Project& project);

}  // namespace cas::widgets
