#pragma once
// project.toml: loading and validation. The format is documented in docs/project-format.md.
//
//   name = "tictactoe-alphazero"      # required
//   environment = "tictactoe"         # required, see core/env/environments.hpp
//   algorithm = "alphazero"           # required
//   policy = "policy.pdl"             # required, relative to the project folder
//   [search] / [train] / [runtime]    # optional, keys from the tuning registry
//
// Every problem becomes a diagnostic `path/project.toml:line:col: error|warning: sentence`.
// Thread-safety: plain values.
#include <filesystem>
#include <optional>
#include <string>

#include "core/engine/parameters.hpp"
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
  engine::ParameterSet parameters;   // defaults overridden by the file
};

struct LoadResult {
  std::optional<Project> project;  // set when there is no error (warnings allowed)
  DiagnosticList diagnostics;
  std::string source;  // the file's text, for excerpts under diagnostics
};

// Accepts a project folder or the path of its project.toml.
LoadResult loadProject(const std::filesystem::path& folderOrFile);

// Algorithms a project may name, and those that are declared but not implemented yet.
bool isKnownAlgorithm(const std::string& name);

}  // namespace cas::project
