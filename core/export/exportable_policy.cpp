#include "core/export/exportable_policy.hpp"

#include "core/ir/decompose.hpp"
#include "core/ir/passes.hpp"
#include "core/support/json_string.hpp"

namespace cas::exports {

ir::Graph forwardGraph(const ExportablePolicy& policy, std::int64_t batch) {
  pdl::CompileOptions options = policy.options;
  options.batch = batch;
  options.training = false;  // no dropout in an exported policy
  pdl::CompileResult compiled = pdl::compile(policy.source, options);
  if (!compiled.policy) {
    std::string message = "the policy does not compile";
    if (!compiled.diagnostics.empty()) message += ": " + formatHeadline(compiled.diagnostics.items()[0]);
    throw ExportError(message);
  }
  // Exports run the Transformer layers as their compositions (core/ir/decompose.hpp).
  ir::Graph g = ir::decomposeFusedOps(compiled.policy->graph);
  ir::runPasses(g, {"fold", "dce"});
  for (const ir::Node& n : g.nodes) {
    if (n.op != ir::Op::Input || n.attrs.role != ir::InputRole::Parameter) continue;
    const auto w = policy.weights.find(n.attrs.name);
    if (w == policy.weights.end()) throw ExportError("the weights hold no parameter '" + n.attrs.name + "', which the policy has");
    if (std::int64_t(w->second.size()) != ir::numel(n.shape))
      throw ExportError("the weights of '" + n.attrs.name + "' have " + std::to_string(w->second.size()) + " values; the policy's " +
                        ir::shapeText(n.shape, ", ") + " needs " + std::to_string(ir::numel(n.shape)));
  }
  return g;
}

std::vector<std::vector<bool>> batchAxes(const ir::Graph& atTwo, const ir::Graph& atThree) {
  if (atTwo.nodes.size() != atThree.nodes.size())
    throw ExportError("the policy's graph changes with the batch size, so it cannot be exported with a dynamic batch; give --batch N");
  std::vector<std::vector<bool>> grows(atTwo.nodes.size());
  for (size_t i = 0; i < atTwo.nodes.size(); ++i) {
    const ir::Node &a = atTwo.nodes[i], &b = atThree.nodes[i];
    if (a.op != b.op || a.inputs != b.inputs || a.shape.size() != b.shape.size())
      throw ExportError("the policy's graph changes with the batch size at " + ir::describeNode(atTwo, ir::NodeId(i)) +
                        ", so it cannot be exported with a dynamic batch; give --batch N");
    grows[i].resize(a.shape.size());
    for (size_t d = 0; d < a.shape.size(); ++d) grows[i][d] = a.shape[d] != b.shape[d];
  }
  return grows;
}

std::string jsonShape(const std::vector<std::int64_t>& shape) { return ir::shapeText(shape, ", "); }

std::string jsonStrings(const std::vector<std::string>& items) {
  std::string s = "[";
  for (size_t i = 0; i < items.size(); ++i) s += (i ? ", " : "") + jsonString(items[i]);
  return s + "]";
}

}  // namespace cas::exports
