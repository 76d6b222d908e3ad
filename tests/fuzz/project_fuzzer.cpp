// libFuzzer target for project.toml and run-folder loading (scripts/fuzz project builds and runs
// it; tests/fuzz/README.md). Each input is an archive of a project folder and a run folder
// (project_check.hpp says how it is read and what is checked); any problem aborts.
// tests/fuzz/project_replay.cpp replays the saved corpus with the same check.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "tests/fuzz/project_check.hpp"

namespace {

// A scratch folder of this process, in memory when /dev/shm is there.
const std::filesystem::path& scratch() {
  static const std::filesystem::path folder = [] {
    std::string pattern = (std::filesystem::is_directory("/dev/shm") ? "/dev/shm" : "/tmp") + std::string("/project-fuzz-XXXXXX");
    if (!::mkdtemp(pattern.data())) std::abort();
    return std::filesystem::path(pattern);
  }();
  return folder;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string problem = project_fuzz::check(std::string_view(reinterpret_cast<const char*>(data), size), scratch() / "input");
  if (!problem.empty()) {
    std::fprintf(stderr, "project_fuzzer: %s\n", problem.c_str());
    std::abort();
  }
  return 0;
}
