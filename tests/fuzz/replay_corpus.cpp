// Replays the PDL fuzz corpus without libFuzzer: every file in the folder given as argv[1] is
// compiled with the option sets of tests/fuzz/pdl_fuzzer.cpp and checked the same way (no crash
// or exception; a policy exactly when there is no error; a produced graph verifies before and
// after the default passes). Any failure, or an input taking more than 5 seconds, fails the run
// (exit 1) naming the file. Keep the option sets and checks in step with pdl_fuzzer.cpp.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "core/ir/passes.hpp"
#include "core/ir/verifier.hpp"
#include "core/pdl/compiler.hpp"
#include "tests/fuzz/option_sets.hpp"
#include "tests/fuzz/replay_watchdog.hpp"
#include "core/support/diagnostic.hpp"

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
constexpr std::chrono::seconds kLimit{5};

using pdl_fuzz::optionSets;

std::string describe(const cas::pdl::CompileOptions& o) {
  std::ostringstream s;
  s << "obs [";
  for (size_t i = 0; i < o.observationShape.size(); ++i) s << (i ? "," : "") << o.observationShape[i];
  s << "] action " << o.actionCount << " batch " << o.batch;
  if (!o.algorithm.empty()) s << " algorithm " << o.algorithm;
  return s.str();
}

// Empty when the input passes with these options; otherwise what went wrong.
std::string check(std::string_view source, const cas::pdl::CompileOptions& options) {
  cas::pdl::CompileResult r = cas::pdl::compile(source, options);
  for (const cas::Diagnostic& d : r.diagnostics.items()) (void)cas::formatDiagnostic(d, source);
  if (!r.policy) return r.diagnostics.hasErrors() ? std::string() : "compile() returned no policy and no error";
  if (r.diagnostics.hasErrors()) return "compile() returned a policy along with errors";
  cas::pdl::CompiledPolicy& p = *r.policy;
  if (p.outputNames.size() != p.graph.outputs.size() || p.outputShapes.size() != p.graph.outputs.size())
    return "the output names, shapes and graph outputs differ in number";
  for (size_t i = 0; i < p.graph.outputs.size(); ++i) {
    const cas::ir::NodeId id = p.graph.outputs[i].node;
    if (id < 0 || size_t(id) >= p.graph.nodes.size()) return "an output refers to a missing node";
    cas::ir::Shape full = {options.batch};
    full.insert(full.end(), p.outputShapes[i].begin(), p.outputShapes[i].end());
    if (p.graph.node(id).shape != full)
      return "output " + p.outputNames[i] + " has node shape " + cas::ir::shapeText(p.graph.node(id).shape) +
             " but the reported per-sample shape gives " + cas::ir::shapeText(full);
  }
  std::vector<std::string> problems = cas::ir::verify(p.graph);
  if (!problems.empty()) return "the compiled graph does not verify: " + problems.front();
  cas::ir::runPasses(p.graph, cas::ir::defaultPipeline());  // throws when a pass breaks the graph
  problems = cas::ir::verify(p.graph);
  if (!problems.empty()) return "the graph does not verify after the default passes: " + problems.front();
  return {};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s CORPUS_FOLDER\n", argv[0]);
    return 2;
  }
  std::vector<fs::path> files;
  std::error_code ec;
  for (fs::directory_iterator it(argv[1], ec), end; !ec && it != end; it.increment(ec))
    if (it->is_regular_file()) files.push_back(it->path());
  if (ec) {
    std::fprintf(stderr, "cannot read the folder %s: %s\n", argv[1], ec.message().c_str());
    return 2;
  }
  if (files.empty()) {
    std::fprintf(stderr, "the folder %s holds no inputs\n", argv[1]);
    return 1;
  }
  std::sort(files.begin(), files.end());

  const std::vector<cas::pdl::CompileOptions> sets = optionSets();
  fuzz_replay::Watchdog watchdog(kLimit);
  int passed = 0, failed = 0;
  double slowest = 0;
  std::string slowestFile;
  for (const fs::path& file : files) {
    std::ifstream in(file, std::ios::binary);
    const std::string source((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (!in.good() && !in.eof()) {
      std::fprintf(stderr, "FAIL %s: cannot be read\n", file.c_str());
      ++failed;
      continue;
    }
    std::string problem;
    watchdog.start(file.string());
    const Clock::time_point start = Clock::now();
    for (const cas::pdl::CompileOptions& options : sets) {
      try {
        problem = check(source, options);
      } catch (const std::exception& e) {
        problem = std::string("exception: ") + e.what();
      } catch (...) {
        problem = "an exception that is not a std::exception";
      }
      if (!problem.empty()) {
        problem = "with " + describe(options) + ": " + problem;
        break;
      }
    }
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    watchdog.finish();
    if (problem.empty() && seconds > double(kLimit.count()))
      problem = "took " + std::to_string(seconds) + " s (the limit per input is " + std::to_string(kLimit.count()) + " s)";
    if (seconds > slowest) {
      slowest = seconds;
      slowestFile = file.filename().string();
    }
    if (problem.empty()) {
      ++passed;
    } else {
      std::fprintf(stderr, "FAIL %s: %s\n", file.c_str(), problem.c_str());
      ++failed;
    }
  }
  std::printf("slowest input: %s (%.3f s)\n", slowestFile.c_str(), slowest);
  std::printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
