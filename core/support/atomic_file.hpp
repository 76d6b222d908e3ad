#pragma once
// Whole-file reads and atomic writes (temp file in the same folder, fsync, rename), so a crash
// never leaves a half-written project, config or checkpoint behind.
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace cas {

// Reads the whole file; nullopt (and `error` filled) when it cannot be read.
std::optional<std::string> readFile(const std::filesystem::path& path, std::string* error = nullptr);

// Writes `data` to `path` atomically. Returns false with `error` filled on failure; the previous
// file, if any, is untouched then.
bool writeFileAtomic(const std::filesystem::path& path, std::string_view data, std::string* error = nullptr);

}  // namespace cas
