#include "core/support/diagnostic.hpp"

#include <algorithm>

namespace cas {

void DiagnosticList::error(SourceLocation loc, std::string message) {
  items_.push_back({Severity::Error, std::move(loc), std::move(message), {}});
}

void DiagnosticList::warning(SourceLocation loc, std::string message) {
  items_.push_back({Severity::Warning, std::move(loc), std::move(message), {}});
}

bool DiagnosticList::hasErrors() const { return errorCount() > 0; }

int DiagnosticList::errorCount() const {
  return static_cast<int>(std::count_if(items_.begin(), items_.end(),
                                        [](const Diagnostic& d) { return d.severity == Severity::Error; }));
}

const char* severityName(Severity s) {
  switch (s) {
    case Severity::Error: return "error";
    case Severity::Warning: return "warning";
    case Severity::Note: return "note";
  }
  return "error";
}

std::string formatHeadline(const Diagnostic& d) {
  std::string out = d.location.file;
  if (d.location.line > 0) {
    out += ":" + std::to_string(d.location.line);
    if (d.location.column > 0) out += ":" + std::to_string(d.location.column);
  }
  out += ": ";
  out += severityName(d.severity);
  out += ": ";
  out += d.message;
  return out;
}

std::string_view sourceLine(std::string_view text, int line) {
  if (line <= 0) return {};
  size_t start = 0;
  for (int i = 1; i < line; ++i) {
    size_t nl = text.find('\n', start);
    if (nl == std::string_view::npos) return {};
    start = nl + 1;
  }
  size_t end = text.find('\n', start);
  std::string_view l = text.substr(start, end == std::string_view::npos ? text.size() - start : end - start);
  if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
  return l;
}

static void appendExcerpt(std::string& out, const Diagnostic& d, std::string_view source) {
  if (source.empty() || d.location.line <= 0) return;
  std::string_view line = sourceLine(source, d.location.line);
  if (line.empty()) return;
  out += "\n    ";
  out += line;
  if (d.location.column > 0) {
    out += "\n    ";
    // Keep tabs so the caret lines up under tab-indented text.
    for (int i = 0; i < d.location.column - 1 && i < static_cast<int>(line.size()); ++i)
      out += line[static_cast<size_t>(i)] == '\t' ? '\t' : ' ';
    out += '^';
  }
}

std::string formatDiagnostic(const Diagnostic& d, std::string_view source) {
  std::string out = formatHeadline(d);
  appendExcerpt(out, d, source);
  for (const Diagnostic& n : d.notes) {
    out += "\n";
    out += formatHeadline(n);
    if (n.location.file == d.location.file) appendExcerpt(out, n, source);
  }
  return out;
}

}  // namespace cas
