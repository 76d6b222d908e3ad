#include "core/ir/verifier.hpp"

#include <set>

#include "core/ir/builder.hpp"

namespace cas::ir {

std::vector<std::string> verify(const Graph& g) {
  std::vector<std::string> problems;
  std::set<std::string> inputNames;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    const std::string where = "%" + std::to_string(i) + " (" + std::string(opName(n.op)) + ")";
    bool ordered = true;
    for (NodeId in : n.inputs)
      if (in < 0 || size_t(in) >= i) {
        problems.push_back(where + " uses %" + std::to_string(in) + ", which is not defined before it");
        ordered = false;
      }
    if (n.op == Op::Input) {
      if (n.attrs.name.empty()) problems.push_back(where + " has no name");
      else if (!inputNames.insert(n.attrs.name).second) problems.push_back(where + " repeats the input name \"" + n.attrs.name + "\"");
    }
    if (!ordered) continue;
    try {
      Shape expected = inferShape(g, n);
      if (expected != n.shape) problems.push_back(where + " has shape " + shapeText(n.shape) + " but its inputs give " + shapeText(expected));
    } catch (const ShapeError& e) {
      problems.push_back(where + ": " + e.what());
    }
    if (n.buffer >= 0) {
      if (size_t(n.buffer) >= g.plan.sizes.size()) problems.push_back(where + " uses buffer " + std::to_string(n.buffer) + ", which the plan lacks");
      else if (g.plan.sizes[size_t(n.buffer)] < numel(n.shape)) problems.push_back(where + " does not fit its buffer");
    }
  }
  for (const Output& o : g.outputs)
    if (o.node < 0 || size_t(o.node) >= g.nodes.size()) problems.push_back("output " + o.name + " refers to a missing node");
  return problems;
}

}  // namespace cas::ir
