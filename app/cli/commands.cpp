#include "app/cli/commands.hpp"

#include <cstdio>
#include <iostream>

#include "core/env/environments.hpp"
#include "core/exec/backend.hpp"
#include "core/project/project.hpp"

namespace cas::cli {

int runDevices() {
  const auto& registry = exec::BackendRegistry::instance();
  for (const exec::BackendEntry& e : registry.entries()) {
    std::cout << e.id << ": " << e.title << " — " << (e.available() ? "available" : "unavailable") << "\n";
    if (!e.available()) {
      std::cout << "  reason: " << e.unavailableReason << "\n";
      continue;
    }
    for (const auto& [name, value] : e.backend->properties()) std::cout << "  " << name << ": " << value << "\n";
    if (auto report = e.backend->probe()) {
      std::printf("  probe: %s — %s (NVRTC compile %.1f ms, run %.3f ms)\n", report->passed ? "passed" : "FAILED",
                  report->summary.c_str(), report->compileMs, report->runMs);
      if (!report->passed) return 1;
    }
  }
  std::cout << "in use by default: " << registry.statusLine("auto") << "\n";
  return 0;
}

static std::string shapeText(const std::vector<int>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

int runCheck(const std::vector<std::string>& paths) {
  int status = 0;
  for (const std::string& path : paths) {
    project::LoadResult result = project::loadProject(path);
    for (const Diagnostic& d : result.diagnostics.items()) std::cerr << formatDiagnostic(d, result.source) << "\n";
    if (!result.project) {
      std::cerr << path << ": rejected (" << result.diagnostics.errorCount() << " error"
                << (result.diagnostics.errorCount() == 1 ? "" : "s") << ")\n";
      status = 1;
      continue;
    }
    const project::Project& p = *result.project;
    const env::EnvironmentInfo* e = env::findEnvironment(p.environment);
    std::cout << path << ": ok\n"
              << "  name:        " << p.name << "\n"
              << "  environment: " << p.environment << " (observation " << shapeText(e->observationShape) << ", "
              << e->actionCount << " actions)\n"
              << "  algorithm:   " << p.algorithm << "\n"
              << "  policy:      " << p.policyFile.string() << "\n";
    for (const engine::ParameterSpec& spec : engine::ParameterRegistry::standard().all())
      if (!p.parameters.isDefault(spec.name))
        std::cout << "  " << spec.name << " = " << engine::formatValue(p.parameters.get(spec.name)) << "\n";
  }
  return status;
}

int runParams(bool markdown) {
  if (markdown) {
    std::string section;
    for (const engine::ParameterSpec& s : engine::ParameterRegistry::standard().all()) {
      if (s.section() != section) {
        section = s.section();
        std::cout << (section == "search" ? "" : "\n") << "### [" << section << "]\n\n"
                  << "| key | type and range | default | applies | meaning |\n|---|---|---|---|---|\n";
      }
      std::cout << "| `" << s.key() << "` | " << engine::describeRange(s) << " | `" << engine::formatValue(s.defaultValue)
                << "` | " << (s.live ? "live" : "restart") << " | " << s.help << " |\n";
    }
    return 0;
  }
  for (const engine::ParameterSpec& s : engine::ParameterRegistry::standard().all()) {
    std::cout << s.name << " (" << engine::describeRange(s) << ", default " << engine::formatValue(s.defaultValue)
              << ", " << (s.live ? "live" : "on restart") << ")\n    " << s.help << "\n";
  }
  return 0;
}

}  // namespace cas::cli
