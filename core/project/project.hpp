#pragma once
// project.toml: loading and validation. The format is documented in docs/project-format.md.
//
//   name = "tictactoe-alphazero"      # required
//   environment = "tictactoe"         # required, see core/env/environments.hpp
//   algorithm = "alphazero"           # required: alphazero (board games), ppo or muzero (single-agent)
//   policy = "policy.pdl"             # required, relative to the project folder and inside it
//   series = "prices.csv"             # a trading environment's price series (CSV), as policy
//   [search] / [train] / [ppo] / [trading] / [runtime] / [dist]   # optional, the tuning registry's keys
//
// Every problem becomes a diagnostic `path/project.toml:line:col: error|warning: sentence`.
// Thread-safety: plain values.
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/env/environments.hpp"
#include "core/env/price_series.hpp"
#include "core/params/parameters.hpp"
#include "core/pdl/compiler.hpp"
#include "core/support/diagnostic.hpp"

namespace cas::project {

inline constexpr const char* kProjectFileName = "project.toml";

struct Project {
  std::filesystem::path directory;    // the project folder as given
  std::filesystem::path projectFile;  // directory / project.toml
  std::string name;
  std::string description;
  std::string environment;
  std::string algorithm;
  std::filesystem::path policyFile;  // resolved: directory / policy
  // A trading environment's price series: its file (resolved: directory / series) and the bars
  // read from it when the project was loaded (null for the other environments).
  std::filesystem::path seriesFile;
  std::shared_ptr<const env::PriceSeries> series;
  params::ParameterSet parameters;   // defaults overridden by the file
  std::string text;                  // project.toml as it was loaded (a run keeps a copy)
};

struct LoadResult {
  std::optional<Project> project;  // set when there is no error (warnings allowed)
  DiagnosticList diagnostics;
  std::string source;  // the file's text, for excerpts under diagnostics
};

struct LoadOptions {
  // The policy may lie outside the project folder (`--allow-outside-project`); by default a
  // policy path that leaves the folder (absolute, "..", a symlink out) is refused.
  bool allowOutsidePaths = false;
  // Use this file as the policy instead of the one project.toml names: a run folder's copy of
  // the policy it was trained with (core/engine/run_folder.hpp).
  std::optional<std::filesystem::path> policyFile;
  // Likewise the price series: a run folder's copy of the series it was trained on.
  std::optional<std::filesystem::path> seriesFile;
};

// Accepts a project folder or the path of its project.toml (a regular file of at most 1 MiB).
LoadResult loadProject(const std::filesystem::path& folderOrFile, const LoadOptions& options = {});

// Why the name `name` cannot be part of a folder's name (a run folder is named NAME-STAMP):
// "a name must not hold '/' or '\\'", "... be '.' or '..'", "... hold control characters", "...
// hold invisible formatting or text direction characters (it holds U+202E)", "... be empty", "a
// name must be at most 100 bytes". nullopt when it can. A name is checked so when it
// is about to name a folder: as the project's title it may be anything printable.
std::optional<std::string> folderNameProblem(std::string_view name);

// The options compilePolicy compiles the project's policy with: its environment's observation
// shape and action count, its algorithm, its seed.
pdl::CompileOptions policyCompileOptions(const Project& project, std::int64_t batch, bool training = false);
// Compiles the project's policy for its environment and algorithm at `batch`. `source` receives
// the file's text (for diagnostics' excerpts); a file that cannot be read is a diagnostic.
pdl::CompileResult compilePolicy(const Project& project, std::int64_t batch, std::string* source, bool training = false);

// What the project gives its environment's copies besides its name: the price series and the
// share of it training draws from (env::EnvironmentData).
env::EnvironmentData environmentData(const Project& project);

// Whether a project may name this algorithm.
bool isKnownAlgorithm(const std::string& name);

}  // namespace cas::project
