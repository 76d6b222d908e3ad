#pragma once
// The replay of a corpus whose check writes files (project_replay.cpp, run_replay.cpp): every file
// in the folder given as argv[1] goes through `check(input, scratch)`, in a scratch folder under the
// system's temporary folder. Any failure, exception, or an input taking more than 5 seconds fails
// the run (exit 1) naming the file; prints `N passed, 0 failed`.
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "tests/fuzz/replay_watchdog.hpp"

namespace fuzz_replay {

// The sorted regular files of `folder`, or an empty list (the reason printed).
inline std::vector<std::filesystem::path> corpusFiles(const char* folder) {
  std::vector<std::filesystem::path> files;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec))
    if (it->is_regular_file()) files.push_back(it->path());
  if (ec || files.empty()) std::fprintf(stderr, "the folder %s holds no inputs%s%s\n", folder, ec ? ": " : "", ec ? ec.message().c_str() : "");
  std::sort(files.begin(), files.end());
  return ec ? std::vector<std::filesystem::path>{} : files;
}

// `check(input, path)` returns "" when the input passes, else what went wrong.
template <typename Check>
int replayInScratch(int argc, char** argv, const char* scratchName, Check check) {
  namespace fs = std::filesystem;
  constexpr std::chrono::seconds kLimit{5};
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s CORPUS_FOLDER\n", argv[0]);
    return 2;
  }
  const std::vector<fs::path> files = corpusFiles(argv[1]);
  if (files.empty()) return 2;
  std::string pattern = (fs::temp_directory_path() / (std::string(scratchName) + "-XXXXXX")).string();
  if (!::mkdtemp(pattern.data())) {
    std::perror("mkdtemp");
    return 2;
  }
  const fs::path scratch = pattern;
  Watchdog watchdog(kLimit);
  int passed = 0, failed = 0;
  for (const fs::path& file : files) {
    std::ifstream in(file, std::ios::binary);
    const std::string input((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::string problem;
    watchdog.start(file.string());
    const auto start = std::chrono::steady_clock::now();
    try {
      problem = check(input, scratch / "input");
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
  std::error_code ec;
  fs::remove_all(scratch, ec);
  std::printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}

}  // namespace fuzz_replay
