#pragma once
// The one translation of core's backend status (exec::BackendStatus) into the studio's words:
// the status bar, the kernels view and the generated-code view all show this sentence.
#include <QString>

#include "core/exec/backend.hpp"

namespace cas::widgets {

// "CPU backend (CUDA unavailable: …)", "CPU backend", the CUDA backend's own status text, or
// "No backend: …" when the choice cannot be met.
QString backendStatusText(const exec::BackendStatus& status);

}  // namespace cas::widgets
