#pragma once
// Loads the studio's translation (embedded under :/i18n) and Qt's own for a language. English
// has a catalogue too, of its plural forms only.
#include <QString>

class QCoreApplication;

namespace cas::widgets {

// language: "zh_CN", "en", or empty for the system locale. Returns the language applied.
QString installTranslations(QCoreApplication& app, const QString& language);

}  // namespace cas::widgets
