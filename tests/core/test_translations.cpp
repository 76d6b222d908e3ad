// Every UI string of the studio has a finished zh_CN translation, and the catalogue covers the
// tuning registry's help texts (shown as tooltips); English has both forms of every counted
// message ("1 run", "2 runs").
#include <QFile>
#include <QTest>
#include <QXmlStreamReader>

#include "core/params/parameters.hpp"
#include "support/source_dir.hpp"

class TestTranslations : public QObject {
  Q_OBJECT
 private slots:
  void zhCnIsComplete() {
    QFile f(cas::test::sourcePath(QStringLiteral("translations/cuda-agent-studio_zh_CN.ts")));
    QVERIFY(f.open(QIODevice::ReadOnly));
    QXmlStreamReader xml(&f);
    QString context, source;
    bool plural = false;  // the message has numerus forms (<message numerus="yes">)
    QSet<QString> parameterHelp;
    int messages = 0;
    while (!xml.atEnd()) {
      xml.readNext();
      if (!xml.isStartElement()) continue;
      if (xml.name() == QLatin1String("name")) context = xml.readElementText();
      else if (xml.name() == QLatin1String("message")) plural = xml.attributes().value(QLatin1String("numerus")) == QLatin1String("yes");
      else if (xml.name() == QLatin1String("source")) source = xml.readElementText();
      else if (xml.name() == QLatin1String("translation")) {
        ++messages;
        const QString type = xml.attributes().value(QLatin1String("type")).toString();
        QString text = plural ? QString() : xml.readElementText(QXmlStreamReader::IncludeChildElements);
        if (plural) {
          while (xml.readNextStartElement()) text += xml.readElementText();
        }
        QVERIFY2(!source.isEmpty(), qPrintable(context + ": a message without source text"));
        QVERIFY2(type.isEmpty(), qPrintable(context + ": '" + source + "' is " + type));
        QVERIFY2(!text.trimmed().isEmpty(), qPrintable(context + ": '" + source + "' has no translation"));
        if (context == QLatin1String("cas::Parameters")) parameterHelp.insert(source);
        if (plural) countedMessages_.insert(context + QLatin1Char('|') + source);
      }
    }
    QVERIFY(!xml.hasError());
    QVERIFY(messages > 20);
    for (const auto& spec : cas::params::ParameterRegistry::standard().all())
      QVERIFY2(parameterHelp.contains(QString::fromStdString(spec.help)), spec.name.c_str());
  }

  // The English catalogue holds exactly the counted messages (those of zh_CN), each with its
  // singular and its plural form.
  void englishHasBothFormsOfEachCountedMessage() {
    QVERIFY(!countedMessages_.isEmpty());  // zhCnIsComplete ran first and found them
    QFile f(cas::test::sourcePath(QStringLiteral("translations/cuda-agent-studio_en.ts")));
    QVERIFY(f.open(QIODevice::ReadOnly));
    QXmlStreamReader xml(&f);
    QString context, source;
    QSet<QString> english;
    while (!xml.atEnd()) {
      xml.readNext();
      if (!xml.isStartElement()) continue;
      if (xml.name() == QLatin1String("name")) context = xml.readElementText();
      else if (xml.name() == QLatin1String("source")) source = xml.readElementText();
      else if (xml.name() == QLatin1String("translation")) {
        const QString where = context + QLatin1Char('|') + source;
        QVERIFY2(xml.attributes().value(QLatin1String("type")).isEmpty(), qPrintable(where + " is not finished"));
        QStringList forms;
        while (xml.readNextStartElement()) forms << xml.readElementText();
        QVERIFY2(forms.size() == 2 && !forms[0].isEmpty() && !forms[1].isEmpty(), qPrintable(where + " needs a singular and a plural form"));
        english.insert(where);
      }
    }
    QVERIFY(!xml.hasError());
    QCOMPARE(english, countedMessages_);
  }

 private:
  QSet<QString> countedMessages_;  // "context|source" of each message with plural forms in zh_CN
};

QTEST_GUILESS_MAIN(TestTranslations)
#include "test_translations.moc"
