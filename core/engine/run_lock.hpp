#pragma once
// The lock of a run folder: RUN/lock, held (flock) by the one process that writes the run
// (`cuda-agent train`, `train --resume`, `train --restart`, a run started in the studio), and
// holding that process's id while it does. The kernel releases the lock however its holder ends,
// so a lock file that names a process but is not held is stale (the holder was killed): the next
// writer takes it over with a note. Readers (eval, analyze, play, the studio's Board) take no lock.
// Thread-safety: a RunLock is owned by one thread at a time.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace cas::engine {

// Whether a run is being written, judged from RUN/lock without taking it (for listings such as
// the studio's Runs dock).
struct RunLockState {
  enum Kind {
    Free,   // no lock file, or an empty one: the last writer ended normally (or none ever ran)
    Held,   // a process holds the lock: the run is being trained now
    Stale,  // the file names a process that no longer holds it: the writer was killed or crashed
  };
  Kind kind = Free;
  std::int64_t pid = 0;  // the process the file names (Held, Stale)
};

// Reads RUN/lock. A file naming a live process is probed with a shared, non-blocking flock that is
// released at once, which tells a holder from a process that merely got the same id.
RunLockState readRunLockState(const std::filesystem::path& dir);

class RunLock {
 public:
  // Takes the lock of the run folder `dir` (creating RUN/lock when needed). nullopt with `error`
  // ("runs/x is in use by process 4242 ...") when another process holds it; `note` tells when a
  // stale lock was taken over. `inUse` (when given) tells a refusal because another process
  // holds the lock from one for another reason. A lock file that was removed or replaced between
  // its opening and its locking (its holder took back a run it could not make) is opened again,
  // so two processes never hold locks on two files of one name.
  static std::optional<RunLock> acquire(const std::filesystem::path& dir, std::string* error, std::string* note, bool* inUse = nullptr);
  // Whether this lock's acquire() made RUN/lock (it was not there before): only then is the
  // file this process's to remove when it takes back a run it could not make.
  bool createdFile() const { return created_; }

  RunLock(RunLock&& other) noexcept : fd_(other.fd_), created_(other.created_) { other.fd_ = -1; }
  RunLock& operator=(RunLock&& other) noexcept;
  RunLock(const RunLock&) = delete;
  RunLock& operator=(const RunLock&) = delete;
  ~RunLock();  // empties RUN/lock and releases it

 private:
  RunLock(int fd, bool created) : fd_(fd), created_(created) {}
  void release();
  int fd_ = -1;
  bool created_ = false;
};

}  // namespace cas::engine
