#include "widgets/project_panel.hpp"

#include <QFileSystemModel>
#include <QHeaderView>
#include <QLabel>
#include <QTreeView>
#include <QVBoxLayout>

#include "core/env/environments.hpp"
#include "core/project/project.hpp"

namespace cas::widgets {

ProjectPanel::ProjectPanel(QWidget* parent)
    : QWidget(parent), summary_(new QLabel(this)), files_(new QTreeView(this)), model_(new QFileSystemModel(this)) {
  summary_->setWordWrap(true);
  summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  summary_->setText(tr("No project is open. Use File > Open Project."));
  model_->setReadOnly(true);
  files_->setModel(model_);
  files_->setObjectName(QStringLiteral("projectFiles"));
  files_->setHeaderHidden(true);
  for (int c = 1; c < model_->columnCount(); ++c) files_->hideColumn(c);
  files_->setVisible(false);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addWidget(summary_);
  layout->addWidget(files_, 1);
  connect(files_, &QTreeView::activated, this, [this](const QModelIndex& index) {
    if (!model_->isDir(index)) emit fileActivated(model_->filePath(index));
  });
}

void ProjectPanel::showProject(const project::Project& p) {
  const env::EnvironmentInfo* e = env::findEnvironment(p.environment);
  summary_->setText(tr("<b>%1</b><br>Environment: %2 (%3 actions)<br>Algorithm: %4")
                        .arg(QString::fromStdString(p.name).toHtmlEscaped(), QString::fromStdString(p.environment))
                        .arg(e ? e->actionCount : 0)
                        .arg(QString::fromStdString(p.algorithm)));
  const QString root = QString::fromStdString(std::filesystem::absolute(p.directory).lexically_normal().string());
  files_->setRootIndex(model_->setRootPath(root));
  files_->setVisible(true);
}

void ProjectPanel::showRejectedProject(const QString& folder, int errorCount) {
  summary_->setText(tr("%1 could not be opened: %n error(s), listed in the Log.", nullptr, errorCount).arg(folder));
  files_->setVisible(false);
}

}  // namespace cas::widgets
