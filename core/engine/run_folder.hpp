#pragma once
// A run is a folder:
//   config.toml          the project it trains and every parameter's resolved value
//   changes.jsonl        tuning changes: {"iteration", "parameter", "from", "to"} per line
//   metrics.jsonl        one JSON object per iteration
//   checkpoints/iter-NNNNNNNN.ckpt   written atomically (temp file + rename), each ending in an
//                        FNV-1a checksum; the two newest are kept
// Thread-safety: one thread (the engine's) writes a run folder.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/engine/parameters.hpp"
#include "core/project/project.hpp"

namespace cas::engine {

class RunFolder {
 public:
  // Creates the folder and writes config.toml. Returns nullopt with `error` on failure.
  static std::optional<RunFolder> create(const std::filesystem::path& dir, const project::Project& project, std::string* error);
  // Opens an existing run: reads config.toml, loads the project it names and applies the
  // recorded parameter values.
  static std::optional<RunFolder> open(const std::filesystem::path& dir, project::Project* project, std::string* error);

  const std::filesystem::path& path() const { return dir_; }
  bool appendMetrics(const std::string& jsonLine, std::string* error);
  bool appendChange(std::int64_t iteration, const std::string& parameter, const std::string& from, const std::string& to, std::string* error);
  bool writeCheckpoint(std::int64_t iteration, const std::string& bytes, std::string* error);
  // On resume: drops metric lines of iterations after the checkpoint, which will run again.
  // Returns how many lines were dropped.
  int trimMetricsAfter(std::int64_t iteration, std::string* error);
  // The newest checkpoint whose checksum holds; every file skipped on the way is described in
  // `skipped` (e.g. "iter-00000012.ckpt: checksum mismatch (corrupted)").
  std::optional<std::string> newestCheckpoint(std::vector<std::string>* skipped, std::string* name = nullptr) const;

 private:
  explicit RunFolder(std::filesystem::path dir) : dir_(std::move(dir)) {}
  bool append(const std::string& file, const std::string& line, std::string* error);
  std::filesystem::path dir_;
};

std::uint64_t fnv1a64(std::string_view bytes);

}  // namespace cas::engine
