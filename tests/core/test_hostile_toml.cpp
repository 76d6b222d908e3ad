// TOML from anywhere (project.toml, a run's config.toml, --set): thousands of stray keys in
// linear time, text on which Debian's toml++ 3.3.0 misbehaves refused first at its line and
// column, nesting and dotted keys bounded, and every location a byte column whose caret stands
// under the character it names. Issue 44 (and the project fuzzer's findings).
#include <QDir>
#include <QElapsedTimer>
#include <QTest>

#include <cstring>

#include "core/engine/run_folder.hpp"
#include "core/params/parameters.hpp"
#include "core/project/project.hpp"
#include "core/support/toml_parse.hpp"

#include "support/hostile_files.hpp"

using namespace cas::test::hostile;  // support/hostile_files.hpp

class TestHostileToml : public HostileSuite {
  Q_OBJECT

 private slots:
  // Item 3: 80,000 unknown keys: ten warnings and one that counts the rest, in linear time.
  void unknownKeysAreCappedInLinearTime() {
    QByteArray toml = kHeader + "[search]\n";
    for (int i = 0; i < 80000; ++i) toml += "k" + QByteArray::number(i) + " = 1\n";
    const QString folder = project(QStringLiteral("keys"), toml);
    QElapsedTimer clock;
    clock.start();
    const auto r = cas::project::loadProject(folder.toStdString());
    std::string printed;
    for (const cas::Diagnostic& d : r.diagnostics.items()) printed += cas::formatDiagnostic(d, r.source) + "\n";
    QVERIFY2(clock.elapsed() < 5000, qPrintable(QString::number(clock.elapsed())));
    QVERIFY(r.project);
    QCOMPARE(int(r.diagnostics.items().size()), 11);
    for (int i = 0; i < 10; ++i)
      QVERIFY2(r.diagnostics.items()[size_t(i)].message.find("' in [search] is ignored; known keys: simulations,") != std::string::npos, printed.c_str());
    QCOMPARE(r.diagnostics.items()[10].message, std::string("79990 more unknown keys are ignored"));
    QVERIFY(printed.size() < 8000);
  }

  // Found by the project fuzzer (tests/fuzz/crashes-found, finding 5): text on which toml++ 3.3.0
  // reaches __builtin_unreachable() is refused at its line and column before it is parsed.
  void tomlTheParserMishandlesIsRefused() {
    auto firstError = [&](const QByteArray& toml) {
      const auto r = cas::project::loadProject(project(QStringLiteral("unicode"), toml).toStdString());
      return r.diagnostics.empty() ? std::string() : at(r.diagnostics.items()[0]);
    };
    QCOMPARE(firstError(kHeader + "-\xcf\x8duntime = 1\n"),
             std::string("5:2 TOML syntax error: a non-ASCII character outside a string or comment is not valid TOML; put it inside a quoted string"));
    QCOMPARE(firstError(kHeader + "description = \"\"\"\\\n\xc2\xa7\"\"\"\n"),
             std::string("6:1 TOML syntax error: a multi-line string cannot go on with a non-ASCII character right after a line-ending backslash; "
                         "end the previous line without the backslash, or write the character as \\uXXXX"));
    // Inside an unquoted value a quote starts no string: the parser classifies the character
    // after it (found by the project fuzzer: crashes-found/project-crash-4c06771a...).
    QCOMPARE(firstError(kHeader + "[runtime]\nseed = 1\"\xd2\x8b\"\n"),
             std::string("6:10 TOML syntax error: a non-ASCII character in an unquoted value is not valid TOML (a quote inside a value "
                         "starts no string); put the whole value in quotes"));
    QCOMPARE(firstError(kHeader + "[runtime]\nseed = [1, 2\"\xc3\xa9\"]\n"),
             std::string("6:14 TOML syntax error: a non-ASCII character in an unquoted value is not valid TOML (a quote inside a value "
                         "starts no string); put the whole value in quotes"));
    // A value, a space and a digit are read on as one date-time (the parser's date test skips '_').
    for (const char* value : {"1979-05-27", "1979-05-2_7", "1_979-05-27"})
      QCOMPARE(firstError(kHeader + "[runtime]\nseed = " + value + " 0\"\xc3\xa9\"\n"),
               "6:" + std::to_string(11 + std::strlen(value)) +
                   " TOML syntax error: a non-ASCII character in an unquoted value is not valid TOML (a quote inside a value "
                   "starts no string); put the whole value in quotes");
    // A UTF-8 byte order mark, which some editors write, is no character of the text.
    QCOMPARE(firstError("\xef\xbb\xbf" + kHeader), std::string());
    // Strings keep their non-ASCII text wherever they stand: values, arrays (over several
    // lines), inline tables, quoted keys and table headers.
    QCOMPARE(cas::parseToml("a = \"\xc3\xa9\"\nb = [\"\xc3\xa9\", '\xd2\x8b']\nc = { d = \"\xc3\xa9\", e.\"\xc3\xa9\" = 1 }\n"
                            "f.\"\xd2\x8b\" = 2\n[g.\"\xc3\xa9\"]\nh = [\n  1,\n  \"\xc3\xa9\",\n]\n",
                            "t.toml")
                 .size(),
             size_t(5));  // a, b, c, f and the table g (which holds h)
    // Non-ASCII text in strings and comments is as welcome as ever.
    QCOMPARE(firstError(QByteArray(kHeader).replace("name = \"t\"", "name = \"caf\xc3\xa9\" # \xc3\xa9\ndescription = '''\xc3\xa9 \"\"\"'''")),
             std::string());
    cas::params::ParameterSet set;
    QCOMPARE(set.assign("search.c_puct=\xc3\xa9").value_or(""), std::string("search.c_puct: '\xc3\xa9' is not valid: expected a number in [0, 100]"));
  }

  // Found by the held-out probe: a byte that is not UTF-8 was reported by the parser at the
  // character before it, and a column after non-ASCII text counted characters where the caret
  // counts bytes, so the caret stood a column early. The byte is named where it is, and every
  // TOML location is a byte column, as PDL's are.
  void tomlLocationsAreByteColumns() {
    auto firstError = [&](const QByteArray& toml) {
      const auto r = cas::project::loadProject(project(QStringLiteral("columns"), toml).toStdString());
      return r.diagnostics.empty() ? std::string() : cas::formatDiagnostic(r.diagnostics.items()[0], r.source);
    };
    const std::string notUtf8 = ": error: TOML syntax error: the byte 0xFF is not UTF-8 text; TOML files are UTF-8: save the file as UTF-8\n";
    const std::string named = firstError(QByteArray(kHeader).replace("name = \"t\"", "name = \"ab\xff\""));
    QVERIFY2(named.find("project.toml:1:11" + notUtf8 + "    name = \"ab\\xff\"\n              ^") != std::string::npos, named.c_str());
    const std::string caret = firstError(QByteArray(kHeader).replace("name = \"t\"", "name = \"t\xc3\xa9\xff\""));
    QVERIFY2(caret.find("project.toml:1:12" + notUtf8 + "    name = \"t\xc3\xa9\\xff\"\n              ^") != std::string::npos, caret.c_str());
    QVERIFY2(firstError(kHeader + "# \xc3 comment\n").find(":5:3: error: TOML syntax error: the byte 0xC3 is not UTF-8 text") != std::string::npos,
             firstError(kHeader + "# \xc3 comment\n").c_str());
    // A byte that is no character where TOML allows no non-ASCII character is named as such too.
    QVERIFY2(firstError(kHeader + "seed\xff = 1\n").find(":5:5: error: TOML syntax error: the byte 0xFF is not UTF-8 text") != std::string::npos,
             firstError(kHeader + "seed\xff = 1\n").c_str());
    // Wide characters take two cells on a terminal: the caret counts them so.
    const std::string wide = firstError(kHeader + "description = \"\xe6\xbc\xa2\xe5\xad\x97\" \xc3\xa9\n");
    QVERIFY2(wide.find("    description = \"\xe6\xbc\xa2\xe5\xad\x97\" \xc3\xa9\n                         ^") != std::string::npos, wide.c_str());
    const std::string value = firstError(kHeader + "search = { note = \"\xc3\xa9\xc3\xa9\", c_puct = 1e3 }\n");
    QVERIFY2(value.find(":5:36: error: search.c_puct = 1e3 is out of range: expected a number in [0, 100]\n"
                        "    search = { note = \"\xc3\xa9\xc3\xa9\", c_puct = 1e3 }\n"
                        "                                     ^") != std::string::npos,
             value.c_str());
  }

  // Issue 44: a dotted key of tens of thousands of parts (or tables and arrays nested as deep)
  // crashed the TOML parser; such text is refused at its line and column first.
  void deeplyNestedTomlIsRefused() {
    QByteArray key = "a";
    for (int i = 0; i < 35000; ++i) key += ".a";  // 70 KB
    const QString folder = project(QStringLiteral("deep-key"), kHeader + "[search]\n" + key + " = 1\n");
    const Result r = cli({QStringLiteral("check"), folder});
    QCOMPARE(r.status, 1);
    const QString message = QStringLiteral("TOML syntax error: more than 64 levels of nesting (the parts of a dotted key, tables and arrays); "
                                           "project.toml and a run's config.toml need three");
    QVERIFY2(r.err.startsWith(QStringLiteral("%1/project.toml:6:126: error: ").arg(folder) + message + QLatin1Char('\n')), qPrintable(r.err.left(400)));
    QVERIFY(r.err.endsWith(QStringLiteral("%1: rejected (1 error)\n").arg(folder)));
    QVERIFY(r.err.size() < 1000);
    auto firstError = [&](const QByteArray& toml) {
      const auto loaded = cas::project::loadProject(project(QStringLiteral("deep"), toml).toStdString());
      return loaded.diagnostics.empty() ? std::string() : at(loaded.diagnostics.items()[0]);
    };
    QCOMPARE(firstError(kHeader + "[" + key + "]\n"), "5:129 " + message.toStdString());
    QCOMPARE(firstError(kHeader + "x = " + QByteArray(40000, '[') + QByteArray(40000, ']') + "\n"), "5:68 " + message.toStdString());
    QByteArray inlineTables = "x = ";
    for (int i = 0; i < 20000; ++i) inlineTables += "{a.a = ";
    QCOMPARE(firstError(kHeader + inlineTables + "1\n"), "5:224 " + message.toStdString());
    QCOMPARE(firstError(kHeader + "[search]\n" + QByteArray("a.").repeated(60) + "b = 1\n").find("nesting"), std::string::npos);
  }

  // Hardening, fifth probe (D9, D11): `project = 5` in a run's config.toml was reported as
  // "'project' is missing", without a line; and a project named "   " named a run folder
  // "runs/   -STAMP" where name = "" is refused. The wrong type is named at its line and column,
  // and a name of only spaces is refused as an empty one is.
  void wrongTypesAndBlankNamesAreNamed() {
    QByteArray blank = kHeader;
    blank.replace("name = \"t\"", "name = \"   \"");
    const auto r = cas::project::loadProject(project(QStringLiteral("blank-name"), blank).toStdString());
    QVERIFY(!r.project);
    QCOMPARE(r.diagnostics.items()[0].message, std::string("name must not be only spaces"));
    QCOMPARE(r.diagnostics.items()[0].location.line, 1);
    QCOMPARE(cas::project::folderNameProblem("  \t").value_or(""), std::string("a name must not be only spaces"));

    for (const char* value : {"5", "[\"a\"]"}) {
      const QString run = dir_.filePath(QStringLiteral("typed-project"));
      QDir().mkpath(run + QStringLiteral("/checkpoints"));
      write(run + QStringLiteral("/config.toml"), QByteArray("# a run\nproject = ") + value + "\n");
      cas::project::Project p;
      cas::Diagnostic error;
      std::vector<cas::Diagnostic> notices;
      QVERIFY(!cas::engine::RunFolder::open(run.toStdString(), cas::engine::RunAccess::Read, false, &p, &error, &notices));
      QCOMPARE(error.message, std::string("'project' must be a string (the path of the project folder the run trains), got ") +
                                  (value[0] == '5' ? "an integer" : "an array"));
      QCOMPARE(error.location.line, 2);
      QCOMPARE(error.location.column, 11);
    }
  }

  // Issue 44, round 3: a key of exactly 64 parts is read, one of 65 refused naming the limit,
  // however its parts are written (a quoted first part counts as one too).
  void tomlKeyPartsAtTheLimit() {
    auto error = [](const std::string& text) -> std::string {
      try {
        cas::parseToml(text, "t.toml");
        return {};
      } catch (const toml::parse_error& e) {
        return std::to_string(e.source().begin.line) + ":" + std::to_string(e.source().begin.column) + " " + std::string(e.description());
      }
    };
    const std::string message = " more than 64 levels of nesting (the parts of a dotted key, tables and arrays); project.toml and a run's config.toml need three";
    std::string parts63 = "a";
    for (int i = 1; i < 63; ++i) parts63 += ".a";
    QCOMPARE(error(parts63 + ".a = 1\n"), std::string());        // 64 parts
    QCOMPARE(error(parts63 + ".a.a = 1\n"), "1:128" + message);  // 65: at the 65th
    QCOMPARE(error("\"a\"." + parts63 + " = 1\n"), std::string());
    QCOMPARE(error("\"a\"." + parts63 + ".a = 1\n"), "1:130" + message);
    QCOMPARE(error("'a'." + parts63 + ".a = 1\n"), "1:130" + message);
    QCOMPARE(error("x = {\"a\"." + parts63 + " = 1}\n"), "1:133" + message);  // under x: 65 levels
    QCOMPARE(error("[t]\n" + parts63 + " = 1\n"), std::string());               // 1 + 63
    QCOMPARE(error("[t]\n" + parts63 + ".a = 1\n"), "2:126" + message);
    QCOMPARE(error("[\"t\"." + parts63 + "]\n"), std::string());  // a table header of 64 parts
    QCOMPARE(error("[\"t\"." + parts63 + ".a]\n"), "1:131" + message);
  }
};

QTEST_GUILESS_MAIN(TestHostileToml)
#include "test_hostile_toml.moc"
