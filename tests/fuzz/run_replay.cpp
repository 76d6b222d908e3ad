// Replays the run fuzz corpus without libFuzzer (CTest: test_run_replay, label cpu):
// every file in the folder given as argv[1] goes through run_check.hpp's check, in a scratch
// folder under the system's temporary folder. Any failure, exception, or an input taking more
// than 5 seconds fails the run (exit 1) naming the file; prints `N passed, 0 failed`.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "tests/fuzz/run_check.hpp"
#include "tests/fuzz/replay_watchdog.hpp"

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  constexpr std::chrono::seconds kLimit{5};
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s CORPUS_FOLDER\n", argv[0]);
    return 2;
  }
  std::vector<fs::path> files;
  std::error_code ec;
  for (fs::directory_iterator it(argv[1], ec), end; !ec && it != end; it.increment(ec))
    if (it->is_regular_file()) files.push_back(it->path());
  if (ec || files.empty()) {
    std::fprintf(stderr, "the folder %s holds no inputs%s%s\n", argv[1], ec ? ": " : "", ec ? ec.message().c_str() : "");
    return 2;
  }
  std::sort(files.begin(), files.end());
  std::string pattern = (fs::temp_directory_path() / "run-replay-XXXXXX").string();
  if (!::mkdtemp(pattern.data())) {
    std::perror("mkdtemp");
    return 2;
  }
  const fs::path scratch = pattern;
  fuzz_replay::Watchdog watchdog(kLimit);
  int passed = 0, failed = 0;
  for (const fs::path& file : files) {
    std::ifstream in(file, std::ios::binary);
    const std::string input((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::string problem;
    watchdog.start(file.string());
    const auto start = std::chrono::steady_clock::now();
    try {
      problem = run_fuzz::check(input, scratch / "input");
    } catch (const std::exception& e) {
      problem = std::string("exception: ") + e.what();
    }
    watchdog.finish();
    if (problem.empty() && std::chrono::steady_clock::now() - start > kLimit) problem = "took longer than the 5 s limit per input";
    if (problem.empty()) {
      ++passed;
    } else {
      std::fprintf(stderr, "FAIL %s: %s\n", file.c_str(), problem.c_str());
      ++failed;
    }
  }
  fs::remove_all(scratch, ec);
  std::printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
