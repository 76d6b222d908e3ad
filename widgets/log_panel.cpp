#include "widgets/log_panel.hpp"

#include <QTime>

namespace cas::widgets {

LogPanel::LogPanel(QWidget* parent) : QPlainTextEdit(parent) {
  setReadOnly(true);
  setMaximumBlockCount(10000);  // bounded: old lines go first
  setObjectName(QStringLiteral("logPanel"));
}

void LogPanel::appendMessage(Level level, const QString& text) {
  QString tag;
  switch (level) {
    case Level::Info: tag = tr("info"); break;
    case Level::Warning: tag = tr("warning"); break;
    case Level::Error: tag = tr("error"); break;
  }
  appendPlainText(QStringLiteral("%1 %2: %3").arg(QTime::currentTime().toString(QStringLiteral("HH:mm:ss")), tag, text));
}

}  // namespace cas::widgets
