// What resuming and restarting a run do to its folder: cutting the logs back to the checkpoint
// (read as JSON lines, so whitespace, CRLF and a line re-serialised by another tool are kept),
// discarding the progress, removing what interrupted writes left behind.
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <map>

#include <nlohmann/json.hpp>

#include "core/engine/run_folder.hpp"
#include "core/support/atomic_file.hpp"
#include "core/train/checkpoint_header.hpp"

namespace cas::engine {
namespace {

// A log line nests an object or two; deeper text is no line of ours, and is not handed to the
// parser at all.
constexpr int kMaxLineDepth = 16;

Diagnostic sentence(Severity severity, std::string message) { return {severity, {}, std::move(message), {}}; }

// "a", "a and b", "a, b and c".
std::string listed(const std::vector<std::string>& parts) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i == 0 ? "" : i + 1 == parts.size() ? " and " : ", ") + parts[i];
  return out;
}

std::string count(int n, const char* one, const char* many) { return std::to_string(n) + " " + (n == 1 ? one : many); }

bool nestedTooDeep(std::string_view line) {
  int depth = 0;
  bool inString = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (inString) {
      if (c == '\\') ++i;
      else if (c == '"') inString = false;
    } else if (c == '"') {
      inString = true;
    } else if ((c == '{' || c == '[') && ++depth > kMaxLineDepth) {
      return true;
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
  return false;
}

// The JSON object a log line holds; nullopt for a line that is not one.
std::optional<nlohmann::json> jsonObject(std::string_view line) {
  if (nestedTooDeep(line)) return std::nullopt;
  nlohmann::json j = nlohmann::json::parse(line.begin(), line.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return std::nullopt;
  return j;
}

// The line's "iteration": a whole number from 1, written as JSON writes numbers (4, 4.0 and 4e0
// are the same number: a tool that rewrote the line may have left any of them).
std::optional<std::int64_t> iterationOf(const nlohmann::json& j) {
  const auto it = j.find("iteration");
  if (it == j.end() || !it->is_number()) return std::nullopt;
  if (it->is_number_float()) {
    const double d = it->get<double>();
    if (!(d >= 1 && d <= double(train::kMaxCheckpointIteration)) || d != std::floor(d)) return std::nullopt;
    return std::int64_t(d);
  }
  if (it->is_number_unsigned() && it->get<std::uint64_t>() > std::uint64_t(train::kMaxCheckpointIteration)) return std::nullopt;
  const auto n = it->get<std::int64_t>();
  if (n < 1 || n > train::kMaxCheckpointIteration) return std::nullopt;
  return n;
}

// The text of the number that `key` of the line's top-level object holds, as written (1e3 stays
// 1e3: the value is re-applied and, when out of range, quoted as the user wrote it).
class NumberText : public nlohmann::json_sax<nlohmann::json> {
 public:
  explicit NumberText(std::string key) : key_(std::move(key)) {}
  std::string text;

  bool key(string_t& k) override { return (atKey_ = depth_ == 1 && k == key_), true; }
  bool number_float(number_float_t, const string_t& s) override { return take(s); }
  bool number_integer(number_integer_t v) override { return take(std::to_string(v)); }
  bool number_unsigned(number_unsigned_t v) override { return take(std::to_string(v)); }
  bool null() override { return take({}); }
  bool boolean(bool) override { return take({}); }
  bool string(string_t&) override { return take({}); }
  bool binary(binary_t&) override { return take({}); }
  bool start_object(std::size_t) override { return take({}), ++depth_, true; }
  bool end_object() override { return --depth_, true; }
  bool start_array(std::size_t) override { return take({}), ++depth_, true; }
  bool end_array() override { return --depth_, true; }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return false; }

 private:
  bool take(const std::string& value) {
    if (atKey_) text = value;
    atKey_ = false;
    return true;
  }
  std::string key_;
  int depth_ = 0;
  bool atKey_ = false;
};

// A changes.jsonl line: {"iteration": N, "parameter": "P", "from": "F", "to": "T"}, its keys in
// any order; "to" may also be a number, as a tool that rewrote the line may have left it.
std::optional<RunFolder::LoggedChange> loggedChange(const nlohmann::json& j, std::string_view line) {
  const auto iteration = iterationOf(j);
  const auto parameter = j.find("parameter"), to = j.find("to");
  if (!iteration || parameter == j.end() || !parameter->is_string() || to == j.end() || !(to->is_string() || to->is_number())) return std::nullopt;
  if (to->is_string()) return RunFolder::LoggedChange{*iteration, parameter->get<std::string>(), to->get<std::string>()};
  NumberText number("to");
  nlohmann::json::sax_parse(line.begin(), line.end(), &number);
  return RunFolder::LoggedChange{*iteration, parameter->get<std::string>(), number.text.empty() ? to->dump() : number.text};
}

// A log read whole: its lines, each without its line break (LF, CRLF or a lone CR) and trailing
// whitespace; `unterminated` when the last one has no line break (cut short by a kill or a full
// disk, unless it is whole). The lines view `text`: a Log is filled in place and never moved (a
// short text lives inside the string object, and a moved one would leave them dangling).
struct Log {
  std::string text;
  std::vector<std::string_view> lines;
  bool unterminated = false;
};

bool readLog(const std::filesystem::path& file, Log* log, std::string* error) {
  std::error_code ec;
  if (!std::filesystem::exists(std::filesystem::symlink_status(file, ec))) return true;  // a missing log is an empty one
  auto text = readFile(file, kRunLogLimit, error, OpenFor::ReadingInPlace);
  if (!text) {
    // Larger than a log may grow (a run before the limit was kept): what to do about it.
    if (error && std::filesystem::file_size(file, ec) > kRunLogLimit.maxBytes && !ec)
      *error += "; move it out of the run folder (the run does not need it to go on), or keep only its last lines (tail -n 100000 " +
                file.string() + " > " + file.string() + ".new && mv " + file.string() + ".new " + file.string() + "), and try again";
    return false;
  }
  log->text = std::move(*text);
  // A line ends in LF, CRLF or a lone CR (a log rewritten by a tool that writes old Mac line
  // ends): each record of such a log is a line, not the whole log one partial line.
  for (size_t start = 0; start < log->text.size();) {
    size_t end = log->text.find_first_of("\r\n", start);
    log->unterminated = end == std::string::npos;
    if (log->unterminated) end = log->text.size();
    std::string_view line(log->text.data() + start, end - start);
    while (!line.empty() && (line.back() == ' ' || line.back() == '\t')) line.remove_suffix(1);
    log->lines.push_back(line);
    start = end + (log->text.compare(std::min(end, log->text.size()), 2, "\r\n") == 0 ? 2 : 1);
  }
  return true;
}

// How many bytes from the start of log.text hold the `kept` lines exactly, each followed by its
// line break; nullopt when they are not the log's first lines as written (a line dropped or
// moved before the last kept one, trailing whitespace or a CR trimmed).
std::optional<size_t> keptPrefix(const Log& log, const std::vector<std::string_view>& kept) {
  size_t end = 0;
  for (std::string_view line : kept) {
    if (line.data() != log.text.data() + end || end + line.size() >= log.text.size() || log.text[end + line.size()] != '\n') return std::nullopt;
    end += line.size() + 1;
  }
  return end;
}

// Writes the log `file` anew with the `kept` lines, each ending in a line break, when that is
// not what it holds already. When they are the log's first lines as written (what a resume
// after a kill keeps), the new log is written from the old one's text, not from a copy: a log
// near its limit is then held in memory once.
bool rewriteLog(const std::filesystem::path& file, const Log& log, const std::vector<std::string_view>& kept, std::string* error) {
  std::string copy;
  std::string_view text;
  if (const std::optional<size_t> prefix = keptPrefix(log, kept)) {
    text = std::string_view(log.text).substr(0, *prefix);
  } else {
    for (std::string_view line : kept) (copy += line) += '\n';
    text = copy;
  }
  if (text == log.text) return true;
  std::error_code ec;
  if (text.empty() && !std::filesystem::exists(std::filesystem::symlink_status(file, ec))) return true;
  return writeFileAtomic(file, text, error);
}

// "3", "3-5", "3, 7-9": the iterations in [from, to] that have no line, given those that do.
std::string missingIterations(const std::vector<std::int64_t>& present, std::int64_t to) {
  std::vector<std::string> ranges;
  std::int64_t next = 1;
  auto gap = [&](std::int64_t end) {  // next .. end-1 are missing
    if (end - 1 > next) ranges.push_back(std::to_string(next) + "-" + std::to_string(end - 1));
    else if (end - 1 == next) ranges.push_back(std::to_string(next));
  };
  for (std::int64_t n : present) {
    gap(n);
    next = n + 1;
  }
  gap(to + 1);
  std::string out;
  for (const std::string& r : ranges) out += (out.empty() ? "" : ", ") + r;
  return out;
}

// metrics.jsonl: a line for each iteration up to the checkpoint's that has one, in order: where an
// iteration was logged twice, its later line (the run that went on from there wrote it).
bool repairMetrics(const std::filesystem::path& dir, std::int64_t iteration, std::vector<Diagnostic>* notices, std::string* error) {
  Log log;
  if (!readLog(dir / "metrics.jsonl", &log, error)) return false;
  std::map<std::int64_t, std::string_view> byIteration;
  int later = 0, malformed = 0;
  bool partial = false;
  for (size_t i = 0; i < log.lines.size(); ++i) {
    const std::string_view line = log.lines[i];
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;  // a blank line holds nothing
    const auto json = jsonObject(line);
    const auto n = json ? iterationOf(*json) : std::nullopt;
    if (n && *n <= iteration) {
      malformed += byIteration.count(*n) > 0;  // the earlier line goes
      byIteration[*n] = line;
    } else if (n) {
      ++later;
    } else if (i + 1 == log.lines.size() && log.unterminated && !json) {
      partial = true;
    } else {
      ++malformed;
    }
  }
  std::vector<std::string_view> kept;
  std::vector<std::int64_t> present;
  for (const auto& [n, line] : byIteration) {
    present.push_back(n);
    kept.push_back(line);
  }
  if (!rewriteLog(dir / "metrics.jsonl", log, kept, error)) return false;
  std::vector<std::string> what;
  if (later) what.push_back(count(later, "line recorded after the checkpoint", "lines recorded after the checkpoint") + " (those iterations run again)");
  if (malformed) what.push_back(count(malformed, "line", "lines") + " malformed or logging an iteration again");
  if (partial) what.push_back("a partial last line (cut short when the run stopped)");
  const std::int64_t last = present.empty() ? 0 : present.back();
  if (!what.empty() && notices)
    notices->push_back(sentence(Severity::Note, "metrics.jsonl cut back to iteration " + std::to_string(last) + ": dropped " + listed(what)));
  const std::string missing = missingIterations(present, iteration);
  if (!missing.empty() && notices)
    notices->push_back(sentence(Severity::Warning, "metrics.jsonl has no line for iteration" + std::string(missing.find_first_of(",-") == std::string::npos ? " " : "s ") +
                                                       missing + " (lost before this resume); the log goes on from iteration " + std::to_string(iteration + 1)));
  return true;
}

// changes.jsonl: the changes applied up to the first iteration that runs again, in order.
std::optional<std::vector<RunFolder::LoggedChange>> repairChanges(const std::filesystem::path& dir, std::int64_t iteration,
                                                                  std::vector<Diagnostic>* notices, std::string* error) {
  Log log;
  if (!readLog(dir / "changes.jsonl", &log, error)) return std::nullopt;
  struct Entry {
    std::int64_t at;
    std::string_view line;
    std::optional<RunFolder::LoggedChange> change;  // none for a record of --use-project
  };
  std::vector<Entry> entries;
  int dropped = 0;
  bool partial = false;
  for (size_t i = 0; i < log.lines.size(); ++i) {
    const std::string_view line = log.lines[i];
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    const auto json = jsonObject(line);
    auto change = json ? loggedChange(*json, line) : std::nullopt;
    // A record of --use-project (the run's copies replaced) is kept in its place, not applied.
    const auto adopted = json && !change && json->contains("project_files") ? iterationOf(*json) : std::nullopt;
    const std::int64_t at = change ? change->iteration : adopted.value_or(0);
    if ((change || adopted) && at <= iteration + 1) entries.push_back({at, line, std::move(change)});
    else if (i + 1 == log.lines.size() && log.unterminated && !json) partial = true;
    else ++dropped;
  }
  // In the order of their iterations (a line moved by hand or by a tool is no less valid), those
  // of one iteration in the order they were written.
  std::stable_sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.at < b.at; });
  std::vector<std::string_view> keptLines;
  std::vector<RunFolder::LoggedChange> kept;
  for (Entry& e : entries) {
    keptLines.push_back(e.line);
    if (!e.change) continue;
    e.change->line = int(keptLines.size());  // where it stands in the log written below
    kept.push_back(std::move(*e.change));
  }
  if (!rewriteLog(dir / "changes.jsonl", log, keptLines, error)) return std::nullopt;
  std::vector<std::string> what;
  if (dropped) what.push_back(count(dropped, "change", "changes") + " logged after the checkpoint or malformed");
  if (partial) what.push_back("a partial last line (cut short when the run stopped)");
  if (!what.empty() && notices)
    notices->push_back(sentence(Severity::Note, "changes.jsonl cut back to the changes applied by iteration " + std::to_string(iteration + 1) +
                                                    ": dropped " + listed(what)));
  return kept;
}

}  // namespace

std::optional<std::vector<RunFolder::LoggedChange>> RunFolder::repairLogs(std::int64_t iteration, std::vector<Diagnostic>* notices,
                                                                           std::string* error) {
  if (!repairMetrics(dir_, iteration, notices, error)) return std::nullopt;
  return repairChanges(dir_, iteration, notices, error);
}

// The file names of `files` as the note of a restart lists them ("checkpoints/iter-00000002.ckpt"),
// at most 8 named and the rest counted.
static std::string namedFiles(const std::filesystem::path& dir, const std::vector<std::filesystem::path>& files) {
  std::vector<std::string> names;
  for (size_t i = 0; i < files.size() && i < 8; ++i) names.push_back(files[i].lexically_relative(dir).string());
  if (files.size() > 8) names.push_back(count(int(files.size() - 8), "more", "more"));
  return listed(names);
}

// The run's checkpoints (the files it would read as its checkpoints: iter-N.ckpt) and the other
// entries of checkpoints/, which are not the run's progress and stay. A missing checkpoints/ is
// made (a restart starts afresh, and writes its first checkpoint there); false with `error` when
// it cannot be made or listed.
static bool listCheckpoints(const std::filesystem::path& dir, std::vector<std::filesystem::path>* checkpoints,
                            std::vector<std::filesystem::path>* others, std::string* error) {
  const std::filesystem::path folder = dir / "checkpoints";
  if (::mkdir(folder.c_str(), 0777) != 0 && errno != EEXIST) {
    if (error) *error = "cannot create " + folder.string() + ": " + std::strerror(errno);
    return false;
  }
  std::error_code ec;
  std::vector<std::filesystem::path> entries;
  for (std::filesystem::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) entries.push_back(it->path());
  if (ec) {
    if (error) *error = "cannot read " + folder.string() + ": " + ec.message();
    return false;
  }
  *checkpoints = checkpointFiles(dir);
  for (const std::filesystem::path& entry : entries)
    if (std::find(checkpoints->begin(), checkpoints->end(), entry) == checkpoints->end() && !isInterruptedWrite(entry.filename().string()))
      others->push_back(entry);
  std::sort(others->begin(), others->end());
  return true;
}

bool RunFolder::discardProgress(std::vector<Diagnostic>* notices, std::string* error) {
  std::error_code ec;
  const std::string nothing = " (nothing was discarded)";
  // What cannot be removed as a file is named before anything is removed: a restart that stops
  // half-way would leave a run with its logs and without its checkpoints. So is a checkpoints/
  // that cannot be listed: its files would stay while the logs went.
  std::vector<std::filesystem::path> checkpoints, others;
  if (!listCheckpoints(dir_, &checkpoints, &others, error)) {
    if (error) *error = "cannot discard the progress of " + dir_.string() + ": " + *error + nothing;
    return false;
  }
  std::vector<std::filesystem::path> discarded = checkpoints;
  for (const char* log : {"metrics.jsonl", "changes.jsonl"})
    if (std::filesystem::exists(std::filesystem::symlink_status(dir_ / log, ec))) discarded.push_back(dir_ / log);
  for (const std::filesystem::path& file : discarded)
    if (std::filesystem::is_directory(std::filesystem::symlink_status(file, ec))) {
      if (error)
        *error = "cannot discard the progress of " + dir_.string() + ": " + file.string() + " is a folder, not a file the run wrote; move it " +
                 "out of the run folder and try again" + nothing;
      return false;
    }
  ec.clear();
  for (const std::filesystem::path& file : discarded)
    if (!ec) std::filesystem::remove(file, ec);
  if (ec) {
    if (error) *error = "cannot discard the progress of " + dir_.string() + ": " + ec.message();
    return false;
  }
  std::string what = discarded.empty() ? "nothing to remove" : "removed " + namedFiles(dir_, discarded);
  if (!others.empty()) what += "; kept " + namedFiles(dir_, others) + ", which " + (others.size() == 1 ? "is" : "are") + " not the run's checkpoints";
  if (notices)
    notices->push_back(sentence(Severity::Note, "discarded the progress of " + dir_.string() + " (" + what + "); training it again from iteration 1"));
  return true;
}

void RunFolder::removeUnstarted() {
  std::error_code ec;
  for (const char* file : {"config.toml", "project.toml", "policy.pdl", "series.csv"}) std::filesystem::remove(dir_ / file, ec);
  // The lock and the folders only when this process made them (the lock is removed while held:
  // a process that opened it meanwhile finds it gone when it locks it, and opens it again).
  if (lock_ && lock_->createdFile()) std::filesystem::remove(dir_ / "lock", ec);
  for (const std::filesystem::path& folder : made_) std::filesystem::remove(folder, ec);  // each only when empty
  lock_.reset();
}

void RunFolder::removeInterruptedWrites(std::vector<Diagnostic>* notices) {
  for (const std::filesystem::path& folder : {dir_, dir_ / "checkpoints"}) {
    std::error_code ec;
    std::vector<std::filesystem::path> leftovers;
    for (const auto& entry : std::filesystem::directory_iterator(folder, ec))
      if (isInterruptedWrite(entry.path().filename().string())) leftovers.push_back(entry.path());
    for (const std::filesystem::path& file : leftovers)
      if (std::filesystem::remove(file, ec) && notices)
        notices->push_back(sentence(Severity::Note, "removed " + file.string() + ", left by a write that was interrupted"));
  }
}

}  // namespace cas::engine
