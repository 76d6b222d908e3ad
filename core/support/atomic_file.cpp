#include "core/support/atomic_file.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace cas {
namespace {

const char* kTemporaryInfix = ".tmp.";

const char* fileTypeName(mode_t mode) {
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISFIFO(mode)) return "a named pipe (FIFO)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a plain file";
}

std::string tooLarge(const std::filesystem::path& path, const std::string& size, const FileLimit& limit) {
  return path.string() + " is " + size + ", more than the " + formatBytes(limit.maxBytes) + " " + limit.what + " may hold";
}

}  // namespace

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
  const int flags = mode == OpenFor::Reading ? O_RDONLY : O_RDWR | O_APPEND | O_CREAT | O_NOFOLLOW;
  const int fd = ::open(path.c_str(), flags | O_NONBLOCK | O_CLOEXEC | O_NOCTTY, 0644);
  if (fd < 0 && errno == ELOOP && mode == OpenFor::Appending) {
    if (error) *error = path.string() + " is a symbolic link; " + limit.what + " is written in place, so it must be a regular file";
    return -1;
  }
  if (fd < 0) {
    if (error) *error = "cannot open " + path.string() + ": " + std::strerror(errno);
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

std::optional<std::string> readFile(const std::filesystem::path& path, const FileLimit& limit, std::string* error) {
  const int fd = openRegularFile(path, limit, error);
  if (fd < 0) return std::nullopt;
  auto data = readAll(fd, path, limit, error);
  ::close(fd);
  return data;
}

std::optional<std::string> readAll(int fd, const std::filesystem::path& path, const FileLimit& limit, std::string* error) {
  struct stat st {};
  ::fstat(fd, &st);
  if (std::uint64_t(st.st_size) > limit.maxBytes) {
    if (error) *error = tooLarge(path, formatBytes(std::uint64_t(st.st_size)), limit);
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

bool writeFileAtomic(const std::filesystem::path& path, std::string_view data, std::string* error) {
  const std::string tmp = path.string() + kTemporaryInfix + std::to_string(::getpid());
  auto fail = [&](const char* what) {
    if (error) *error = std::string(what) + " " + tmp + ": " + std::strerror(errno);
    ::unlink(tmp.c_str());
    return false;
  };
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return fail("cannot create");
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      ::close(fd);
      return fail("cannot write");
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) {
    ::close(fd);
    return fail("cannot sync");
  }
  if (::close(fd) != 0) return fail("cannot close");
  if (::rename(tmp.c_str(), path.c_str()) != 0) return fail("cannot rename");
  return true;
}

bool isInterruptedWrite(std::string_view fileName) {
  const size_t at = fileName.rfind(kTemporaryInfix);
  if (at == std::string_view::npos || at == 0) return false;
  const std::string_view pid = fileName.substr(at + std::strlen(kTemporaryInfix));
  return !pid.empty() && pid.find_first_not_of("0123456789") == std::string_view::npos;
}

}  // namespace cas
