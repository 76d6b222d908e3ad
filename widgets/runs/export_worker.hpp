#pragma once
// File > Export...'s worker: runs one export through core (core/export/export_job.hpp) off the
// GUI thread, so that loading a run and generating the model never block the studio. The dialog
// moves it to a QThread of its own and talks to it in queued signals only.
// Thread-safety: an ExportWorker's slots run on its thread only, one at a time.
#include <QMetaType>
#include <QObject>

#include "core/export/export_job.hpp"

namespace cas::widgets {

class ExportWorker : public QObject {
  Q_OBJECT
 public slots:
  void exportPolicy(const cas::exports::ExportRequest& request);

 signals:
  void exportFinished(const cas::exports::ExportResult& result);  // every file of result.files written
  void exportFailed(const cas::exports::ExportResult& result);    // refused (result.error); nothing written
};

}  // namespace cas::widgets

Q_DECLARE_METATYPE(cas::exports::ExportRequest)
Q_DECLARE_METATYPE(cas::exports::ExportResult)
