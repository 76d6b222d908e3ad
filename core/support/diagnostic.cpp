#include "core/support/diagnostic.hpp"

#include <algorithm>

#include "core/support/printable.hpp"

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
  std::string out;
  if (!d.location.file.empty()) {
    out = printable(d.location.file);
    if (d.location.line > 0) {
      out += ":" + std::to_string(d.location.line);
      if (d.location.column > 0) out += ":" + std::to_string(d.location.column);
    }
    out += ": ";
  }
  out += severityName(d.severity);
  out += ": ";
  out += printable(d.message);
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

// The source line under a diagnostic, escaped for the terminal, with a caret under the column.
// A line wider than kExcerptColumns once printed is cut to a window around the column ("..."
// marks the cuts), so one huge line cannot flood the output.
static void appendExcerpt(std::string& out, const Diagnostic& d, std::string_view source) {
  constexpr size_t kExcerptColumns = 100, kColumnsBeforeCaret = 40;
  if (source.empty() || d.location.line <= 0) return;
  const std::string_view line = sourceLine(source, d.location.line);
  if (line.empty()) return;
  const size_t column = d.location.column > 0 ? std::min(size_t(d.location.column - 1), line.size()) : 0;
  auto isContinuation = [&](size_t i) { return (static_cast<unsigned char>(line[i]) & 0xC0) == 0x80; };
  // Back from the column by up to kColumnsBeforeCaret printed columns, then on to the width.
  size_t begin = column, width = 0;
  while (begin > 0) {
    size_t previous = begin - 1;
    while (previous > 0 && isContinuation(previous)) --previous;
    width += printedUnit(line, previous, Keep::Tabs).columns;
    if (width > kColumnsBeforeCaret) break;
    begin = previous;
  }
  size_t end = begin;
  for (width = 0; end < line.size() && width < kExcerptColumns;) {
    const PrintedUnit unit = printedUnit(line, end, Keep::Tabs);
    width += unit.columns;
    end += unit.bytes;
  }
  const std::string_view cutBefore = begin > 0 ? "..." : "", cutAfter = end < line.size() ? "..." : "";
  out += "\n    ";
  out += cutBefore;
  // Keep tabs so the caret lines up under tab-indented text; every other unit is as wide as printed.
  out += printable(line.substr(begin, end - begin), Keep::Tabs);
  out += cutAfter;
  if (d.location.column <= 0) return;
  out += "\n    ";
  out.append(cutBefore.size(), ' ');
  for (size_t i = begin; i < column && i < end;) {
    const PrintedUnit unit = printedUnit(line, i, Keep::Tabs);
    if (line[i] == '\t') out += '\t';
    else out.append(unit.columns, ' ');
    i += unit.bytes;
  }
  out += '^';
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
