#include "core/support/atomic_file.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <sstream>
#include <unistd.h>

namespace cas {

std::optional<std::string> readFile(const std::filesystem::path& path, std::string* error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    if (error) *error = "cannot open " + path.string() + ": " + std::strerror(errno);
    return std::nullopt;
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) {
    if (error) *error = "cannot read " + path.string();
    return std::nullopt;
  }
  return ss.str();
}

bool writeFileAtomic(const std::filesystem::path& path, std::string_view data, std::string* error) {
  const std::string tmp = path.string() + ".tmp." + std::to_string(::getpid());
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

}  // namespace cas
