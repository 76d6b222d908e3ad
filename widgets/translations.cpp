#include "widgets/translations.hpp"

#include <QCoreApplication>
#include <QLibraryInfo>
#include <QLocale>
#include <QTranslator>

namespace cas::widgets {

QString installTranslations(QCoreApplication& app, const QString& language) {
  const QLocale locale = language.isEmpty() ? QLocale::system() : QLocale(language);
  const bool english = locale.language() == QLocale::English || locale.language() == QLocale::C;
  auto* studio = new QTranslator(&app);
  if (english || !studio->load(locale, QStringLiteral("cuda-agent-studio"), QStringLiteral("_"), QStringLiteral(":/i18n"))) {
    // English, or a language without a catalogue: the English source strings stay, and English's
    // catalogue gives the counted messages their forms ("1 run", "2 runs").
    if (studio->load(QStringLiteral("cuda-agent-studio_en"), QStringLiteral(":/i18n")))
      app.installTranslator(studio);
    else
      delete studio;
    return QStringLiteral("en");
  }
  app.installTranslator(studio);
  auto* qt = new QTranslator(&app);
  if (qt->load(locale, QStringLiteral("qtbase"), QStringLiteral("_"), QLibraryInfo::path(QLibraryInfo::TranslationsPath)))
    app.installTranslator(qt);
  else
    delete qt;
  QLocale::setDefault(locale);
  return locale.name();
}

}  // namespace cas::widgets
