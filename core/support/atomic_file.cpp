#include "core/support/atomic_file.hpp"

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string_view>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace cas {
namespace {

const char* kTemporaryInfix = ".tmp.";
// ".tmp.", a process id (at most 7 digits: Linux's pid_max is at most 4194304) and a retry counter
// (at most 6 digits).
constexpr size_t kMaxTemporarySuffix = 5 + 7 + 6;

std::string tooLarge(const std::filesystem::path& path, const std::string& size, const FileLimit& limit) {
  return path.string() + " is " + size + ", more than the " + formatBytes(limit.maxBytes) + " " + limit.what + " may hold";
}

}  // namespace

std::vector<std::filesystem::path> missingFolders(const std::filesystem::path& folder) {
  std::vector<std::filesystem::path> missing;
  std::error_code ec;
  for (std::filesystem::path p = folder; !p.empty() && !std::filesystem::exists(std::filesystem::symlink_status(p, ec)); p = p.parent_path()) {
    missing.push_back(p);
    if (p == p.parent_path()) break;
  }
  return missing;
}

std::optional<std::string> notAFolder(const std::filesystem::path& folder) {
  for (std::filesystem::path p = folder; !p.empty(); p = p.parent_path()) {
    struct stat own {}, target {};
    if (::lstat(p.c_str(), &own) == 0) {
      const bool reached = ::stat(p.c_str(), &target) == 0;
      if (reached && S_ISDIR(target.st_mode)) return std::nullopt;
      if (S_ISLNK(own.st_mode))
        return p.string() + " is a symbolic link to " + (reached ? fileTypeName(target.st_mode) : "nothing") + ", not a folder";
      return p.string() + " is " + fileTypeName(own.st_mode) + ", not a folder";
    }
    if (p == p.parent_path()) break;
  }
  return std::nullopt;
}

const char* fileTypeName(unsigned mode) {
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISFIFO(mode)) return "a named pipe (FIFO)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISLNK(mode)) return "a symbolic link";
  if (S_ISREG(mode)) return "a regular file";
  return "not a plain file";
}

std::string formatBytes(std::uint64_t bytes) {
  char b[32];
  if (bytes < 1024) std::snprintf(b, sizeof b, "%llu bytes", static_cast<unsigned long long>(bytes));
  else if (bytes < (1u << 20)) std::snprintf(b, sizeof b, "%.1f KiB", double(bytes) / 1024);
  else if (bytes < (1u << 30)) std::snprintf(b, sizeof b, "%.1f MiB", double(bytes) / (1u << 20));
  else if (bytes < (std::uint64_t(1) << 40)) std::snprintf(b, sizeof b, "%.1f GiB", double(bytes) / (1u << 30));
  else std::snprintf(b, sizeof b, "%.1f TiB", double(bytes) / double(std::uint64_t(1) << 40));
  return b;
}

int openRegularFile(const std::filesystem::path& path, const FileLimit& limit, std::string* error, OpenFor mode) {
  // O_NONBLOCK: opening a FIFO would otherwise wait for its other end forever.
  const int flags = mode == OpenFor::Reading          ? O_RDONLY
                    : mode == OpenFor::ReadingInPlace ? O_RDONLY | O_NOFOLLOW
                                                      : O_RDWR | O_APPEND | O_CREAT | O_NOFOLLOW;
  const int fd = ::open(path.c_str(), flags | O_NONBLOCK | O_CLOEXEC | O_NOCTTY, 0644);
  if (fd < 0 && errno == ELOOP && mode != OpenFor::Reading) {
    if (error)
      *error = path.string() + " is a symbolic link; " + limit.what + (mode == OpenFor::Appending ? " is written" : " is read") +
               " in place, so it must be a regular file";
    return -1;
  }
  if (fd < 0) {
    const int cause = errno;
    struct stat st {};
    if (error && cause != ENOENT && ::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode))  // a socket cannot be opened (ENXIO)
      *error = path.string() + " is " + fileTypeName(st.st_mode) + ", not a regular file; " + limit.what + " must be a regular file";
    else if (error)
      *error = "cannot open " + path.string() + ": " + std::strerror(cause);
    return -1;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    if (error)
      *error = path.string() + " is " + fileTypeName(st.st_mode) + ", not a regular file; " + limit.what + " must be a regular file";
    ::close(fd);
    return -1;
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return fd;
}

std::optional<std::string> upAfterName(const std::filesystem::path& path) {
  std::filesystem::path prefix;  // the path up to the part looked at
  for (const std::filesystem::path& part : path) {
    std::error_code ec;
    if (part == ".." && !prefix.empty() && prefix.filename() != ".." && prefix.filename() != "." &&
        !std::filesystem::exists(std::filesystem::symlink_status(prefix, ec)))
      return path.string() + " goes up ('..') after naming the folder '" + prefix.filename().string() +
             "', which does not exist; the checks before writing could not see where it leads: give the path without it (" +
             path.lexically_normal().string() + ")";
    prefix /= part;
  }
  return std::nullopt;
}

std::optional<std::string> readFile(const std::filesystem::path& path, const FileLimit& limit, std::string* error, OpenFor mode) {
  const int fd = openRegularFile(path, limit, error, mode);
  if (fd < 0) return std::nullopt;
  auto data = readAll(fd, path, limit, error);
  ::close(fd);
  return data;
}

std::optional<std::string> readAll(int fd, const std::filesystem::path& path, const FileLimit& limit, std::string* error) {
  struct stat st {};
  ::fstat(fd, &st);
  if (std::uint64_t(st.st_size) > limit.maxBytes) {
    if (error) {
      // Just over the limit, both sizes round alike ("1.0 MiB, more than the 1.0 MiB"): then the bytes say it.
      const auto size = std::uint64_t(st.st_size);
      const bool alike = formatBytes(size) == formatBytes(limit.maxBytes);
      *error = alike ? path.string() + " is " + std::to_string(size) + " bytes, more than the " + std::to_string(limit.maxBytes) + " bytes (" +
                           formatBytes(limit.maxBytes) + ") " + limit.what + " may hold"
                     : tooLarge(path, formatBytes(size), limit);
    }
    return std::nullopt;
  }
  // The size can be stale (a file still growing, /proc files that report 0): read until the end,
  // but never more than one byte past the limit, whatever the size said.
  std::string data(size_t(st.st_size) + 1, '\0');
  size_t done = 0;
  for (;;) {
    if (done == data.size()) {
      if (data.size() > limit.maxBytes) break;
      data.resize(std::min<size_t>(limit.maxBytes + 1, std::max<size_t>(4096, data.size() * 2)));
    }
    const ssize_t n = ::read(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      if (error) *error = "cannot read " + path.string() + ": " + std::strerror(errno);
      return std::nullopt;
    }
    if (n == 0) break;
    done += size_t(n);
  }
  if (done > limit.maxBytes) {
    if (error) *error = tooLarge(path, "larger than that", limit);
    return std::nullopt;
  }
  data.resize(done);
  return data;
}

namespace {

// Whether the link `name` in `folder` names a process's descriptor or a device (/dev/stdout ->
// /proc/self/fd/1): replacing such a link would take the system's name away, and writing through
// it is not what an output path means.
bool descriptorLink(int folder, const std::string& name) {
  char target[4096];
  const ssize_t n = ::readlinkat(folder, name.c_str(), target, sizeof target - 1);
  if (n < 0) return false;
  const std::string_view to(target, std::size_t(n));
  return to.starts_with("/proc/") || to.starts_with("/dev/") || to.starts_with("fd/");
}

// Whether the destination may be replaced: it is missing, a regular file, or a symbolic link
// (the link itself is replaced, never what it points to) to a regular file or to nothing, unless
// it leads into /proc or /dev.
// Anything else (a FIFO, a device such as /dev/null, a folder, a link to one of them) is refused:
// renaming over it would replace a thing that is not a file of ours.
bool replaceable(int folder, const std::string& name, const std::filesystem::path& path, std::string* error) {
  struct stat st {};
  if (::fstatat(folder, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return true;  // missing
  const bool link = S_ISLNK(st.st_mode);
  if (link && descriptorLink(folder, name)) {
    if (error)
      *error = path.string() + " is a symbolic link into /proc or /dev (a descriptor or a device, such as /dev/stdout); refusing to replace "
               "it: give the path of a regular file or of a new one";
    return false;
  }
  if (link && ::fstatat(folder, name.c_str(), &st, 0) != 0) return true;  // a dangling link
  if (S_ISREG(st.st_mode)) return true;
  if (error)
    *error = path.string() + (link ? " is a symbolic link to " : " is ") + fileTypeName(st.st_mode) +
             ", not a regular file; refusing to replace it: give the path of a regular file or of a new one";
  return false;
}

// Creates a new temporary file beside the destination, `name.tmp.DIGITS`. O_EXCL | O_NOFOLLOW:
// a file or a symbolic link planted at that name is never opened (a link could otherwise make
// the write land outside the folder); another name is tried instead.
int createTemporary(int folder, const std::string& name, std::string* tmp) {
  static std::atomic<unsigned> counter{0};
  for (int attempt = 0; attempt < 100; ++attempt) {
    *tmp = name + kTemporaryInfix + std::to_string(::getpid()) + (attempt == 0 ? "" : std::to_string(counter++ % 1000000));
    const int fd = ::openat(folder, tmp->c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0644);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  errno = EEXIST;
  return -1;
}

bool writeWhole(int fd, std::string_view data) {
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

namespace {

// A file written and synced beside its destination, not yet renamed over it: the first half of
// writeFileAtomic, which writeFilesAtomic does for every file before it renames any.
struct PreparedWrite {
  std::filesystem::path path, parent;
  std::string name, tmp;  // tmp: empty once renamed (or never made)
  int folder = -1;        // every step names the folder by this descriptor, so all act on one folder

  // Removes the temporary file when it was not renamed, and closes the folder.
  void abandon() {
    if (folder < 0) return;
    if (!tmp.empty()) ::unlinkat(folder, tmp.c_str(), 0);
    ::close(folder);
    folder = -1;
  }
};

// Whether `w.name` may be written in the folder `w.folder`; false with `error` for a folder's
// name, a destination that is not a file of ours, or a name too long to write beside.
bool writable(const PreparedWrite& w, std::string* error) {
  if (w.name.empty() || w.name == "." || w.name == "..") {  // "..", ".", "out/": a folder, named as it was given
    std::error_code ec;
    const bool exists = std::filesystem::exists(std::filesystem::symlink_status(w.path, ec));
    if (error && exists)
      *error = w.path.string() + " is a folder, not a regular file; refusing to replace it: give the path of a regular file or of a new one";
    else if (error)  // "newdir/": nothing is there, but the path names a folder
      *error = w.path.string() + " names a folder (it ends in '/'), not a file; give the path of a file to write, without the trailing '/'";
    return false;
  }
  if (!replaceable(w.folder, w.name, w.path, error)) return false;
  // The temporary name is the name and up to kMaxTemporarySuffix more bytes (the process id
  // and a counter): a name that leaves no room for them is refused whatever this process's id.
  const long nameMax = ::fpathconf(w.folder, _PC_NAME_MAX);
  if (nameMax > 0 && long(w.name.size() + kMaxTemporarySuffix) > nameMax) {
    if (error)
      *error = w.path.string() + ": its name of " + std::to_string(w.name.size()) + " bytes is too long to write safely (the file is first " +
               "written beside it under a name up to " + std::to_string(kMaxTemporarySuffix) + " bytes longer, and names here have at most " +
               std::to_string(nameMax) + " bytes); give a name of at most " + std::to_string(nameMax - long(kMaxTemporarySuffix)) + " bytes";
    return false;
  }
  return true;
}

// Writes `data` to a new temporary file beside `path`, synced; false with `error` (and nothing
// left behind) when it cannot.
bool prepareWrite(const std::filesystem::path& path, std::string_view data, PreparedWrite* w, std::string* error) {
  w->path = path;
  w->parent = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  w->name = path.filename().string();
  w->folder = ::open(w->parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (w->folder < 0) {
    if (error) *error = "cannot open the folder " + w->parent.string() + " to write " + w->name + ": " + std::strerror(errno);
    return false;
  }
  if (!writable(*w, error)) {
    w->abandon();
    return false;
  }
  const int fd = createTemporary(w->folder, w->name, &w->tmp);
  if (fd < 0) {
    if (error)
      *error = "cannot write " + path.string() + ": the file is first written beside it as " + w->tmp + ", which cannot be created (" +
               std::strerror(errno) + "); give the path of a regular file in a folder you can write to";
    w->tmp.clear();  // and nothing removed: what is at that name is not ours
    w->abandon();
    return false;
  }
  const char* failed = !writeWhole(fd, data) ? "cannot write" : ::fsync(fd) != 0 ? "cannot sync" : nullptr;
  int cause = errno;
  if (::close(fd) != 0 && !failed) {
    failed = "cannot close";
    cause = errno;
  }
  if (failed) {
    if (error) *error = std::string(failed) + " " + (w->parent / w->tmp).string() + ": " + std::strerror(cause);
    w->abandon();
    return false;
  }
  return true;
}

// Renames the prepared file over its destination and syncs the folder; the folder is closed.
bool commitWrite(PreparedWrite* w, std::string* error) {
  // Checked again just before the rename: the destination may have been made since.
  if (!replaceable(w->folder, w->name, w->path, error)) {
    w->abandon();
    return false;
  }
  if (::renameat(w->folder, w->tmp.c_str(), w->folder, w->name.c_str()) != 0) {
    if (error) *error = "cannot rename " + (w->parent / w->tmp).string() + ": " + std::strerror(errno);
    w->abandon();
    return false;
  }
  w->tmp.clear();  // renamed: nothing to remove any more
  // The folder's entry is what makes the new file survive a power cut.
  const bool synced = ::fsync(w->folder) == 0 || errno == EINVAL;  // EINVAL: a file system that cannot sync folders
  if (!synced && error) *error = "cannot sync the folder " + w->parent.string() + " after writing " + w->name + ": " + std::strerror(errno);
  w->abandon();
  return synced;
}

}  // namespace

bool writeFileAtomic(const std::filesystem::path& path, std::string_view data, std::string* error) {
  PreparedWrite w;
  return prepareWrite(path, data, &w, error) && commitWrite(&w, error);
}

bool writeFilesAtomic(const std::vector<std::pair<std::filesystem::path, std::string_view>>& files, std::string* error) {
  std::vector<PreparedWrite> prepared(files.size());
  for (size_t i = 0; i < files.size(); ++i)
    if (!prepareWrite(files[i].first, files[i].second, &prepared[i], error)) {
      for (size_t j = 0; j < i; ++j) prepared[j].abandon();  // no destination was touched yet
      return false;
    }
  bool ok = true;
  for (PreparedWrite& w : prepared) ok = ok && commitWrite(&w, error);
  for (PreparedWrite& w : prepared) w.abandon();  // after a failed rename: the rest stay as they were
  return ok;
}

bool isInterruptedWrite(std::string_view fileName) {
  const size_t at = fileName.rfind(kTemporaryInfix);
  if (at == std::string_view::npos || at == 0) return false;
  const std::string_view pid = fileName.substr(at + std::strlen(kTemporaryInfix));
  return !pid.empty() && pid.find_first_not_of("0123456789") == std::string_view::npos;
}

}  // namespace cas
