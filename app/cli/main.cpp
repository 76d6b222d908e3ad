// cuda-agent: the headless command-line interface. Subcommands are wired here; their work is in
// commands.cpp and core/.
#include <CLI/CLI.hpp>

#include "app/cli/commands.hpp"
#include "cas/version.hpp"

int main(int argc, char** argv) {
  CLI::App app{"cuda-agent: design, train, search-debug and export reinforcement-learning policies.\n"
               "Runs on the CUDA backend when an NVIDIA GPU is usable, else on the CPU reference backend."};
  app.set_version_flag("--version", std::string("cuda-agent ") + cas::kVersion);
  app.require_subcommand(1);
  app.footer("Run `cuda-agent SUBCOMMAND --help` for a subcommand's options.");

  auto* devices = app.add_subcommand("devices", "List the backends, whether each is usable and why not; probe the GPU");

  std::vector<std::string> checkPaths;
  auto* check = app.add_subcommand("check", "Validate projects (project folders or project.toml files)");
  check->add_option("paths", checkPaths, "Project folders")->required()->check(CLI::ExistingPath);

  bool markdown = false;
  auto* params = app.add_subcommand("params", "List the tuning parameters: type, range, default, live or restart");
  params->add_flag("--markdown", markdown, "Print a Markdown table (as in docs/project-format.md)");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  if (*devices) return cas::cli::runDevices();
  if (*check) return cas::cli::runCheck(checkPaths);
  if (*params) return cas::cli::runParams(markdown);
  return 2;
}
