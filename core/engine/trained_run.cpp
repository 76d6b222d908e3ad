#include "core/engine/trained_run.hpp"

#include <algorithm>
#include <stdexcept>
#include <string_view>

#include "core/env/environments.hpp"
#include "core/support/printable.hpp"
#include "core/train/alphazero.hpp"
#include "core/train/checkpoint_header.hpp"

namespace cas::engine {
namespace {

Diagnostic failure(std::string message) { return {Severity::Error, {}, std::move(message), {}}; }

// A logged parameter's name as a message shows it: a known name as it is, anything else (the log
// is a file anyone may have edited: 100 KB of it, escape sequences) quoted and cut.
std::string shownParameter(const std::string& name) {
  return params::ParameterRegistry::standard().find(name) ? name : quoteValue(name);
}

// Applies a change from changes.jsonl; the reason when it cannot be.
std::optional<std::string> applyLoggedChange(train::Trainer& trainer, const RunFolder::LoggedChange& change) {
  const params::ParameterSpec* spec = params::ParameterRegistry::standard().find(change.parameter);
  if (!spec) return "unknown parameter " + quoteValue(change.parameter);
  std::string problem;
  const std::optional<params::ParamValue> value = params::parseValue(*spec, change.to, &problem);
  if (!value) return problem;
  return trainer.setParameter(change.parameter, *value);
}

// Resuming from the checkpoint the trainer holds: the iterations after it run again, so their
// log lines go, the changes applied up to the next iteration apply again, the folder loses what a
// kill left half-written, and with --use-project the run's copies become the project's files.
// A run at the most iterations a run can have (train::kMaxCheckpointIteration), or near the
// most games or steps a checkpoint may count, is not resumed: its next checkpoint would claim
// what no checkpoint may, and be skipped (the run would redo that iteration on every resume).
bool resume(RunFolder& folder, train::Trainer& trainer, const OpenRunOptions& options, const std::string& checkpoint,
            const train::CheckpointHeader& counts, std::vector<Diagnostic>* notices, std::string* problem) {
  const std::string cannot = "; it cannot be trained further: train a new run, or this one again with --restart";
  if (trainer.iteration() >= train::kMaxCheckpointIteration) {
    *problem = folder.path().string() + " has reached iteration " + std::to_string(trainer.iteration()) + " (checkpoints/" + checkpoint +
               "), the most iterations a run can have" + cannot;
    return false;
  }
  if (std::max(counts.gamesPlayed, counts.optimizerSteps) > train::kMaxCheckpointCount - train::kMaxCountPerIteration) {
    *problem = folder.path().string() + " counts " + std::to_string(std::max(counts.gamesPlayed, counts.optimizerSteps)) +
               " games or optimizer steps (checkpoints/" + checkpoint + "), within one iteration of the " +
               std::to_string(train::kMaxCheckpointCount) + " a checkpoint may count" + cannot;
    return false;
  }
  const auto changes = folder.repairLogs(trainer.iteration(), notices, problem);
  if (!changes) return false;
  size_t refused = 0;
  for (const RunFolder::LoggedChange& c : *changes)
    if (auto why = applyLoggedChange(trainer, c)) {
      ++refused;
      notices->push_back({Severity::Warning, {(folder.path() / "changes.jsonl").string(), c.line, 0},
                          "the change of " + shownParameter(c.parameter) + " at iteration " + std::to_string(c.iteration) +
                              " is not applied again: " + *why,
                          {}});
    }
  const std::string upTo = " parameter change(s) logged up to iteration " + std::to_string(trainer.iteration() + 1);
  if (!changes->empty() && refused == 0) notices->push_back({Severity::Note, {}, "applied again the " + std::to_string(changes->size()) + upTo, {}});
  if (refused > 0)
    notices->push_back({Severity::Note, {}, "applied again " + std::to_string(changes->size() - refused) + " of the " + std::to_string(changes->size()) +
                                                upTo + "; " + std::to_string(refused) + " refused (see the warnings above)",
                        {}});
  folder.removeInterruptedWrites(notices);
  return !options.useProjectFiles || folder.adoptProjectFiles(trainer.project(), trainer.iteration() + 1, notices, problem);
}

// "a ppo", "an alphazero".
std::string withArticle(const std::string& word) {
  return (!word.empty() && std::string_view("aeiou").find(word[0]) != std::string_view::npos ? "an " : "a ") + word;
}

// Why the run `dir` of `project` is not of the kind asked for: of another algorithm than
// `onlyAlgorithm` (when given), or, with `singleAgent`, a run of a two-player game. nullopt when it is.
std::optional<std::string> wrongKind(const std::filesystem::path& dir, const project::Project& project, const char* onlyAlgorithm, bool singleAgent) {
  if (onlyAlgorithm && project.algorithm != onlyAlgorithm)
    return dir.string() + " is " + withArticle(project.algorithm) + " run; this needs " + withArticle(onlyAlgorithm) + " run (`cuda-agent eval " +
           dir.string() + " --episodes N` evaluates a single-agent run)";
  const env::EnvironmentInfo* environment = env::findEnvironment(project.environment);
  if (singleAgent && environment && environment->twoPlayer)
    return dir.string() + " is " + withArticle(project.algorithm) + " run of a two-player game; --episodes evaluates single-agent runs: play it " +
           "against an opponent with --opponent and --games";
  return std::nullopt;
}

// The payload of the checkpoint a reader or a resume starts from, restored into `trainer`: the
// newest one it can restore, or with options.checkpointIteration (a reader's) that iteration's.
// `name` receives its file name; nullopt with out.error when there is none.
std::optional<std::string> restoreCheckpoint(OpenedRun<train::Trainer>& out, train::Trainer& trainer, const OpenRunOptions& options,
                                             const std::filesystem::path& dir, std::string* name) {
  std::string problem;
  std::optional<std::string> bytes;
  bool restored = false;  // the newest checkpoint the trainer could restore (a damaged payload is skipped)
  if (options.use == RunUse::Read && options.checkpointIteration > 0) {
    bytes = out.folder->checkpointOf(options.checkpointIteration, trainer.checkpointSizeLimit(), &problem, name);
    if (!bytes) {
      out.error = failure(problem);
      return std::nullopt;
    }
  } else {
    std::optional<std::string> refusal;  // why the trainer refused the newest checkpoint it was given
    auto restore = [&](const std::string& b, std::string* why) {
      const bool ok = trainer.restore(b, why);
      if (!ok && !refusal) refusal = *why;
      return ok;
    };
    bytes = out.folder->newestCheckpoint(trainer.checkpointSizeLimit(), &out.skipped, name, restore);
    restored = bytes.has_value();
    if (!bytes && refusal) {  // none fits this network: the newest's reason says why (say, a layer's size changed)
      for (auto s = out.skipped.rbegin(); s != out.skipped.rend(); ++s)  // the newest was skipped first
        if (s->ends_with(": " + *refusal)) *name = s->substr(0, s->size() - refusal->size() - 2);
      out.error = failure("checkpoint " + *name + " cannot be used: " + *refusal);
      return std::nullopt;
    }
  }
  if (!bytes) {
    out.error = failure(options.use == RunUse::Resume
                            ? dir.string() + " has no valid checkpoint to resume from; `cuda-agent train --restart " + dir.string() +
                                  "` discards its progress and trains it again from iteration 1, or train into a new --out folder"
                            : dir.string() + " has no valid checkpoint yet");
    return std::nullopt;
  }
  if (!restored && !trainer.restore(*bytes, &problem)) {
    out.error = failure("checkpoint " + *name + " cannot be used: " + problem);
    return std::nullopt;
  }
  return bytes;
}

// Opens the run; with `onlyAlgorithm`, a run of another algorithm is refused before its trainer is built.
OpenedRun<train::Trainer> openRunOf(const std::filesystem::path& dir, std::shared_ptr<exec::Backend> backend, const OpenRunOptions& options,
                               const char* onlyAlgorithm) {
  OpenedRun<train::Trainer> out;
  project::Project project;
  const RunAccess access = options.use == RunUse::Read ? RunAccess::Read : RunAccess::Write;
  out.folder = RunFolder::open(dir, access, options.useProjectFiles, &project, &out.error, &out.notices);
  if (!out.folder) return out;
  // Refused before a trainer is built or a checkpoint read: a run of the wrong kind, and an
  // unreadable folder or checkpoint, which is no reason to skip to an older checkpoint, nor, for
  // training, to cut or discard anything.
  std::optional<std::string> blocked = wrongKind(dir, project, onlyAlgorithm, options.singleAgent);
  if (!blocked) blocked = out.folder->inaccessible(access);
  if (!blocked && options.use == RunUse::Resume) blocked = out.folder->checkpointThatBlocksTraining();
  if (blocked) {
    out.error = failure(*blocked);
    out.folder.reset();
    return out;
  }
  std::unique_ptr<train::Trainer> trainer;
  try {
    const bool toTrain = options.use != RunUse::Read;
    trainer = train::makeTrainer(project, std::move(backend), toTrain ? options.parallel : train::ParallelOptions{}, toTrain);
  } catch (const std::exception& e) {  // the policy does not compile, or the configuration cannot fit
    out.error = failure(e.what());
    return out;
  }
  std::string problem;
  if (options.use == RunUse::Restart) {
    if (!out.folder->discardProgress(&out.notices, &problem)) {
      out.error = failure(problem);
      return out;
    }
    out.folder->removeInterruptedWrites(&out.notices);
    out.trainer = std::move(trainer);
    return out;
  }
  std::string name;
  const std::optional<std::string> bytes = restoreCheckpoint(out, *trainer, options, dir, &name);
  if (!bytes) return out;
  out.checkpoint = out.folder->path() / "checkpoints" / name;
  if (options.use == RunUse::Resume &&
      !resume(*out.folder, *trainer, options, name, train::readCheckpointHeader(*bytes).value_or(train::CheckpointHeader{}), &out.notices, &problem)) {
    out.error = failure(problem);
    return out;
  }
  out.trainer = std::move(trainer);
  return out;
}

}  // namespace

OpenedRun<train::Trainer> openAnyRun(const std::filesystem::path& dir, std::shared_ptr<exec::Backend> backend, const OpenRunOptions& options) {
  return openRunOf(dir, std::move(backend), options, nullptr);
}

TrainedRun openTrainedRun(const std::filesystem::path& dir, std::shared_ptr<exec::Backend> backend, const OpenRunOptions& options) {
  OpenedRun<train::Trainer> any = openRunOf(dir, std::move(backend), options, "alphazero");
  TrainedRun out{nullptr, std::move(any.folder), std::move(any.checkpoint), std::move(any.skipped), std::move(any.notices), std::move(any.error)};
  // Only an AlphaZero project reaches makeTrainer here, which builds an AlphaZeroTrainer for it.
  if (any.trainer) out.trainer.reset(static_cast<train::AlphaZeroTrainer*>(any.trainer.release()));
  return out;
}

}  // namespace cas::engine
