#include "core/engine/run_folder.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <tuple>
#include <toml++/toml.h>

#include "core/env/trading.hpp"
#include "core/params/parameter_toml.hpp"
#include "core/support/atomic_file.hpp"
#include "core/support/json_string.hpp"
#include "core/support/numbers.hpp"
#include "core/support/printable.hpp"
#include "core/support/toml_parse.hpp"
#include "core/train/checkpoint_header.hpp"

namespace cas::engine {
namespace {

constexpr char kTrailerMagic[8] = {'C', 'A', 'S', 'C', 'K', 'P', 'T', '1'};
constexpr int kKeptCheckpoints = 2;
// The run's own copies of what it was started from.
const char* const kRunProjectFile = "project.toml";
const char* const kRunPolicyFile = "policy.pdl";
const char* const kRunSeriesFile = "series.csv";  // a trading project's price series

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
  const std::tuple<std::filesystem::path, std::filesystem::path, FileLimit> files[] = {
      {runDir / kRunProjectFile, current.projectFile, kProjectFileLimit},
      {runDir / kRunPolicyFile, current.policyFile, kPolicyFileLimit},
      {runDir / kRunSeriesFile, current.seriesFile, kSeriesFileLimit}};
  for (const auto& [copy, file, limit] : files) {
    if (file.empty()) continue;  // no series
    const auto recorded = readFile(copy, limit);
    const auto now = readFile(file, limit);
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

// A run folder's files are read, cut and pruned in the folder itself: a symbolic link among them
// (planted, or left by a copy) would make a run train a policy from elsewhere, or prune and
// discard the files of another folder. The first such link, or a checkpoints/ that is no folder
// (a file or a FIFO in its place), described; nullopt when none.
std::optional<std::string> linkInRun(const std::filesystem::path& dir) {
  if (auto link = linkedRunFolder(dir, "checkpoints")) return link;
  struct stat checkpoints {};
  if (::lstat((dir / "checkpoints").c_str(), &checkpoints) == 0 && !S_ISDIR(checkpoints.st_mode))
    return (dir / "checkpoints").string() + " is " + fileTypeName(checkpoints.st_mode) +
           ", not a folder; a run keeps its checkpoints in the folder checkpoints/ (move it away and try again)";
  for (const char* name : {"config.toml", kRunProjectFile, kRunPolicyFile, kRunSeriesFile, "metrics.jsonl", "changes.jsonl"}) {
    std::error_code ec;
    if (std::filesystem::is_symlink(std::filesystem::symlink_status(dir / name, ec)))
      return (dir / name).string() + " is a symbolic link; a run folder's files are read from the folder itself (put a copy of the file in place of the link)";
  }
  return std::nullopt;
}

// The project a run trains: the run's copies of its project file and policy (noting how the
// project folder's files differ), or with `useProjectFiles`, or for a run made before runs kept
// copies, the project folder's current files (warning how they differ from the copies).
// Whether the run's copy of its project file names a price series (a trading project's run,
// which keeps a copy of the series as series.csv).
bool namesSeries(const std::filesystem::path& dir) {
  const auto text = readFile(dir / kRunProjectFile, kProjectFileLimit);
  if (!text) return false;
  try {
    return parseToml(*text, (dir / kRunProjectFile).string()).contains("series");
  } catch (const toml::parse_error&) {
    return false;  // loading the project names the syntax error
  }
}

project::LoadResult loadRunProject(const std::filesystem::path& dir, const std::string& projectPath, bool useProjectFiles,
                                   std::vector<Diagnostic>* notices) {
  std::error_code ec;
  const bool hasCopies = std::filesystem::exists(dir / kRunProjectFile, ec) && std::filesystem::exists(dir / kRunPolicyFile, ec);
  project::LoadResult loaded;
  if (hasCopies && !useProjectFiles) {
    project::LoadOptions options;
    options.policyFile = dir / kRunPolicyFile;
    if (std::filesystem::exists(std::filesystem::symlink_status(dir / kRunSeriesFile, ec))) {
      options.seriesFile = dir / kRunSeriesFile;
    } else if (namesSeries(dir)) {  // not "the project's prices.csv not found in RUN": the run reads its own copy
      loaded.diagnostics.error({},
                               (dir / kRunSeriesFile).string() + " is missing: a trading run trains and is evaluated on its own copy of the " +
                                   "price series; put the series it was trained on back there, or give --use-project to use the project's series");
      return loaded;
    }
    loaded = project::loadProject(dir / kRunProjectFile, options);
    if (loaded.project) {
      loaded.project->directory = projectPath;
      project::LoadResult now = project::loadProject(projectPath);
      if (now.project) compareWithProject(*now.project, dir, false, notices);
    }
    return loaded;
  }
  loaded = project::loadProject(projectPath);
  if (loaded.project && hasCopies) compareWithProject(*loaded.project, dir, true, notices);
  if (loaded.project && !hasCopies && notices)
    notices->push_back(sentence(Severity::Warning, dir.string() + " keeps no copy of the policy it was trained with (an older run); using the project's " +
                                                       loaded.project->policyFile.string() + ", which may have changed since"));
  return loaded;
}

// Warnings for the keys of a run's config.toml that no parameter has (a typo such as
// `simulatons = 64`, a stray section): the run would train with the default instead, silently.
// The first few are named with their place; the rest are counted.
void warnUnknownConfigKeys(const toml::table& root, const std::string& file, std::string_view text, std::vector<Diagnostic>* notices) {
  if (!notices) return;
  constexpr int kNamed = 10;
  int unknown = 0;
  SourceLocation firstUncounted;
  auto warn = [&](const toml::source_region& where, std::string message) {
    if (++unknown <= kNamed) notices->push_back(sentence(Severity::Warning, std::move(message), tomlLocation(file, text, where.begin)));
    else if (unknown == kNamed + 1) firstUncounted = tomlLocation(file, text, where.begin);
  };
  const auto& registry = params::ParameterRegistry::standard();
  for (auto&& [key, node] : root) {
    const std::string section(key.str());
    if (section == "project") continue;
    const auto known = registry.inSection(section);
    if (known.empty() || !node.is_table()) {
      warn(key.source(), "unknown key " + quoteValue(section) + " is ignored; a run's config.toml holds project and the sections [search], [train], [ppo], [runtime]");
      continue;
    }
    for (auto&& [name, value] : *node.as_table())
      if (!registry.find(section + "." + std::string(name.str()))) {
        std::string keys;
        for (const params::ParameterSpec* spec : known) keys += (keys.empty() ? "" : ", ") + spec->key();
        warn(name.source(), "unknown key " + quoteValue(name.str()) + " in [" + section + "] is ignored (the run uses the default); known keys: " + keys);
      }
  }
  if (unknown > kNamed) notices->push_back(sentence(Severity::Warning, std::to_string(unknown - kNamed) + " more unknown keys are ignored", firstUncounted));
}

}  // namespace

std::optional<std::int64_t> checkpointIteration(std::string_view fileName) {
  constexpr std::string_view prefix = "iter-", suffix = ".ckpt";
  if (fileName.size() <= prefix.size() + suffix.size() || !fileName.starts_with(prefix) || !fileName.ends_with(suffix)) return std::nullopt;
  const std::string_view digits = fileName.substr(prefix.size(), fileName.size() - prefix.size() - suffix.size());
  if (digits.find_first_not_of("0123456789") != std::string_view::npos) return std::nullopt;
  return parseInteger(digits, 0, train::kMaxCheckpointIteration);
}

std::string checkpointName(std::int64_t iteration) {
  char name[64];
  std::snprintf(name, sizeof name, "iter-%08lld.ckpt", static_cast<long long>(iteration));
  return name;
}

std::vector<std::filesystem::path> checkpointFiles(const std::filesystem::path& dir) {
  struct Numbered {
    std::int64_t iteration;
    bool own;  // the name the run gives it
    std::filesystem::path path;
  };
  std::vector<Numbered> numbered;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir / "checkpoints", ec)) {
    const std::string name = entry.path().filename().string();
    if (const auto iteration = checkpointIteration(name)) numbered.push_back({*iteration, name == checkpointName(*iteration), entry.path()});
  }
  // By the iteration the name gives as a number ("iter-9.ckpt" after "iter-00000005.ckpt",
  // "iter-100000000.ckpt" after "iter-99999999.ckpt"), not by the name as a string; of two names
  // for one iteration, the run's own last. Each is checked against what the file holds when it is read.
  std::sort(numbered.begin(), numbered.end(), [](const Numbered& a, const Numbered& b) {
    return std::tie(a.iteration, a.own, a.path) < std::tie(b.iteration, b.own, b.path);
  });
  std::vector<std::filesystem::path> files;
  for (Numbered& n : numbered) files.push_back(std::move(n.path));
  return files;
}

std::optional<std::string> linkedRunFolder(const std::filesystem::path& dir, std::string_view name) {
  std::error_code ec;
  const std::filesystem::path folder = dir / name;
  if (!std::filesystem::is_symlink(std::filesystem::symlink_status(folder, ec))) return std::nullopt;
  if (name == "exports")
    return folder.string() + " is a symbolic link; a run's exports/ must be a folder of its own (remove the link, or export to a path outside it)";
  return folder.string() + " is a symbolic link; a run's " + std::string(name) +
         "/ must be a folder of its own (move the files it points to into the run folder)";
}

std::uint64_t fnv1a64(std::string_view bytes) {
  std::uint64_t h = 14695981039346656037ull;
  for (unsigned char c : bytes) h = (h ^ c) * 1099511628211ull;
  return h;
}

// The name of an entry of `dir`, when it exists and is not empty (a run is made only in a new
// or empty folder, or in one whose making was interrupted: the user's own files would be
// overwritten or appended to).
// An empty checkpoints/ is what a run makes first: a folder holding only that is a run whose
// making was stopped at once, and is made again.
static std::optional<std::string> foreignEntry(const std::filesystem::path& dir) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name == "checkpoints" && !entry.is_symlink(ec) && std::filesystem::is_empty(entry.path(), ec)) continue;
    return name;
  }
  return std::nullopt;
}

// A run's checkpoints/ and exports/ are the run's: a new run made inside them (through a path
// such as RUN/exports/../checkpoints/x) would stop RUN from resuming. Why `dir` lies there;
// nullopt when it does not.
static std::optional<std::string> insideAnotherRun(const std::filesystem::path& dir) {
  std::error_code ec;
  const std::filesystem::path resolved = std::filesystem::weakly_canonical(std::filesystem::absolute(dir, ec), ec);
  for (std::filesystem::path p = resolved; p.has_parent_path() && p != p.parent_path(); p = p.parent_path()) {
    const std::string name = p.filename().string();
    if ((name == "checkpoints" || name == "exports") && std::filesystem::exists(p.parent_path() / "config.toml", ec))
      return dir.string() + " lies inside " + p.string() + ", a folder of the run " + p.parent_path().string();
  }
  return std::nullopt;
}

// A trading project's price series copied into the run (atomically), and `p` then trading the
// copy as read back: the run trains on exactly the bars it keeps, whatever happens to the
// project's file. True, doing nothing, for a project without a series.
static bool copySeries(const std::filesystem::path& dir, project::Project& p, std::string* error) {
  if (p.seriesFile.empty()) return true;
  const double fraction = p.parameters.getFloat("trading.train_fraction");  // as --set left it
  if (auto problem = p.series ? env::splitProblem(p.series->size(), fraction, env::stocksSetup()) : std::nullopt) {
    if (error) *error = p.seriesFile.string() + ": " + *problem;
    return false;
  }
  const auto bytes = readFile(p.seriesFile, kSeriesFileLimit, error);
  if (!bytes || !writeFileAtomic(dir / kRunSeriesFile, *bytes, error)) return false;
  try {
    p.series = std::make_shared<env::PriceSeries>(env::readPriceSeries((dir / kRunSeriesFile).string(), env::splitNeed(fraction, env::stocksSetup())));
  } catch (const env::PriceSeriesError& e) {
    if (error) *error = e.what();
    return false;
  }
  p.seriesFile = dir / kRunSeriesFile;
  return true;
}

void (*gBeforeRunLock)(const std::filesystem::path& dir) = nullptr;

// Makes `folder` and the folders on the way to it. `made` receives those this call made itself
// (its mkdir succeeded), deepest first: a folder another process made at the same moment is that
// process's, not this one's to remove.
static bool makeFolders(const std::filesystem::path& folder, std::vector<std::filesystem::path>* made, std::string* error) {
  const std::vector<std::filesystem::path> missing = missingFolders(folder);
  for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
    if (::mkdir(it->c_str(), 0777) == 0)
      made->insert(made->begin(), *it);
    else if (errno != EEXIST) {
      *error = std::strerror(errno);
      return false;
    }
  }
  std::error_code ec;
  if (std::filesystem::is_directory(folder, ec)) return true;
  *error = std::strerror(ENOTDIR);
  return false;
}

// The run folder `dir` and its checkpoints/ made, and its lock taken. A refusal removes again
// the folders this process made (each only when empty), unless another process holds the lock:
// a contender that lost the race for the lock removes nothing (not the lock, not checkpoints/,
// not the folder), which may all be the holder's by now.
static std::optional<RunLock> claimRunFolder(const std::filesystem::path& dir, std::vector<std::filesystem::path>* made, std::string* problem,
                                             std::string* note) {
  auto removeMade = [&] {
    std::error_code ec;
    for (const std::filesystem::path& folder : *made) std::filesystem::remove(folder, ec);  // only when empty
  };
  if (!makeFolders(dir / "checkpoints", made, problem)) {
    *problem = "cannot create " + dir.string() + ": " + *problem;
    removeMade();
    return std::nullopt;
  }
  if (gBeforeRunLock) gBeforeRunLock(dir);
  bool inUse = false;
  std::optional<RunLock> lock = RunLock::acquire(dir, problem, note, &inUse);
  if (!lock && !inUse) removeMade();
  return lock;
}

// Why a new run is not made in `dir`, which holds a run (its config.toml), and what to do instead.
static std::string alreadyARun(const std::filesystem::path& dir) {
  if (checkpointFiles(dir).empty())  // stopped before its first checkpoint: nothing to resume
    return dir.string() + " already holds a run, stopped before its first checkpoint; `cuda-agent train --restart " + dir.string() +
           "` trains it again from iteration 1, or give another --out";
  return dir.string() + " already holds a run; use --resume " + dir.string() + " to continue it, or another --out";
}

std::optional<RunFolder> RunFolder::create(const std::filesystem::path& dir, project::Project& p, Diagnostic* error,
                                           std::vector<Diagnostic>* notices) {
  auto fail = [&](std::string message) -> std::optional<RunFolder> {
    if (error) *error = sentence(Severity::Error, std::move(message));
    return std::nullopt;
  };
  if (auto notFolder = notAFolder(dir)) return fail(*notFolder + "; give the run a new or empty folder, such as runs/" + p.name);
  if (auto inside = insideAnotherRun(dir)) return fail(*inside + "; give the run a folder of its own, such as runs/" + p.name);
  if (auto up = upAfterName(dir)) return fail(*up);
  std::error_code ec;
  // A project.toml without config.toml is a project folder, unless the lock is there too: then
  // it is a run whose making was interrupted (the lock is taken before the copies are written).
  // The lock is asked for after what it explains: a run made at this moment by another process
  // (which takes the lock before it writes the copies) is in use, not a project or foreign files.
  auto locked = [&] { return std::filesystem::exists(std::filesystem::symlink_status(dir / "lock", ec)); };
  const bool halfMade = locked();
  if (std::filesystem::exists(dir / project::kProjectFileName, ec) && !std::filesystem::exists(dir / "config.toml", ec) && !locked())
    return fail(dir.string() + " holds a project.toml: it is a project folder, not a run folder; give the run a folder of its own, such as runs/" +
                p.name);
  if (auto other = foreignEntry(dir); other && !locked() && !std::filesystem::exists(dir / "config.toml", ec))
    return fail(dir.string() + " already holds files that are not a run's (" + *other +
                "); give the run a new or empty folder, such as runs/" + p.name);
  if (auto link = linkInRun(dir)) return fail(*link);
  // A refusal from here on takes back what this call made: the user's folder is left as it was.
  std::vector<std::filesystem::path> made;
  std::string problem, note;
  std::optional<RunLock> lock = claimRunFolder(dir, &made, &problem, &note);
  if (!lock) return fail(problem);
  if (!note.empty() && notices) notices->push_back(sentence(Severity::Note, note));
  if (std::filesystem::exists(dir / "config.toml", ec)) return fail(alreadyARun(dir));
  if (halfMade && notices)
    notices->push_back(sentence(Severity::Note, dir.string() + " holds the start of a run whose making was interrupted (no config.toml); making it again"));
  RunFolder run(dir, std::move(lock));
  run.made_ = std::move(made);
  run.removeInterruptedWrites(notices);

  const auto policy = readFile(p.policyFile, kPolicyFileLimit, &problem);
  if (!policy) {
    run.removeUnstarted();
    return fail(problem);
  }
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
      !copySeries(dir, p, &problem) || !writeFileAtomic(dir / "config.toml", text, &problem)) {
    run.removeUnstarted();
    return fail(problem);
  }
  p.projectFile = dir / kRunProjectFile;
  p.policyFile = dir / kRunPolicyFile;
  return run;
}

std::optional<std::string> runWithoutConfig(const std::filesystem::path& dir) {
  std::error_code ec;
  auto there = [&](const char* name) { return std::filesystem::exists(std::filesystem::symlink_status(dir / name, ec)); };
  if (!checkpointFiles(dir).empty() || there("metrics.jsonl") || there("changes.jsonl"))
    return dir.string() + " holds a run's checkpoints or logs but no config.toml (it was removed, or never written): it is no project folder, " +
           "and cannot be read as a run; put the run's config.toml back, or train the project anew in another folder";
  if (there("lock") || std::filesystem::is_directory(dir / "checkpoints", ec))
    return dir.string() + " holds the start of a run whose making was interrupted (it has no config.toml yet): nothing to resume or restart; " +
           "`cuda-agent train PROJECT --out " + dir.string() + "` makes the run in it again";
  return std::nullopt;
}

// The project folder a run's config.toml names (`project = "..."`); nullopt with `error` when it
// is missing, is no string (named at its line and column, not called missing) or is empty.
static std::optional<std::string> recordedProject(const toml::table& root, const std::string& config, const std::string& text, Diagnostic* error) {
  const toml::node* node = root["project"].node();
  const auto path = root["project"].value<std::string>();
  if (!node) {
    *error = sentence(Severity::Error, "'project' is missing: a run's config.toml names the project folder it trains", {config, 0, 0});
  } else if (!path) {
    *error = sentence(Severity::Error, "'project' must be a string (the path of the project folder the run trains), got " + params::tomlTypeName(*node),
                      tomlLocation(config, text, node->source().begin));
  } else if (path->empty()) {  // not taken for the current folder, whose project.toml would be read
    *error = sentence(Severity::Error, "'project': expected a path, got ''; a run's config.toml names the project folder it trains",
                      tomlLocation(config, text, node->source().begin));
  } else {
    return path;
  }
  return std::nullopt;
}

std::optional<RunFolder> RunFolder::open(const std::filesystem::path& dir, RunAccess access, bool useProjectFiles, project::Project* project,
                                         Diagnostic* error, std::vector<Diagnostic>* notices) {
  auto fail = [&](Diagnostic d) -> std::optional<RunFolder> {
    if (error) *error = std::move(d);
    return std::nullopt;
  };
  const std::filesystem::path config = dir / "config.toml";
  std::error_code ec;
  if (!std::filesystem::exists(config, ec)) {
    if (std::filesystem::symlink_status(dir, ec).type() == std::filesystem::file_type::not_found)  // not "is not a run folder" alone
      return fail(sentence(Severity::Error, dir.string() + " does not exist; give a run folder (made by cuda-agent train)"));
    if (auto run = runWithoutConfig(dir)) return fail(sentence(Severity::Error, *run));
    return fail(sentence(Severity::Error, dir.string() + " is not a run folder: it has no config.toml (run folders are made by cuda-agent train)"));
  }
  if (auto link = linkInRun(dir)) return fail(sentence(Severity::Error, *link));
  std::optional<RunLock> lock;
  if (access == RunAccess::Write) {
    std::string problem, note;
    lock = RunLock::acquire(dir, &problem, &note);
    if (!lock) return fail(sentence(Severity::Error, problem));
    if (!note.empty() && notices) notices->push_back(sentence(Severity::Note, note));
  }
  std::string problem;
  const auto text = readFile(config, kRunConfigLimit, &problem, OpenFor::ReadingInPlace);
  if (!text) return fail(sentence(Severity::Error, problem));
  toml::table root;
  try {
    root = parseToml(*text, config.string());
  } catch (const toml::parse_error& e) {
    return fail(sentence(Severity::Error, "TOML syntax error: " + std::string(e.description()),
                         tomlLocation(config.string(), *text, e.source().begin)));
  }
  Diagnostic refused;
  const auto projectPath = recordedProject(root, config.string(), *text, &refused);
  if (!projectPath) return fail(refused);

  warnUnknownConfigKeys(root, config.string(), *text, notices);
  project::LoadResult loaded = loadRunProject(dir, *projectPath, useProjectFiles, notices);
  if (!loaded.project) {
    Diagnostic first = loaded.diagnostics.empty() ? sentence(Severity::Error, "the project " + *projectPath + " cannot be loaded")
                                                  : loaded.diagnostics.items()[0];
    first.notes.push_back(sentence(Severity::Note, "this is the project of the run " + dir.string(), {config.string(), 0, 0}));
    return fail(first);
  }
  for (const params::ParameterSpec& spec : params::ParameterRegistry::standard().all()) {
    const toml::node* n = root[spec.section()][spec.key()].node();
    if (!n) continue;
    const auto value = params::valueFromToml(spec, *n, &problem, *text);
    if (!value)
      return fail(sentence(Severity::Error, problem, tomlLocation(config.string(), *text, n->source().begin)));
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
  // A log is read back whole on resume, up to kRunLogLimit: one grown past it would make the
  // run impossible to resume, so the run stops at the limit instead, the log still readable.
  struct stat st {};
  if (::fstat(fd, &st) == 0 && std::uint64_t(st.st_size) + data.size() > kRunLogLimit.maxBytes) {
    ::close(fd);
    if (error)
      *error = path.string() + " has reached the " + formatBytes(kRunLogLimit.maxBytes) + " " + kRunLogLimit.what +
               " may hold; move it out of the run folder (the run does not need it to go on) and resume the run: a new log is begun";
    return false;
  }
  const bool ok = ::write(fd, data.data(), data.size()) == ssize_t(data.size());
  ::fsync(fd);
  ::close(fd);
  if (!ok && error) *error = "cannot write " + path.string() + ": " + std::strerror(errno);
  return ok;
}

bool RunFolder::adoptProjectFiles(const project::Project& p, std::int64_t iteration, std::vector<Diagnostic>* notices, std::string* error) {
  const auto policy = readFile(p.policyFile, kPolicyFileLimit, error);
  if (!policy) return false;
  const auto projectCopy = readFile(dir_ / kRunProjectFile, kProjectFileLimit, nullptr, OpenFor::ReadingInPlace);
  const auto policyCopy = readFile(dir_ / kRunPolicyFile, kPolicyFileLimit, nullptr, OpenFor::ReadingInPlace);
  std::optional<std::string> series, seriesCopy;  // a trading project's
  if (!p.seriesFile.empty()) {
    if (!(series = readFile(p.seriesFile, kSeriesFileLimit, error))) return false;
    seriesCopy = readFile(dir_ / kRunSeriesFile, kSeriesFileLimit, nullptr, OpenFor::ReadingInPlace);
  }
  if (projectCopy == p.text && policyCopy == *policy && seriesCopy == series) return true;
  // The policy and the series first: a kill before the project file leaves what the run now trains.
  if (!writeFileAtomic(dir_ / kRunPolicyFile, *policy, error) || (series && !writeFileAtomic(dir_ / kRunSeriesFile, *series, error)) ||
      !writeFileAtomic(dir_ / kRunProjectFile, p.text, error))
    return false;
  const std::string folder = std::filesystem::absolute(p.directory).lexically_normal().string();
  if (!append("changes.jsonl", "{\"iteration\": " + std::to_string(iteration) + ", \"project_files\": " + jsonString(folder) + "}", error)) return false;
  if (notices)
    notices->push_back(sentence(Severity::Note, "the run's copies " + (dir_ / kRunProjectFile).string() + " and " + (dir_ / kRunPolicyFile).string() +
                                                    " now hold the project's files (--use-project), which it trains with from iteration " +
                                                    std::to_string(iteration) + "; recorded in changes.jsonl"));
  return true;
}

bool RunFolder::appendMetrics(const std::string& jsonLine, std::string* error) { return append("metrics.jsonl", jsonLine, error); }

bool RunFolder::appendChange(std::int64_t iteration, const std::string& parameter, const std::string& from, const std::string& to,
                             std::string* error) {
  return append("changes.jsonl", "{\"iteration\": " + std::to_string(iteration) + ", \"parameter\": " + jsonString(parameter) +
                                     ", \"from\": " + jsonString(from) + ", \"to\": " + jsonString(to) + "}",
                error);
}

bool RunFolder::writeCheckpoint(std::int64_t iteration, std::string data, std::string* error) {
  const std::uint64_t sum = fnv1a64(data);
  data.append(reinterpret_cast<const char*>(&sum), sizeof sum);
  data.append(kTrailerMagic, sizeof kTrailerMagic);
  if (!writeFileAtomic(dir_ / "checkpoints" / checkpointName(iteration), data, error)) return false;
  // Pruned by iteration, and only below the one just written: a file named for a later iteration
  // (left when a resume went back past it, or put there by hand) is replaced when that
  // iteration comes, and never makes this run delete its own newest checkpoints. Every file of
  // the kKeptCheckpoints - 1 newest iterations below it stays, whatever its name: among them is
  // the one this run resumed from or wrote last (a corrupt "iter-0002.ckpt" beside it cannot
  // take its place), and the files of older iterations go, all their names.
  std::vector<std::pair<std::int64_t, std::filesystem::path>> older;
  for (const std::filesystem::path& f : checkpointFiles(dir_))
    if (const std::int64_t n = *checkpointIteration(f.filename().string()); n < iteration) older.emplace_back(n, f);
  std::vector<std::int64_t> kept;  // the newest iterations below, newest first
  for (auto f = older.rbegin(); f != older.rend(); ++f)
    if ((kept.empty() || kept.back() != f->first) && int(kept.size()) < kKeptCheckpoints - 1) kept.push_back(f->first);
  const std::int64_t keepFrom = kept.empty() ? 0 : kept.back();
  std::error_code ec;
  for (const auto& [n, f] : older)
    if (n < keepFrom) std::filesystem::remove(f, ec);
  return true;
}

// Why training cannot write one of the run's logs, which it appends to and a resume may cut
// back (a new file renamed over it): it cannot be opened for writing (no write permission, an
// immutable or append-only file, a read-only file system). Asked before anything is changed, so
// the run does not stop after "resumed from ...", or fail half-way through a cut. nullopt when both can.
static std::optional<std::string> unwritableLog(const std::filesystem::path& dir) {
  for (const char* log : {"metrics.jsonl", "changes.jsonl"}) {
    const std::filesystem::path path = dir / log;
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;  // missing (made when needed), or refused where it is opened
    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);  // no O_APPEND: an append-only file cannot be cut
    if (fd >= 0) {
      ::close(fd);
      continue;
    }
    return "cannot write " + path.string() + ": " + std::strerror(errno) + "; training appends to it, and a resume may cut it back: make it " +
           "writable (chmod u+w " + path.string() + "; a file made immutable or append-only: chattr -i -a " + path.string() +
           "), or move it out of the run folder (the run does not need it to go on), and try again (nothing was changed)";
  }
  return std::nullopt;
}

std::optional<std::string> RunFolder::inaccessible(RunAccess access) const {
  const std::filesystem::path checkpoints = dir_ / "checkpoints";
  auto fix = [](const std::filesystem::path& folder) { return "; give yourself access to it (chmod u+rwx " + folder.string() + ") and try again"; };
  if (::faccessat(AT_FDCWD, checkpoints.c_str(), R_OK | X_OK, AT_EACCESS) != 0 && errno != ENOENT)
    return "cannot read " + checkpoints.string() + ": " + std::strerror(errno) + fix(checkpoints);
  if (access == RunAccess::Read) return std::nullopt;
  // Training writes its checkpoints into checkpoints/ and its logs beside it, and removes both
  // when it prunes, restarts or cuts a log back.
  for (const std::filesystem::path& folder : {dir_, checkpoints})
    if (::faccessat(AT_FDCWD, folder.c_str(), W_OK | X_OK, AT_EACCESS) != 0 && errno != ENOENT)
      return "cannot write " + folder.string() + ": " + std::strerror(errno) + "; training writes its checkpoints and logs there" + fix(folder) +
             " (nothing was changed)";
  return unwritableLog(dir_);
}

std::optional<std::string> RunFolder::checkpointThatBlocksTraining() const {
  for (const std::filesystem::path& file : checkpointFiles(dir_)) {
    struct stat st {};
    if (::stat(file.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
      struct stat own {};
      const bool link = ::lstat(file.c_str(), &own) == 0 && S_ISLNK(own.st_mode);
      return file.string() + " is " + (link ? std::string("a symbolic link to ") + (::stat(file.c_str(), &st) == 0 ? fileTypeName(st.st_mode) : "nothing")
                                            : std::string(fileTypeName(own.st_mode))) +
             ", not a checkpoint file; a run writes its checkpoints itself, as regular files, and could not write this one: move it out of " +
             (dir_ / "checkpoints").string() + " and try again";
    }
    const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    std::uint32_t front[2] = {};  // the magic and the format version
    const ssize_t got = fd >= 0 ? ::pread(fd, front, sizeof front, 0) : -1;
    const int cause = errno;
    if (fd >= 0) ::close(fd);
    if (got < 0)  // not damaged, only unreadable: skipped, it would be replaced by an older iteration's run
      return "cannot read " + file.string() + ": " + std::strerror(cause) + "; fix its permissions (chmod u+r " + file.string() +
             "), or move it out of " + (dir_ / "checkpoints").string() + " to resume from the checkpoint before it (nothing was changed)";
    const bool read = got == ssize_t(sizeof front);
    if (read && front[0] == train::kCheckpointMagic && front[1] > train::kCheckpointVersion)
      return file.string() + " is a checkpoint of format version " + std::to_string(front[1]) + ", written by a newer cuda-agent (this one " +
             "writes version " + std::to_string(train::kCheckpointVersion) + "); training the run here would replace it with an older " +
             "format: resume it with that cuda-agent, or train into a new --out folder";
  }
  return std::nullopt;
}

// Why a checkpoint's payload cannot be this run's checkpoint `name`: its counters are not valid
// (core/train/checkpoint_header.hpp), it is of iteration 0, or of another iteration than its name says.
// nullopt when it can.
static std::optional<std::string> invalidCounters(const std::string& payload, const std::string& name) {
  std::string reason;
  const auto counters = train::readCheckpointHeader(payload, &reason);
  if (!counters) return reason;
  if (counters->iteration < 1) return "its iteration is 0; a run's checkpoint is written after iteration 1 or later";
  const std::int64_t named = checkpointIteration(name).value_or(counters->iteration);
  if (named != counters->iteration)
    return "it holds iteration " + std::to_string(counters->iteration) + ", not the " + std::to_string(named) + " its name says";
  return std::nullopt;
}

// A checkpoint file's payload when it is a file of the run's own (not a link), its checksum
// holds and its counters are valid; nullopt with `reason` otherwise.
static std::optional<std::string> readCheckedCheckpoint(const std::filesystem::path& file, std::uint64_t maxBytes, std::string* reason) {
  const size_t trailer = sizeof(std::uint64_t) + sizeof kTrailerMagic;
  const FileLimit limit{"a checkpoint of this run", maxBytes + trailer};
  auto data = readFile(file, limit, reason, OpenFor::ReadingInPlace);
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
  if (auto invalid = invalidCounters(*data, file.filename().string())) {
    *reason = std::move(*invalid);
    return std::nullopt;
  }
  return data;
}

std::optional<std::string> RunFolder::newestCheckpoint(std::uint64_t maxBytes, std::vector<std::string>* skipped, std::string* chosen,
                                                       const CheckpointTest& usable) const {
  auto files = checkpointFiles(dir_);
  for (size_t i = files.size(); i-- > 0;) {
    const std::string name = files[i].filename().string();
    std::string reason;
    auto data = readCheckedCheckpoint(files[i], maxBytes, &reason);
    if (data && usable && !usable(*data, &reason)) data.reset();
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
  const auto files = checkpointFiles(dir_);
  std::vector<std::filesystem::path> named;  // every name of this iteration, the run's own first
  for (auto f = files.rbegin(); f != files.rend(); ++f)
    if (checkpointIteration(f->filename().string()) == iteration) named.push_back(*f);
  if (named.empty()) {
    std::string kept;
    for (const auto& f : files) kept += (kept.empty() ? "" : ", ") + f.filename().string();
    *error = dir_.string() + " has no checkpoint of iteration " + std::to_string(iteration) + " (it keeps the " +
             std::to_string(kKeptCheckpoints) + " newest; it holds " + (kept.empty() ? std::string("none") : kept) + ")";
    return std::nullopt;
  }
  std::string first;
  for (const std::filesystem::path& file : named) {
    std::string reason;
    if (auto data = readCheckedCheckpoint(file, maxBytes, &reason)) {
      if (chosen) *chosen = file.filename().string();
      return data;
    }
    if (first.empty()) first = "checkpoint " + file.filename().string() + " cannot be used: " + reason;
  }
  *error = first;
  return std::nullopt;
}

}  // namespace cas::engine
