#include "widgets/policy_view.hpp"

#include <QFile>
#include <QFileInfo>
#include <QFontDatabase>
#include <QLabel>
#include <QPlainTextEdit>
#include <QVBoxLayout>

namespace cas::widgets {

PolicyView::PolicyView(QWidget* parent) : QWidget(parent), banner_(new QLabel(this)), text_(new QPlainTextEdit(this)) {
  banner_->setWordWrap(true);
  banner_->setText(tr("Open a project to see its policy."));
  text_->setReadOnly(true);
  text_->setObjectName(QStringLiteral("policyText"));
  text_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  text_->setLineWrapMode(QPlainTextEdit::NoWrap);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addWidget(banner_);
  layout->addWidget(text_, 1);
}

bool PolicyView::openFile(const QString& path) {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly | QIODevice::Text)) {
    banner_->setText(tr("%1 cannot be read: %2").arg(path, f.errorString()));
    text_->clear();
    file_.clear();
    return false;
  }
  file_ = path;
  text_->setPlainText(QString::fromUtf8(f.readAll()));
  banner_->setText(tr("%1 — read-only: editing arrives with the PDL editor.").arg(QFileInfo(path).fileName()));
  return true;
}

}  // namespace cas::widgets
