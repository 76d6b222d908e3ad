#pragma once
// The folder of the running executable (from /proc/self/exe), where the plugins are installed
// beside it; empty where it cannot be read.
// Thread-safety: a plain function.
#include <filesystem>

namespace cas {

std::filesystem::path executableDir();

}  // namespace cas
