// The process's environment as an attacker or a half-set-up machine leaves it: CAS_CUDA_PLUGIN
// and CAS_MPI_PLUGIN naming a named pipe, a file that is no library, 5000 bytes or escape
// sequences; runtime.device = "cuda" (in project.toml, by --set or in a run's config.toml) where
// CUDA is unavailable. Each is refused with one sentence that quotes what it was given, cut, in
// bounded time, and leaves nothing behind. (Files and arguments: test_hostile_input.)
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QTest>

#include <sys/stat.h>
#include <unistd.h>

#include <utility>

#include "support/hostile_files.hpp"
#include "support/source_dir.hpp"

using namespace cas::test::hostile;  // support/hostile_files.hpp

class TestHostileEnvironment : public HostileSuite {
  Q_OBJECT

 private slots:
  // Hardening 3, item 8: CAS_CUDA_PLUGIN naming a named pipe made every command wait forever
  // (dlopen opened it, waiting for a writer), `devices` and --device cpu alike. It is checked
  // to be a regular file first, as every file read is, and named for what it is.
  void aPluginThatIsNoFileIsNamed() {
    const QString fifo = dir_.filePath(QStringLiteral("plugin-fifo"));
    QCOMPARE(::mkfifo(qPrintable(fifo), 0644), 0);
    for (const QStringList& args : {QStringList{QStringLiteral("devices")},
                                    QStringList{QStringLiteral("check"), cas::test::sourcePath(QStringLiteral("projects/tictactoe-alphazero"))}}) {
      QProcess p;
      QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
      environment.insert(QStringLiteral("CAS_CUDA_PLUGIN"), fifo);
      p.setProcessEnvironment(environment);
      p.start(kCli, args);
      const bool finished = p.waitForFinished(20000);
      if (!finished) p.kill();
      QVERIFY2(finished, qPrintable(args.join(QLatin1Char(' '))));
      QCOMPARE(p.exitCode(), 0);
      if (args.first() == QLatin1String("devices"))
        QVERIFY2(QString::fromUtf8(p.readAllStandardOutput() + p.readAllStandardError())
                     .contains(QStringLiteral("'%1' is a named pipe (FIFO), not a regular file; the CUDA backend plugin must be a regular file").arg(fifo)),
                 qPrintable(args.join(QLatin1Char(' '))));
    }
  }

  // Hardening, fourth probe: runtime.device = "cuda" (in project.toml or by --set) trained on the
  // CPU without a word where CUDA was unavailable, though --device cuda is refused; it is refused
  // the same way, naming runtime.device, before the run's folder is made.
  void runtimeDeviceCudaIsRefusedWithoutCuda() {
    const QString folder = project(QStringLiteral("device-cuda"), kHeader + "[runtime]\ndevice = \"cuda\"\n");
    const QString plain = project(QStringLiteral("device-auto"), kHeader);
    const QString out = dir_.filePath(QStringLiteral("device-cuda-run"));
    for (const QStringList& args : {QStringList{folder}, QStringList{plain, QStringLiteral("--set"), QStringLiteral("runtime.device=cuda")}}) {
      QProcess p;
      QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
      environment.insert(QStringLiteral("CAS_CUDA_PLUGIN"), dir_.filePath(QStringLiteral("no-such-plugin.so")));  // no CUDA, whatever the machine
      p.setProcessEnvironment(environment);
      p.start(kCli, QStringList{QStringLiteral("train")} + args + QStringList{QStringLiteral("--iterations"), QStringLiteral("1"), QStringLiteral("--out"), out});
      QVERIFY(p.waitForFinished(60000));
      const QString err = QString::fromUtf8(p.readAllStandardError());
      QCOMPARE(p.exitCode(), 1);
      QVERIFY2(err.startsWith(QStringLiteral("error: runtime.device = 'cuda' (in %1/project.toml or --set): CUDA").arg(args.first())), qPrintable(err));
      QVERIFY2(err.endsWith(QStringLiteral("; set runtime.device = \"auto\" to train on the CPU where CUDA is unavailable, or give --device cpu "
                                           "(nothing was changed)\n")),
               qPrintable(err));
      QVERIFY(!QFileInfo::exists(out));
    }
    // A run whose config.toml records runtime.device = "cuda" is refused on resume alike,
    // unchanged, and --device cpu trains it on.
    auto train = [&](const QStringList& args) {
      QProcess p;
      QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
      environment.insert(QStringLiteral("CAS_CUDA_PLUGIN"), dir_.filePath(QStringLiteral("no-such-plugin.so")));
      p.setProcessEnvironment(environment);
      p.start(kCli, QStringList{QStringLiteral("train")} + args + QStringList{QStringLiteral("--iterations"), QStringLiteral("1")});
      p.waitForFinished(60000);
      return std::pair{p.exitCode(), QString::fromUtf8(p.readAllStandardError())};
    };
    const QString run = dir_.filePath(QStringLiteral("device-recorded-run"));
    QCOMPARE(train({plain, QStringLiteral("--out"), run}).first, 0);
    QFile config(run + QStringLiteral("/config.toml"));
    QVERIFY(config.open(QIODevice::ReadOnly));
    QByteArray text = config.readAll();
    config.close();
    const QByteArray automatic = "[runtime]\ndevice = \"auto\"";
    QVERIFY2(text.contains(automatic), text.constData());
    write(run + QStringLiteral("/config.toml"), QByteArray(text).replace(automatic, "[runtime]\ndevice = \"cuda\""));
    const auto [status, err] = train({QStringLiteral("--resume"), run});
    QCOMPARE(status, 1);
    QVERIFY2(err.startsWith(QStringLiteral("error: %1 trains with runtime.device = 'cuda' (its config.toml): CUDA").arg(run)) &&
                 err.endsWith(QStringLiteral("; give --device cpu to train it on the CPU (nothing was changed)\n")),
             qPrintable(err));
    QVERIFY(!QFileInfo::exists(run + QStringLiteral("/checkpoints/iter-00000002.ckpt")));
    QCOMPARE(train({QStringLiteral("--resume"), run, QStringLiteral("--device"), QStringLiteral("cpu")}).first, 0);
    QVERIFY(QFileInfo::exists(run + QStringLiteral("/checkpoints/iter-00000002.ckpt")));
  }

  // Hardening, fourth probe: CAS_CUDA_PLUGIN's value was printed raw by `devices` (escape
  // sequences, newlines) and whole (5000 bytes, twice); it is escaped and cut. A name without a
  // '/' was checked in the current folder but looked for by dlopen on the library path; the file
  // checked is the file loaded.
  void pluginPathsAreShownSafelyAndLoadedAsChecked() {
    const QString cwd = dir_.filePath(QStringLiteral("plugin-cwd"));
    QVERIFY(QDir().mkpath(cwd));
    write(cwd + QStringLiteral("/txt1"), "not a library\n");
    auto devices = [&](const QString& plugin) {
      QProcess p;
      QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
      environment.insert(QStringLiteral("CAS_CUDA_PLUGIN"), plugin);
      p.setProcessEnvironment(environment);
      p.setWorkingDirectory(cwd);
      p.start(kCli, {QStringLiteral("devices")});
      p.waitForFinished(20000);
      return QString::fromUtf8(p.readAllStandardOutput() + p.readAllStandardError());
    };
    QString out = devices(QStringLiteral("\x1b[31mRED\nx"));
    QVERIFY2(!out.contains(QLatin1Char('\x1b')) && out.contains(QStringLiteral("'./\\x1b[31mRED\\nx'")), qPrintable(out));
    out = devices(QStringLiteral("/") + QString(5000, QLatin1Char('a')));
    QVERIFY2(out.size() < 1500 && out.contains(QStringLiteral("... (5001 bytes)'")), qPrintable(out.left(2000)));
    out = devices(QStringLiteral("txt1"));
    QVERIFY2(out.contains(QStringLiteral("'./txt1'")) && !out.contains(QStringLiteral("cannot open shared object file")), qPrintable(out));
  }

  // Hardening, fourth probe (left then): CAS_MPI_PLUGIN's value was printed whole, and an escape
  // sequence in it reached the terminal through dlopen's message; it is quoted and cut as
  // CAS_CUDA_PLUGIN's is.
  void mpiPluginPathIsShownSafely() {
    const QString folder = project(QStringLiteral("mpi-plugin"), kHeader);
    auto train = [&](const QString& plugin) {
      QProcess p;
      QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
      environment.insert(QStringLiteral("CAS_MPI_PLUGIN"), plugin);
      environment.insert(QStringLiteral("OMPI_COMM_WORLD_SIZE"), QStringLiteral("2"));  // as mpirun starts a rank
      p.setProcessEnvironment(environment);
      p.setWorkingDirectory(folder);
      p.start(kCli, {QStringLiteral("train"), folder, QStringLiteral("--device"), QStringLiteral("cpu"), QStringLiteral("--iterations"), QStringLiteral("1")});
      p.waitForFinished(20000);
      return QString::fromUtf8(p.readAllStandardOutput() + p.readAllStandardError());
    };
    QString out = train(QStringLiteral("/") + QString(5000, QLatin1Char('a')));
    QVERIFY2(out.size() < 1500 && out.contains(QStringLiteral("... (5001 bytes)'")), qPrintable(out.left(2000)));
    write(folder + QStringLiteral("/\x1b[31mRED.so"), "not a library\n");
    out = train(QStringLiteral("\x1b[31mRED.so"));  // loaded as ./NAME, which dlopen's message names
    QVERIFY2(!out.contains(QLatin1Char('\x1b')) && out.contains(QStringLiteral("'./\\x1b[31mRED.so'")), qPrintable(out));
  }
};

QTEST_GUILESS_MAIN(TestHostileEnvironment)
#include "test_hostile_environment.moc"
