#pragma once
// The Log dock: engine and studio messages, newest last, with a time stamp and severity.
#include <QPlainTextEdit>

namespace cas::widgets {

class LogPanel : public QPlainTextEdit {
  Q_OBJECT
 public:
  enum class Level { Info, Warning, Error };
  explicit LogPanel(QWidget* parent = nullptr);

 public slots:
  void appendMessage(cas::widgets::LogPanel::Level level, const QString& text);
};

}  // namespace cas::widgets
