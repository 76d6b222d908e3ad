#include "core/engine/run_folder.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <toml++/toml.h>

#include "core/params/parameter_toml.hpp"
#include "core/support/atomic_file.hpp"
#include "core/support/numbers.hpp"
#include "core/support/printable.hpp"
#include "core/support/toml_parse.hpp"

namespace cas::engine {
namespace {

constexpr char kTrailerMagic[8] = {'C', 'A', 'S', 'C', 'K', 'P', 'T', '1'};
constexpr int kKeptCheckpoints = 2;
// The run's own copies of what it was started from.
const char* const kRunProjectFile = "project.toml";
const char* const kRunPolicyFile = "policy.pdl";

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string tomlValue(const params::ParameterSpec& spec, const params::ParamValue& v) {
  if (spec.type == params::ParamType::Choice) return quoted(std::get<std::string>(v));
  if (spec.type == params::ParamType::Float) {
    std::string s = params::formatValue(v);
    if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
    return s;
  }
  return params::formatValue(v);
}

Diagnostic sentence(Severity severity, std::string message, SourceLocation where = {}) {
  return {severity, std::move(where), std::move(message), {}};
}

// Line `n` (1-based) of `text` for a message: escaped, and cut after 60 bytes.
std::string quotedLine(std::string_view text, int n) {
  std::string_view line = sourceLine(text, n);
  const bool cut = line.size() > 60;
  if (cut) line = line.substr(0, 60);
  return "'" + printable(line) + (cut ? "...'" : "'");
}

// Where `current` first differs from `recorded`, for a warning; empty when they are the same.
std::string difference(std::string_view recorded, std::string_view current) {
  if (recorded == current) return {};
  int line = 1;
  for (size_t i = 0; i < std::min(recorded.size(), current.size()) && recorded[i] == current[i]; ++i)
    if (recorded[i] == '\n') ++line;
  return "from line " + std::to_string(line) + ": the run's copy has " + quotedLine(recorded, line) + ", the project's has " +
         quotedLine(current, line);
}

// Notices about the project folder's files that differ from the run's copies.
void compareWithProject(const project::Project& current, const std::filesystem::path& runDir, bool usingProjectFiles,
                        std::vector<Diagnostic>* notices) {
  const std::pair<std::filesystem::path, std::filesystem::path> files[] = {{runDir / kRunProjectFile, current.projectFile},
                                                                           {runDir / kRunPolicyFile, current.policyFile}};
  for (const auto& [copy, file] : files) {
    const auto recorded = readFile(copy, copy.filename() == kRunPolicyFile ? kPolicyFileLimit : kProjectFileLimit);
    const auto now = readFile(file, file == current.policyFile ? kPolicyFileLimit : kProjectFileLimit);
    if (!recorded || !now) continue;
    const std::string how = difference(*recorded, *now);
    if (how.empty() || !notices) continue;
    if (usingProjectFiles)
      notices->push_back(sentence(Severity::Warning, "using the project's " + file.string() + " (--use-project) instead of the run's copy " +
                                                         copy.string() + ", which it trained with; they differ " + how));
    else
      notices->push_back(sentence(Severity::Note, "the project's " + file.string() + " has changed since this run started (" + how +
                                                      "); the run uses its own copy, " + copy.string() + " (--use-project uses the project's)"));
  }
}

}  // namespace

std::vector<std::filesystem::path> checkpointFiles(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> files;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir / "checkpoints", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("iter-", 0) == 0 && name.size() > 10 && name.substr(name.size() - 5) == ".ckpt") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());  // zero-padded: name order is iteration order
  return files;
}

std::uint64_t fnv1a64(std::string_view bytes) {
  std::uint64_t h = 14695981039346656037ull;
  for (unsigned char c : bytes) h = (h ^ c) * 1099511628211ull;
  return h;
}

std::optional<RunFolder> RunFolder::create(const std::filesystem::path& dir, project::Project& p, Diagnostic* error,
                                           std::vector<Diagnostic>* notices) {
  auto fail = [&](std::string message) -> std::optional<RunFolder> {
    if (error) *error = sentence(Severity::Error, std::move(message));
    return std::nullopt;
  };
  std::error_code ec;
  if (std::filesystem::exists(dir / project::kProjectFileName, ec) && !std::filesystem::exists(dir / "config.toml", ec))
    return fail(dir.string() + " holds a project.toml: it is a project folder, not a run folder; give the run a folder of its own, such as runs/" +
                p.name);
  std::filesystem::create_directories(dir / "checkpoints", ec);
  if (ec) return fail("cannot create " + dir.string() + ": " + ec.message());
  std::string problem, note;
  std::optional<RunLock> lock = RunLock::acquire(dir, &problem, &note);
  if (!lock) return fail(problem);
  if (!note.empty() && notices) notices->push_back(sentence(Severity::Note, note));
  if (std::filesystem::exists(dir / "config.toml", ec))
    return fail(dir.string() + " already holds a run; use --resume " + dir.string() + " to continue it, or another --out");

  const auto policy = readFile(p.policyFile, kPolicyFileLimit, &problem);
  if (!policy) return fail(problem);
  std::string text = "# The resolved configuration of this run (written by cuda-agent train).\n";
  text += "project = " + quoted(std::filesystem::absolute(p.directory).lexically_normal().string()) + "\n";
  std::string section;
  for (const params::ParameterSpec& spec : params::ParameterRegistry::standard().all()) {
    if (spec.section() != section) {
      section = spec.section();
      text += "\n[" + section + "]\n";
    }
    text += spec.key() + " = " + tomlValue(spec, p.parameters.get(spec.name)) + "\n";
  }
  // config.toml last: a folder holding it is a complete run.
  if (!writeFileAtomic(dir / kRunProjectFile, p.text, &problem) || !writeFileAtomic(dir / kRunPolicyFile, *policy, &problem) ||
      !writeFileAtomic(dir / "config.toml", text, &problem))
    return fail(problem);
  p.projectFile = dir / kRunProjectFile;
  p.policyFile = dir / kRunPolicyFile;
  return RunFolder(dir, std::move(lock));
}

std::optional<RunFolder> RunFolder::open(const std::filesystem::path& dir, RunAccess access, bool useProjectFiles, project::Project* project,
                                         Diagnostic* error, std::vector<Diagnostic>* notices) {
  auto fail = [&](Diagnostic d) -> std::optional<RunFolder> {
    if (error) *error = std::move(d);
    return std::nullopt;
  };
  const std::filesystem::path config = dir / "config.toml";
  std::error_code ec;
  if (!std::filesystem::exists(config, ec))
    return fail(sentence(Severity::Error, dir.string() + " is not a run folder: it has no config.toml (run folders are made by cuda-agent train)"));
  std::optional<RunLock> lock;
  if (access == RunAccess::Write) {
    std::string problem, note;
    lock = RunLock::acquire(dir, &problem, &note);
    if (!lock) return fail(sentence(Severity::Error, problem));
    if (!note.empty() && notices) notices->push_back(sentence(Severity::Note, note));
  }
  std::string problem;
  const auto text = readFile(config, kRunConfigLimit, &problem);
  if (!text) return fail(sentence(Severity::Error, problem));
  toml::table root;
  try {
    root = parseToml(*text, config.string());
  } catch (const toml::parse_error& e) {
    return fail(sentence(Severity::Error, "TOML syntax error: " + std::string(e.description()),
                         {config.string(), int(e.source().begin.line), int(e.source().begin.column)}));
  }
  const auto projectPath = root["project"].value<std::string>();
  if (!projectPath)
    return fail(sentence(Severity::Error, "'project' is missing: a run's config.toml names the project folder it trains", {config.string(), 0, 0}));

  const bool hasCopies = std::filesystem::exists(dir / kRunProjectFile, ec) && std::filesystem::exists(dir / kRunPolicyFile, ec);
  project::LoadResult loaded;
  if (hasCopies && !useProjectFiles) {
    project::LoadOptions options;
    options.policyFile = dir / kRunPolicyFile;
    loaded = project::loadProject(dir / kRunProjectFile, options);
    if (loaded.project) {
      loaded.project->directory = *projectPath;
      project::LoadResult now = project::loadProject(*projectPath);
      if (now.project) compareWithProject(*now.project, dir, false, notices);
    }
  } else {
    loaded = project::loadProject(*projectPath);
    if (loaded.project && hasCopies) compareWithProject(*loaded.project, dir, true, notices);
    if (loaded.project && !hasCopies && notices)
      notices->push_back(sentence(Severity::Warning, dir.string() + " keeps no copy of the policy it was trained with (an older run); using the project's " +
                                                         loaded.project->policyFile.string() + ", which may have changed since"));
  }
  if (!loaded.project) {
    Diagnostic first = loaded.diagnostics.empty() ? sentence(Severity::Error, "the project " + *projectPath + " cannot be loaded")
                                                  : loaded.diagnostics.items()[0];
    first.notes.push_back(sentence(Severity::Note, "this is the project of the run " + dir.string(), {config.string(), 0, 0}));
    return fail(first);
  }
  for (const params::ParameterSpec& spec : params::ParameterRegistry::standard().all()) {
    const toml::node* n = root[spec.section()][spec.key()].node();
    if (!n) continue;
    const auto value = params::valueFromToml(spec, *n, &problem);
    if (!value)
      return fail(sentence(Severity::Error, problem, {config.string(), int(n->source().begin.line), int(n->source().begin.column)}));
    loaded.project->parameters.set(spec.name, *value);
  }
  *project = std::move(*loaded.project);
  return RunFolder(dir, std::move(lock));
}

bool RunFolder::append(const std::string& file, const std::string& line, std::string* error) {
  const std::filesystem::path path = dir_ / file;
  const int fd = openRegularFile(path, kRunLogLimit, error, OpenFor::Appending);
  if (fd < 0) return false;
  const std::string data = line + "\n";
  const bool ok = ::write(fd, data.data(), data.size()) == ssize_t(data.size());
  ::fsync(fd);
  ::close(fd);
  if (!ok && error) *error = "cannot write " + path.string() + ": " + std::strerror(errno);
  return ok;
}

bool RunFolder::appendMetrics(const std::string& jsonLine, std::string* error) { return append("metrics.jsonl", jsonLine, error); }

bool RunFolder::appendChange(std::int64_t iteration, const std::string& parameter, const std::string& from, const std::string& to,
                             std::string* error) {
  return append("changes.jsonl", "{\"iteration\": " + std::to_string(iteration) + ", \"parameter\": " + quoted(parameter) +
                                     ", \"from\": " + quoted(from) + ", \"to\": " + quoted(to) + "}",
                error);
}

bool RunFolder::writeCheckpoint(std::int64_t iteration, std::string data, std::string* error) {
  char name[64];
  std::snprintf(name, sizeof name, "iter-%08lld.ckpt", static_cast<long long>(iteration));
  const std::uint64_t sum = fnv1a64(data);
  data.append(reinterpret_cast<const char*>(&sum), sizeof sum);
  data.append(kTrailerMagic, sizeof kTrailerMagic);
  if (!writeFileAtomic(dir_ / "checkpoints" / name, data, error)) return false;
  auto files = checkpointFiles(dir_);
  for (size_t i = 0; i + kKeptCheckpoints < files.size(); ++i) std::filesystem::remove(files[i]);
  return true;
}

// A checkpoint file's payload when its checksum trailer holds; nullopt with `reason` otherwise.
static std::optional<std::string> readCheckedCheckpoint(const std::filesystem::path& file, std::uint64_t maxBytes, std::string* reason) {
  const size_t trailer = sizeof(std::uint64_t) + sizeof kTrailerMagic;
  const FileLimit limit{"a checkpoint of this run", maxBytes + trailer};
  auto data = readFile(file, limit, reason);
  if (!data) return std::nullopt;
  if (data->size() < trailer || std::memcmp(data->data() + data->size() - sizeof kTrailerMagic, kTrailerMagic, sizeof kTrailerMagic) != 0) {
    *reason = "truncated (no checksum trailer)";
    return std::nullopt;
  }
  std::uint64_t sum;
  std::memcpy(&sum, data->data() + data->size() - trailer, sizeof sum);
  data->resize(data->size() - trailer);
  if (fnv1a64(*data) != sum) {
    *reason = "checksum mismatch (the file is corrupted)";
    return std::nullopt;
  }
  return data;
}

std::optional<std::string> RunFolder::newestCheckpoint(std::uint64_t maxBytes, std::vector<std::string>* skipped, std::string* chosen) const {
  auto files = checkpointFiles(dir_);
  for (size_t i = files.size(); i-- > 0;) {
    const std::string name = files[i].filename().string();
    std::string reason;
    auto data = readCheckedCheckpoint(files[i], maxBytes, &reason);
    if (!data) {
      if (skipped) skipped->push_back(name + ": " + reason);
      continue;
    }
    if (chosen) *chosen = name;
    return data;
  }
  return std::nullopt;
}

std::optional<std::string> RunFolder::checkpointOf(std::int64_t iteration, std::uint64_t maxBytes, std::string* error, std::string* chosen) const {
  char name[64];
  std::snprintf(name, sizeof name, "iter-%08lld.ckpt", static_cast<long long>(iteration));
  const auto files = checkpointFiles(dir_);
  if (std::none_of(files.begin(), files.end(), [&](const std::filesystem::path& f) { return f.filename() == name; })) {
    std::string kept;
    for (const auto& f : files) kept += (kept.empty() ? "" : ", ") + f.filename().string();
    *error = dir_.string() + " has no checkpoint of iteration " + std::to_string(iteration) + " (it keeps the " +
             std::to_string(kKeptCheckpoints) + " newest; it holds " + (kept.empty() ? std::string("none") : kept) + ")";
    return std::nullopt;
  }
  std::string reason;
  auto data = readCheckedCheckpoint(dir_ / "checkpoints" / name, maxBytes, &reason);
  if (!data) {
    *error = std::string("checkpoint ") + name + " cannot be used: " + reason;
    return std::nullopt;
  }
  if (chosen) *chosen = name;
  return data;
}

}  // namespace cas::engine
