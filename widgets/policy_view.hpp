#pragma once
// The Policy editor dock. Until the PDL editor lands it shows the policy file read-only, and says
// so in one sentence above the text.
#include <QWidget>

class QLabel;
class QPlainTextEdit;

namespace cas::widgets {

class PolicyView : public QWidget {
  Q_OBJECT
 public:
  explicit PolicyView(QWidget* parent = nullptr);
  QPlainTextEdit* text() const { return text_; }
  QString currentFile() const { return file_; }

 public slots:
  // Returns false (and shows why) when the file cannot be read.
  bool openFile(const QString& path);

 private:
  QLabel* banner_;
  QPlainTextEdit* text_;
  QString file_;
};

}  // namespace cas::widgets
