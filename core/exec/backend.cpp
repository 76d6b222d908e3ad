#include "core/exec/backend.hpp"

namespace cas::exec {

BackendRegistry& BackendRegistry::instance() {
  static BackendRegistry registry;  // C++ guarantees one thread-safe initialisation
  return registry;
}

BackendRegistry::BackendRegistry() {
  entries_.push_back({"cpu", "CPU reference backend", makeCpuBackend(), {}});
  std::string reason;
  std::shared_ptr<Backend> cuda = loadCudaPlugin(&reason);
  entries_.push_back({"cuda", "CUDA backend", cuda, cuda ? std::string() : reason});
}

const BackendEntry* BackendRegistry::find(std::string_view id) const {
  for (const BackendEntry& e : entries_)
    if (e.id == id) return &e;
  return nullptr;
}

std::shared_ptr<Backend> BackendRegistry::select(std::string_view device, std::string* error) const {
  if (device == "auto") {
    const BackendEntry* cuda = find("cuda");
    return cuda && cuda->available() ? cuda->backend : find("cpu")->backend;
  }
  const BackendEntry* e = find(device);
  if (!e) {
    if (error) *error = "unknown device '" + std::string(device) + "'; expected auto, cpu or cuda";
    return nullptr;
  }
  if (!e->available()) {
    if (error) *error = e->title + " is unavailable: " + e->unavailableReason;
    return nullptr;
  }
  return e->backend;
}

std::shared_ptr<Backend> BackendRegistry::selectForGraphs(std::string_view device, std::string* error) const {
  std::shared_ptr<Backend> chosen = select(device, error);
  if (!chosen) return nullptr;
  if (auto why = chosen->cannotRunGraphs()) {
    if (device == "auto") return find("cpu")->backend;
    if (error) *error = *why;
    return nullptr;
  }
  return chosen;
}

std::string BackendRegistry::statusLine(std::string_view device) const {
  std::string error;
  std::shared_ptr<Backend> chosen = select(device, &error);
  if (!chosen) return "No backend: " + error;
  std::string line = chosen->statusText();
  const BackendEntry* cuda = find("cuda");
  if (chosen->id() == "cpu" && cuda && !cuda->available()) line += " (CUDA unavailable: " + cuda->unavailableReason + ")";
  return line;
}

}  // namespace cas::exec
