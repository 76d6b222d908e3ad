#pragma once
// The studio's resources (resources/studio.qrc, embedded in this library): the search tree's
// shaders and the editors' colours.
// Thread-safety: studioResource may be called from any thread; editorStyle() is read once, on
// first use, and immutable afterwards.
#include <QByteArray>
#include <QColor>
#include <QString>

namespace cas::widgets {

// The bytes of ":/<path>" (e.g. "shaders/search_tree.vert"). The files are compiled in, so a
// missing one is a broken build: it stops the program with the path rather than run without it.
QByteArray studioResource(const QString& path);

// resources/styles/editor.json: the PDL editor's and the generated-code view's colours.
struct EditorStyle {
  // Code, PDL and generated CUDA alike (CUDA's preprocessor lines take the decorator colour).
  QColor text, comment, number, string, keyword, function, builtin, decorator, paper, unclosedStringPaper;
  // Around the code.
  QColor caretLine, matchedBrace, marginPaper, marginText, callTipPaper, callTipText, layerHint;
  // Diagnostics: margin markers, underlines and the problems summary.
  QColor error, warning, note;
};
const EditorStyle& editorStyle();

}  // namespace cas::widgets
