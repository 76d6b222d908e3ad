#include "widgets/runs/export_worker.hpp"

#include <exception>

namespace cas::widgets {

void ExportWorker::exportPolicy(const exports::ExportRequest& request) {
  exports::ExportResult result;
  try {
    result = exports::runExport(request);
  } catch (const std::exception& e) {  // out of memory, say: an exception must not leave this thread's event loop
    result.error = Diagnostic{Severity::Error, {}, e.what(), {}};
  }
  if (result.error) emit exportFailed(result);
  else emit exportFinished(result);
}

}  // namespace cas::widgets
