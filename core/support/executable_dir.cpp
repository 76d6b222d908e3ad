#include "core/support/executable_dir.hpp"

#include <unistd.h>

#include <climits>

namespace cas {

std::filesystem::path executableDir() {
  char buf[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return {};
  buf[n] = '\0';
  return std::filesystem::path(buf).parent_path();
}

}  // namespace cas
