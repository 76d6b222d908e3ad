// libFuzzer target for the PDL compiler (scripts/fuzz-pdl builds and runs it; tests/fuzz/README.md).
// Each input is compiled with three option sets. The compiler must not crash, throw, hang or use
// unbounded memory; when a policy comes out, its graph must pass the IR verifier and survive the
// default pass pipeline. The graph is not executed. tests/fuzz/replay_corpus.cpp replays the saved
// corpus with the same option sets and checks: keep the two in step.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "core/ir/passes.hpp"
#include "core/ir/verifier.hpp"
#include "core/pdl/compiler.hpp"
#include "tests/fuzz/option_sets.hpp"
#include "core/support/diagnostic.hpp"

namespace {

using pdl_fuzz::optionSets;

[[noreturn]] void fail(const cas::pdl::CompileOptions& o, const std::string& what) {
  std::fprintf(stderr, "pdl_fuzzer: option set obs rank %zu, action %lld, algorithm '%s', batch %lld: %s\n",
               o.observationShape.size(), static_cast<long long>(o.actionCount), o.algorithm.c_str(),
               static_cast<long long>(o.batch), what.c_str());
  std::abort();
}

void check(std::string_view source, const cas::pdl::CompileOptions& options) {
  // Exceptions escaping compile() or runPasses() are bugs too: they reach libFuzzer as an abort.
  cas::pdl::CompileResult r = cas::pdl::compile(source, options);
  for (const cas::Diagnostic& d : r.diagnostics.items()) (void)cas::formatDiagnostic(d, source);
  if (!r.policy) {
    if (!r.diagnostics.hasErrors()) fail(options, "compile() returned no policy and no error");
    return;
  }
  if (r.diagnostics.hasErrors()) fail(options, "compile() returned a policy along with errors");
  cas::pdl::CompiledPolicy& p = *r.policy;
  if (p.outputNames.size() != p.graph.outputs.size() || p.outputShapes.size() != p.graph.outputs.size())
    fail(options, "the output names, shapes and graph outputs differ in number");
  for (std::size_t i = 0; i < p.graph.outputs.size(); ++i) {
    const cas::ir::NodeId id = p.graph.outputs[i].node;
    if (id < 0 || static_cast<std::size_t>(id) >= p.graph.nodes.size()) fail(options, "an output refers to a missing node");
    cas::ir::Shape full = {options.batch};
    full.insert(full.end(), p.outputShapes[i].begin(), p.outputShapes[i].end());
    if (p.graph.node(id).shape != full)
      fail(options, "output " + p.outputNames[i] + " has node shape " + cas::ir::shapeText(p.graph.node(id).shape) +
                        " but the reported per-sample shape gives " + cas::ir::shapeText(full));
  }
  std::vector<std::string> problems = cas::ir::verify(p.graph);
  if (!problems.empty()) fail(options, "the compiled graph does not verify: " + problems.front());
  cas::ir::runPasses(p.graph, cas::ir::defaultPipeline());
  problems = cas::ir::verify(p.graph);
  if (!problems.empty()) fail(options, "the graph does not verify after the default passes: " + problems.front());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::vector<cas::pdl::CompileOptions> sets = optionSets();
  const std::string_view source(reinterpret_cast<const char*>(data), size);
  for (const cas::pdl::CompileOptions& options : sets) check(source, options);
  return 0;
}
