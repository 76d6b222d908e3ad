#include "widgets/help_menu.hpp"

#include <QAction>
#include <QCoreApplication>
#include <QDesktopServices>
#include <QDialogButtonBox>
#include <QHeaderView>
#include <QMainWindow>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QRegularExpression>
#include <QSet>
#include <QShortcut>
#include <QTableWidget>
#include <QTextBrowser>
#include <QUrl>
#include <QVBoxLayout>

#include <utility>
#include <vector>

#include "widgets/editor/pdl_builtin_docs.hpp"
#include "widgets/studio_folders.hpp"

namespace cas::widgets {

namespace {

QString plainText(QString menuText) {
  menuText.remove(QRegularExpression(QStringLiteral("&(?!&)")));
  return menuText.replace(QLatin1String("&&"), QLatin1String("&"));
}

// (menu path, action) for every action under `menu` that has a shortcut.
void collectActions(QMenu* menu, const QString& path, std::vector<std::pair<QString, QAction*>>& out) {
  for (QAction* a : menu->actions()) {
    if (QMenu* sub = a->menu()) collectActions(sub, path + QStringLiteral(" > ") + plainText(sub->title()), out);
    else if (!a->shortcut().isEmpty()) out.emplace_back(path, a);
  }
}

}  // namespace

PdlReferenceDialog::PdlReferenceDialog(QWidget* parent) : QDialog(parent), browser_(new QTextBrowser(this)) {
  setObjectName(QStringLiteral("pdlReferenceDialog"));
  setWindowTitle(tr("PDL Reference"));
  browser_->setOpenExternalLinks(true);
  browser_->setMarkdown(pdl_builtin_docs::referenceMarkdown());
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(browser_);
  layout->addWidget(buttons);
  resize(820, 640);
}

ShortcutsDialog::ShortcutsDialog(QMainWindow* window) : QDialog(window), table_(new QTableWidget(this)) {
  setObjectName(QStringLiteral("shortcutsDialog"));
  setWindowTitle(tr("Keyboard Shortcuts"));
  std::vector<std::pair<QString, QString>> rows;  // (keys, what they do)
  std::vector<std::pair<QString, QAction*>> actions;
  for (QAction* a : window->menuBar()->actions())
    if (QMenu* menu = a->menu()) collectActions(menu, plainText(menu->title()), actions);
  for (const auto& [path, action] : actions)
    rows.emplace_back(action->shortcut().toString(QKeySequence::NativeText), path + QStringLiteral(" > ") + plainText(action->text()));
  // Shortcuts outside the menus (completion in the editor, the search tree's overlay) say what
  // they do in whatsThis; one editor tab's is enough.
  QSet<QString> seen;
  for (QShortcut* s : window->findChildren<QShortcut*>()) {
    const QString keys = s->key().toString(QKeySequence::NativeText);
    if (s->whatsThis().isEmpty() || seen.contains(keys + s->whatsThis())) continue;
    seen.insert(keys + s->whatsThis());
    rows.emplace_back(keys, s->whatsThis());
  }
  table_->setObjectName(QStringLiteral("shortcutTable"));
  table_->setColumnCount(2);
  table_->setHorizontalHeaderLabels({tr("Keys"), tr("Command")});
  table_->setRowCount(int(rows.size()));
  for (int r = 0; r < int(rows.size()); ++r) {
    table_->setItem(r, 0, new QTableWidgetItem(rows[size_t(r)].first));
    table_->setItem(r, 1, new QTableWidgetItem(rows[size_t(r)].second));
  }
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->verticalHeader()->hide();
  table_->horizontalHeader()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
  table_->horizontalHeader()->setStretchLastSection(true);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(table_);
  layout->addWidget(buttons);
  resize(560, 480);
}

void addHelpActions(QMenu* menu, QMainWindow* window) {
  QAction* reference = menu->addAction(QCoreApplication::translate("cas::widgets::HelpMenu", "&PDL Reference"), window, [window] {
    auto* dialog = new PdlReferenceDialog(window);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->show();
  });
  reference->setObjectName(QStringLiteral("pdlReferenceAction"));
  reference->setShortcut(QKeySequence::HelpContents);
  QAction* shortcuts = menu->addAction(QCoreApplication::translate("cas::widgets::HelpMenu", "&Keyboard Shortcuts"), window, [window] {
    auto* dialog = new ShortcutsDialog(window);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->show();
  });
  shortcuts->setObjectName(QStringLiteral("shortcutsAction"));
  QAction* docs = menu->addAction(QCoreApplication::translate("cas::widgets::HelpMenu", "&Documentation Folder"), window, [window] {
    const QString folder = bundledFolder(QStringLiteral("docs"));
    if (folder.isEmpty() || !QDesktopServices::openUrl(QUrl::fromLocalFile(folder)))
      QMessageBox::information(window, QCoreApplication::translate("cas::widgets::HelpMenu", "Documentation Folder"),
                               folder.isEmpty() ? QCoreApplication::translate("cas::widgets::HelpMenu", "The docs folder was not found next to the studio or in its source tree.")
                                                : QCoreApplication::translate("cas::widgets::HelpMenu", "No file manager could be started. The documentation is in %1.").arg(folder));
  });
  docs->setObjectName(QStringLiteral("docsFolderAction"));
  docs->setToolTip(bundledFolder(QStringLiteral("docs")));
}

}  // namespace cas::widgets
