#include "widgets/metrics/backend_status.hpp"

#include <QCoreApplication>

namespace cas::widgets {

QString backendStatusText(const exec::BackendStatus& status) {
  if (!status.backend)
    return QCoreApplication::translate("cas::widgets::BackendStatus", "No backend: %1").arg(QString::fromStdString(status.refusal));
  // The CUDA backend names its device ("CUDA: NVIDIA H200, sm_90, 132 SMs"): a name, not prose.
  if (status.backend->id() != "cpu") return QString::fromStdString(status.backend->statusText());
  if (status.cudaUnavailable.empty()) return QCoreApplication::translate("cas::widgets::BackendStatus", "CPU backend");
  return QCoreApplication::translate("cas::widgets::BackendStatus", "CPU backend (CUDA unavailable: %1)")
      .arg(QString::fromStdString(status.cudaUnavailable));
}

}  // namespace cas::widgets
