#include "app/cli/commands.hpp"

#include <cstdio>
#include <iostream>

#include "core/exec/backend.hpp"
#include "core/params/parameters.hpp"
#include "core/support/printable.hpp"

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

int runParams(bool markdown) {
  if (markdown) {
    std::string section;
    for (const params::ParameterSpec& s : params::ParameterRegistry::standard().all()) {
      if (s.section() != section) {
        section = s.section();
        std::cout << (section == "search" ? "" : "\n") << "### [" << section << "]\n\n"
                  << "| key | type and range | default | applies | meaning |\n|---|---|---|---|---|\n";
      }
      std::cout << "| `" << s.key() << "` | " << params::describeRange(s) << " | `" << params::formatValue(s.defaultValue)
                << "` | " << (s.live ? "live" : "restart") << " | " << s.help << " |\n";
    }
    return 0;
  }
  for (const params::ParameterSpec& s : params::ParameterRegistry::standard().all()) {
    std::cout << s.name << " (" << params::describeRange(s) << ", default " << params::formatValue(s.defaultValue)
              << ", " << (s.live ? "live" : "on restart") << ")\n    " << s.help << "\n";
  }
  return 0;
}

BenchProject openBenchProject(const std::string& path, const std::vector<std::string>& sets, const std::string& device, const std::string& algorithm,
                              const std::string& needs) {
  BenchProject out;
  project::LoadResult loaded = project::loadProject(path);
  for (const Diagnostic& d : loaded.diagnostics.items()) std::cerr << formatDiagnostic(d, loaded.source) << "\n";
  if (!loaded.project) {
    out.status = 1;
    return out;
  }
  if (loaded.project->algorithm != algorithm) {
    std::cerr << "error: " << needs << "; " << printable(path) << " trains with " << loaded.project->algorithm << "\n";
    out.status = 2;
    return out;
  }
  for (const std::string& assignment : sets)
    if (auto problem = loaded.project->parameters.assign(assignment)) {
      std::cerr << "error: --set " << printable(assignment) << ": " << printable(*problem) << "\n";
      out.status = 2;
      return out;
    }
  std::string error;
  out.backend = exec::BackendRegistry::instance().select(device, &error);
  if (!out.backend) {
    std::cerr << "error: " << printable(error) << "\n";
    out.status = 1;
    return out;
  }
  out.project = std::move(*loaded.project);
  return out;
}

}  // namespace cas::cli
