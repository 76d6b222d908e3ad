// Files and arguments that come from anywhere: devices and FIFOs named as project files, files of
// garbage, numbers with trailing letters, paths out of the project, terminal escapes in names
// (TOML of any kind: test_hostile_toml; plugins and devices from the environment:
// test_hostile_environment). Each is refused (or shown) with one exact sentence, in bounded time.
// Issue 13, items 1-3, 8, 12, 13 and 15 (printed values, one value parser, the empty policy);
// issue 44's: writes onto special files and through planted links, paired C exports,
// names that would leave runs/, overflowing element counts, commands out of threads or memory,
// quoted values cut, check as strict as train, values printed as written.
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "core/pdl/compiler.hpp"
#include "core/pdl/lexer.hpp"
#include "core/project/project.hpp"
#include "core/support/atomic_file.hpp"
#include "core/support/printable.hpp"
#include "core/support/toml_parse.hpp"
#include "core/train/baselines.hpp"
#include "core/train/report_json.hpp"

#include "support/hostile_files.hpp"
#include "support/source_dir.hpp"

using namespace cas::test::hostile;  // support/hostile_files.hpp

class TestHostileInput : public HostileSuite {
  Q_OBJECT

 private slots:
  // Item 1: only regular files are read, each kind with a limit, and nothing blocks.
  void onlyBoundedRegularFilesAreRead() {
    const QString zero = dir_.filePath(QStringLiteral("zero"));
    QDir().mkpath(zero);
    QVERIFY(QFile::link(QStringLiteral("/dev/zero"), zero + QStringLiteral("/project.toml")));
    Result r = cli({QStringLiteral("check"), zero});
    QCOMPARE(r.status, 1);
    QCOMPARE(r.err, QStringLiteral("error: %1/project.toml is a character device, not a regular file; a project file must be a regular file\n"
                                   "%1: rejected (1 error)\n").arg(zero));

    const QString fifo = dir_.filePath(QStringLiteral("fifo"));
    QDir().mkpath(fifo);
    QCOMPARE(::mkfifo(qPrintable(fifo + QStringLiteral("/project.toml")), 0644), 0);
    r = cli({QStringLiteral("check"), fifo});
    QCOMPARE(r.status, 1);
    QCOMPARE(r.err, QStringLiteral("error: %1/project.toml is a named pipe (FIFO), not a regular file; a project file must be a regular file\n"
                                   "%1: rejected (1 error)\n").arg(fifo));
    QVERIFY2(r.ms < 10000, qPrintable(QString::number(r.ms)));

    const QString large = project(QStringLiteral("large"), kHeader);
    QFile toml(large + QStringLiteral("/project.toml"));
    QVERIFY(toml.resize(2 << 20));  // sparse: 2 MiB of zeros after the header
    r = cli({QStringLiteral("check"), large});
    QCOMPARE(r.err, QStringLiteral("error: %1/project.toml is 2.0 MiB, more than the 1.0 MiB a project file may hold\n"
                                   "%1: rejected (1 error)\n").arg(large));
    // One byte over, both sizes round alike: the bytes are given (found by the second probe).
    QVERIFY(toml.resize((1 << 20) + 1));
    r = cli({QStringLiteral("check"), large});
    QCOMPARE(r.err, QStringLiteral("error: %1/project.toml is 1048577 bytes, more than the 1048576 bytes (1.0 MiB) a project file may hold\n"
                                   "%1: rejected (1 error)\n").arg(large));

    // A checkpoint made sparse to 50 GB is skipped unread; the one before it is used.
    const QString run = dir_.filePath(QStringLiteral("sparse-run"));
    r = cli({QStringLiteral("train"), project(QStringLiteral("small"), kHeader), QStringLiteral("--iterations"), QStringLiteral("2"),
             QStringLiteral("--out"), run, QStringLiteral("--set"), QStringLiteral("train.parallel_games=4"), QStringLiteral("--set"),
             QStringLiteral("train.games_per_iteration=4"), QStringLiteral("--set"), QStringLiteral("search.simulations=8"),
             QStringLiteral("--set"), QStringLiteral("train.eval_games=0")});
    QCOMPARE(r.status, 0);
    const QString newest = run + QStringLiteral("/checkpoints/iter-00000002.ckpt");
    QVERIFY(QFile(newest).resize(std::int64_t(50) << 30));
    r = cli({QStringLiteral("eval"), run, QStringLiteral("--games"), QStringLiteral("2")});
    QCOMPARE(r.status, 0);
    QVERIFY2(QRegularExpression(QStringLiteral("^warning: skipping checkpoint iter-00000002\\.ckpt: %1 is 50\\.0 GiB, more than the [0-9.]+ MiB "
                                               "a checkpoint of this run may hold\nusing %2/checkpoints/iter-00000001\\.ckpt \\(iteration 1\\)\n$")
                                    .arg(QRegularExpression::escape(newest), QRegularExpression::escape(run)))
                 .match(r.err)
                 .hasMatch(),
             qPrintable(r.err));
    QVERIFY2(r.ms < 10000, qPrintable(QString::number(r.ms)));

    const QString pipedPolicy = project(QStringLiteral("piped-policy"), kHeader);
    QVERIFY(QFile::remove(pipedPolicy + QStringLiteral("/policy.pdl")));
    QCOMPARE(::mkfifo(qPrintable(pipedPolicy + QStringLiteral("/policy.pdl")), 0644), 0);
    auto loaded = cas::project::loadProject(pipedPolicy.toStdString());
    QVERIFY(!loaded.project);
    QCOMPARE(at(loaded.diagnostics.items().at(0)),
             "4:10 " + pipedPolicy.toStdString() + "/policy.pdl is a named pipe (FIFO), not a regular file; a policy must be a regular file");
  }

  // Item 2: garbage gives a few errors, each showing an excerpt of its line, whatever the file.
  void lexicalErrorsAreCollapsedCappedAndExcerpted() {
    const cas::pdl::CompileResult nul = compile(std::string(100000, '\0'));
    QCOMPARE(int(nul.diagnostics.items().size()), 1);
    std::string escapes;  // the first 100 columns of the line: 25 NULs, each printed as \x00
    for (int i = 0; i < 25; ++i) escapes += "\\x00";
    QCOMPARE(cas::formatDiagnostic(nul.diagnostics.items()[0], std::string(100000, '\0')),
             "bad.pdl:1:1: error: unexpected character '\\x00' (100000 times on this line)\n    " + escapes +
                 "...\n    ^\nbad.pdl: note: no further errors are shown: the file does not begin like a PDL program (with 'def' or 'const')");

    const std::string dollars(40000, '$');
    const cas::pdl::CompileResult line = compile(dollars);
    QCOMPARE(int(line.diagnostics.items().size()), 1);
    QCOMPARE(at(line.diagnostics.items()[0]), std::string("1:1 unexpected character '$' (40000 times on this line)"));
    QVERIFY(cas::formatDiagnostic(line.diagnostics.items()[0], dollars).size() < 400);

    // After a definition, every error counts, up to the cap; the caret finds column 30001.
    std::string source = "def policy(obs):\n    return obs\n" + std::string(30000, ' ') + "$\n";
    for (int i = 0; i < 1000; ++i) source += "$\n";
    const cas::pdl::CompileResult many = compile(source);
    QCOMPARE(int(many.diagnostics.items().size()), cas::pdl::kMaxErrorsPerFile + 1);
    QCOMPARE(at(many.diagnostics.items().back()), std::string("23:1 too many errors; stopping here"));
    QCOMPARE(cas::formatDiagnostic(many.diagnostics.items()[0], source),
             "bad.pdl:3:30001: error: unexpected character '$'\n    ..." + std::string(40, ' ') + "$\n    " + std::string(43, ' ') + "^");
  }

  // Found by the third held-out probe: a UTF-8 byte order mark opens a PDL file as it may open a
  // TOML one (it was "non-ASCII characters are allowed only in comments and strings"); an error
  // later on a first line that opens PDL is no sign of a file that is not PDL (a note said so).
  void aByteOrderMarkAndAnErrorOnTheFirstLine() {
    const std::string program = "def policy(obs):\n    return dense(obs, units=action_dim), dense(obs, units=1)\n";
    const cas::pdl::CompileResult marked = compile("\xEF\xBB\xBF" + program);
    QVERIFY(marked.policy);
    QVERIFY(compile("\xEF\xBB\xBF\xEF\xBB\xBF" + program).diagnostics.hasErrors());  // only one, at the very start
    const cas::pdl::CompileResult large = compile("const a = 99999999999999999999\n" + program);
    QCOMPARE(int(large.diagnostics.items().size()), 1);
    QCOMPARE(at(large.diagnostics.items()[0]), std::string("1:11 the integer 99999999999999999999 is too large (the limit is 9223372036854775807)"));
    QVERIFY(large.diagnostics.items()[0].notes.empty());
  }

  // Found by the second held-out probe: a socket where a file is read gave the system's "No
  // such device or address"; it is named for what it is.
  void aSocketIsNamedWhereAFileIsRead() {
    const QString folder = project(QStringLiteral("socket"), kHeader);
    QFile::remove(folder + QStringLiteral("/project.toml"));
    const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    QVERIFY(fd >= 0);
    sockaddr_un address {};
    address.sun_family = AF_UNIX;
    const QByteArray path = QFile::encodeName(folder + QStringLiteral("/project.toml"));
    QVERIFY(size_t(path.size()) < sizeof address.sun_path);
    std::memcpy(address.sun_path, path.constData(), size_t(path.size()));
    QCOMPARE(::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
    const Result r = cli({QStringLiteral("check"), folder});
    ::close(fd);
    QCOMPARE(r.status, 1);
    QVERIFY2(r.err.startsWith(QStringLiteral("error: %1/project.toml is a socket, not a regular file; ").arg(folder)), qPrintable(r.err));
  }

  // Item 8: a number is read whole, or refused with the form it must take.
  void numbersAreReadWhole() {
    std::string error;
    for (const char* spec : {"mcts:1e3", "mcts:5abc", "mcts:", "mcts:-4"}) {
      QVERIFY(!cas::train::makeOpponent(spec, "tictactoe", 1, &error));
      QCOMPARE(error, "mcts:ROLLOUTS needs a whole number of rollouts in [1, 1000000], such as mcts:200; got '" + std::string(spec + 5) + "'");
    }
    QCOMPARE(cas::train::makeOpponent("mcts:0200", "tictactoe", 1, &error)->name(), std::string("mcts:200"));
    QVERIFY(!cas::train::makeOpponent("minimax", "tictactoe", 1, &error));
    QCOMPARE(error, std::string("unknown opponent 'minimax'; expected random, mcts:ROLLOUTS, perfect, perfect:SECONDS or run:DIR (another trained run "
                                "of the same game)"));

    const QString pdl = dir_.filePath(QStringLiteral("shape.pdl"));
    write(pdl, kPolicy);
    Result r = cli({QStringLiteral("check"), pdl, QStringLiteral("--obs-shape"), QStringLiteral("2x6x7"), QStringLiteral("--action-dim"), QStringLiteral("3")});
    QCOMPARE(r.status, 2);
    QCOMPARE(r.err, QStringLiteral("--obs-shape: '2x6x7' is not a list of positive integers such as 4,84,84\n"));
    r = cli({QStringLiteral("eval"), dir_.path(), QStringLiteral("--seed"), QStringLiteral("-1")});
    QCOMPARE(r.status, 2);
    QVERIFY2(r.err.startsWith(QStringLiteral("--seed: expected a whole number in [0, 9223372036854775807], got '-1'\n")), qPrintable(r.err));
    r = cli({QStringLiteral("eval"), dir_.path(), QStringLiteral("--games"), QStringLiteral("5abc")});
    QVERIFY2(r.err.startsWith(QStringLiteral("--games: expected a whole number in [1, 100000], got '5abc'\n")), qPrintable(r.err));
  }

  // Item 12: a project's policy stays in the project folder, and a file that is not PDL is not
  // echoed beyond the line of its first error.
  void policyPathsAreConfinedToTheProject() {
    const QString outside = project(QStringLiteral("outside"), kHeader);
    write(dir_.filePath(QStringLiteral("elsewhere.pdl")), kPolicy);
    const QString prefix = QStringLiteral("4:10 policy '%1' is outside the project folder");
    const QString way = QStringLiteral("; keep the policy in the project folder, or pass --allow-outside-project to allow it");
    auto firstError = [&](const char* policy, bool allow = false) {
      QByteArray toml = kHeader;
      toml.replace("\"policy.pdl\"", QByteArray("\"") + policy + "\"");
      write(outside + QStringLiteral("/project.toml"), toml);
      cas::project::LoadOptions options;
      options.allowOutsidePaths = allow;
      const auto r = cas::project::loadProject(outside.toStdString(), options);
      return r.diagnostics.empty() ? QString() : QString::fromStdString(at(r.diagnostics.items()[0]));
    };
    QCOMPARE(firstError("/etc/passwd"), prefix.arg(QStringLiteral("/etc/passwd")) + way);
    const QString resolved = QFileInfo(dir_.filePath(QStringLiteral("elsewhere.pdl"))).canonicalFilePath();
    QCOMPARE(firstError("../elsewhere.pdl"), prefix.arg(QStringLiteral("../elsewhere.pdl")) + QStringLiteral(" (it resolves to %1)").arg(resolved) + way);
    QVERIFY(QFile::link(resolved, outside + QStringLiteral("/linked.pdl")));
    QCOMPARE(firstError("linked.pdl"), prefix.arg(QStringLiteral("linked.pdl")) + QStringLiteral(" (it resolves to %1)").arg(resolved) + way);
    QCOMPARE(firstError("../elsewhere.pdl", /*allow=*/true), QString());  // the documented option

    QByteArray passwd;
    for (int i = 0; i < 30; ++i) passwd += "user" + QByteArray::number(i) + ":x:1000:1000:secret:/home/u:/bin/sh\n";
    const QString notPdl = project(QStringLiteral("not-pdl"), kHeader);
    write(notPdl + QStringLiteral("/policy.pdl"), passwd);
    const Result r = cli({QStringLiteral("check"), notPdl});
    QCOMPARE(r.status, 1);
    QCOMPARE(r.err, QStringLiteral("%1/policy.pdl:1:1: error: expected 'def' or 'const' at the top level, got 'user0'\n"
                                   "    user0:x:1000:1000:secret:/home/u:/bin/sh\n"
                                   "    ^\n"
                                   "%1/policy.pdl: note: no further errors are shown: the file does not begin like a PDL program (with 'def' or 'const')\n"
                                   "%1: rejected: the policy does not compile (1 error)\n").arg(notPdl));
  }

  // Item 13: control characters in names and source lines are printed escaped.
  void controlCharactersAreEscaped() {
    const QString folder = project(QStringLiteral("escapes"), QByteArray(kHeader).replace("name = \"t\"", "name = \"\\u001b[2J\\u009b6n\\nerror: fake\""));
    const Result r = cli({QStringLiteral("check"), folder});
    QCOMPARE(r.status, 0);
    QVERIFY2(r.out.contains(QStringLiteral("  name:        \\x1b[2J\\xc2\\x9b6n\\nerror: fake\n")), qPrintable(r.out));
    for (const QString& text : {r.out, r.err})
      for (QChar c : text) QVERIFY2(c == QLatin1Char('\n') || (c.unicode() >= 0x20 && (c.unicode() < 0x7F || c.unicode() > 0x9F)), qPrintable(text));
    QCOMPARE(cas::printable("tab\there, bell\a, caf\xc3\xa9, bad \xff byte"), std::string("tab\\there, bell\\x07, caf\xc3\xa9, bad \\xff byte"));
    const Result refused = cli({QStringLiteral("check"), QStringLiteral("no\x1b[2Jwhere")});  // CLI11's own refusals too
    QCOMPARE(refused.err, QStringLiteral("paths: Path does not exist: no\\x1b[2Jwhere\nRun with --help for more information.\n"));
  }

  // Item 15: a refused value is printed as given; --set and project.toml accept the same values
  // through one parser; an empty policy is reported at its line.
  void valuesAreParsedOnceAndPrintedAsGiven() {
    cas::params::ParameterSet set;
    QCOMPARE(set.assign("search.c_puct=100.0001").value_or(""),
             std::string("search.c_puct = 100.0001 is out of range: expected a number in [0, 100]"));
    auto inToml = [&](const QByteArray& section) {
      const auto r = cas::project::loadProject(project(QStringLiteral("values"), kHeader + section).toStdString());
      return r.diagnostics.empty() ? std::string() : r.diagnostics.items()[0].message;
    };
    QCOMPARE(inToml("[search]\nc_puct = 100.0001\n"), std::string("search.c_puct = 100.0001 is out of range: expected a number in [0, 100]"));
    const std::string notABoolean = "search.subtree_reuse must be true or false, got an integer";
    QCOMPARE(set.assign("search.subtree_reuse=1").value_or(""), notABoolean);
    QCOMPARE(inToml("[search]\nsubtree_reuse = 1\n"), notABoolean);
    QCOMPARE(set.assign("search.subtree_reuse=on").value_or(""), std::string("search.subtree_reuse: 'on' is not valid: expected true or false"));
    QVERIFY(!set.assign("search.subtree_reuse=false"));
    QCOMPARE(inToml("[search]\nsubtree_reuse = false\n"), std::string());

    QByteArray empty = kHeader;
    empty.replace("\"policy.pdl\"", "\"\"");
    const auto r = cas::project::loadProject(project(QStringLiteral("empty-policy"), empty).toStdString());
    QCOMPARE(at(r.diagnostics.items().at(0)), std::string("4:10 policy must name the policy's .pdl file, relative to the project folder; it is empty"));
  }

  // Issue 44: every write goes through one primitive that never replaces what is not a regular
  // file (a FIFO, a device such as /dev/null, a folder, a link to one) and never opens its
  // temporary file through a link planted at its name.
  void writesReplaceOnlyRegularFiles() {
    const QString pdl = dir_.filePath(QStringLiteral("written.pdl"));
    write(pdl, kPolicy);
    auto exportTo = [&](const QString& out) {
      return cli({QStringLiteral("export"), pdl, QStringLiteral("--obs-shape"), QStringLiteral("4"), QStringLiteral("--action-dim"),
                  QStringLiteral("2"), QStringLiteral("--out"), out});
    };
    const QString way = QStringLiteral(", not a regular file; refusing to replace it: give the path of a regular file or of a new one\n");
    const QString fifo = dir_.filePath(QStringLiteral("fifo.onnx"));
    QCOMPARE(::mkfifo(qPrintable(fifo), 0644), 0);
    Result r = exportTo(fifo);
    QCOMPARE(r.status, 2);
    QCOMPARE(r.err, QStringLiteral("error: %1 is a named pipe (FIFO)").arg(fifo) + way);
    struct stat st {};
    QVERIFY(::lstat(qPrintable(fifo), &st) == 0 && S_ISFIFO(st.st_mode));
    const QString link = dir_.filePath(QStringLiteral("link.onnx"));
    QVERIFY(QFile::link(fifo, link));
    r = exportTo(link);
    QCOMPARE(r.status, 2);
    QCOMPARE(r.err, QStringLiteral("error: %1 is a symbolic link to a named pipe (FIFO)").arg(link) + way);
    QVERIFY(::lstat(qPrintable(link), &st) == 0 && S_ISLNK(st.st_mode));
    const QString folder = dir_.filePath(QStringLiteral("folder.onnx"));
    QVERIFY(QDir().mkpath(folder));
    r = exportTo(folder);
    QCOMPARE(r.status, 2);
    QCOMPARE(r.err, QStringLiteral("error: %1 is a folder").arg(folder) + way);
    QVERIFY(exportTo(dir_.filePath(QStringLiteral("plain.onnx"))).status == 0);

    // A link to a descriptor (as /dev/stdout is): refused, not replaced, even when the descriptor
    // is a regular file (stdout redirected to one).
    const QString descriptor = dir_.filePath(QStringLiteral("stdout.onnx"));
    QVERIFY(QFile::link(QStringLiteral("/proc/self/fd/1"), descriptor));
    std::string refusal;
    QVERIFY(!cas::writeFileAtomic(descriptor.toStdString(), "x", &refusal));
    QVERIFY2(refusal.find("is a symbolic link into /proc or /dev") != std::string::npos, refusal.c_str());
    QVERIFY(::lstat(qPrintable(descriptor), &st) == 0 && S_ISLNK(st.st_mode));
    QCOMPARE(QFile::symLinkTarget(descriptor), QStringLiteral("/proc/self/fd/1"));

    // A link planted at the temporary file's name: the write goes elsewhere, the target is kept.
    const QString victim = dir_.filePath(QStringLiteral("victim.txt"));
    write(victim, "keep me");
    const QString destination = dir_.filePath(QStringLiteral("destination.txt"));
    QVERIFY(QFile::link(victim, destination + QStringLiteral(".tmp.") + QString::number(::getpid())));
    std::string error;
    QVERIFY2(cas::writeFileAtomic(destination.toStdString(), "new", &error), error.c_str());
    QCOMPARE(bytes(victim), QByteArray("keep me"));
    QCOMPARE(bytes(destination), QByteArray("new"));
    QVERIFY(::lstat(qPrintable(destination), &st) == 0 && S_ISREG(st.st_mode));
  }

  // Issue 44: a C (or CUDA) export is two files; the header carries a hash of the pair that the
  // source checks at compile time, so a kill between the two renames cannot leave a new header
  // beside an old source that compiles.
  void cAndCudaExportsArePaired() {
    const QString folder = dir_.filePath(QStringLiteral("paired"));
    QDir().mkpath(folder);
    const QString pdl = folder + QStringLiteral("/p.pdl");
    write(pdl, kPolicy);
    auto exportAs = [&](const char* format, const char* seed, const QString& out) {
      return cli({QStringLiteral("export"), pdl, QStringLiteral("--format"), QLatin1String(format), QStringLiteral("--obs-shape"), QStringLiteral("4"),
                  QStringLiteral("--action-dim"), QStringLiteral("2"), QStringLiteral("--seed"), QLatin1String(seed), QStringLiteral("--out"), out})
          .status;
    };
    const QString c = folder + QStringLiteral("/policy.c");
    QCOMPARE(exportAs("c", "1", c), 0);
    const QByteArray oldSource = bytes(c);
    QCOMPARE(exportAs("c", "2", c), 0);
    const QRegularExpression id(QStringLiteral("#define POLICY_H_EXPORT_ID (0x[0-9a-f]{16})ULL"));
    const QString newId = id.match(QString::fromUtf8(bytes(folder + QStringLiteral("/policy.h")))).captured(1);
    QVERIFY2(!newId.isEmpty(), bytes(folder + QStringLiteral("/policy.h")).constData());
    QVERIFY(bytes(c).contains("#if !defined(POLICY_H_EXPORT_ID) || POLICY_H_EXPORT_ID != " + newId.toUtf8() + "ULL\n"));
    QVERIFY(!oldSource.contains(newId.toUtf8()));
    const QString cc = QStandardPaths::findExecutable(QStringLiteral("cc"));
    if (!cc.isEmpty()) {
      auto compiles = [&] {
        QProcess build;
        build.setWorkingDirectory(folder);
        build.setProcessChannelMode(QProcess::MergedChannels);
        build.start(cc, {QStringLiteral("-std=c99"), QStringLiteral("-c"), QStringLiteral("policy.c"), QStringLiteral("-o"), QStringLiteral("policy.o")});
        build.waitForFinished(60000);
        return std::make_pair(build.exitCode() == 0, QString::fromUtf8(build.readAll()));
      };
      QVERIFY(compiles().first);
      write(c, oldSource);  // killed between the renames: the new header beside the old source
      const auto [ok, output] = compiles();
      QVERIFY(!ok);
      QVERIFY2(output.contains(QStringLiteral("policy.h is not the header policy.c was exported with; export both again")), qPrintable(output));
    }
    const QString cu = folder + QStringLiteral("/policy_cuda.cu");
    QCOMPARE(exportAs("cuda", "1", cu), 0);
    const QString cuId = QRegularExpression(QStringLiteral("#define POLICY_CUDA_H_EXPORT_ID (0x[0-9a-f]{16})ULL"))
                             .match(QString::fromUtf8(bytes(folder + QStringLiteral("/policy_cuda.h"))))
                             .captured(1);
    QVERIFY(!cuId.isEmpty());
    QVERIFY(bytes(cu).contains("#if !defined(POLICY_CUDA_H_EXPORT_ID) || POLICY_CUDA_H_EXPORT_ID != " + cuId.toUtf8() + "ULL\n"));
  }

  // Hardening 3, item 4: on a full disk the new header replaced the old one, then the source
  // could not be written and the header was removed, so the old pair was lost. Both files are
  // written beside their destinations before either is replaced: the old pair stays whole. A file
  // size limit stands in for the full disk (the write fails with EFBIG where it would with ENOSPC).
  void aCExportThatCannotBeWrittenKeepsTheOldPair() {
    const QString prlimit = QStandardPaths::findExecutable(QStringLiteral("prlimit"));
    if (prlimit.isEmpty()) QSKIP("no prlimit on the PATH (util-linux)");
    const QString folder = dir_.filePath(QStringLiteral("full-disk"));
    QDir().mkpath(folder);
    const QString pdl = folder + QStringLiteral("/p.pdl"), c = folder + QStringLiteral("/policy.c"), h = folder + QStringLiteral("/policy.h");
    write(pdl, kPolicy);
    const QStringList args = {QStringLiteral("export"), pdl, QStringLiteral("--format"), QStringLiteral("c"), QStringLiteral("--obs-shape"),
                              QStringLiteral("4"), QStringLiteral("--action-dim"), QStringLiteral("2"), QStringLiteral("--out"), c};
    QCOMPARE(cli(args).status, 0);
    const qint64 header = bytes(h).size(), source = bytes(c).size();
    QVERIFY2(header < source, qPrintable(QStringLiteral("%1 %2").arg(header).arg(source)));
    write(c, "the old source\n");
    write(h, "the old header\n");
    // Room for the header, not for the source.
    const QString limit = QStringLiteral("trap '' XFSZ; %1 --pid $$ --fsize=%2:%2").arg(prlimit).arg((header + source) / 2);
    const Result r = limitedCli(limit, args);
    QCOMPARE(r.status, 2);
    QVERIFY2(QRegularExpression(QStringLiteral("^error: cannot write %1/policy\\.c\\.tmp\\.[0-9]+: File too large\n$").arg(QRegularExpression::escape(folder)))
                 .match(r.err)
                 .hasMatch(),
             qPrintable(r.err));
    QCOMPARE(bytes(c), QByteArray("the old source\n"));
    QCOMPARE(bytes(h), QByteArray("the old header\n"));
    QCOMPARE(QDir(folder).entryList(QDir::AllEntries | QDir::NoDotAndDotDot),
             QStringList({QStringLiteral("p.pdl"), QStringLiteral("policy.c"), QStringLiteral("policy.h")}));
  }

  // Hardening, fourth probe: a value that must be one of a list was printed whole when refused
  // (100 KB from --set or project.toml); it is quoted and cut, as numbers are.
  void refusedChoicesAreQuotedCut() {
    const QByteArray huge(100000, 'a');
    const QString folder = project(QStringLiteral("huge-choice"), kHeader + "[search]\nroot_policy = \"" + huge + "\"\n");
    const QString plain = project(QStringLiteral("plain-choice"), kHeader);
    const QString cut = QStringLiteral("search.root_policy = '%1... (100000 bytes)' is not allowed: expected one of: ").arg(QString(64, QLatin1Char('a')));
    for (const QStringList& args : {QStringList{QStringLiteral("check"), folder},
                                    QStringList{QStringLiteral("train"), plain, QStringLiteral("--set"), QStringLiteral("search.root_policy=") + QString::fromLatin1(huge),
                                                QStringLiteral("--out"), dir_.filePath(QStringLiteral("huge-choice-run"))}}) {
      const Result r = cli(args);
      QVERIFY2(r.status != 0, qPrintable(args.first()));
      QVERIFY2(r.err.contains(cut) && r.err.size() < 2000, qPrintable(r.err.left(2000)));
    }
  }

  // Hardening, fourth probe: bench search, bench update and kernels read their numbers with
  // CLI11's Range: nan ran, 0x10 was 16, and 1e3 was "not in range"; they take the validators
  // of check, train and eval.
  void benchNumbersAreReadWhole() {
    const struct {
      QStringList args;
      QString expected;
    } cases[] = {
        {{QStringLiteral("bench"), QStringLiteral("search"), QStringLiteral("--seconds"), QStringLiteral("nan")},
         QStringLiteral("--seconds: expected a number in [0.01, 600], got 'nan'\n")},
        {{QStringLiteral("bench"), QStringLiteral("update"), QStringLiteral("--net"), QStringLiteral("connect4_mlp256"), QStringLiteral("--seconds"), QStringLiteral("nan")},
         QStringLiteral("--seconds: expected a number in [0.01, 600], got 'nan'\n")},
        {{QStringLiteral("bench"), QStringLiteral("search"), QStringLiteral("--games"), QStringLiteral("0x10")},
         QStringLiteral("--games: expected a whole number in [1, 65536], got '0x10'\n")},
        {{QStringLiteral("kernels"), QStringLiteral("connect4_mlp256"), QStringLiteral("--batch"), QStringLiteral("1e3")},
         QStringLiteral("--batch: expected a whole number in [1, 65536], got '1e3'\n")},
    };
    for (const auto& c : cases) {
      const Result r = cli(c.args);
      QCOMPARE(r.status, 2);
      QVERIFY2(r.err.startsWith(c.expected), qPrintable(r.err));
    }
  }

  // Hardening, fourth probe: a missing project was "no project.toml here", and a file given as
  // the project (p/policy.pdl) was read as TOML; both are named for what they are.
  void missingProjectsAndFilesAreNamed() {
    const QString folder = project(QStringLiteral("named-paths"), kHeader);
    const QString missing = dir_.filePath(QStringLiteral("nope"));
    Result r = cli({QStringLiteral("bench"), QStringLiteral("decision"), missing});
    QVERIFY(r.status != 0);
    QVERIFY2(r.err.contains(QStringLiteral("%1 does not exist; give a project folder (one holding project.toml)\n").arg(missing)), qPrintable(r.err));
    r = cli({QStringLiteral("bench"), QStringLiteral("decision"), folder + QStringLiteral("/policy.pdl")});
    QVERIFY(r.status != 0);
    QVERIFY2(r.err.contains(QStringLiteral("%1/policy.pdl is a file, not a project folder; give the folder that holds project.toml\n").arg(folder)),
             qPrintable(r.err));
    QVERIFY2(!r.err.contains(QStringLiteral("TOML")), qPrintable(r.err));
  }

  // Hardening, fourth probe: check ignored a .pdl file's options given with a project silently.
  void standaloneOptionsWithAProjectAreNamed() {
    const QString folder = project(QStringLiteral("standalone-options"), kHeader);
    const Result r = cli({QStringLiteral("check"), folder, QStringLiteral("--entry"), QStringLiteral("foo"), QStringLiteral("--obs-shape"), QStringLiteral("5")});
    QCOMPARE(r.status, 0);
    QVERIFY2(r.err.startsWith(QStringLiteral("%1: warning: --obs-shape, --entry go with a .pdl file and are ignored for a project (its environment gives "
                                             "the observation shape and actions, its project.toml the policy and algorithm)\n").arg(folder)),
             qPrintable(r.err));
  }

  // Hardening 3, item 15: an empty project folder given to bench ppo and bench decision was
  // looked for as "no project.toml here"; it is named as an empty path.
  void emptyProjectPathsAreNamed() {
    for (const char* bench : {"ppo", "decision"}) {
      const Result r = cli({QStringLiteral("bench"), QLatin1String(bench), QString()});
      QCOMPARE(r.status, 2);
      QVERIFY2(r.err.startsWith(QStringLiteral("project: expected a path, got ''\n")), qPrintable(r.err));
    }
  }

  // Issue 44: a project's name becomes part of a folder's name only when it is a plain name.
  void projectNamesAreCheckedBeforeNamingFolders() {
    const QString cwd = dir_.filePath(QStringLiteral("cwd"));
    QDir().mkpath(cwd);
    auto trainIn = [&](const QByteArray& name) {
      const QString folder = project(QStringLiteral("named"), QByteArray(kHeader).replace("name = \"t\"", "name = \"" + name + "\""));
      QProcess p;
      p.setWorkingDirectory(cwd);
      p.start(kCli, {QStringLiteral("train"), folder, QStringLiteral("--iterations"), QStringLiteral("1")});
      p.waitForFinished(60000);
      return std::make_pair(p.exitCode(), QString::fromUtf8(p.readAllStandardError()));
    };
    const QString way = QStringLiteral("; rename the project in its project.toml, or give the run a folder with --out\n");
    auto [status, err] = trainIn("../../x");
    QCOMPARE(status, 1);
    QCOMPARE(err, QStringLiteral("error: the project's name '../../x' cannot name a run folder: a name must not hold '/' or '\\'") + way);
    std::tie(status, err) = trainIn("..");
    QCOMPARE(err, QStringLiteral("error: the project's name '..' cannot name a run folder: a name must not be '.' or '..'") + way);
    std::tie(status, err) = trainIn("a\\u001b[2Jb");
    QCOMPARE(err, QStringLiteral("error: the project's name 'a\\x1b[2Jb' cannot name a run folder: a name must not hold control characters") + way);
    QCOMPARE(QDir(dir_.path()).entryList({QStringLiteral("x-*")}), QStringList());
    QCOMPARE(QDir(cwd).entryList(QDir::AllEntries | QDir::NoDotAndDotDot), QStringList());
  }

  // Issue 44: a value quoted in an error is cut after 64 bytes, with its length.
  void quotedValuesAreCut() {
    const QByteArray huge(100000, 'x');
    const Result r = cli({QStringLiteral("train"), QStringLiteral("--out"), dir_.filePath(QStringLiteral("cut")), project(QStringLiteral("cut"), kHeader),
                          QStringLiteral("--set"), QStringLiteral("search.c_puct=") + QString::fromLatin1(huge)});
    QCOMPARE(r.status, 2);
    const QString cut = QStringLiteral("'") + QString(64, QLatin1Char('x')) + QStringLiteral("... (100000 bytes)'");
    QCOMPARE(r.err, QStringLiteral("error: --set 'search.c_puct=") + QString(50, QLatin1Char('x')) +
                        QStringLiteral("... (100014 bytes)': search.c_puct: ") + cut + QStringLiteral(" is not valid: expected a number in [0, 100]\n"));
    const auto loaded = cas::project::loadProject(
        project(QStringLiteral("long-environment"), QByteArray(kHeader).replace("\"tictactoe\"", "\"" + huge + "\"")).toStdString());
    QVERIFY(!loaded.project);
    const std::string& message = loaded.diagnostics.items().at(0).message;
    QVERIFY2(message.starts_with("unknown environment " + cut.toStdString() + "; known environments: "), message.substr(0, 300).c_str());
    QVERIFY(message.size() < 1000);
  }

  // Issue 44: element counts are multiplied in checked 64-bit arithmetic and refused above the
  // documented 2^28 per sample, with that reason.
  void elementCountsAreChecked() {
    const QString pdl = dir_.filePath(QStringLiteral("counts.pdl"));
    write(pdl, kPolicy);
    auto check = [&](const char* shape) {
      return cli({QStringLiteral("check"), pdl, QStringLiteral("--obs-shape"), QLatin1String(shape), QStringLiteral("--action-dim"), QStringLiteral("2")});
    };
    Result r = check("65536,65536,65536,65536");  // 2^64 elements: 0 in unchecked arithmetic
    QCOMPARE(r.status, 2);
    QCOMPARE(r.err, QStringLiteral("--obs-shape: '65536,65536,65536,65536' has more than 268435456 elements, the most an observation may have\n"));
    r = check("536870912");
    QCOMPARE(r.status, 2);
    QCOMPARE(r.err, QStringLiteral("--obs-shape: '536870912' has more than 268435456 elements, the most an observation may have\n"));
    r = check("0,4");
    QCOMPARE(r.err, QStringLiteral("--obs-shape: '0,4' is not a list of positive integers such as 4,84,84\n"));

    cas::pdl::CompileOptions o;
    o.fileName = "broadcast.pdl";
    o.observationShape = {32768};
    o.actionCount = 2;
    const auto broadcast = cas::pdl::compile("def policy(obs):\n    h = reshape(obs, (32768, 1)) + reshape(obs, (1, 32768))\n"
                                             "    return dense(flatten(h), units=action_dim), dense(flatten(h), units=1)\n",
                                             o);
    QVERIFY(!broadcast.policy);
    QCOMPARE(at(broadcast.diagnostics.items().at(0)), std::string("2:34 a tensor of shape [32768, 32768] would have more than 268435456 elements per sample"));
    o.observationShape = {65536, 65536, 65536, 65536};
    const auto observation = cas::pdl::compile(kPolicy.toStdString(), o);
    QVERIFY(!observation.policy);
    QCOMPARE(at(observation.diagnostics.items().at(0)),
             std::string("1:12 the observation, of shape [65536, 65536, 65536, 65536], would have more than 268435456 elements per sample"));
  }

  // An observation of 17 or 30000 dimensions was accepted by check and export, whose ONNX input
  // numpy and onnxruntime cannot feed; a checkpoint's tensor has at most 16. --obs-shape and the
  // compiler (where a project's environment gives the shape) refuse more, with that reason.
  void observationsHaveAtMost16Dimensions() {
    const QString pdl = dir_.filePath(QStringLiteral("rank.pdl"));
    write(pdl, kPolicy);
    auto ones = [](int n) {
      QStringList d;
      for (int i = 0; i < n; ++i) d << QStringLiteral("1");
      return d.join(QLatin1Char(','));
    };
    auto check = [&](const QString& shape) {
      return cli({QStringLiteral("check"), pdl, QStringLiteral("--obs-shape"), shape, QStringLiteral("--action-dim"), QStringLiteral("2")});
    };
    QCOMPARE(check(ones(16)).status, 0);
    Result r = check(ones(17));
    QCOMPARE(r.status, 2);
    QCOMPARE(r.err,
             QStringLiteral("--obs-shape: '%1' has 17 dimensions; an observation has at most 16 (the most a checkpoint's tensor has)\n")
                 .arg(ones(17)));
    r = cli({QStringLiteral("export"), pdl, QStringLiteral("--obs-shape"), ones(30000), QStringLiteral("--action-dim"), QStringLiteral("2"),
             QStringLiteral("--out"), dir_.filePath(QStringLiteral("rank.onnx"))});
    QCOMPARE(r.status, 2);
    QVERIFY2(r.err.contains(QStringLiteral(" has 30000 dimensions; an observation has at most 16 (the most a checkpoint's tensor has)\n")),
             qPrintable(r.err));
    QVERIFY(!QFileInfo::exists(dir_.filePath(QStringLiteral("rank.onnx"))));

    cas::pdl::CompileOptions o;
    o.observationShape = std::vector<std::int64_t>(17, 1);
    o.actionCount = 2;
    const auto observation = cas::pdl::compile(kPolicy.toStdString(), o);
    QVERIFY(!observation.policy);
    QCOMPARE(at(observation.diagnostics.items().at(0)),
             std::string(
                 "1:12 the observation, of shape [1, 1, 1, 1, 1, 1, 1, 1, ... (17 dims)], has 17 dimensions; an input has at most 16 (the "
                 "most a checkpoint's tensor has)"));
  }

  // Issue 44: what a command can throw ends in a message, not an abort, even out of memory.
  void commandsEndWithAMessageWhenResourcesRunOut() {
    const QString limits = QStringLiteral("ulimit -v 4194304; ulimit -s 16384");
    Result r = limitedCli(limits, {QStringLiteral("bench"), QStringLiteral("env"), QStringLiteral("--env"), QStringLiteral("cartpole"),
                                   QStringLiteral("--threads"), QStringLiteral("1024"), QStringLiteral("--envs"), QStringLiteral("4"),
                                   QStringLiteral("--steps"), QStringLiteral("1")});
    QCOMPARE(r.status, 1);
    QVERIFY2(QRegularExpression(QStringLiteral("^error: cannot start thread [0-9]+ of 1024 \\(Resource temporarily unavailable\\); use fewer threads\n$"))
                 .match(r.err)
                 .hasMatch(),
             qPrintable(r.err));
    r = limitedCli(limits, {QStringLiteral("bench"), QStringLiteral("solver"), QStringLiteral("--table-mib"), QStringLiteral("65536"),
                            QStringLiteral("--depths"), QStringLiteral("30"), QStringLiteral("--positions"), QStringLiteral("1")});
    QCOMPARE(r.status, 1);
    QCOMPARE(r.err, QStringLiteral("error: the perfect player's transposition table of 64.0 GiB cannot be allocated (out of memory); "
                                   "give a smaller --table-mib\n"));
    // Found by the held-out probe: these said only "std::bad_alloc".
    r = limitedCli(limits, {QStringLiteral("bench"), QStringLiteral("search"), QStringLiteral("--device"), QStringLiteral("cpu"), QStringLiteral("--games"),
                            QStringLiteral("65536"), QStringLiteral("--node-budget"), QStringLiteral("16777216"), QStringLiteral("--seconds"), QStringLiteral("0.01")});
    // Hardening 3, item 7: refused from an estimate before anything is allocated (without a
    // limit it allocated until the system killed it).
    QCOMPARE(r.status, 1);
    QVERIFY2(QRegularExpression(QStringLiteral("^bench search: 65536 games of 16777216 tree nodes each need about 32\\.0 TiB of memory, more than "
                                               "the [0-9.]+ [KMG]iB available; give fewer --games or a smaller --node-budget\n$"))
                 .match(r.err)
                 .hasMatch(),
             qPrintable(r.err));
    QVERIFY2(r.ms < 10000, qPrintable(QString::number(r.ms)));
    r = limitedCli(limits, {QStringLiteral("bench"), QStringLiteral("update"), QStringLiteral("--device"), QStringLiteral("cpu"), QStringLiteral("--net"),
                            QStringLiteral("atari_nature_cnn"), QStringLiteral("--batch"), QStringLiteral("65536")});
    QCOMPARE(r.status, 1);
    QVERIFY2(r.err.endsWith(QStringLiteral("bench: out of memory for atari_nature_cnn at --batch 65536 (its activations, gradients and optimizer "
                                           "state); give a smaller --batch\n")),
             qPrintable(r.err));
    r = limitedCli(limits, {QStringLiteral("bench"), QStringLiteral("allreduce"), QStringLiteral("--ranks"), QStringLiteral("2"), QStringLiteral("--min-bytes"),
                            QStringLiteral("2147483648"), QStringLiteral("--max-bytes"), QStringLiteral("2147483648")});
    QCOMPARE(r.status, 1);
    QVERIFY2(r.err.contains(QStringLiteral("out of memory for buffers of up to 2.0 GiB on each of 2 ranks; give a smaller --max-bytes or fewer ranks")),
             qPrintable(r.err));
    // The third probe: an export of 270 million parameters ran 30 s into "out of memory; ask for
    // less (fewer threads, environments or games ...)"; it is refused at once, by its size.
    const QString huge = dir_.filePath(QStringLiteral("huge.pdl"));
    write(huge, "def policy(obs):\n    h = dense(dense(flatten(obs), units=16384), units=16384)\n"
                "    return dense(h, units=action_dim), dense(h, units=1)\n");
    r = limitedCli(limits, {QStringLiteral("export"), huge, QStringLiteral("--obs-shape"), QStringLiteral("2,8,8"), QStringLiteral("--action-dim"),
                            QStringLiteral("2"), QStringLiteral("--out"), dir_.filePath(QStringLiteral("huge.onnx"))});
    QCOMPARE(r.status, 2);
    QVERIFY2(QRegularExpression(QStringLiteral("^error: .*huge\\.pdl: the network has 270614531 parameters \\(1\\.0 GiB as floats\\); exporting "
                                               "it needs about 7\\.6 GiB of memory, more than the [0-9.]+ [KMG]iB available: export a smaller network\n$"))
                 .match(r.err)
                 .hasMatch(),
             qPrintable(r.err));
    QVERIFY2(r.ms < 10000, qPrintable(QString::number(r.ms)));
    QVERIFY(!QFile::exists(dir_.filePath(QStringLiteral("huge.onnx"))));
  }

  // Issue 44: check refuses what train refuses, and says ok only after its last check.
  void checkRunsTheChecksTrainRuns() {
    const QString ppo = dir_.filePath(QStringLiteral("ppo-minibatches"));
    QDir().mkpath(ppo);
    QByteArray toml = bytes(cas::test::sourcePath(QStringLiteral("projects/cartpole-ppo/project.toml")));
    QVERIFY(toml.contains("minibatches = 4"));
    write(ppo + QStringLiteral("/project.toml"), toml.replace("minibatches = 4", "minibatches = 3"));
    write(ppo + QStringLiteral("/policy.pdl"), bytes(cas::test::sourcePath(QStringLiteral("projects/cartpole-ppo/policy.pdl"))));
    Result r = cli({QStringLiteral("check"), ppo});
    QCOMPARE(r.status, 1);
    QCOMPARE(r.out, QString());
    QCOMPARE(r.err, QStringLiteral("error: ppo.minibatches = 3 does not divide a rollout of ppo.envs x ppo.rollout_steps = 4 x 128 = 512 samples; "
                                   "choose a divisor of it\n%1: rejected (1 error)\n").arg(ppo));

    const QString nan = project(QStringLiteral("nan-forward"), kHeader);
    write(nan + QStringLiteral("/policy.pdl"), QByteArray(kPolicy).replace("tanh(dense(h, units=1))", "log(tanh(dense(h, units=1)) * 0 - 1)"));
    r = cli({QStringLiteral("check"), nan});
    QCOMPARE(r.status, 1);
    QVERIFY2(!r.out.contains(QStringLiteral(": ok")), qPrintable(r.out));
    QVERIFY2(r.err.contains(QStringLiteral("the forward pass failed on the CPU backend: ")), qPrintable(r.err));
    QVERIFY2(r.err.endsWith(QStringLiteral("%1: rejected: the forward pass failed\n").arg(nan)), qPrintable(r.err));

    // Found by the held-out probe: a batch larger than the replay buffer never trained, and a
    // PPO minibatch past the largest compiled batch was blamed on the policy; check and train
    // now refuse both with the same sentence.
    const QString starved = project(QStringLiteral("starved"), kHeader + "[train]\nbatch_size = 1024\nreplay_capacity = 64\n");
    const QString starvedWhy = QStringLiteral("train.batch_size = 1024 is more than train.replay_capacity = 64: a training step draws its batch from "
                                              "the replay buffer, which never holds that many positions, so the run would never train; lower "
                                              "train.batch_size or raise train.replay_capacity");
    r = cli({QStringLiteral("check"), starved});
    QCOMPARE(r.status, 1);
    QVERIFY2(r.err.startsWith(QStringLiteral("error: ") + starvedWhy + QLatin1Char('\n')), qPrintable(r.err));
    r = cli({QStringLiteral("train"), starved, QStringLiteral("--out"), dir_.filePath(QStringLiteral("starved-run")), QStringLiteral("--iterations"),
             QStringLiteral("1")});
    QCOMPARE(r.status, 1);
    QCOMPARE(r.err, QStringLiteral("error: ") + starvedWhy + QLatin1Char('\n'));
    QVERIFY(!QFile::exists(dir_.filePath(QStringLiteral("starved-run"))));
    const QString wide = dir_.filePath(QStringLiteral("ppo-wide"));
    QDir().mkpath(wide);
    write(wide + QStringLiteral("/project.toml"), bytes(cas::test::sourcePath(QStringLiteral("projects/cartpole-ppo/project.toml")))
                                                      .replace("minibatches = 4", "minibatches = 1")
                                                      .replace("envs = 4", "envs = 2048")
                                                      .replace("rollout_steps = 128", "rollout_steps = 1024"));
    write(wide + QStringLiteral("/policy.pdl"), bytes(cas::test::sourcePath(QStringLiteral("projects/cartpole-ppo/policy.pdl"))));
    const QString wideWhy = QStringLiteral("a minibatch of ppo.envs x ppo.rollout_steps / ppo.minibatches = 2048 x 1024 / 1 = 2097152 samples is "
                                           "more than the 1048576 a compiled batch may hold; raise ppo.minibatches, or lower ppo.envs or "
                                           "ppo.rollout_steps");
    r = cli({QStringLiteral("check"), wide});
    QCOMPARE(r.status, 1);
    QVERIFY2(r.err.startsWith(QStringLiteral("error: ") + wideWhy + QLatin1Char('\n')), qPrintable(r.err));
    r = cli({QStringLiteral("train"), wide, QStringLiteral("--out"), dir_.filePath(QStringLiteral("wide-run"))});
    QCOMPARE(r.status, 1);
    QCOMPARE(r.err, QStringLiteral("error: ") + wideWhy + QLatin1Char('\n'));
  }

  // Issue 44: a value out of range is printed as it was written, as docs/project-format.md says,
  // and an unknown key's name is cut like any quoted value.
  void outOfRangeValuesArePrintedAsWritten() {
    cas::params::ParameterSet set;
    QCOMPARE(set.assign("search.c_puct=1e3").value_or(""), std::string("search.c_puct = 1e3 is out of range: expected a number in [0, 100]"));
    auto firstError = [&](const QByteArray& section) {
      const auto r = cas::project::loadProject(project(QStringLiteral("written"), kHeader + section).toStdString());
      return r.diagnostics.empty() ? std::string() : at(r.diagnostics.items()[0]);
    };
    QCOMPARE(firstError("[search]\nc_puct = 1_000.0 # too much\n"), std::string("6:10 search.c_puct = 1_000.0 is out of range: expected a number in [0, 100]"));
    QCOMPARE(firstError("[search]\nsimulations = 0x7fffffff\n"),
             std::string("6:15 search.simulations = 0x7fffffff is out of range: expected an integer in [1, 100000]"));
    const std::string unknown = firstError("[search]\n" + QByteArray(5000, 'k') + " = 1\n");
    QVERIFY2(unknown.starts_with("6:1 unknown key '" + std::string(64, 'k') + "... (5000 bytes)' in [search] is ignored; known keys: simulations, "),
             unknown.substr(0, 300).c_str());
    QVERIFY(unknown.size() < 1000);
  }

  // Issue 44, round 3: eval --episodes N --json prints returns that are not numbers as null with
  // the reason, and their median is no number either (a NaN used to be sorted as one).
  void episodeReturnsThatAreNotNumbersAreNull() {
    const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
    cas::train::EpisodeEvaluation e;
    e.returns = {nan, 3, 1};
    QVERIFY2(!std::isfinite(e.median()), qPrintable(QString::number(e.median())));
    e.returns = {2, inf, nan, 4};
    const std::string json = cas::train::episodesJson(e, false, 7, 0.5);
    QVERIFY2(!QRegularExpression(QStringLiteral("[:,\\[] *-?(nan|inf)")).match(QString::fromStdString(json)).hasMatch(), json.c_str());
    const QJsonObject o = QJsonDocument::fromJson(QByteArray::fromStdString(json)).object();
    QVERIFY2(!o.isEmpty(), json.c_str());
    QCOMPARE(o.value(QLatin1String("episodes")).toInt(), 4);
    for (const char* field : {"mean_return", "median_return", "std_return"}) QVERIFY2(o.value(QLatin1String(field)).isNull(), json.c_str());
    QCOMPARE(o.value(QLatin1String("not_finite")).toArray(),
             QJsonArray({QStringLiteral("mean_return"), QStringLiteral("median_return"), QStringLiteral("std_return")}));
    QCOMPARE(o.value(QLatin1String("not_finite_reason")).toString(),
             QStringLiteral("2 of the 4 episodes' returns are not finite numbers (NaN or infinite), so their summaries are printed as null"));
    e.returns = {1, 2, 4};
    const QJsonObject fine = QJsonDocument::fromJson(QByteArray::fromStdString(cas::train::episodesJson(e, true, 7, 0.5))).object();
    QCOMPARE(fine.value(QLatin1String("median_return")).toDouble(), 2.0);
    QVERIFY(!fine.contains(QLatin1String("not_finite")));
  }

  // Issue 44, round 3: a shape quoted in a message is cut after 8 dimensions, with its rank.
  void hugeShapesInMessagesAreCut() {
    cas::pdl::CompileOptions o;
    o.fileName = "rank.pdl";
    o.observationShape = std::vector<std::int64_t>(100000, 1);
    o.actionCount = 2;
    const auto r = cas::pdl::compile("def policy(obs):\n    h = conv2d(obs, filters=2)\n"
                                     "    return dense(flatten(h), units=action_dim), dense(flatten(h), units=1)\n",
                                     o);
    QVERIFY(!r.policy);
    const std::string first = at(r.diagnostics.items().at(0));
    QVERIFY2(first.size() < 300, first.substr(0, 300).c_str());
    QVERIFY2(first.find("[1, 1, 1, 1, 1, 1, 1, 1, ... (100000 dims)]") != std::string::npos, first.substr(0, 300).c_str());
    std::string printed;
    for (const cas::Diagnostic& d : r.diagnostics.items()) printed += cas::formatDiagnostic(d) + "\n";
    QVERIFY2(printed.size() < 4000, printed.substr(0, 400).c_str());
  }

  // Issue 44, round 3: CLI11's refusals quote a long argument cut, as every other message does.
  void cliQuotesAreCut() {
    const QString path = QString(100000, QLatin1Char('p'));
    Result r = cli({QStringLiteral("check"), path});
    QCOMPARE(r.status, 2);
    QCOMPARE(r.err, QStringLiteral("paths: expected a path of at most 4096 bytes (Linux's PATH_MAX), got '%1... (100000 bytes)'\nRun with --help "
                                   "for more information.\n").arg(QString(64, QLatin1Char('p'))));
    r = cli({QStringLiteral("check"), QString(4000, QLatin1Char('p'))});
    QCOMPARE(r.err, QStringLiteral("paths: Path does not exist: '%1... (4000 bytes)'\nRun with --help for more information.\n").arg(QString(64, QLatin1Char('p'))));
    r = cli({QStringLiteral("check"), dir_.path(), QStringLiteral("--") + QString(100000, QLatin1Char('o'))});
    QCOMPARE(r.status, 2);
    QVERIFY2(r.err.size() < 1000, qPrintable(r.err.left(400)));
    QVERIFY2(r.err.contains(QStringLiteral("'--%1... (100002 bytes)'").arg(QString(62, QLatin1Char('o')))), qPrintable(r.err.left(400)));
    QStringList many = {QStringLiteral("eval"), dir_.path()};
    for (int i = 0; i < 5000; ++i) many << QStringLiteral("extra-%1").arg(i);
    r = cli(many);
    QCOMPARE(r.status, 2);
    QVERIFY2(r.err.size() < 4200, qPrintable(r.err.left(400)));
  }

  // Found by the held-out probe: check ran any forward pass, however large (a 4096-wide max pool
  // over 1024 x 1024 ran past a minute; a shape of 60,000 dimensions was printed whole).
  void checkBoundsItsForwardPassAndShapes() {
    const QString pdl = dir_.filePath(QStringLiteral("pool.pdl"));
    QFile f(pdl);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("def policy(obs):\n    return dense(max_pool2d(obs, kernel=4096, stride=1, padding='same'), units=action_dim)\n");
    f.close();
    QElapsedTimer clock;
    clock.start();
    Result r = cli({QStringLiteral("check"), pdl, QStringLiteral("--obs-shape"), QStringLiteral("1,1024,1024"), QStringLiteral("--action-dim"), QStringLiteral("3")});
    QCOMPARE(r.status, 1);
    QVERIFY2(r.err.contains(QStringLiteral("the forward pass was not run on the CPU backend: it takes about 1.8e+13 operations")), qPrintable(r.err));
    // The third probe: the verdict said "the forward pass failed" of a pass that never ran.
    QVERIFY2(r.err.endsWith(QStringLiteral("%1: not verified: it compiles, but its forward pass is too large for check to run\n").arg(pdl)),
             qPrintable(r.err));
    QVERIFY(clock.elapsed() < 10000);
    QStringList ones;
    for (int i = 0; i < 60000; ++i) ones << QStringLiteral("1");
    const QString flat = dir_.filePath(QStringLiteral("flat.pdl"));
    QFile g(flat);
    QVERIFY(g.open(QIODevice::WriteOnly));
    g.write("def policy(obs):\n    return obs\n");
    g.close();
    r = cli({QStringLiteral("check"), flat, QStringLiteral("--obs-shape"), ones.join(','), QStringLiteral("--action-dim"), QStringLiteral("3")});
    // More than 16 dimensions are refused (observationsHaveAtMost16Dimensions), in a sentence
    // that quotes the shape cut.
    QCOMPARE(r.status, 2);
    QVERIFY2(r.err.size() < 400, qPrintable(r.err.left(400)));
    QVERIFY2(r.err.endsWith(QStringLiteral(
                 " (119999 bytes)' has 60000 dimensions; an observation has at most 16 (the most a checkpoint's tensor has)\n")),
             qPrintable(r.err.left(400)));
  }

  // Found by the held-out probe: an --entry name of 100 KB was quoted whole (a 100 KB message;
  // test_run_safety::opponentFoldersAreQuotedCut has the opponent's run folder).
  void entryQuotesAreCut() {
    const QString pdl = dir_.filePath(QStringLiteral("entry.pdl"));
    QFile f(pdl);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("def policy(obs):\n    return obs\n");
    f.close();
    const QString huge = QString(100000, QLatin1Char('z'));
    const Result r = cli({QStringLiteral("check"), pdl, QStringLiteral("--obs-shape"), QStringLiteral("3"), QStringLiteral("--action-dim"),
                          QStringLiteral("3"), QStringLiteral("--entry"), huge});
    QCOMPARE(r.status, 1);
    QVERIFY2(r.err.size() < 1000, qPrintable(r.err.left(400)));
    QVERIFY2(r.err.contains(QStringLiteral("no function named '%1... (100000 bytes)' (the entry point)").arg(QString(64, QLatin1Char('z')))),
             qPrintable(r.err.left(400)));
  }

  // Issue 44, round 3: concat and matmul results are held to the 2^28 elements per sample too,
  // refused at the operator with that reason (not later as a parameter too large).
  void concatAndMatmulCountsAreChecked() {
    cas::pdl::CompileOptions o;
    o.fileName = "grow.pdl";
    o.actionCount = 2;
    const std::string heads = "    return dense(flatten(m), units=action_dim), dense(flatten(m), units=1)\n";
    o.observationShape = {32768};
    auto r = cas::pdl::compile("def policy(obs):\n    m = matmul(reshape(obs, (32768, 1)), reshape(obs, (1, 32768)))\n" + heads, o);
    QVERIFY(!r.policy);
    QCOMPARE(at(r.diagnostics.items().at(0)), std::string("2:9 a tensor of shape [32768, 32768] would have more than 268435456 elements per sample"));
    o.observationShape = {16384};  // exactly 2^28: allowed at the matmul
    r = cas::pdl::compile("def policy(obs):\n    m = matmul(reshape(obs, (16384, 1)), reshape(obs, (1, 16384)))\n" + heads, o);
    for (const cas::Diagnostic& d : r.diagnostics.items()) QVERIFY2(d.location.line != 2, at(d).c_str());
    o.observationShape = {134217728};
    r = cas::pdl::compile("def policy(obs):\n    m = concat(obs, obs, obs)\n" + heads, o);
    QVERIFY(!r.policy);
    QCOMPARE(at(r.diagnostics.items().at(0)), std::string("2:9 a tensor of shape [402653184] would have more than 268435456 elements per sample"));
  }

  // Issue 44, round 3: --obs-shape with an empty part ('4,', ',4', '4,,4') is refused, not read
  // as the parts that are there.
  void obsShapesWithEmptyPartsAreRefused() {
    const QString pdl = dir_.filePath(QStringLiteral("empty-parts.pdl"));
    write(pdl, kPolicy);
    for (const char* shape : {"4,", ",4", "4,,4", "", ","}) {
      const QString way = QStringLiteral("--obs-shape: '%1' has an empty part; a shape is positive integers separated by commas, such as 4,84,84\n")
                              .arg(QLatin1String(shape));
      Result r = cli({QStringLiteral("check"), pdl, QStringLiteral("--obs-shape"), QLatin1String(shape), QStringLiteral("--action-dim"), QStringLiteral("2")});
      QCOMPARE(r.status, 2);
      QCOMPARE(r.err, way);
      r = cli({QStringLiteral("export"), pdl, QStringLiteral("--obs-shape"), QLatin1String(shape), QStringLiteral("--action-dim"), QStringLiteral("2"),
               QStringLiteral("--out"), dir_.filePath(QStringLiteral("empty-parts.onnx"))});
      QCOMPARE(r.status, 2);
      QCOMPARE(r.err, way);
    }
    QVERIFY(!QFile::exists(dir_.filePath(QStringLiteral("empty-parts.onnx"))));
  }

  // Issue 44, round 3: a name holding a character that reorders or hides text (U+202E, a zero
  // width space, a byte order mark) names no folder, and is printed escaped.
  void namesWithFormatCharactersAreRefused() {
    const std::string rule = "a name must not hold invisible formatting or text direction characters (it holds ";
    const std::pair<const char*, const char*> names[] = {{"evil\xe2\x80\xaetxt.exe", "U+202E"}, {"a\xe2\x80\x8b" "b", "U+200B"}, {"\xef\xbb\xbfx", "U+FEFF"},
                                                         {"a\xe2\x81\xa6" "b", "U+2066"}, {"a\xd8\x9c" "b", "U+061C"}, {"a\xc2\xad" "b", "U+00AD"},
                                                         // the line separator (found by the held-out probe: a name holding it printed raw)
                                                         {"a\xe2\x80\xa8" "b", "U+2028"}};
    for (const auto& [name, code] : names) QCOMPARE(cas::project::folderNameProblem(name).value_or(""), rule + code + ")");
    QCOMPARE(cas::printable("evil\xe2\x80\xaetxt.exe"), std::string("evil\\u202etxt.exe"));
    QCOMPARE(cas::printable("a\xe2\x80\xa8" "b"), std::string("a\\u2028b"));
    QVERIFY(!cas::project::folderNameProblem("caf\xc3\xa9-\xe4\xb8\xad\xe6\x96\x87"));  // letters of any script are names
    const QString cwd = dir_.filePath(QStringLiteral("bidi-cwd"));
    QDir().mkpath(cwd);
    const QString folder = project(QStringLiteral("bidi"), QByteArray(kHeader).replace("name = \"t\"", "name = \"evil\\u202Etxt.exe\""));
    QProcess p;
    p.setWorkingDirectory(cwd);
    p.start(kCli, {QStringLiteral("train"), folder, QStringLiteral("--iterations"), QStringLiteral("1")});
    p.waitForFinished(60000);
    QCOMPARE(p.exitCode(), 1);
    QCOMPARE(QString::fromUtf8(p.readAllStandardError()),
             QStringLiteral("error: the project's name 'evil\\u202etxt.exe' cannot name a run folder: a name must not hold invisible formatting or "
                            "text direction characters (it holds U+202E); rename the project in its project.toml, or give the run a folder with --out\n"));
    QCOMPARE(QDir(cwd).entryList(QDir::AllEntries | QDir::NoDotAndDotDot), QStringList());
  }

  // Issue 44, round 3: export --out names the path as it was given in its refusal.
  void exportRefusalsQuoteTheOutputAsGiven() {
    const QString folder = dir_.filePath(QStringLiteral("out-as-given/inner"));
    QDir().mkpath(folder);
    write(folder + QStringLiteral("/p.pdl"), kPolicy);
    auto exportTo = [&](const char* out) {
      QProcess p;
      p.setWorkingDirectory(folder);
      p.start(kCli, {QStringLiteral("export"), QStringLiteral("p.pdl"), QStringLiteral("--obs-shape"), QStringLiteral("4"), QStringLiteral("--action-dim"),
                     QStringLiteral("2"), QStringLiteral("--out"), QLatin1String(out)});
      p.waitForFinished(60000);
      return std::make_pair(p.exitCode(), QString::fromUtf8(p.readAllStandardError()));
    };
    const QString way = QStringLiteral(" is a folder, not a regular file; refusing to replace it: give the path of a regular file or of a new one\n");
    for (const char* out : {"..", ".", "../", "./"}) {
      const auto [status, err] = exportTo(out);
      QCOMPARE(status, 2);
      QCOMPARE(err, QStringLiteral("error: ") + QLatin1String(out) + way);
    }
  }

  // Held-out probe (issue 44, acceptance 3): a ".." after a folder that did not exist yet passed
  // the checks made on the path as given, and the writes then landed in the folder above: `train
  // --out victim/x/..` replaced a project's project.toml and policy.pdl, `export --out
  // victim/nx/../project.toml` wrote an ONNX model over it. Both refused now, nothing made.
  void upAfterAFolderNameIsRefused() {
    const QString victim = project(QStringLiteral("up-victim"), kHeader);
    const QString trainer = project(QStringLiteral("up-trainer"), kHeader + "[train]\nparallel_games = 2\ngames_per_iteration = 2\n");
    const QStringList before = QDir(victim).entryList(QDir::AllEntries | QDir::NoDotAndDotDot);
    const QByteArray toml = bytes(victim + QStringLiteral("/project.toml"));
    Result r = cli({QStringLiteral("train"), trainer, QStringLiteral("--iterations"), QStringLiteral("1"), QStringLiteral("--out"),
                    victim + QStringLiteral("/x/..")});
    QCOMPARE(r.status, 1);
    QVERIFY2(r.err.contains(QStringLiteral("/x/.. goes up ('..') after naming the folder 'x', which does not exist; the checks before writing "
                                           "could not see where it leads: give the path without it (") + victim),
             qPrintable(r.err));
    r = cli({QStringLiteral("export"), victim, QStringLiteral("--out"), victim + QStringLiteral("/nx/../project.toml")});
    QCOMPARE(r.status, 2);
    QVERIFY2(r.err.contains(QStringLiteral("/nx/../project.toml goes up ('..') after naming the folder 'nx', which does not exist")), qPrintable(r.err));
    QCOMPARE(QDir(victim).entryList(QDir::AllEntries | QDir::NoDotAndDotDot), before);
    QCOMPARE(bytes(victim + QStringLiteral("/project.toml")), toml);
    // A leading "..", or one after a folder that exists, names a folder the checks see as the
    // writes will: still allowed.
    QCOMPARE(cas::upAfterName("../runs/x"), std::nullopt);
    QCOMPARE(cas::upAfterName("./runs/./x"), std::nullopt);
    QCOMPARE(cas::upAfterName((victim + QStringLiteral("/../x")).toStdString()), std::nullopt);
  }
};

QTEST_GUILESS_MAIN(TestHostileInput)
#include "test_hostile_input.moc"
