// The studio's layout, under Xvfb: at 1280x800 the editor shows at least 80 columns of code with
// the layer hints visible beside it, the Log is a few lines high, a window that grows gives the
// space to the editor and the plots (not to the Project/Tuning column or the Log), and View >
// Reset Layout brings back the default arrangement and sizes after docks were hidden, floated
// and resized. CAS_LAYOUT_GRAB_DIR=folder saves what the window looked like at each size.
#include <QAction>
#include <QDockWidget>
#include <QSettings>
#include <QStandardPaths>
#include <QTest>

#include "widgets/editor/code_editor.hpp"
#include "widgets/editor/pdl_editor.hpp"
#include "widgets/main_window.hpp"
#include "support/source_dir.hpp"

using cas::widgets::CodeEditor;
using cas::widgets::MainWindow;

static const QString kExample = cas::test::sourcePath(QStringLiteral("projects/tictactoe-alphazero"));

namespace {

QDockWidget* dock(MainWindow& w, const char* name) { return w.findChild<QDockWidget*>(QLatin1String(name)); }

// Lets the window apply its default sizes (a zero-time timer after the first show, then a
// layout pass) or a resize.
void settle(MainWindow& w) {
  for (int i = 0; i < 5; ++i) {
    QCoreApplication::processEvents();
    QTest::qWait(40);
  }
  Q_UNUSED(w);
}

void grab(MainWindow& w, const QString& name) {
  const QByteArray dir = qgetenv("CAS_LAYOUT_GRAB_DIR");
  if (!dir.isEmpty()) w.grab().save(QString::fromLocal8Bit(dir) + u'/' + name);
}

}  // namespace

class TestStudioLayout : public QObject {
  Q_OBJECT
 private slots:
  void init() {
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("CUDA-Agent-Test"));
    QCoreApplication::setApplicationName(QStringLiteral("test_studio_layout"));
    QSettings().clear();  // each test starts from the default layout
  }

  // Issue 15's acceptance: at least 80 columns of code at 1280x800, with the hints visible.
  void eightyColumnsAt1280x800WithHintsVisible() {
    MainWindow w;
    w.resize(1280, 800);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(w.openProject(kExample));
    settle(w);
    QCOMPARE(w.size(), QSize(1280, 800));
    auto* code = w.policyEditor()->codeEditor();
    const int columns = code->visibleColumns();
    qInfo("1280x800: the editor shows %d columns of code (%.2f px a character); Project column %d px, editor dock %d px, "
          "Metrics %d px, Log %d px high",
          columns, code->characterWidth(), dock(w, "projectDock")->width(), dock(w, "policyDock")->width(),
          dock(w, "metricsDock")->width(), dock(w, "logDock")->height());
    grab(w, QStringLiteral("layout-1280x800.png"));
    QVERIFY2(columns >= 80, qPrintable(QString::number(columns)));
    // Every line of the policy and every hint is in view, each hint after the end of its code.
    QVERIFY(!code->lineHints().empty());
    QVERIFY2(code->SendScintilla(QsciScintillaBase::SCI_LINESONSCREEN) >= code->lines(), "not every line of the policy is in view");
    for (const auto& [line, hint] : code->lineHints()) {
      const QRect r = code->hintRect(line);
      QVERIFY2(!r.isNull(), qPrintable(hint));
      QVERIFY2(r.right() < code->viewport()->width(), qPrintable(QStringLiteral("line %1's hint is cut at the right edge: it ends at %2 of %3 px").arg(line).arg(r.right()).arg(code->viewport()->width())));
      const long end = code->SendScintilla(QsciScintillaBase::SCI_GETLINEENDPOSITION, static_cast<unsigned long>(line - 1));
      QVERIFY2(r.left() > code->SendScintilla(QsciScintillaBase::SCI_POINTXFROMPOSITION, 0UL, end), "a hint covers code");
    }
    // A shorter Log by default: a few lines, not a fifth of the window.
    QVERIFY2(dock(w, "logDock")->height() <= 110, qPrintable(QString::number(dock(w, "logDock")->height())));
    QVERIFY(dock(w, "metricsDock")->width() >= 270);
  }

  // Growing the window (1280x800 to 1920x1080, as maximising on a full-HD screen does) gives the
  // space to the editor and the plots; the Project/Tuning column and the Log keep their size.
  void growingGivesTheSpaceToTheEditorAndThePlots() {
    MainWindow w;
    w.resize(1280, 800);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(w.openProject(kExample));
    settle(w);
    const int project = dock(w, "projectDock")->width(), editor = dock(w, "policyDock")->width(), metrics = dock(w, "metricsDock")->width();
    const int log = dock(w, "logDock")->height(), editorHeight = dock(w, "policyDock")->height();
    w.resize(1920, 1080);
    settle(w);
    grab(w, QStringLiteral("layout-1920x1080.png"));
    qInfo("1920x1080: Project %d px (was %d), editor %d (was %d), Metrics %d (was %d), Log %d high (was %d); %d columns of code",
          dock(w, "projectDock")->width(), project, dock(w, "policyDock")->width(), editor, dock(w, "metricsDock")->width(), metrics,
          dock(w, "logDock")->height(), log, w.policyEditor()->codeEditor()->visibleColumns());
    QVERIFY(qAbs(dock(w, "projectDock")->width() - project) <= 2);
    QVERIFY(qAbs(dock(w, "logDock")->height() - log) <= 2);
    const int grownWidth = dock(w, "policyDock")->width() - editor + dock(w, "metricsDock")->width() - metrics;
    QVERIFY2(grownWidth >= 640 - 4, qPrintable(QString::number(grownWidth)));
    QVERIFY(dock(w, "metricsDock")->width() >= metrics + 120);  // the plots get a share
    QVERIFY(dock(w, "policyDock")->height() >= editorHeight + 280 - 4);
    // With the room, the generated code moves beside the editor without taking its 80 columns.
    QVERIFY(w.policyEditor()->generatedViewBeside());
    QVERIFY(w.policyEditor()->codeEditor()->visibleColumns() >= 80);
  }

  void resetLayoutRestoresTheDefaults() {
    MainWindow w;
    w.resize(1280, 800);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    settle(w);
    const int project = dock(w, "projectDock")->width(), editor = dock(w, "policyDock")->width(), log = dock(w, "logDock")->height();
    // Undo the layout: hide the Log, float the Project dock, bring the Search tree's tab in front
    // of the editor and squeeze the editor.
    dock(w, "logDock")->hide();
    dock(w, "projectDock")->setFloating(true);
    dock(w, "searchTreeDock")->raise();
    w.resizeDocks({dock(w, "policyDock")}, {400}, Qt::Horizontal);
    settle(w);
    QVERIFY(dock(w, "policyDock")->visibleRegion().isEmpty() || dock(w, "policyDock")->width() < editor);
    auto* reset = w.findChild<QAction*>(QStringLiteral("resetLayoutAction"));
    QVERIFY(reset);
    reset->trigger();
    settle(w);
    for (const char* name : {"projectDock", "tuningDock", "policyDock", "metricsDock", "logDock"}) {
      QVERIFY2(dock(w, name)->isVisible(), name);
      QVERIFY2(!dock(w, name)->isFloating(), name);
    }
    QCOMPARE(w.dockWidgetArea(dock(w, "projectDock")), Qt::LeftDockWidgetArea);
    QCOMPARE(w.dockWidgetArea(dock(w, "logDock")), Qt::BottomDockWidgetArea);
    QVERIFY(w.tabifiedDockWidgets(dock(w, "policyDock")).contains(dock(w, "searchTreeDock")));
    QVERIFY(!dock(w, "policyDock")->visibleRegion().isEmpty());  // the editor's tab is in front again
    QVERIFY2(qAbs(dock(w, "projectDock")->width() - project) <= 2, qPrintable(QString::number(dock(w, "projectDock")->width())));
    QVERIFY2(qAbs(dock(w, "policyDock")->width() - editor) <= 2, qPrintable(QString::number(dock(w, "policyDock")->width())));
    QVERIFY2(qAbs(dock(w, "logDock")->height() - log) <= 2, qPrintable(QString::number(dock(w, "logDock")->height())));
    QVERIFY(w.policyEditor()->codeEditor()->visibleColumns() >= 80);
  }
};

QTEST_MAIN(TestStudioLayout)
#include "test_studio_layout.moc"
