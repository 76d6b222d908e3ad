// The studio shell, offscreen: docks, the example project, the status bar, persisted state,
// the parameter model, the zh_CN translation, and English's plural forms.
#include <QAbstractItemModelTester>
#include <QApplication>
#include <QDockWidget>
#include <QFile>
#include <QMap>
#include <QMenu>
#include <QMenuBar>
#include <Qsci/qsciscintilla.h>
#include <QSettings>
#include <QStandardPaths>
#include <QStatusBar>
#include <QLabel>
#include <QTableView>
#include <QTest>
#include <QTranslator>
#include <QTreeView>

#include "widgets/editor/pdl_editor.hpp"
#include "widgets/log_panel.hpp"
#include "widgets/main_window.hpp"
#include "widgets/metrics/kernel_view.hpp"
#include "widgets/project_panel.hpp"
#include "widgets/translations.hpp"
#include "widgets/tuning/parameter_table_model.hpp"
#include "widgets/tuning/tuning_panel.hpp"
#include "support/source_dir.hpp"

using cas::widgets::MainWindow;

static const QString kExample = cas::test::sourcePath(QStringLiteral("projects/tictactoe-alphazero"));

// The key after a single '&' in `text` (lower case), or a null QChar.
QChar mnemonicOf(const QString& text) {
  for (qsizetype i = 0; i + 1 < text.size(); ++i) {
    if (text[i] != QLatin1Char('&')) continue;
    if (text[i + 1] == QLatin1Char('&')) {
      ++i;
      continue;
    }
    return text[i + 1].toLower();
  }
  return {};
}

// The first clash of mnemonics among `actions` (a menu's, or the menu bar's) or inside any of
// their submenus, as "WHERE: 'A' and 'B' both take Alt+K"; empty when there is none.
QString mnemonicClash(const QList<QAction*>& actions, const QString& where) {
  QMap<QChar, QString> taken;
  for (QAction* a : actions) {
    if (a->isSeparator() || !a->isVisible()) continue;
    const QChar key = mnemonicOf(a->text());
    if (!key.isNull()) {
      if (taken.contains(key)) return QStringLiteral("%1: '%2' and '%3' both take Alt+%4").arg(where, taken[key], a->text(), key);
      taken[key] = a->text();
    }
    if (a->menu())
      if (const QString inner = mnemonicClash(a->menu()->actions(), a->text()); !inner.isEmpty()) return inner;
  }
  return {};
}

class TestMainWindow : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);  // QSettings go to a test location
    QCoreApplication::setOrganizationName(QStringLiteral("CUDA-Agent-Test"));
    QCoreApplication::setApplicationName(QStringLiteral("test_main_window"));
    QSettings().clear();
  }

  void hasEveryDock() {
    MainWindow w;
    for (const char* name : {"projectDock", "policyDock", "searchTreeDock", "metricsDock", "kernelsDock", "tuningDock", "logDock"})
      QVERIFY2(w.findChild<QDockWidget*>(QLatin1String(name)), name);
    QStringList menus;
    for (QAction* a : w.menuBar()->actions()) menus << a->text();
    QCOMPARE(menus, (QStringList{QStringLiteral("&File"), QStringLiteral("&Run"), QStringLiteral("&View"), QStringLiteral("&Help")}));
  }

  // View > Go To: Alt+6 brings the Kernels dock, a hidden tab behind Metrics, to the front with
  // the keyboard inside it; every dock has such a key.
  void goToKeysBringADockForward() {
    MainWindow w;
    w.show();
    w.activateWindow();  // a window shortcut needs the active window (there is no window manager to give it)
    QVERIFY(QTest::qWaitForWindowActive(&w));
    auto* kernels = w.findChild<QDockWidget*>(QStringLiteral("kernelsDock"));
    QVERIFY(kernels);
    QVERIFY(kernels->visibleRegion().isEmpty());  // behind the Metrics tab at first
    QSet<QKeySequence> keys;
    for (const char* name : {"projectDock", "tuningDock", "policyDock", "searchTreeDock", "metricsDock", "kernelsDock", "logDock", "runsDock",
                             "boardDock", "episodeDock"}) {
      auto* action = w.findChild<QAction*>(QLatin1String(name) + QStringLiteral("GoTo"));
      QVERIFY2(action && !action->shortcut().isEmpty(), name);
      keys.insert(action->shortcut());
    }
    QCOMPARE(keys.size(), 10);  // no two docks share a key
    QTest::keyClick(&w, Qt::Key_6, Qt::AltModifier);
    QTRY_VERIFY(!kernels->visibleRegion().isEmpty());
    QVERIFY(kernels->isAncestorOf(QApplication::focusWidget()) || QApplication::focusWidget() == kernels->widget());
  }

  void opensTheExampleProject() {
    MainWindow w;
    w.show();
    QVERIFY(w.openProject(kExample));
    QCOMPARE(w.windowTitle(), QStringLiteral("tictactoe-alphazero — CUDA-Agent Studio"));
    // The policy opens in the editor, unmodified and compiling.
    QsciScintilla* text = w.policyEditor()->editor();
    QVERIFY(!text->isReadOnly());
    QVERIFY(text->text().contains(QStringLiteral("def policy(obs):")));
    QVERIFY(!w.policyEditor()->isModified());
    QVERIFY(w.policyEditor()->marks().empty());
    // The backend is named in the status bar.
    QVERIFY2(w.backendStatusText().startsWith(QStringLiteral("CPU backend")) || w.backendStatusText().startsWith(QStringLiteral("CUDA: ")),
             qPrintable(w.backendStatusText()));
    // The project's files are listed (QFileSystemModel fills in asynchronously).
    QTreeView* files = w.projectPanel()->fileView();
    QTRY_VERIFY_WITH_TIMEOUT(files->model()->rowCount(files->rootIndex()) >= 3, 5000);
    QStringList names;
    for (int r = 0; r < files->model()->rowCount(files->rootIndex()); ++r)
      names << files->model()->index(r, 0, files->rootIndex()).data().toString();
    QVERIFY2(names.contains(QStringLiteral("policy.pdl")) && names.contains(QStringLiteral("project.toml")), qPrintable(names.join(',')));
    QVERIFY(w.logPanel()->toPlainText().contains(QStringLiteral("Opened project tictactoe-alphazero")));
  }

  void rejectedProjectGoesToTheLog() {
    MainWindow w;
    QVERIFY(!w.openProject(cas::test::sourcePath(QStringLiteral("no-such-project"))));
    QVERIFY2(w.logPanel()->toPlainText().contains(QStringLiteral("no-such-project does not exist; give a project folder (one holding project.toml)")),
             qPrintable(w.logPanel()->toPlainText()));
  }

  // Issue 13, item 11: a project named at start-up that does not exist opens nothing (not the
  // example), and the Log and the status bar say so.
  void aMissingStartupProjectOpensNothing() {
    MainWindow w;
    w.show();
    const QString missing = cas::test::sourcePath(QStringLiteral("no-such-project"));
    QVERIFY(!w.openAtStartup(missing, kExample));
    const QString said = QStringLiteral("%1 does not exist; no project was opened. Open one with File > Open Project.").arg(missing);
    QVERIFY2(w.logPanel()->toPlainText().contains(said), qPrintable(w.logPanel()->toPlainText()));
    // The whole message, or (a long checkout path, a long backend label) its start, cut where the
    // backend's label begins.
    const QString shown = w.statusBar()->currentMessage();
    QVERIFY2(shown == said || (shown.endsWith(QChar(0x2026)) && said.startsWith(shown.chopped(1))), qPrintable(shown));
    // In a narrow window the message is cut to the room left of the backend's label, not drawn
    // under it.
    w.resize(700, 500);
    QVERIFY(!w.openAtStartup(missing, kExample));
    const QString cut = w.statusBar()->currentMessage();
    QVERIFY2(cut.endsWith(QChar(0x2026)) && said.startsWith(cut.chopped(1)), qPrintable(cut));
    QVERIFY(w.statusBar()->fontMetrics().horizontalAdvance(cut) < w.statusBar()->width() - w.findChild<QLabel*>(QStringLiteral("backendStatus"))->width());
    QVERIFY(w.policyEditor()->editor()->text().isEmpty());
    QVERIFY(!w.windowTitle().contains(QStringLiteral("tictactoe")));
    QVERIFY(w.openAtStartup(QString(), kExample));  // nothing named, no recent project: the example
    QCOMPARE(w.windowTitle(), QStringLiteral("tictactoe-alphazero — CUDA-Agent Studio"));
  }

  // The Tuning dock lists the parameters the project's algorithm reads: a PPO project's own
  // section, the checkpoint interval and the runtime's; an AlphaZero project's every other one.
  void tuningShowsTheAlgorithmsParameters() {
    MainWindow w;
    auto shown = [&] {
      QStringList names;
      QTableView* table = w.tuningPanel()->table();
      for (int row = 0; row < table->model()->rowCount(); ++row)
        if (!table->isRowHidden(row)) names << table->model()->index(row, 0).data().toString();
      return names;
    };
    QVERIFY(w.openProject(cas::test::sourcePath(QStringLiteral("projects/cartpole-ppo"))));
    const QStringList ppo = shown();
    QVERIFY(ppo.contains(QStringLiteral("ppo.clip")) && ppo.contains(QStringLiteral("runtime.seed")) && ppo.contains(QStringLiteral("train.checkpoint_every")));
    QVERIFY(!ppo.contains(QStringLiteral("search.c_puct")) && !ppo.contains(QStringLiteral("train.batch_size")));
    QVERIFY(w.openProject(kExample));
    const QStringList alphaZero = shown();
    QVERIFY(alphaZero.contains(QStringLiteral("search.c_puct")) && alphaZero.contains(QStringLiteral("train.batch_size")));
    QVERIFY(!alphaZero.contains(QStringLiteral("ppo.clip")));
  }

  void recentProjectsPersist() {
    {
      MainWindow w;
      QVERIFY(w.openProject(kExample));
      w.close();
    }
    MainWindow again;
    QCOMPARE(again.recentProjects().value(0), QFileInfo(kExample).absoluteFilePath());
  }

  void parameterModelIsConsistent() {
    MainWindow w;
    QVERIFY(w.openProject(kExample));
    auto* model = w.parameterModel();
    QAbstractItemModelTester tester(model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QVERIFY(model->rowCount() > 10);
    bool found = false;
    for (int r = 0; r < model->rowCount(); ++r) {
      if (model->index(r, 0).data().toString() == QLatin1String("search.c_puct")) {
        found = true;
        QCOMPARE(model->index(r, 1).data().toString(), QStringLiteral("1.5"));
        QCOMPARE(model->index(r, 3).data().toString(), QStringLiteral("live"));
        QVERIFY(!model->index(r, 0).data(Qt::ToolTipRole).toString().isEmpty());
      }
    }
    QVERIFY(found);
  }

  void vulkanIsNeverLoaded() {
    MainWindow w;
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QFile maps(QStringLiteral("/proc/self/maps"));
    QVERIFY(maps.open(QIODevice::ReadOnly));
    QVERIFY(!maps.readAll().contains("libvulkan"));
  }

  // Counted messages read as English does: "1 value", "2 values", not "value(s)".
  void englishCountsInTheSingularAndPlural() {
    QCOMPARE(cas::widgets::installTranslations(*QCoreApplication::instance(), QStringLiteral("en")), QStringLiteral("en"));
    cas::widgets::ParameterTableModel model;
    model.setProjectValues(cas::params::ParameterSet());
    cas::widgets::TuningPanel tuning(&model, nullptr);
    cas::params::ParameterSet run;
    QVERIFY(!run.set("search.c_puct", 2.5));
    model.showRunValues(run, QStringLiteral("run-a"));
    QVERIFY2(tuning.sourceText().contains(QStringLiteral("differs from project.toml (1 value);")), qPrintable(tuning.sourceText()));
    QVERIFY(!run.set("search.simulations", std::int64_t(7)));
    model.showRunValues(run, QStringLiteral("run-a"));
    QVERIFY2(tuning.sourceText().contains(QStringLiteral("differs from project.toml (2 values);")), qPrintable(tuning.sourceText()));
    for (QTranslator* t : QCoreApplication::instance()->findChildren<QTranslator*>()) QCoreApplication::removeTranslator(t);
    model.showRunValues(run, QStringLiteral("run-a"));  // without the catalogue, the source text's "(s)" shows
    QVERIFY2(tuning.sourceText().contains(QStringLiteral("(2 value(s));")), qPrintable(tuning.sourceText()));
  }

  // Every menu's mnemonics are unique (the menu bar's among themselves, each menu's actions and
  // submenus), in English and in zh_CN: Alt+P once reached Pause and Step alike.
  void menuMnemonicsAreUnique() {
    for (const QString& language : {QString(), QStringLiteral("zh_CN")}) {
      if (!language.isEmpty()) QCOMPARE(cas::widgets::installTranslations(*QCoreApplication::instance(), language), language);
      MainWindow w;
      QVERIFY(w.openProject(kExample));
      const QString clash = mnemonicClash(w.menuBar()->actions(), QStringLiteral("menu bar"));
      for (QTranslator* t : QCoreApplication::instance()->findChildren<QTranslator*>()) QCoreApplication::removeTranslator(t);
      QVERIFY2(clash.isEmpty(), qPrintable(language + QLatin1Char(' ') + clash));
    }
  }

  void followsChineseTranslation() {
    QCOMPARE(cas::widgets::installTranslations(*QCoreApplication::instance(), QStringLiteral("zh_CN")), QStringLiteral("zh_CN"));
    MainWindow w;
    QCOMPARE(w.windowTitle(), QStringLiteral("CUDA-Agent 工作室"));
    QVERIFY(w.openProject(kExample));
    QVERIFY2(w.backendStatusText().startsWith(QStringLiteral("CPU 后端")) || w.backendStatusText().startsWith(QStringLiteral("CUDA: ")),
             qPrintable(w.backendStatusText()));
    // The Kernels dock names the CPU backend as the status bar does, in Chinese too.
    if (w.backendStatusText().startsWith(QStringLiteral("CPU 后端")))
      QVERIFY2(w.kernelView()->explanation().contains(w.backendStatusText()), qPrintable(w.kernelView()->explanation()));
    for (QTranslator* t : QCoreApplication::instance()->findChildren<QTranslator*>()) QCoreApplication::removeTranslator(t);
  }
};

QTEST_MAIN(TestMainWindow)
#include "test_main_window.moc"
