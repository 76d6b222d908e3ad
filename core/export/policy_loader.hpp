#pragma once
// Where an exported policy comes from: a run folder (its own copies of the project file and the
// policy, and the weights of its newest valid checkpoint or of the one asked for, restored as
// `eval` restores them, core/engine/trained_run.hpp) or a project folder (its policy with the
// initial weights its training would start from: the same seeded initialisation), or a standalone
// PDL file with the observation shape and action count given by the caller (seeded initial
// weights: an architecture to embed or time before any training).
// Thread-safety: plain functions.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/export/exportable_policy.hpp"
#include "core/support/diagnostic.hpp"

namespace cas::exports {

struct LoadedPolicy {
  std::optional<ExportablePolicy> policy;  // unset when it could not be loaded (see error)
  std::string origin;                      // "checkpoint RUN/checkpoints/iter-00000012.ckpt", "the initial weights of PROJECT"
  std::filesystem::path checkpoint;        // the checkpoint read; empty for a project's initial weights
  std::vector<std::string> skipped;        // checkpoints passed over, each with the reason
  std::vector<Diagnostic> notices;         // warnings and notes on the way (project edits, ...)
  Diagnostic error;                        // why policy is unset
};

enum class PolicySource { Run, Project, PdlFile, Neither };
// A folder with config.toml is a run, and so is one holding a run's files without it
// (engine::runWithoutConfig: opening it says why it cannot be read); one with project.toml a
// project; a regular file ending in .pdl is a standalone policy.
PolicySource policySourceOf(const std::filesystem::path& folder);

// `checkpointIteration` 0: the newest valid checkpoint; else that iteration's (runs only).
LoadedPolicy loadPolicy(const std::filesystem::path& runOrProject, std::int64_t checkpointIteration);

// What a standalone PDL file does not say itself.
struct StandaloneShape {
  std::vector<std::int64_t> observationShape;  // per sample
  int actionCount = 0;
  std::uint64_t seed = 1;  // the initial weights' seed, as runtime.seed
};
// A standalone PDL file's policy (the AlphaZero entry, `policy(obs) -> (logits, value)`) with
// seeded initial weights; the metadata's project is the file's stem and it has no environment.
LoadedPolicy loadPolicyFile(const std::filesystem::path& pdl, const StandaloneShape& shape);

}  // namespace cas::exports
