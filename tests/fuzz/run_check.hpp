#pragma once
// One fuzz input for run folders, shared by run_fuzzer.cpp (libFuzzer) and run_replay.cpp (the
// corpus replayed in CTest as test_run_replay). Where the project target (project_check.hpp)
// mutates project files and a few fixed run files, this one mutates what a run folder holds and
// what resume does with it: checkpoint files of any name whose checksum holds but whose counters
// are the fuzzer's, log lines, and links out of the run.
//
// An input is an archive in project_check.hpp's format ("--- NAME" lines). NAME is
// "run/F" for F one of kRunFiles (config.toml, the copies, the logs, lock, checkpoints, exports),
// "run/checkpoints/F" for any plain file name F (letters, digits, '.', '-', '_'; at most 64
// bytes: "iter-0002.ckpt", "iter-1099511627776.ckpt", "iter-3.ckpt.tmp.7"), or "write" (whether to
// write the next checkpoint: "0" to skip). A part's text is written as the file, except:
//   "@fifo", "@folder", "@link N"   a named pipe, a folder, a symbolic link to kLinkTargets[N]
//   "@ckpt ITER GAMES STEPS [VERSION]" on its first line: a checkpoint's header (magic, format
//                                   version, default 2, and the three counters) followed by the
//                                   rest of the part, then the checksum and trailer a run writes,
//                                   so the checksum holds whatever the counters say.
// The project (tests' small tic-tac-toe one) and the run's config.toml, project.toml and
// policy.pdl are written as a run would have them, unless a part gives them. A folder `outside`
// beside the run holds files that links may point at.
//
// Then, as `train --resume` does: the run is opened for reading (with its copies, then the
// project's files) and for writing, its newest valid checkpoint chosen, its logs repaired to that
// checkpoint's iteration, its interrupted writes removed, and the next checkpoint written
// (pruning the older ones).
//
// Checked, beyond no crash, exception or hang: every diagnostic printable and bounded; the
// checkpoint chosen is the valid one (a regular file in checkpoints/, named iter-N.ckpt, its
// checksum holding, its counters valid and its iteration N) of the highest N, judged here
// independently of the run's code, and none is chosen when there is none; the logs after the
// repair as project_check.hpp checks them; the checkpoint written reads back, the one resumed
// from is not pruned, and no file of a later iteration is; a run whose exports/ is a link is
// refused for exports; and nothing in `outside` is changed or removed.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstring>
#include <iterator>
#include <map>

#include "core/train/checkpoint_header.hpp"
#include "tests/fuzz/project_check.hpp"

namespace run_fuzz {

namespace fs = std::filesystem;

inline const char kProjectToml[] = "name = \"t\"\nenvironment = \"tictactoe\"\nalgorithm = \"alphazero\"\npolicy = \"policy.pdl\"\n";
inline const char kPolicy[] = "def policy(obs):\n    h = relu(dense(obs, units=8))\n    return dense(h, units=action_dim), tanh(dense(h, units=1))\n";
inline const char* const kRunFiles[] = {"config.toml", "project.toml", "policy.pdl", "metrics.jsonl", "changes.jsonl", "lock", "checkpoints", "exports"};
// Relative targets are read from the link's folder: run/ for run/F, run/checkpoints/ below it.
inline const char* const kLinkTargets[] = {"../outside", "/dev/null", "/dev/zero", "../outside/keep.txt", "/proc/self/status",
                                           "/nonexistent", "iter-00000001.ckpt", "../../outside", "../../outside/iter-00000001.ckpt"};
// What the run is told a checkpoint of it may hold.
inline constexpr std::uint64_t kMaxPayload = 1u << 20;

// "iter-N.ckpt" with N all digits and at most kMaxCheckpointIteration: N; nullopt otherwise.
// Written here apart from the run's own parser, as the reference it is checked against.
inline std::optional<std::int64_t> nameIteration(const std::string& name) {
  if (name.size() <= 10 || name.compare(0, 5, "iter-") != 0 || name.compare(name.size() - 5, 5, ".ckpt") != 0) return std::nullopt;
  std::int64_t n = 0;
  for (size_t i = 5; i + 5 < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9') return std::nullopt;
    if (n > cas::train::kMaxCheckpointIteration / 10) return std::nullopt;
    n = n * 10 + (name[i] - '0');
  }
  if (n > cas::train::kMaxCheckpointIteration) return std::nullopt;
  return n;
}

// A checkpoint file for `payload`: the checksum and trailer a run appends.
inline std::string sealed(std::string payload) {
  const std::uint64_t sum = cas::engine::fnv1a64(payload);
  payload.append(reinterpret_cast<const char*>(&sum), sizeof sum);
  return payload + "CASCKPT1";
}

// The text of a "@ckpt ITER GAMES STEPS [VERSION]" part as a checkpoint file; nullopt when the
// part is not one.
inline std::optional<std::string> checkpointPart(const std::string& text) {
  if (text.rfind("@ckpt ", 0) != 0) return std::nullopt;
  const size_t end = std::min(text.find('\n'), text.size());
  std::int64_t n[4] = {0, 0, 0, 2};
  const char* at = text.data() + 6;
  const char* stop = text.data() + end;
  for (int i = 0; i < 4 && at < stop; ++i) {
    while (at < stop && *at == ' ') ++at;
    const auto [next, ec] = std::from_chars(at, stop, n[i]);
    if (ec != std::errc()) return std::nullopt;
    at = next;
  }
  std::string payload;
  const std::uint32_t magic = cas::train::kCheckpointMagic, version = std::uint32_t(n[3]);
  payload.append(reinterpret_cast<const char*>(&magic), 4).append(reinterpret_cast<const char*>(&version), 4);
  for (int i = 0; i < 3; ++i) payload.append(reinterpret_cast<const char*>(&n[i]), 8);
  return sealed(payload + text.substr(std::min(end + 1, text.size())));
}

// A plain file name for run/checkpoints/.
inline bool plainName(const std::string& name) {
  if (name.empty() || name.size() > 64 || name == "." || name == "..") return false;
  for (char c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '_') return false;
  return true;
}

// Writes one part at `file`, in the folder whose links' relative targets kLinkTargets names.
inline void writePart(const fs::path& file, const std::string& text, const fs::path& projectDir) {
  std::error_code ec;
  fs::remove(file, ec);
  if (text == "@fifo" || text == "@fifo\n") {
    ::mkfifo(file.c_str(), 0644);
  } else if (text == "@folder" || text == "@folder\n") {
    fs::create_directory(file, ec);
  } else if (text.rfind("@link ", 0) == 0) {
    const auto n = cas::parseInteger(text.substr(6, 1), 0, std::int64_t(std::size(kLinkTargets)) - 1);
    fs::create_symlink(kLinkTargets[n.value_or(0)], file, ec);
  } else if (auto checkpoint = checkpointPart(text)) {
    std::ofstream(file, std::ios::binary) << *checkpoint;
  } else {
    std::string bytes = text;
    for (size_t at; (at = bytes.find("@project")) != std::string::npos;) bytes.replace(at, 8, projectDir.string());
    std::ofstream(file, std::ios::binary) << bytes;
  }
}

// The scratch folder laid out: project/, outside/ (three files) and run/ with the input's parts
// over a run's defaults. Whether to write the next checkpoint.
inline bool layOut(std::string_view input, const fs::path& scratch) {
  std::error_code ec;
  fs::remove_all(scratch, ec);
  const fs::path project = scratch / "project", run = scratch / "run", outside = scratch / "outside";
  for (const fs::path& p : {project, run / "checkpoints", outside}) fs::create_directories(p, ec);
  std::ofstream(project / "project.toml") << kProjectToml;
  std::ofstream(project / "policy.pdl") << kPolicy;
  std::ofstream(run / "project.toml") << kProjectToml;
  std::ofstream(run / "policy.pdl") << kPolicy;
  std::ofstream(run / "config.toml") << "project = \"" << project.string() << "\"\n";
  std::ofstream(outside / "keep.txt") << "someone else's file\n";
  std::ofstream(outside / "iter-00000001.ckpt", std::ios::binary) << *checkpointPart("@ckpt 1 1 1\nsomeone else's checkpoint");
  std::ofstream(outside / "policy.onnx") << "someone else's model\n";
  bool write = true;
  for (const project_fuzz::Part& part : project_fuzz::parts(input)) {
    if (part.name == "write") {
      write = part.text.rfind('0', 0) != 0;
      continue;
    }
    fs::path file;
    for (const char* f : kRunFiles)
      if (part.name == std::string("run/") + f) file = run / f;
    if (file.empty() && part.name.rfind("run/checkpoints/", 0) == 0 && plainName(part.name.substr(16))) file = scratch / part.name;
    if (file.empty()) continue;
    if (!fs::is_directory(fs::symlink_status(file.parent_path(), ec))) continue;  // run/checkpoints made something else
    writePart(file, part.text, project);
  }
  return write;
}

// Each regular file of `folder` with its bytes (what must not change).
inline std::map<std::string, std::string> snapshot(const fs::path& folder) {
  std::map<std::string, std::string> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(folder, ec)) {
    std::ifstream in(entry.path(), std::ios::binary);
    out[entry.path().filename().string()] = std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  return out;
}

// The iterations of the valid checkpoints of run/checkpoints, judged here: a regular file (not a
// link) of at most kMaxPayload bytes and its trailer, the trailer and checksum in place, counters
// the header reader accepts, an iteration from 1, the one its name gives.
inline std::map<std::int64_t, std::vector<std::string>> validCheckpoints(const fs::path& folder) {
  std::map<std::int64_t, std::vector<std::string>> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(folder, ec)) {
    const std::string name = entry.path().filename().string();
    const auto named = nameIteration(name);
    if (!named || !fs::is_regular_file(fs::symlink_status(entry.path(), ec)) || fs::file_size(entry.path(), ec) > kMaxPayload + 16) continue;
    std::ifstream in(entry.path(), std::ios::binary);
    std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (data.size() < 16 || data.compare(data.size() - 8, 8, "CASCKPT1") != 0) continue;
    std::uint64_t sum;
    std::memcpy(&sum, data.data() + data.size() - 16, 8);
    data.resize(data.size() - 16);
    const auto header = cas::train::readCheckpointHeader(data, nullptr);
    if (sum == cas::engine::fnv1a64(data) && header && header->iteration >= 1 && header->iteration == *named) out[*named].push_back(name);
  }
  return out;
}

// The newest checkpoint against the reference; the iteration it holds (0: none).
inline std::string checkChoice(const cas::engine::RunFolder& folder, const fs::path& run, std::int64_t* iteration, std::string* bytes) {
  const auto valid = validCheckpoints(run / "checkpoints");
  std::vector<std::string> skipped;
  std::string name;
  const auto chosen = folder.newestCheckpoint(kMaxPayload, &skipped, &name);
  for (const std::string& s : skipped)
    if (auto bad = project_fuzz::unprintable(s); !bad.empty()) return "newestCheckpoint: " + bad;
  *iteration = 0;
  if (!chosen) return valid.empty() ? std::string() : "no checkpoint chosen, but " + valid.rbegin()->second.front() + " is valid";
  if (valid.empty()) return "newestCheckpoint chose " + name + ", which is not valid";
  const auto header = cas::train::readCheckpointHeader(*chosen, nullptr);
  if (!header || nameIteration(name) != header->iteration) return "newestCheckpoint chose " + name + ", whose counters are not valid";
  if (header->iteration != valid.rbegin()->first)
    return "newestCheckpoint chose " + name + ", but " + valid.rbegin()->second.front() + " is valid and newer";
  *iteration = header->iteration;
  *bytes = *chosen;
  return {};
}

// The run's logs repaired to `iteration`, and checked as project_check.hpp checks them.
inline std::string checkRepair(cas::engine::RunFolder& folder, const fs::path& run, std::int64_t iteration) {
  std::vector<cas::Diagnostic> notices;
  std::string problem;
  const auto changes = folder.repairLogs(iteration, &notices, &problem);
  folder.removeInterruptedWrites(&notices);
  for (const cas::Diagnostic& d : notices)
    if (auto bad = project_fuzz::checkDiagnostic(d); !bad.empty()) return "repairing the run: " + bad;
  if (!changes) return project_fuzz::unprintable(problem);
  for (const auto& c : *changes)
    if (c.iteration > iteration + 1) return "repairLogs kept a change after the next iteration";
  std::int64_t last = 0;
  const std::string metrics = project_fuzz::checkLog(run / "metrics.jsonl", [&](std::string_view line) {
    const auto n = project_fuzz::lineIteration(line);
    const bool ok = n && *n > last && *n <= iteration;
    last = n.value_or(last);
    return ok;
  });
  if (!metrics.empty()) return metrics;
  return project_fuzz::checkLog(run / "changes.jsonl", [&](std::string_view line) {
    const auto n = project_fuzz::lineIteration(line);
    return n && *n <= iteration + 1;
  });
}

// The next checkpoint written over `resumed` (the file of iteration `iteration`): it reads back;
// the one resumed from stays, and so does every file of a later iteration.
inline std::string checkWrite(cas::engine::RunFolder& folder, const fs::path& run, std::int64_t iteration, std::string payload) {
  if (iteration >= cas::train::kMaxCheckpointIteration) return {};
  const auto before = validCheckpoints(run / "checkpoints");
  std::vector<std::string> later;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(run / "checkpoints", ec))
    if (const auto n = nameIteration(entry.path().filename().string()); n && *n > iteration) later.push_back(entry.path().filename().string());
  const std::int64_t next = iteration + 1;
  std::memcpy(payload.data() + 8, &next, sizeof next);
  std::string error;
  if (!folder.writeCheckpoint(next, payload, &error)) return project_fuzz::unprintable(error);
  const auto after = validCheckpoints(run / "checkpoints");
  const auto resumed = before.find(iteration);
  if (resumed != before.end() && !after.count(iteration)) return "writing the next checkpoint pruned the one of iteration " + std::to_string(iteration);
  for (const std::string& name : later)
    if (!fs::exists(fs::symlink_status(run / "checkpoints" / name, ec))) return "writing the next checkpoint removed " + name;
  std::string name;
  const auto back = folder.checkpointOf(next, kMaxPayload, &error, &name);
  if (!back || *back != payload) return "the checkpoint of iteration " + std::to_string(next) + " does not read back: " + error;
  return {};
}

// Writes the input's files into `scratch` (emptied first) and resumes the run; empty when all holds.
inline std::string check(std::string_view input, const fs::path& scratch) {
  const bool write = layOut(input, scratch);
  const fs::path run = scratch / "run";
  const auto outside = snapshot(scratch / "outside");
  for (const bool useProjectFiles : {false, true}) {
    cas::project::Project project;
    cas::Diagnostic error;
    std::vector<cas::Diagnostic> notices;
    const auto folder = cas::engine::RunFolder::open(run, cas::engine::RunAccess::Read, useProjectFiles, &project, &error, &notices);
    if (!folder)
      if (auto problem = project_fuzz::checkDiagnostic(error); !problem.empty()) return "RunFolder::open: " + problem;
    for (const cas::Diagnostic& d : notices)
      if (auto problem = project_fuzz::checkDiagnostic(d); !problem.empty()) return "RunFolder::open: " + problem;
  }
  std::error_code ec;
  const bool exportsLinked = fs::is_symlink(fs::symlink_status(run / "exports", ec));
  if (cas::engine::linkedRunFolder(run, "exports").has_value() != exportsLinked) return "a link at exports/ is not told apart";
  std::string problem;
  {
    cas::project::Project project;
    cas::Diagnostic error;
    std::vector<cas::Diagnostic> notices;
    auto folder = cas::engine::RunFolder::open(run, cas::engine::RunAccess::Write, false, &project, &error, &notices);
    if (!folder) {
      problem = project_fuzz::checkDiagnostic(error);
    } else {
      std::int64_t iteration = 0;
      std::string bytes;
      problem = checkChoice(*folder, run, &iteration, &bytes);
      if (problem.empty() && iteration > 0) problem = checkRepair(*folder, run, iteration);
      if (problem.empty() && iteration > 0 && write) problem = checkWrite(*folder, run, iteration, bytes);
    }
  }
  if (problem.empty() && snapshot(scratch / "outside") != outside) problem = "a file outside the run folder was changed or removed";
  return problem;
}

}  // namespace run_fuzz
