#pragma once
// The folder of the running executable (from /proc/self/exe), where the plugins are installed
// beside it; empty where it cannot be read.
// Thread-safety: a plain function.
#include <filesystem>

namespace cas {

std::filesystem::path executableDir();

// Where a plugin is loaded from: the environment variable's value when set, else `fileName`
// beside the executable. A name without a '/' becomes ./NAME: dlopen would search the library
// path for it, and load another file than the one checked in the current folder.
std::filesystem::path pluginPath(const char* environmentVariable, const char* fileName);

}  // namespace cas
