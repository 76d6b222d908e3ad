#pragma once
// What the PDL editor offers at the cursor, worked out from the text alone (no Scintilla, so it
// is tested directly): inside a built-in's call, the keyword arguments not given yet; elsewhere
// (and after them) the built-ins, reserved words, environment constants and the names the file
// defines. Also the call tip of a built-in ("dense(x, units, bias=…, name=…)").
// Thread-safety: plain functions over their arguments.
#include <QString>
#include <QStringList>

namespace cas::widgets::pdl_completion {

struct Completions {
  QStringList items;     // in the order to show them; keyword arguments end in '='
  int prefixLength = 0;  // characters before the cursor that the chosen item replaces
};

// `textBeforeCursor` is the document up to the cursor. Items start with the identifier being
// typed there (all items when none is). `documentText` supplies the file's own names.
Completions completionsAt(const QString& textBeforeCursor, const QString& documentText);

// The built-in whose argument list the cursor is in, or empty ("conv2d" for
// "x = cuda.conv2d(obs, filt").
QString enclosingBuiltin(const QString& textBeforeCursor);

// The signature of a built-in, or empty when `name` is not one.
QString callTip(const QString& name);

// Functions, parameters, constants, loop variables and assigned names the file defines.
QStringList definedNames(const QString& documentText);

}  // namespace cas::widgets::pdl_completion
