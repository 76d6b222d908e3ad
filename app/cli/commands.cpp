#include "app/cli/commands.hpp"

#include <cstdio>
#include <iostream>

#include "core/exec/backend.hpp"
#include "core/params/parameters.hpp"

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

}  // namespace cas::cli
