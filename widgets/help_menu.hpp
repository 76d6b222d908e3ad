#pragma once
// The Help menu's windows: the PDL reference (docs/pdl.md, embedded), the keyboard shortcuts
// (read from the window's menus and from the shortcuts that carry a description in whatsThis,
// so the list is the one the studio has), and the documentation folder in the file manager.
// Thread-safety: GUI thread only.
#include <QDialog>
#include <QString>

class QMainWindow;
class QMenu;
class QTableWidget;
class QTextBrowser;

namespace cas::widgets {

// The PDL reference, rendered from its Markdown.
class PdlReferenceDialog : public QDialog {
  Q_OBJECT
 public:
  explicit PdlReferenceDialog(QWidget* parent = nullptr);
  QTextBrowser* browser() const { return browser_; }

 private:
  QTextBrowser* browser_;
};

// Every keyboard shortcut of `window`: its menus' actions (with the menu they are in) and the
// QShortcuts under it that describe themselves in whatsThis.
class ShortcutsDialog : public QDialog {
  Q_OBJECT
 public:
  explicit ShortcutsDialog(QMainWindow* window);
  QTableWidget* table() const { return table_; }

 private:
  QTableWidget* table_;
};

// Adds PDL Reference, Keyboard Shortcuts and Documentation Folder to `menu`.
void addHelpActions(QMenu* menu, QMainWindow* window);

}  // namespace cas::widgets
