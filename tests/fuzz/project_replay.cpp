// Replays the project fuzz corpus without libFuzzer (CTest: test_project_replay, label cpu)
// through project_check.hpp's check (replay_scratch.hpp says how).
#include "tests/fuzz/project_check.hpp"
#include "tests/fuzz/replay_scratch.hpp"

int main(int argc, char** argv) {
  return fuzz_replay::replayInScratch(argc, argv, "project-replay",
                                      [](const std::string& input, const std::filesystem::path& at) { return project_fuzz::check(input, at); });
}
