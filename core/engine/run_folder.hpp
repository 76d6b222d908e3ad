#pragma once
// A run is a folder:
//   config.toml          the project it trains and every parameter's resolved value
//   project.toml         the exact project file the run was started from
//   policy.pdl           the exact policy source it trains (whatever the project's file is called)
//   series.csv           a trading project's price series, the exact file it trains on
//   changes.jsonl        tuning changes: {"iteration", "parameter", "from", "to"} per line
//   metrics.jsonl        one JSON object per iteration, iterations 1, 2, 3, ... in order
//   checkpoints/iter-NNNNNNNN.ckpt   written atomically (temp file + rename), each ending in an
//                        FNV-1a checksum; those of the two newest iterations are kept. One is used
//                        only when its checksum holds and its counters are valid, of the
//                        iteration its name says
//   exports/             what `cuda-agent export RUN` writes by default
//   lock                 held by the process writing the run, naming it (run_lock.hpp)
// A run keeps using its own copies of the project file, the policy and the series, so editing
// the project later changes nothing for it; a project edit is used only when asked for (useProjectFiles).
// Every file is read as a regular file of bounded size (core/support/atomic_file.hpp), in the
// folder itself: a run whose checkpoints/ or whose files are symbolic links is refused, and so is
// an export into an exports/ that is one.
// Thread-safety: one thread (the engine's) writes a run folder.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/engine/run_lock.hpp"
#include "core/params/parameters.hpp"
#include "core/project/project.hpp"
#include "core/support/diagnostic.hpp"

namespace cas::engine {

enum class RunAccess {
  Read,   // eval, analyze, play, the studio's Board: no lock, nothing written
  Write,  // training: the folder's lock is taken, or the open is refused
};

class RunFolder {
 public:
  // Creates the folder, takes its lock, copies the project file and the policy into it and
  // writes config.toml; `project` then names the copies (so the run trains exactly what it
  // recorded). Refuses a folder that already holds a run or a project (a run whose making was
  // interrupted, its lock there and no config.toml, is made again). nullopt with `error` on
  // failure; `notices` receives what the user should know (a stale lock taken over).
  static std::optional<RunFolder> create(const std::filesystem::path& dir, project::Project& project, Diagnostic* error,
                                         std::vector<Diagnostic>* notices);
  // Opens an existing run: reads config.toml, loads the run's copies of its project file and
  // policy (or, with `useProjectFiles` or for a run made before runs kept copies, the project
  // folder's current files, with a warning naming how they differ) and applies the recorded
  // parameter values.
  static std::optional<RunFolder> open(const std::filesystem::path& dir, RunAccess access, bool useProjectFiles,
                                       project::Project* project, Diagnostic* error, std::vector<Diagnostic>* notices);

  const std::filesystem::path& path() const { return dir_; }
  bool appendMetrics(const std::string& jsonLine, std::string* error);
  bool appendChange(std::int64_t iteration, const std::string& parameter, const std::string& from, const std::string& to, std::string* error);
  // Takes the trainer's bytes by value to append the checksum in place: a checkpoint holds the
  // whole replay buffer, and a copy of it would double the memory a run needs.
  bool writeCheckpoint(std::int64_t iteration, std::string bytes, std::string* error);
  // The newest checkpoint whose checksum holds and whose size is at most `maxBytes` (what a
  // checkpoint of this run can hold); every file skipped on the way is described in `skipped`
  // (e.g. "iter-00000012.ckpt: checksum mismatch (the file is corrupted)").
  // `usable` (when given) is asked of each checkpoint whose checksum holds, newest first: one it
  // refuses (its reason, say a payload that does not fit the network) is skipped like a damaged one.
  using CheckpointTest = std::function<bool(const std::string& bytes, std::string* problem)>;
  std::optional<std::string> newestCheckpoint(std::uint64_t maxBytes, std::vector<std::string>* skipped, std::string* name = nullptr,
                                              const CheckpointTest& usable = {}) const;
  // Why training in this folder would fail to write, or would overwrite, one of its checkpoint
  // files: an entry named as a checkpoint that is no regular file (a FIFO, a folder, a link to
  // one), one that cannot be read (a resume would skip it as damaged and later replace it), or
  // a checkpoint of a newer format than this program writes, which a resumed run would replace.
  // nullopt when none; asked before a resume reads or changes anything.
  std::optional<std::string> checkpointThatBlocksTraining() const;
  // Why the run cannot be used as `access` needs, as a sentence naming the folder: its
  // checkpoints/ cannot be listed (a reader would take an unreadable folder for one without
  // checkpoints), or, for training, the run folder or its checkpoints/ cannot be written (a
  // restart would discard the logs and then fail at its first checkpoint). Asked before
  // anything is read or changed; nullopt when it can.
  std::optional<std::string> inaccessible(RunAccess access) const;
  // The checkpoint of `iteration` when it exists and its checksum holds; nullopt with `error`
  // naming what is wrong (no such checkpoint, and which ones the run keeps; or the file's fault).
  std::optional<std::string> checkpointOf(std::int64_t iteration, std::uint64_t maxBytes, std::string* error, std::string* name = nullptr) const;

  // On resume from the checkpoint of `iteration`: cuts metrics.jsonl back to its lines for
  // iterations 1..iteration and changes.jsonl to the changes applied up to iteration + 1, so the
  // iterations that run again are logged once. Each line is read as JSON (trailing whitespace, a
  // CRLF, another key order or spacing are accepted): a line for every iteration up to the
  // checkpoint's stays, in iteration order (of an iteration logged twice, the later line); a
  // partial last line, lines after the checkpoint and malformed lines are dropped, each kind
  // described in `notices`, and so is an iteration that has no line. Returns the changes kept,
  // in order, for the trainer to apply again.
  struct LoggedChange {
    std::int64_t iteration;
    std::string parameter, to;
    int line = 0;  // its line in changes.jsonl as the resume leaves it (1-based), for warnings
  };
  std::optional<std::vector<LoggedChange>> repairLogs(std::int64_t iteration, std::vector<Diagnostic>* notices, std::string* error);
  // On `train --resume RUN --use-project`: the run's copies of its project file and policy
  // replaced by `project`'s current files (each file atomically), which it trains with from
  // `iteration` on, and that recorded in changes.jsonl ({"iteration": N, "project_files": DIR}),
  // so that eval, analyze, play and export then use the network it was trained with. Nothing is
  // written when the copies hold those files already.
  bool adoptProjectFiles(const project::Project& project, std::int64_t iteration, std::vector<Diagnostic>* notices, std::string* error);
  // On restart: removes the metrics, the change log and every checkpoint.
  bool discardProgress(std::vector<Diagnostic>* notices, std::string* error);
  // Removes a run that never ran (create() succeeded, then no trainer could be built for it): the
  // files create() wrote, the lock when create() made it, and the folders create() made when
  // that leaves them empty, so the same --out works again and a folder that was there before
  // (the user's, or one another process made at the same moment) stays.
  void removeUnstarted();
  // Removes the temporary files of writes that a kill interrupted (writeFileAtomic's *.tmp.PID),
  // each with a note. Only while the lock is held: no other process can be writing them.
  void removeInterruptedWrites(std::vector<Diagnostic>* notices);

 private:
  RunFolder(std::filesystem::path dir, std::optional<RunLock> lock) : dir_(std::move(dir)), lock_(std::move(lock)) {}
  bool append(const std::string& file, const std::string& line, std::string* error);
  std::filesystem::path dir_;
  std::optional<RunLock> lock_;  // held when opened for writing
  std::vector<std::filesystem::path> made_;  // the folders create() made, deepest first
};

// Test seam: when set, called by RunFolder::create between making the run's folders and taking
// its lock (where another process may take it first). Null in the product.
extern void (*gBeforeRunLock)(const std::filesystem::path& dir);

std::uint64_t fnv1a64(std::string_view bytes);

// The iteration a checkpoint's file name gives: "iter-00000012.ckpt" (or "iter-12.ckpt") is 12;
// nullopt for a name of another form.
std::optional<std::int64_t> checkpointIteration(std::string_view fileName);

// The name the run gives the checkpoint of `iteration`: "iter-00000012.ckpt", wider past
// 99999999 ("iter-1099511627776.ckpt").
std::string checkpointName(std::int64_t iteration);

// The checkpoint files of the run folder `dir` (checkpoints/iter-N.ckpt), ordered by N as a
// number, oldest first; of two names for one N ("iter-0002.ckpt" beside "iter-00000002.ckpt"),
// the run's own name (checkpointName) comes last, so that the newest is tried first. Whether
// each is valid (its checksum, its counters, N the iteration it holds) is known only when it is read.
std::vector<std::filesystem::path> checkpointFiles(const std::filesystem::path& dir);

// Why `dir`, a folder without config.toml, is nevertheless a run's and no project folder: it
// holds a run's own files (checkpoints, metrics.jsonl or changes.jsonl: a run that lost its
// config.toml; or its lock or checkpoints/ alone: a run whose making was interrupted). The
// sentence every reader of a run or a project (eval, train --resume and --restart, export, bench
// policy) refuses it with; nullopt when it holds none of those.
std::optional<std::string> runWithoutConfig(const std::filesystem::path& dir);

// Why the run folder `dir`'s sub-folder `name` ("checkpoints", "exports") may not be read,
// written or pruned: it is a symbolic link (which may lead out of the run, so that pruning or an
// export would delete or replace another folder's files). nullopt when it is not one.
std::optional<std::string> linkedRunFolder(const std::filesystem::path& dir, std::string_view name);

}  // namespace cas::engine
