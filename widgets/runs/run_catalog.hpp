#pragma once
// What the studio knows about a run folder without loading its network: its name, when it
// started, how far it got, its last evaluation, how its configuration differs from the open
// project's, and whether a process is training it now (core/engine/run_lock.hpp). The Runs dock
// (runs_model.hpp) lists these; where the studio keeps the runs it trains is studioRunsRoot().
// Reading a summary touches only small files and the tail of metrics.jsonl, so a listing of many
// runs stays quick; the checkpoints are never read here.
// Thread-safety: plain functions over the file system; call them from one thread at a time per
// folder (the GUI thread in the studio).
#include <QDateTime>
#include <QString>
#include <QStringList>

namespace cas::project {
struct Project;
}

namespace cas::widgets {

struct RunSummary {
  enum class Status {
    Running,     // a process holds the run's lock
    Stopped,     // no one writes it, and the last writer ended normally
    Crashed,     // the lock names a process that no longer holds it (killed, crashed)
    Unreadable,  // no run could be read there (`problem` says why)
  };
  QString folder;            // absolute, clean
  QString name;              // the folder's name
  QDateTime started;         // when config.toml was written (the run's creation)
  qint64 iterations = 0;     // the last iteration in metrics.jsonl
  bool singleAgent = false;  // its environment is a single-agent one (PPO, MuZero): no Board, an Episode
  QString lastScore;         // "perfect 0.75, random 1.00" from the last evaluation, else "return 65.6" (the last mean
                             // episode return); empty without either
  QString projectFolder;     // the project the run trains (config.toml's `project`)
  QStringList differences;   // parameters that differ from the open project, then changes made live
  bool hasCheckpoint = false;
  qint64 pid = 0;            // Running, Crashed: the process the lock names
  Status status = Status::Unreadable;
  QString problem;           // Unreadable: the reason
};

// Where the studio creates the runs it trains: the application's data folder, /runs.
QString studioRunsRoot();

// The run folders directly under `root` (folders holding config.toml), newest first by name.
QStringList runFoldersUnder(const QString& root);

// Reads the summary of the run in `folder`. `current` is the open project (or null): the
// configuration differences are taken against its parameters.
RunSummary readRunSummary(const QString& folder, const cas::project::Project* current);

// Whether the run summarised trains the project in `projectFolder` (compared as clean absolute paths).
bool runBelongsTo(const RunSummary& run, const QString& projectFolder);

}  // namespace cas::widgets
