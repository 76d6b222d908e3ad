#include "core/engine/run_lock.hpp"

#include <cerrno>
#include <cstring>
#include <signal.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/support/atomic_file.hpp"
#include "core/support/numbers.hpp"

namespace cas::engine {
namespace {

// The process id written in the lock file, or nullopt when it holds none.
std::optional<std::int64_t> holderOf(int fd) {
  char text[32] = {};
  const ssize_t n = ::pread(fd, text, sizeof text - 1, 0);
  if (n <= 0) return std::nullopt;
  std::string_view pid(text, size_t(n));
  while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' ')) pid.remove_suffix(1);
  return parseInteger(pid, 1, std::int64_t(1) << 40);
}

// Why `dir`/lock cannot serve as the run's lock: a symbolic link or another kind of file put
// there (the run makes its lock itself, as a regular file), or the error opening it.
std::string notALockFile(const std::filesystem::path& dir, std::optional<unsigned> mode, int openError) {
  const std::string path = (dir / "lock").string();
  struct stat st {};
  if (!mode && ::lstat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) mode = st.st_mode;  // a link (ELOOP) or a folder (EISDIR)
  if (!mode) {
    std::string message = "cannot lock " + dir.string() + ": cannot open " + path + ": " + std::strerror(openError);
    // Another user's run, or a copy without write access: say what to do, and that nothing changed.
    if (openError == EACCES || openError == EPERM)
      message += "; give yourself write access to the run (chmod u+rw " + path + ", and u+rwx on " + dir.string() + "), or train a copy of it (nothing was changed)";
    else if (openError == EROFS)
      message += "; the run lies on a read-only file system: train a copy of it elsewhere (nothing was changed)";
    return message;
  }
  return "cannot lock " + dir.string() + ": " + path + " is " + fileTypeName(*mode) +
         ", not the regular file a run makes as its lock; remove it (it is no run's lock) and try again";
}

// Opens `path` for reading and writing, making it when absent (`created` tells whether this
// call made it); -1 with errno set when it cannot.
int openLockFile(const std::filesystem::path& path, bool* created) {
  for (int attempt = 0; attempt < 4; ++attempt) {
    int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0644);
    *created = fd >= 0;
    if (fd >= 0 || errno != EEXIST) return fd;
    fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd >= 0 || errno != ENOENT) return fd;  // removed in between: make it again
  }
  return -1;
}

// Whether `path` still names the file open as `fd` (it was neither removed nor replaced since).
bool stillNamed(int fd, const std::filesystem::path& path) {
  struct stat open {}, named {};
  return ::fstat(fd, &open) == 0 && ::lstat(path.c_str(), &named) == 0 && open.st_dev == named.st_dev && open.st_ino == named.st_ino;
}

// Why the lock of `dir` could not be taken: flock failed with `cause`.
std::string lockRefusal(const std::filesystem::path& dir, int cause, std::optional<std::int64_t> holder) {
  const std::filesystem::path path = dir / "lock";
  if (cause != EWOULDBLOCK) return "cannot lock " + path.string() + ": " + std::strerror(cause);
  return dir.string() + " is in use by " + (holder ? "process " + std::to_string(*holder) : std::string("another process")) + " (it holds " +
         path.string() + "); wait for that run to end, or stop it";
}

}  // namespace

std::optional<RunLock> RunLock::acquire(const std::filesystem::path& dir, std::string* error, std::string* note, bool* inUse) {
  const std::filesystem::path path = dir / "lock";
  if (inUse) *inUse = false;
  for (int attempt = 1;; ++attempt) {
    bool created = false;
    // O_NOFOLLOW: a lock planted as a symlink must not make us truncate the file it points to.
    const int fd = openLockFile(path, &created);
    struct stat st {};
    if (fd < 0 || ::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
      const int cause = errno;
      if (fd >= 0) ::close(fd);
      if (error) *error = notALockFile(dir, fd >= 0 ? std::optional<unsigned>(st.st_mode) : std::nullopt, cause);
      return std::nullopt;
    }
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      const int cause = errno;
      const auto holder = holderOf(fd);
      if (created && cause != EWOULDBLOCK) ::unlink(path.c_str());  // no lock can be held there (no flock): the file is taken back
      ::close(fd);
      if (inUse) *inUse = cause == EWOULDBLOCK;
      if (error) *error = lockRefusal(dir, cause, holder);
      return std::nullopt;
    }
    if (!stillNamed(fd, path)) {  // removed by its holder after we opened it: the lock is the file of that name
      ::close(fd);
      if (attempt < 4) continue;
      if (inUse) *inUse = true;
      if (error) *error = dir.string() + " is in use by another process (it replaced " + path.string() + " while this one took it); try again";
      return std::nullopt;
    }
    if (const auto stale = holderOf(fd); stale && *stale != ::getpid() && note)
      *note = path.string() + " named process " + std::to_string(*stale) + ", which no longer holds it (it was stopped or killed); taking the run over";
    const std::string pid = std::to_string(::getpid()) + "\n";
    if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, pid.data(), pid.size(), 0) != ssize_t(pid.size())) {
      if (error) *error = "cannot write " + path.string() + ": " + std::strerror(errno);
      if (created) ::unlink(path.c_str());  // held, and made by this call: no other process's lock
      ::close(fd);
      return std::nullopt;
    }
    return RunLock(fd, created);
  }
}

RunLockState readRunLockState(const std::filesystem::path& dir) {
  RunLockState state;
  const int fd = ::open((dir / "lock").c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) return state;
  struct stat st {};
  const auto holder = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? holderOf(fd) : std::nullopt;
  if (holder) {
    state.pid = *holder;
    // kill(pid, 0) only asks whether the process exists (EPERM: it does, under another user).
    const bool alive = ::kill(pid_t(*holder), 0) == 0 || errno == EPERM;
    bool held = false;
    if (alive) {
      held = ::flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
      if (!held) ::flock(fd, LOCK_UN);
    }
    state.kind = held ? RunLockState::Held : RunLockState::Stale;
  }
  ::close(fd);
  return state;
}

RunLock& RunLock::operator=(RunLock&& other) noexcept {
  if (this != &other) {
    release();
    fd_ = other.fd_;
    created_ = other.created_;
    other.fd_ = -1;
  }
  return *this;
}

RunLock::~RunLock() { release(); }

void RunLock::release() {
  if (fd_ < 0) return;
  // Emptied before it is released, so the next writer finds it free rather than stale (should
  // that fail, the next writer takes the lock over with a note: no harm done).
  const bool emptied = ::ftruncate(fd_, 0) == 0;
  (void)emptied;
  ::close(fd_);
  fd_ = -1;
}

}  // namespace cas::engine
