// What resuming and restarting a run do to its folder: cutting the logs back to the checkpoint,
// discarding the progress, removing what interrupted writes left behind.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <functional>

#include "core/engine/run_folder.hpp"
#include "core/support/atomic_file.hpp"
#include "core/support/numbers.hpp"

namespace cas::engine {
namespace {

constexpr std::int64_t kMaxIteration = std::int64_t(1) << 62;

Diagnostic sentence(Severity severity, std::string message) { return {severity, {}, std::move(message), {}}; }

// "a", "a and b", "a, b and c".
std::string listed(const std::vector<std::string>& parts) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i == 0 ? "" : i + 1 == parts.size() ? " and " : ", ") + parts[i];
  return out;
}

std::string count(int n, const char* one, const char* many) { return std::to_string(n) + " " + (n == 1 ? one : many); }

// The iteration a metrics line records: a whole line `{"iteration": N, ...}`.
std::optional<std::int64_t> metricsIteration(std::string_view line) {
  constexpr std::string_view prefix = "{\"iteration\": ";
  if (line.size() < prefix.size() + 2 || line.substr(0, prefix.size()) != prefix || line.back() != '}') return std::nullopt;
  line.remove_prefix(prefix.size());
  return parseInteger(line.substr(0, line.find_first_of(",}")), 1, kMaxIteration);
}

// Reads `"..."` (as run_folder.cpp's quoted() writes it) from the front of `s`.
std::optional<std::string> takeQuoted(std::string_view& s) {
  if (s.empty() || s[0] != '"') return std::nullopt;
  std::string out;
  for (size_t i = 1; i < s.size(); ++i) {
    if (s[i] == '"') {
      s.remove_prefix(i + 1);
      return out;
    }
    if (s[i] == '\\' && i + 1 < s.size()) ++i;
    out += s[i];
  }
  return std::nullopt;
}

bool take(std::string_view& s, std::string_view expected) {
  if (s.substr(0, expected.size()) != expected) return false;
  s.remove_prefix(expected.size());
  return true;
}

// A whole changes.jsonl line: {"iteration": N, "parameter": "P", "from": "F", "to": "T"}.
std::optional<RunFolder::LoggedChange> loggedChange(std::string_view line) {
  RunFolder::LoggedChange c;
  if (!take(line, "{\"iteration\": ")) return std::nullopt;
  const size_t comma = line.find(',');
  const auto iteration = parseInteger(line.substr(0, comma), 1, kMaxIteration);
  if (!iteration || comma == std::string_view::npos) return std::nullopt;
  line.remove_prefix(comma);
  c.iteration = *iteration;
  auto parameter = take(line, ", \"parameter\": ") ? takeQuoted(line) : std::nullopt;
  auto from = parameter && take(line, ", \"from\": ") ? takeQuoted(line) : std::nullopt;
  auto to = from && take(line, ", \"to\": ") ? takeQuoted(line) : std::nullopt;
  if (!to || line != "}") return std::nullopt;
  c.parameter = std::move(*parameter);
  c.to = std::move(*to);
  return c;
}

// Cuts the log `file` to its longest run of complete lines that `keep` accepts in turn (a missing
// log is an empty one). `dropped` hears each complete line after that; `partial` tells whether
// the file ended in a line without its newline (cut short by a kill or a full disk).
bool cutLog(const std::filesystem::path& file, const std::function<bool(std::string_view)>& keep,
            const std::function<void(std::string_view)>& dropped, bool* partial, std::string* error) {
  *partial = false;
  std::error_code ec;
  if (!std::filesystem::exists(std::filesystem::symlink_status(file, ec))) return true;
  const int fd = openRegularFile(file, kRunLogLimit, error, OpenFor::Appending);
  if (fd < 0) return false;
  const auto text = readAll(fd, file, kRunLogLimit, error);
  if (!text) {
    ::close(fd);
    return false;
  }
  size_t keptEnd = 0;
  bool keeping = true;
  for (size_t start = 0; start < text->size();) {
    const size_t end = text->find('\n', start);
    if (end == std::string::npos) {
      *partial = true;
      break;
    }
    const std::string_view line(text->data() + start, end - start);
    start = end + 1;
    keeping = keeping && keep(line);
    if (keeping) keptEnd = start;
    else dropped(line);
  }
  const bool ok = keptEnd == text->size() || (::ftruncate(fd, off_t(keptEnd)) == 0 && ::fsync(fd) == 0);
  if (!ok && error) *error = "cannot cut " + file.string() + " back: " + std::strerror(errno);
  ::close(fd);
  return ok;
}

}  // namespace

std::optional<std::vector<RunFolder::LoggedChange>> RunFolder::repairLogs(std::int64_t iteration, std::vector<Diagnostic>* notices,
                                                                           std::string* error) {
  // metrics.jsonl: iterations 1, 2, ..., `iteration`, one line each.
  std::int64_t next = 1;
  int later = 0, outOfSequence = 0;
  bool partial = false;
  if (!cutLog(dir_ / "metrics.jsonl", [&](std::string_view line) {
        const auto n = metricsIteration(line);
        if (!n || *n != next || *n > iteration) return false;
        ++next;
        return true;
      },
      [&](std::string_view line) {
        const auto n = metricsIteration(line);
        ++(n && *n > iteration ? later : outOfSequence);
      },
      &partial, error))
    return std::nullopt;
  std::vector<std::string> what;
  if (later) what.push_back(count(later, "line recorded after the checkpoint", "lines recorded after the checkpoint") + " (those iterations run again)");
  if (outOfSequence) what.push_back(count(outOfSequence, "line", "lines") + " out of sequence or malformed");
  if (partial) what.push_back("a partial last line (cut short when the run stopped)");
  if (!what.empty() && notices)
    notices->push_back(sentence(Severity::Note, "metrics.jsonl cut back to iteration " + std::to_string(next - 1) +
                                                    ": dropped " + listed(what)));
  if (next - 1 < iteration && notices)
    notices->push_back(sentence(Severity::Warning, "metrics.jsonl has no line for iteration" +
                                                       (next == iteration ? " " + std::to_string(iteration)
                                                                          : "s " + std::to_string(next) + "-" + std::to_string(iteration)) +
                                                       " (lost before this resume); the log goes on from iteration " + std::to_string(iteration + 1)));

  // changes.jsonl: the changes applied up to the first iteration that runs again, in order.
  std::vector<LoggedChange> kept;
  int droppedChanges = 0;
  if (!cutLog(dir_ / "changes.jsonl", [&](std::string_view line) {
        auto c = loggedChange(line);
        if (!c || c->iteration > iteration + 1 || (!kept.empty() && c->iteration < kept.back().iteration)) return false;
        kept.push_back(std::move(*c));
        return true;
      },
      [&](std::string_view) { ++droppedChanges; }, &partial, error))
    return std::nullopt;
  what.clear();
  if (droppedChanges) what.push_back(count(droppedChanges, "change", "changes") + " logged after the checkpoint or malformed");
  if (partial) what.push_back("a partial last line (cut short when the run stopped)");
  if (!what.empty() && notices)
    notices->push_back(sentence(Severity::Note, "changes.jsonl cut back to the changes applied by iteration " + std::to_string(iteration + 1) +
                                                    ": dropped " + listed(what)));
  return kept;
}

bool RunFolder::discardProgress(std::vector<Diagnostic>* notices, std::string* error) {
  std::error_code ec;
  std::vector<std::filesystem::path> checkpoints;
  for (const auto& entry : std::filesystem::directory_iterator(dir_ / "checkpoints", ec)) checkpoints.push_back(entry.path());
  for (const std::filesystem::path& file : checkpoints)
    if (!ec) std::filesystem::remove(file, ec);
  for (const char* log : {"metrics.jsonl", "changes.jsonl"})
    if (!ec) std::filesystem::remove(dir_ / log, ec);
  if (ec) {
    if (error) *error = "cannot discard the progress of " + dir_.string() + ": " + ec.message();
    return false;
  }
  if (notices)
    notices->push_back(sentence(Severity::Note, "discarded the progress of " + dir_.string() + " (" +
                                                    count(int(checkpoints.size()), "file in checkpoints/", "files in checkpoints/") +
                                                    ", metrics.jsonl, changes.jsonl); training it again from iteration 1"));
  return true;
}

void RunFolder::removeUnstarted() {
  std::error_code ec;
  for (const char* file : {"config.toml", "project.toml", "policy.pdl", "lock"}) std::filesystem::remove(dir_ / file, ec);
  std::filesystem::remove(dir_ / "checkpoints", ec);  // only when empty
  std::filesystem::remove(dir_, ec);                  // likewise
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
