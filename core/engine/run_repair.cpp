// What resuming and restarting a run do to its folder: cutting the logs back to the checkpoint
// (read as JSON lines, so whitespace, CRLF and a line re-serialised by another tool are kept),
// discarding the progress, removing what interrupted writes left behind.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <new>
#include <sys/stat.h>
#include <unistd.h>
#include <utility>

#include "core/engine/run_folder.hpp"
#include "core/support/atomic_file.hpp"
#include "core/train/checkpoint_header.hpp"

namespace cas::engine {
namespace {

// A log line nests an object or two; deeper text is no line of ours, and is not handed to the
// parser at all.
constexpr int kMaxLineDepth = 16;
// A log is read in pieces of this size, and a line longer than kMaxLogLine is not held (the run
// writes lines of a few hundred bytes).
constexpr size_t kLogPiece = size_t(1) << 20;
constexpr std::uint64_t kMaxLogLine = std::uint64_t(1) << 20;

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

// What to do about a log too large to read: every refusal of one ends with it.
std::string logRemedy(const std::filesystem::path& file) {
  const std::string f = file.string();
  return "; move it out of the run folder (the run does not need it to go on), or keep only its last lines (tail -n 100000 " + f + " > " +
         f + ".new && mv " + f + ".new " + f + "), and try again";
}

// The bytes of a log in pieces of kLogPiece, each handed to `piece` (false stops the read, not an
// error); a missing log is an empty one. False with `error` when it cannot be read or is larger
// than a log may grow (a run before the limit was kept: the sentence says what to do).
bool readLogPieces(const std::filesystem::path& file, const std::function<bool(std::string_view)>& piece, std::string* error) {
  std::error_code ec;
  if (!std::filesystem::exists(std::filesystem::symlink_status(file, ec))) return true;
  const int fd = openRegularFile(file, kRunLogLimit, error, OpenFor::ReadingInPlace);
  if (fd < 0) return false;
  struct stat st {};
  if (::fstat(fd, &st) == 0 && std::uint64_t(st.st_size) > kRunLogLimit.maxBytes) {
    readAll(fd, file, kRunLogLimit, error);  // refused unread, in the words every reader uses
    ::close(fd);
    if (error) *error += logRemedy(file);
    return false;
  }
  std::string buffer(kLogPiece, '\0');
  std::uint64_t total = 0;
  for (;;) {
    const ssize_t n = ::read(fd, buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    bool ok = n >= 0;
    if (!ok && error) *error = "cannot read " + file.string() + ": " + std::strerror(errno);
    total += std::uint64_t(std::max<ssize_t>(n, 0));
    if (ok && total > kRunLogLimit.maxBytes) {  // it grew while it was read
      ok = false;
      if (error)
        *error = file.string() + " is larger than the " + formatBytes(kRunLogLimit.maxBytes) + " " + kRunLogLimit.what + " may hold" +
                 logRemedy(file);
    }
    if (!ok || n == 0 || !piece(std::string_view(buffer.data(), size_t(n)))) {
      ::close(fd);
      return ok;
    }
  }
}

// A log line as scanLog hands it over: without its line break (LF, CRLF or a lone CR) and
// trailing whitespace. A line longer than kMaxLogLine is no line of ours (the run writes lines of
// a few hundred bytes): it is not held, and comes as `tooLong` with no text.
struct LogLine {
  std::string_view text;
  bool tooLong = false;
  bool unterminatedLast = false;  // the last line, without a line break: cut short by a kill or a full disk, unless it is whole
};

// Splits the pieces of a log into lines; a CR at the end of one piece and an LF at the start of
// the next are one line break.
class LineSplitter {
 public:
  explicit LineSplitter(const std::function<void(const LogLine&)>& each) : each_(each) {}
  void feed(std::string_view bytes) {
    for (size_t i = 0; i < bytes.size();) {
      if (std::exchange(afterCr_, false) && bytes[i] == '\n') {
        ++i;
        continue;
      }
      const size_t end = bytes.find_first_of("\r\n", i);
      const std::string_view part = bytes.substr(i, end == std::string_view::npos ? std::string_view::npos : end - i);
      length_ += part.size();
      if (length_ > kMaxLogLine)
        line_.clear();
      else
        line_ += part;
      if (end == std::string_view::npos) return;
      afterCr_ = bytes[end] == '\r';
      emit(false);
      i = end + 1;
    }
  }
  void finish() {
    if (length_ > 0) emit(true);
  }

 private:
  void emit(bool unterminated) {
    std::string_view text = line_;
    while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
    const bool tooLong = length_ > kMaxLogLine;
    each_(LogLine{tooLong ? std::string_view() : text, tooLong, unterminated});
    line_.clear();
    length_ = 0;
  }
  const std::function<void(const LogLine&)>& each_;
  std::string line_;
  std::uint64_t length_ = 0;
  bool afterCr_ = false;
};

// Reads a log line by line, holding one line at a time and never the log (a log of 40 million
// short lines once took 1.2 GB); false with `error` as readLogPieces.
bool scanLog(const std::filesystem::path& file, const std::function<void(const LogLine&)>& each, std::string* error) {
  LineSplitter lines(each);
  if (!readLogPieces(
          file, [&](std::string_view piece) { return lines.feed(piece), true; }, error))
    return false;
  lines.finish();
  return true;
}

// Whether the log `file` holds exactly `text` (a missing log holds nothing); false when it cannot
// be read either.
bool holds(const std::filesystem::path& file, std::string_view text) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(file, ec);
  if (ec) return text.empty();
  if (size != text.size()) return false;
  size_t at = 0;
  bool same = true;
  const auto compare = [&](std::string_view piece) {
    same = text.substr(at, piece.size()) == piece;
    at += piece.size();
    return same;
  };
  return readLogPieces(file, compare, nullptr) && same && at == text.size();
}

// Writes the log `file` anew with the `kept` lines, each ending in a line break, when that is
// not what it holds already (what a resume after a clean stop keeps).
bool rewriteLog(const std::filesystem::path& file, const std::vector<const std::string*>& kept, std::string* error) {
  std::string text;
  for (const std::string* line : kept) (text += *line) += '\n';
  if (holds(file, text)) return true;
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
  std::map<std::int64_t, std::string> byIteration;
  int later = 0, malformed = 0;
  bool partial = false;
  const bool read = scanLog(
      dir / "metrics.jsonl",
      [&](const LogLine& line) {
        if (!line.tooLong && line.text.find_first_not_of(" \t\r") == std::string_view::npos) return;  // a blank line holds nothing
        const auto json = line.tooLong ? std::nullopt : jsonObject(line.text);
        const auto n = json ? iterationOf(*json) : std::nullopt;
        if (n && *n <= iteration) {
          malformed += byIteration.count(*n) > 0;  // the earlier line goes
          byIteration[*n] = line.text;
        } else if (n) {
          ++later;
        } else if (line.unterminatedLast && !json) {
          partial = true;
        } else {
          ++malformed;
        }
      },
      error);
  if (!read) return false;
  std::vector<const std::string*> kept;
  std::vector<std::int64_t> present;
  for (const auto& [n, line] : byIteration) {
    present.push_back(n);
    kept.push_back(&line);
  }
  if (!rewriteLog(dir / "metrics.jsonl", kept, error)) return false;
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
  struct Entry {
    std::int64_t at;
    std::string line;
    std::optional<RunFolder::LoggedChange> change;  // none for a record of --use-project
  };
  std::vector<Entry> entries;
  int dropped = 0;
  bool partial = false;
  const bool read = scanLog(
      dir / "changes.jsonl",
      [&](const LogLine& line) {
        if (!line.tooLong && line.text.find_first_not_of(" \t\r") == std::string_view::npos) return;
        const auto json = line.tooLong ? std::nullopt : jsonObject(line.text);
        auto change = json ? loggedChange(*json, line.text) : std::nullopt;
        // A record of --use-project (the run's copies replaced) is kept in its place, not applied.
        const auto adopted = json && !change && json->contains("project_files") ? iterationOf(*json) : std::nullopt;
        const std::int64_t at = change ? change->iteration : adopted.value_or(0);
        if ((change || adopted) && at <= iteration + 1)
          entries.push_back({at, std::string(line.text), std::move(change)});
        else if (line.unterminatedLast && !json)
          partial = true;
        else
          ++dropped;
      },
      error);
  if (!read) return std::nullopt;
  // In the order of their iterations (a line moved by hand or by a tool is no less valid), those
  // of one iteration in the order they were written.
  std::stable_sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.at < b.at; });
  std::vector<const std::string*> keptLines;
  std::vector<RunFolder::LoggedChange> kept;
  for (Entry& e : entries) {
    keptLines.push_back(&e.line);
    if (!e.change) continue;
    e.change->line = int(keptLines.size());  // where it stands in the log written below
    kept.push_back(std::move(*e.change));
  }
  if (!rewriteLog(dir / "changes.jsonl", keptLines, error)) return std::nullopt;
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
  // Each log is read a line at a time, but what it keeps is held to be written back: a log of
  // many lines the resume keeps can still exhaust the memory there is. That is said of the log,
  // with what to do, not as a configuration that asks too much.
  const char* reading = "metrics.jsonl";
  try {
    if (!repairMetrics(dir_, iteration, notices, error)) return std::nullopt;
    reading = "changes.jsonl";
    return repairChanges(dir_, iteration, notices, error);
  } catch (const std::bad_alloc&) {
    std::error_code ec;
    const std::uint64_t size = std::filesystem::file_size(dir_ / reading, ec);
    if (error)
      *error = "out of memory while reading " + (dir_ / reading).string() + (ec ? std::string() : " (" + formatBytes(size) + ")") +
               logRemedy(dir_ / reading);
    return std::nullopt;
  }
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
