#include "core/support/executable_dir.hpp"

#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <string>

namespace cas {

std::filesystem::path executableDir() {
  char buf[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return {};
  buf[n] = '\0';
  return std::filesystem::path(buf).parent_path();
}

std::filesystem::path pluginPath(const char* environmentVariable, const char* fileName) {
  std::filesystem::path path;
  if (const char* env = std::getenv(environmentVariable); env && *env) path = env;
  else path = executableDir() / fileName;
  if (path.string().find('/') == std::string::npos) path = "./" + path.string();
  return path;
}

}  // namespace cas
