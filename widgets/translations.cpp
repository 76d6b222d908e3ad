#include "widgets/translations.hpp"

#include <QCoreApplication>
#include <QLibraryInfo>
#include <QLocale>
#include <QTranslator>

namespace cas::widgets {

QString installTranslations(QCoreApplication& app, const QString& language) {
  const QLocale locale = language.isEmpty() ? QLocale::system() : QLocale(language);
  if (locale.language() == QLocale::English || locale.language() == QLocale::C) return QStringLiteral("en");

  auto* studio = new QTranslator(&app);
  if (!studio->load(locale, QStringLiteral("cuda-agent-studio"), QStringLiteral("_"), QStringLiteral(":/i18n"))) {
    delete studio;
    return QStringLiteral("en");  // no catalogue for this language: the English source strings stay
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
