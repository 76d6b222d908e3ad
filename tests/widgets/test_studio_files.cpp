// The studio's files, under Xvfb: editor tabs keep policy.pdl and project.toml open together,
// Save As writes atomically and goes on editing the new file, File > New Project makes a loadable
// project from a template in a chosen folder (and refuses a non-empty one, writing nothing),
// hover docs for built-ins come from docs/pdl.md, and the Help menu's reference and shortcuts.
// The example project is copied to a temporary folder, so nothing touches the source tree.
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMenuBar>
#include <QSettings>
#include <QStandardPaths>
#include <QTabBar>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QTextBrowser>
#include <QToolTip>

#include "core/pdl/compiler.hpp"
#include "core/project/project.hpp"
#include "widgets/editor/code_editor.hpp"
#include "widgets/editor/pdl_builtin_docs.hpp"
#include "widgets/editor/pdl_editor.hpp"
#include "widgets/help_menu.hpp"
#include "widgets/main_window.hpp"
#include "widgets/new_project_dialog.hpp"
#include "widgets/project_panel.hpp"
#include "support/price_fixture.hpp"
#include "support/source_dir.hpp"

using namespace cas::widgets;

static const QString kProjects = cas::test::sourcePath(QStringLiteral("projects"));

class TestStudioFiles : public QObject {
  Q_OBJECT

  QTemporaryDir folder_;
  QString project_;

  QByteArray read(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
  }

 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("CUDA-Agent-Test"));
    QCoreApplication::setApplicationName(QStringLiteral("test_studio_files"));
    QSettings().clear();
    QVERIFY(folder_.isValid());
    project_ = folder_.filePath(QStringLiteral("ttt"));
    QCOMPARE(createProjectFromTemplate(kProjects + QStringLiteral("/tictactoe-alphazero"), project_), QString());
  }

  void tabsKeepThePolicyAndProjectTomlOpen() {
    MainWindow w;
    w.resize(1280, 800);
    w.show();
    QVERIFY(w.openProject(project_));
    PdlEditor* editor = w.policyEditor();
    QTabBar* tabs = editor->tabBar();
    QCOMPARE(tabs->count(), 1);
    QCOMPARE(tabs->tabText(0), QStringLiteral("policy.pdl"));
    editor->editor()->insertAt(QStringLiteral("# an edit kept while project.toml is open\n"), 0, 0);
    QVERIFY(editor->isModified());
    QCOMPARE(tabs->tabText(0), QStringLiteral("policy.pdl ●"));
    // The Project dock's file list opens project.toml beside the policy, not in its place.
    emit w.projectPanel()->fileActivated(project_ + QStringLiteral("/project.toml"));
    QCOMPARE(tabs->count(), 2);
    QCOMPARE(tabs->currentIndex(), 1);
    QCOMPARE(tabs->tabText(1), QStringLiteral("project.toml"));
    QVERIFY(editor->editor()->text().contains(QStringLiteral("environment = \"tictactoe\"")));
    QVERIFY(!editor->isModified());
    QVERIFY(editor->anyModified());
    QCOMPARE(editor->openFiles(), (QStringList{project_ + QStringLiteral("/policy.pdl"), project_ + QStringLiteral("/project.toml")}));
    // Back to the policy: the edit is still there, and it compiles with its layer hints.
    tabs->setCurrentIndex(0);
    QVERIFY(editor->editor()->text().startsWith(QStringLiteral("# an edit kept")));
    QVERIFY(editor->isModified());
    QVERIFY2(editor->layerHint(7).startsWith(QStringLiteral("[32,3,3]")), qPrintable(editor->layerHint(7)));
    // Opening a file that is open brings its tab to the front.
    QVERIFY(editor->openFile(project_ + QStringLiteral("/project.toml")));
    QCOMPARE(tabs->count(), 2);
    QCOMPARE(tabs->currentIndex(), 1);
    // Closing project.toml's tab leaves the policy, edit and all.
    QVERIFY(editor->closeTab(1));
    QCOMPARE(tabs->count(), 1);
    QVERIFY(editor->editor()->text().startsWith(QStringLiteral("# an edit kept")));
    editor->editor()->undo();
    QVERIFY(!editor->isModified());
  }

  void saveAsWritesTheNewFileAndEditsIt() {
    PdlEditor editor;
    editor.resize(1000, 600);
    const cas::project::LoadResult loaded = cas::project::loadProject(project_.toStdString());
    QVERIFY(loaded.project);
    editor.setProject(*loaded.project);
    QVERIFY(editor.openFile(project_ + QStringLiteral("/policy.pdl")));
    editor.show();
    const QByteArray original = read(project_ + QStringLiteral("/policy.pdl"));
    editor.editor()->insertAt(QStringLiteral("# a variant\n"), 0, 0);
    const QString variant = project_ + QStringLiteral("/variant.pdl");
    QVERIFY(editor.saveAs(variant));
    QCOMPARE(read(variant), editor.editor()->text().toUtf8());
    QVERIFY(read(variant).startsWith("# a variant\n"));
    QCOMPARE(read(project_ + QStringLiteral("/policy.pdl")), original);  // the original is untouched
    QCOMPARE(editor.currentFile(), QFileInfo(variant).absoluteFilePath());
    QCOMPARE(editor.tabBar()->tabText(0), QStringLiteral("variant.pdl"));
    QVERIFY(!editor.isModified());
    QVERIFY(editor.marks().empty());  // still compiled as PDL
    // No temporary file of the atomic write is left behind.
    for (const QString& name : QDir(project_).entryList(QDir::Files)) QVERIFY2(!name.contains(QStringLiteral(".tmp")), qPrintable(name));
    // Saving again writes the new file.
    editor.editor()->insertAt(QStringLiteral("# again\n"), 0, 0);
    QVERIFY(editor.save());
    QVERIFY(read(variant).startsWith("# again\n# a variant\n"));
    QVERIFY(QFile::remove(variant));
  }

  void newProjectFromATemplateLoads() {
    const QStringList templates = projectTemplates(kProjects);
    QVERIFY2(templates.size() >= 3, qPrintable(templates.join(u',')));
    for (const QString& example : templates) {
      // trading-ppo's series is fetched (scripts/trading-data), not committed: a synthetic one stands in.
      const QString t = cas::test::loadableExample(example, folder_.filePath(QStringLiteral("examples")));
      const QString target = folder_.filePath(QStringLiteral("new/") + QFileInfo(t).fileName() + QStringLiteral("-copy"));
      QCOMPARE(createProjectFromTemplate(t, target), QString());
      const cas::project::LoadResult loaded = cas::project::loadProject(target.toStdString());
      QVERIFY2(loaded.project, qPrintable(target));
      QCOMPARE(QString::fromStdString(loaded.project->name), QFileInfo(target).fileName());  // named after its folder
      QCOMPARE(read(target + QStringLiteral("/policy.pdl")), read(t + QStringLiteral("/policy.pdl")));
    }
    // A non-empty folder is refused, and nothing is written into it.
    const QString occupied = folder_.filePath(QStringLiteral("occupied"));
    QVERIFY(QDir().mkpath(occupied));
    QFile note(occupied + QStringLiteral("/notes.txt"));
    QVERIFY(note.open(QIODevice::WriteOnly));
    note.write("mine\n");
    note.close();
    const QString refusal = createProjectFromTemplate(templates.first(), occupied);
    QVERIFY2(refusal.contains(QStringLiteral("is not empty")), qPrintable(refusal));
    QCOMPARE(QDir(occupied).entryList(QDir::Files), QStringList{QStringLiteral("notes.txt")});
  }

  void newProjectDialogMakesAndOpensTheProject() {
    MainWindow w;
    w.show();
    NewProjectDialog dialog(kProjects, &w);
    QVERIFY(dialog.templateList()->count() >= 3);
    QVERIFY(dialog.templateList()->currentItem());
    // The quick example is chosen, not the first by name (connect4-alphazero).
    QCOMPARE(QFileInfo(dialog.templateList()->currentItem()->data(Qt::UserRole).toString()).fileName(), QStringLiteral("tictactoe-alphazero"));
    // A non-empty folder: the dialog stays open and says why.
    dialog.folderEdit()->setText(project_);
    dialog.accept();
    QVERIFY(dialog.createdFolder().isEmpty());
    QVERIFY2(dialog.problemLabel()->text().contains(QStringLiteral("is not empty")), qPrintable(dialog.problemLabel()->text()));
    const QString target = folder_.filePath(QStringLiteral("from-dialog"));
    dialog.folderEdit()->setText(target);
    QVERIFY(dialog.problemLabel()->text().isEmpty());
    dialog.accept();
    QCOMPARE(dialog.result(), int(QDialog::Accepted));
    QCOMPARE(dialog.createdFolder(), target);
    QVERIFY(w.openProject(dialog.createdFolder()));
    QVERIFY(w.windowTitle().startsWith(QStringLiteral("from-dialog")));
    QVERIFY(w.policyEditor()->marks().empty());
  }

  void hoverShowsABuiltinsDocumentation() {
    // Every built-in the compiler knows is documented in docs/pdl.md.
    const QStringList documented = pdl_builtin_docs::documentedNames();
    for (const auto& b : cas::pdl::builtinSignatures())
      QVERIFY2(documented.contains(QString::fromStdString(b.name)), b.name.c_str());
    const QString dense = pdl_builtin_docs::documentation(QStringLiteral("dense"));
    QVERIFY2(dense.contains(QStringLiteral("Layers with parameters")) && dense.contains(QStringLiteral("<code>[units]</code>")) &&
                 dense.contains(QStringLiteral("flattens its input first")),
             qPrintable(dense));
    QVERIFY(pdl_builtin_docs::documentation(QStringLiteral("policy")).isEmpty());

    // The mouse resting on `conv2d` in the editor shows that documentation.
    PdlEditor editor;
    editor.resize(1000, 600);
    const cas::project::LoadResult loaded = cas::project::loadProject(project_.toStdString());
    QVERIFY(loaded.project);
    editor.setProject(*loaded.project);
    QVERIFY(editor.openFile(project_ + QStringLiteral("/policy.pdl")));
    editor.show();
    QVERIFY(QTest::qWaitForWindowExposed(&editor));
    CodeEditor* code = editor.codeEditor();
    const int position = int(code->text().toUtf8().indexOf("conv2d(obs")) + 2;
    const int x = int(code->SendScintilla(QsciScintillaBase::SCI_POINTXFROMPOSITION, 0UL, long(position)));
    const int y = int(code->SendScintilla(QsciScintillaBase::SCI_POINTYFROMPOSITION, 0UL, long(position)));
    emit code->SCN_DWELLSTART(position, x, y + 4);
    QTRY_VERIFY(QToolTip::isVisible());
    QVERIFY2(QToolTip::text().contains(QStringLiteral("<b>conv2d</b>")) && QToolTip::text().contains(QStringLiteral("padding")),
             qPrintable(QToolTip::text()));
    QToolTip::hideText();
  }

  void helpShowsTheReferenceAndTheShortcuts() {
    MainWindow w;
    PdlReferenceDialog reference(&w);
    QVERIFY(reference.browser()->toPlainText().contains(QStringLiteral("Built-ins")));
    ShortcutsDialog shortcuts(&w);
    QStringList rows;
    for (int r = 0; r < shortcuts.table()->rowCount(); ++r)
      rows << shortcuts.table()->item(r, 0)->text() + QStringLiteral(" = ") + shortcuts.table()->item(r, 1)->text();
    for (const QString& expected : {QStringLiteral("Ctrl+S = File > Save"), QStringLiteral("Ctrl+Shift+S = File > Save As..."),
                                    QStringLiteral("Ctrl+N = File > New Project..."), QStringLiteral("Ctrl+T = Run > Train"),
                                    QStringLiteral("F1 = Help > PDL Reference"), QStringLiteral("Ctrl+Space = Policy editor: complete the word at the cursor"),
                                    QStringLiteral("F12 = Search tree: show or hide the debug overlay")})
      QVERIFY2(rows.contains(expected), qPrintable(expected + QStringLiteral(" not in:\n") + rows.join(u'\n')));
    QStringList help;
    for (QAction* a : w.menuBar()->actions().last()->menu()->actions()) help << a->text();
    QVERIFY2(help.contains(QStringLiteral("&Documentation Folder")), qPrintable(help.join(u',')));
  }
};

QTEST_MAIN(TestStudioFiles)
#include "test_studio_files.moc"
