// Replays the run fuzz corpus without libFuzzer (CTest: test_run_replay, label cpu) through
// run_check.hpp's check (replay_scratch.hpp says how).
#include "tests/fuzz/replay_scratch.hpp"
#include "tests/fuzz/run_check.hpp"

int main(int argc, char** argv) {
  return fuzz_replay::replayInScratch(argc, argv, "run-replay",
                                      [](const std::string& input, const std::filesystem::path& at) { return run_fuzz::check(input, at); });
}
