#pragma once
// Diagnostics shared by every front end (project.toml, PDL, parameter changes, run folders).
// A diagnostic is printed as `file:line:col: severity: sentence`, optionally followed by the
// source line and a caret, then its notes in the same form. File names, messages and source
// lines are escaped for the terminal (core/support/printable.hpp); a diagnostic without a file
// prints as `severity: sentence`.
// Thread-safety: plain values; a DiagnosticList is not synchronised.
#include <string>
#include <string_view>
#include <vector>

namespace cas {

struct SourceLocation {
  std::string file;
  int line = 0;    // 1-based; 0 means "the file as a whole"
  int column = 0;  // 1-based; 0 means "the line as a whole"
};

enum class Severity { Error, Warning, Note };

struct Diagnostic {
  Severity severity = Severity::Error;
  SourceLocation location;
  std::string message;
  std::vector<Diagnostic> notes;  // related locations ("value defined here")
};

class DiagnosticList {
 public:
  void error(SourceLocation loc, std::string message);
  void warning(SourceLocation loc, std::string message);
  void add(Diagnostic d) { items_.push_back(std::move(d)); }

  bool hasErrors() const;
  int errorCount() const;
  const std::vector<Diagnostic>& items() const { return items_; }
  bool empty() const { return items_.empty(); }

 private:
  std::vector<Diagnostic> items_;
};

const char* severityName(Severity s);

// `file:line:col: error: message`, without source excerpt.
std::string formatHeadline(const Diagnostic& d);

// Headline, then the source line and a caret under the column when `source` holds the file's
// text (a window of about 100 bytes around the column when the line is longer), then the notes.
std::string formatDiagnostic(const Diagnostic& d, std::string_view source = {});

// Returns line `line` (1-based) of `text`, without its newline; empty when out of range.
std::string_view sourceLine(std::string_view text, int line);

}  // namespace cas
