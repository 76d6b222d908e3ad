// libFuzzer target for run folders as `train --resume` treats them (scripts/fuzz run builds and
// runs it; tests/fuzz/README.md). Each input is an archive of a run folder's files: checkpoints of
// any name whose checksum holds, logs, links (run_check.hpp says how it is read and what is
// checked); any problem aborts. tests/fuzz/run_replay.cpp replays the saved corpus with the same check.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "tests/fuzz/run_check.hpp"

namespace {

// A scratch folder of this process, in memory when /dev/shm is there.
const std::filesystem::path& scratch() {
  static const std::filesystem::path folder = [] {
    std::string pattern = (std::filesystem::is_directory("/dev/shm") ? "/dev/shm" : "/tmp") + std::string("/run-fuzz-XXXXXX");
    if (!::mkdtemp(pattern.data())) std::abort();
    return std::filesystem::path(pattern);
  }();
  return folder;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string problem = run_fuzz::check(std::string_view(reinterpret_cast<const char*>(data), size), scratch() / "input");
  if (!problem.empty()) {
    std::fprintf(stderr, "run_fuzzer: %s\n", problem.c_str());
    std::abort();
  }
  return 0;
}
