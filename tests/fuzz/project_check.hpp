#pragma once
// One fuzz input for project.toml and run-folder loading, shared by project_fuzzer.cpp (libFuzzer)
// and project_replay.cpp (the corpus replayed in CTest as test_project_replay).
//
// An input is a small archive of files, each part starting with a line "--- NAME":
//
//   --- project.toml
//   name = "t"
//   ...
//   --- run/config.toml
//   project = "@project"        "@project" stands for the scratch project folder's path
//   --- run/metrics.jsonl
//   {"iteration": 1, ...}
//   --- iteration
//   3                           the checkpoint's iteration the run's logs are repaired to
//
// NAME is one of kFiles (others are ignored, so nothing is written outside the scratch folder). A
// part whose text is "@fifo", "@folder" or "@link N" becomes a named pipe, a folder, or a symbolic
// link to kLinkTargets[N] instead of a file (run/checkpoints itself too: "@link 6" makes it a link
// to the project folder). Then: the project is loaded and its diagnostics
// formatted; the run is opened for reading (with its own copies, then with the project's files),
// then for writing, its logs repaired to the iteration, its newest checkpoint read and its
// interrupted writes removed.
//
// Checked: no crash, exception or hang (the caller's limits); a project or run exactly when there
// is no error; every diagnostic printed free of control characters and under 64 KiB; after the
// repair, metrics.jsonl holds whole lines, each a JSON object of an iteration up to the given one,
// in increasing order, and changes.jsonl whole lines (JSON objects) up to the next iteration.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/engine/run_folder.hpp"
#include "core/project/project.hpp"
#include "core/support/atomic_file.hpp"
#include "core/support/numbers.hpp"

namespace project_fuzz {

namespace fs = std::filesystem;

inline const char* const kFiles[] = {
    "project.toml",      "policy.pdl",          "other.pdl",          "run/config.toml",
    "run/project.toml",  "run/policy.pdl",      "run/metrics.jsonl",  "run/changes.jsonl",
    "run/lock",          "run/checkpoints/iter-00000001.ckpt",        "run/checkpoints/iter-00000002.ckpt",
    "run/checkpoints/iter-00000002.ckpt.tmp.7", "run/config.toml.tmp.9",       "run/checkpoints",
    "run/checkpoints/iter-9.ckpt",
};
inline const char* const kLinkTargets[] = {"/dev/zero", "/dev/null", "/proc/self/status", "../project.toml", "policy.pdl", "/nonexistent", "../project"};

struct Part {
  std::string name, text;
};

// The parts of an input, in order; text before the first "--- " line is ignored.
inline std::vector<Part> parts(std::string_view input) {
  std::vector<Part> out;
  for (size_t start = 0; start < input.size();) {
    const size_t end = input.find('\n', start);
    const size_t next = end == std::string_view::npos ? input.size() : end + 1;
    const std::string_view line = input.substr(start, next - start);
    if (line.substr(0, 4) == "--- ") out.push_back({std::string(line.substr(4, line.size() - 4 - (line.back() == '\n'))), {}});
    else if (!out.empty()) out.back().text += line;
    start = next;
  }
  return out;
}

// Empty when the text is safe to print: no control characters but newlines and tabs, bounded.
inline std::string unprintable(const std::string& printed) {
  if (printed.size() > (64u << 10)) return "a diagnostic of " + std::to_string(printed.size()) + " bytes";
  for (char c : printed) {
    const auto u = static_cast<unsigned char>(c);
    if ((u < 0x20 && c != '\n' && c != '\t') || u == 0x7F) return "a control character (" + std::to_string(u) + ") printed in: " + printed;
  }
  return {};
}

inline std::string checkDiagnostic(const cas::Diagnostic& d, std::string_view source = {}) {
  if (d.message.empty()) return "a diagnostic without a message";
  return unprintable(cas::formatDiagnostic(d, source));
}

// Whole lines only, each accepted by `lineOk`.
inline std::string checkLog(const fs::path& file, const std::function<bool(std::string_view)>& lineOk) {
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(file, ec))) return {};
  std::string error;
  const auto text = cas::readFile(file, cas::kRunLogLimit, &error);
  if (!text) return "after the repair, " + file.filename().string() + " cannot be read: " + error;
  if (!text->empty() && text->back() != '\n') return "after the repair, " + file.filename().string() + " ends in a partial line";
  for (size_t start = 0; start < text->size();) {
    const size_t end = text->find('\n', start);
    if (!lineOk(std::string_view(*text).substr(start, end - start))) return "after the repair, " + file.filename().string() + " keeps a bad line";
    start = end + 1;
  }
  return {};
}

// The iteration of a log line: a JSON object whose "iteration" is a whole number from 1.
inline std::optional<std::int64_t> lineIteration(std::string_view line) {
  const nlohmann::json j = nlohmann::json::parse(line.begin(), line.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object() || !j.contains("iteration") || !j["iteration"].is_number_integer()) return std::nullopt;
  const auto n = j["iteration"].get<std::int64_t>();
  return n >= 1 ? std::optional<std::int64_t>(n) : std::nullopt;
}

// Writes the input's files into `scratch` (emptied first) and loads them; empty when all holds.
inline std::string check(std::string_view input, const fs::path& scratch) {
  std::error_code ec;
  fs::remove_all(scratch, ec);
  fs::create_directories(scratch / "project", ec);
  fs::create_directories(scratch / "run" / "checkpoints", ec);
  const fs::path projectDir = scratch / "project";
  std::int64_t iteration = 3;
  for (const Part& part : parts(input)) {
    if (part.name == "iteration") {
      iteration = cas::parseInteger(part.text.substr(0, part.text.find('\n')), 0, 1000000).value_or(3);
      continue;
    }
    bool known = false;
    for (const char* f : kFiles) known |= part.name == f;
    if (!known) continue;
    const fs::path file = part.name.rfind("run/", 0) == 0 ? scratch / part.name : projectDir / part.name;
    fs::remove(file, ec);
    if (part.text == "@fifo" || part.text == "@fifo\n") {
      ::mkfifo(file.c_str(), 0644);
    } else if (part.text == "@folder" || part.text == "@folder\n") {
      fs::create_directory(file, ec);
    } else if (part.text.rfind("@link ", 0) == 0) {
      const auto n = cas::parseInteger(part.text.substr(6, 1), 0, std::size(kLinkTargets) - 1);
      fs::create_symlink(kLinkTargets[n.value_or(0)], file, ec);
    } else {
      std::string text = part.text;
      for (size_t at; (at = text.find("@project")) != std::string::npos;) text.replace(at, 8, projectDir.string());
      std::ofstream(file, std::ios::binary) << text;
    }
  }

  cas::project::LoadResult loaded = cas::project::loadProject(projectDir);
  if (loaded.project.has_value() == loaded.diagnostics.hasErrors()) return "loadProject: a project together with errors, or neither";
  if (loaded.diagnostics.items().size() > 64) return "loadProject: " + std::to_string(loaded.diagnostics.items().size()) + " diagnostics";
  for (const cas::Diagnostic& d : loaded.diagnostics.items())
    if (auto problem = checkDiagnostic(d, loaded.source); !problem.empty()) return "loadProject: " + problem;

  const fs::path run = scratch / "run";
  for (const bool useProjectFiles : {false, true}) {
    cas::project::Project project;
    cas::Diagnostic error;
    std::vector<cas::Diagnostic> notices;
    const auto folder = cas::engine::RunFolder::open(run, cas::engine::RunAccess::Read, useProjectFiles, &project, &error, &notices);
    if (!folder)
      if (auto problem = checkDiagnostic(error); !problem.empty()) return "RunFolder::open: " + problem;
    for (const cas::Diagnostic& d : notices)
      if (auto problem = checkDiagnostic(d); !problem.empty()) return "RunFolder::open: " + problem;
  }

  cas::project::Project project;
  cas::Diagnostic error;
  std::vector<cas::Diagnostic> notices;
  auto folder = cas::engine::RunFolder::open(run, cas::engine::RunAccess::Write, false, &project, &error, &notices);
  if (!folder) return checkDiagnostic(error).empty() ? std::string() : "RunFolder::open for writing: " + checkDiagnostic(error);
  std::vector<std::string> skipped;
  if (const auto bytes = folder->newestCheckpoint(1u << 20, &skipped); bytes && bytes->size() > (1u << 20))
    return "newestCheckpoint returned more than the limit";
  std::string problem;
  const auto changes = folder->repairLogs(iteration, &notices, &problem);
  folder->removeInterruptedWrites(&notices);
  for (const cas::Diagnostic& d : notices)
    if (auto bad = checkDiagnostic(d); !bad.empty()) return "repairing the run: " + bad;
  if (!changes) return unprintable(problem);
  for (const auto& c : *changes)
    if (c.iteration > iteration + 1) return "repairLogs kept a change after the next iteration";
  std::int64_t last = 0;
  if (auto bad = checkLog(run / "metrics.jsonl", [&](std::string_view line) {
        const auto n = lineIteration(line);
        const bool ok = n && *n > last && *n <= iteration;
        last = n.value_or(last);
        return ok;
      });
      !bad.empty())
    return bad;
  return checkLog(run / "changes.jsonl", [&](std::string_view line) {
    const auto n = lineIteration(line);
    return n && *n <= iteration + 1;
  });
}

}  // namespace project_fuzz
