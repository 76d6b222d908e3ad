#include "widgets/studio_resources.hpp"

#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>

#include <mutex>

// Q_INIT_RESOURCE declares the resource's initialiser in the current namespace, so it is called
// here, outside any. cas_widgets is a static library: without this reference the linker drops
// the compiled-in resources.
static void initialiseStudioResources() { Q_INIT_RESOURCE(studio); }

namespace cas::widgets {

QByteArray studioResource(const QString& path) {
  static std::once_flag once;
  std::call_once(once, initialiseStudioResources);
  QFile file(QStringLiteral(":/") + path);
  if (!file.open(QIODevice::ReadOnly)) qFatal("the studio's resource %s is missing (resources/studio.qrc)", qPrintable(path));
  return file.readAll();
}

namespace {

EditorStyle readEditorStyle() {
  const QJsonObject root = QJsonDocument::fromJson(studioResource(QStringLiteral("styles/editor.json"))).object();
  EditorStyle s;
  struct Entry {
    const char* group;
    const char* key;
    QColor EditorStyle::*colour;
  };
  static const Entry entries[] = {
      {"code", "text", &EditorStyle::text},
      {"code", "comment", &EditorStyle::comment},
      {"code", "number", &EditorStyle::number},
      {"code", "string", &EditorStyle::string},
      {"code", "keyword", &EditorStyle::keyword},
      {"code", "function", &EditorStyle::function},
      {"code", "builtin", &EditorStyle::builtin},
      {"code", "decorator", &EditorStyle::decorator},
      {"code", "paper", &EditorStyle::paper},
      {"code", "unclosedStringPaper", &EditorStyle::unclosedStringPaper},
      {"editor", "caretLine", &EditorStyle::caretLine},
      {"editor", "matchedBrace", &EditorStyle::matchedBrace},
      {"editor", "marginPaper", &EditorStyle::marginPaper},
      {"editor", "marginText", &EditorStyle::marginText},
      {"editor", "callTipPaper", &EditorStyle::callTipPaper},
      {"editor", "callTipText", &EditorStyle::callTipText},
      {"editor", "layerHint", &EditorStyle::layerHint},
      {"diagnostics", "error", &EditorStyle::error},
      {"diagnostics", "warning", &EditorStyle::warning},
      {"diagnostics", "note", &EditorStyle::note},
  };
  for (const Entry& e : entries) {
    const QColor c = QColor::fromString(root.value(QLatin1String(e.group)).toObject().value(QLatin1String(e.key)).toString());
    if (!c.isValid()) qFatal("resources/styles/editor.json has no valid colour %s.%s", e.group, e.key);
    s.*e.colour = c;
  }
  return s;
}

}  // namespace

const EditorStyle& editorStyle() {
  static const EditorStyle style = readEditorStyle();
  return style;
}

}  // namespace cas::widgets
