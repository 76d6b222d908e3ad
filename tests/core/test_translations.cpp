// Every UI string of the studio has a finished zh_CN translation, and the catalogue covers the
// tuning registry's help texts (shown as tooltips).
#include <QFile>
#include <QTest>
#include <QXmlStreamReader>

#include "core/params/parameters.hpp"

class TestTranslations : public QObject {
  Q_OBJECT
 private slots:
  void zhCnIsComplete() {
    QFile f(QStringLiteral(CAS_SOURCE_DIR "/translations/cuda-agent-studio_zh_CN.ts"));
    QVERIFY(f.open(QIODevice::ReadOnly));
    QXmlStreamReader xml(&f);
    QString context, source;
    QSet<QString> parameterHelp;
    int messages = 0;
    while (!xml.atEnd()) {
      xml.readNext();
      if (!xml.isStartElement()) continue;
      if (xml.name() == QLatin1String("name")) context = xml.readElementText();
      else if (xml.name() == QLatin1String("source")) source = xml.readElementText();
      else if (xml.name() == QLatin1String("translation")) {
        ++messages;
        const QString type = xml.attributes().value(QLatin1String("type")).toString();
        const bool plural = xml.attributes().value(QLatin1String("numerus")).toString() == QLatin1String("yes");
        QString text = plural ? QString() : xml.readElementText(QXmlStreamReader::IncludeChildElements);
        if (plural) {
          while (xml.readNextStartElement()) text += xml.readElementText();
        }
        QVERIFY2(type.isEmpty(), qPrintable(context + ": '" + source + "' is " + type));
        QVERIFY2(!text.trimmed().isEmpty(), qPrintable(context + ": '" + source + "' has no translation"));
        if (context == QLatin1String("cas::Parameters")) parameterHelp.insert(source);
      }
    }
    QVERIFY(!xml.hasError());
    QVERIFY(messages > 20);
    for (const auto& spec : cas::params::ParameterRegistry::standard().all())
      QVERIFY2(parameterHelp.contains(QString::fromStdString(spec.help)), spec.name.c_str());
  }
};

QTEST_GUILESS_MAIN(TestTranslations)
#include "test_translations.moc"
