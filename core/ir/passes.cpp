#include "core/ir/passes.hpp"

#include <algorithm>
#include <stdexcept>

#include "core/ir/broadcast.hpp"
#include "core/ir/verifier.hpp"

namespace cas::ir {

const std::vector<PassInfo>& allPasses() {
  static const std::vector<PassInfo> passes = {
      {"fold", "evaluate nodes whose inputs are all constants", foldConstants},
      {"dce", "remove nodes no output depends on", eliminateDeadCode},
      {"plan-memory", "assign storage slots, reusing dead ones", planMemory},
  };
  return passes;
}

const std::vector<std::string>& defaultPipeline() {
  static const std::vector<std::string> pipeline = {"fold", "dce", "plan-memory"};
  return pipeline;
}

void runPasses(Graph& g, const std::vector<std::string>& names) {
  for (const std::string& name : names) {
    auto it = std::find_if(allPasses().begin(), allPasses().end(), [&](const PassInfo& p) { return p.name == name; });
    if (it == allPasses().end()) throw std::runtime_error("unknown pass '" + name + "'");
    it->run(g);
    auto problems = verify(g);
    if (!problems.empty()) throw std::runtime_error("pass '" + name + "' broke the graph: " + problems.front());
  }
}

// --- fold ----------------------------------------------------------------------------------

static constexpr std::int64_t kMaxFoldedElements = 1 << 16;

static float constantAt(const Node& c, std::int64_t i) {
  return c.attrs.values.size() == 1 ? c.attrs.values[0] : c.attrs.values[size_t(i)];
}

void foldConstants(Graph& g) {
  for (Node& n : g.nodes) {
    if (n.inputs.empty() || n.op == Op::Dropout) continue;
    const bool foldable = isElementwise(n.op) || n.op == Op::Reshape || n.op == Op::BroadcastTo;
    if (!foldable || numel(n.shape) > kMaxFoldedElements) continue;
    if (!std::all_of(n.inputs.begin(), n.inputs.end(), [&](NodeId i) { return g.node(i).op == Op::Constant; })) continue;

    const std::int64_t count = numel(n.shape);
    std::vector<float> values(static_cast<size_t>(count));
    std::vector<BroadcastIndexer> index;
    for (NodeId i : n.inputs) index.emplace_back(g.node(i).shape, n.shape);
    for (std::int64_t e = 0; e < count; ++e) {
      auto arg = [&](size_t k) { return constantAt(g.node(n.inputs[k]), index[k](e)); };
      switch (opInfo(n.op).kind) {
        case OpKind::Unary: values[size_t(e)] = applyElementwise(n.op, arg(0)); break;
        case OpKind::Binary: values[size_t(e)] = applyElementwise(n.op, arg(0), arg(1)); break;
        case OpKind::Ternary: values[size_t(e)] = applyElementwise(n.op, arg(0), arg(1), arg(2)); break;
        default: values[size_t(e)] = n.op == Op::Reshape ? constantAt(g.node(n.inputs[0]), e) : arg(0); break;
      }
    }
    const bool uniform = std::all_of(values.begin(), values.end(), [&](float v) { return v == values[0]; });
    if (uniform && !values.empty()) values.resize(1);
    n.op = Op::Constant;
    n.inputs.clear();
    n.attrs = Attrs{};
    n.attrs.values = std::move(values);
  }
}

// --- dce -----------------------------------------------------------------------------------

void eliminateDeadCode(Graph& g) {
  std::vector<bool> live(g.nodes.size(), false);
  for (const Output& o : g.outputs) live[size_t(o.node)] = true;
  for (size_t i = g.nodes.size(); i-- > 0;) {
    if (g.nodes[i].op == Op::Input) live[i] = true;
    if (!live[i]) continue;
    for (NodeId in : g.nodes[i].inputs) live[size_t(in)] = true;
  }
  std::vector<NodeId> remap(g.nodes.size(), kNoNode);
  std::vector<Node> kept;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (!live[i]) continue;
    Node n = std::move(g.nodes[i]);
    for (NodeId& in : n.inputs) in = remap[size_t(in)];
    remap[i] = NodeId(kept.size());
    kept.push_back(std::move(n));
  }
  g.nodes = std::move(kept);
  for (Output& o : g.outputs) o.node = remap[size_t(o.node)];
  g.plan = {};
  for (Node& n : g.nodes) n.buffer = -1;
}

// --- plan-memory ---------------------------------------------------------------------------

void planMemory(Graph& g) {
  const size_t count = g.nodes.size();
  auto computed = [&](const Node& n) { return n.op != Op::Input && n.op != Op::Constant; };
  // A reshape shares the storage of the node it reshapes ("root").
  std::vector<NodeId> root(count);
  for (size_t i = 0; i < count; ++i) {
    const Node& n = g.nodes[i];
    root[i] = n.op == Op::Reshape ? root[size_t(n.inputs[0])] : NodeId(i);
  }
  std::vector<size_t> lastUse(count);
  for (size_t i = 0; i < count; ++i) lastUse[i] = i;
  for (size_t i = 0; i < count; ++i)
    for (NodeId in : g.nodes[i].inputs) lastUse[size_t(root[size_t(in)])] = std::max(lastUse[size_t(root[size_t(in)])], i);
  for (const Output& o : g.outputs) lastUse[size_t(root[size_t(o.node)])] = count;  // outputs stay

  BufferPlan plan;
  std::vector<int> freeSlots;
  std::vector<std::vector<NodeId>> dyingAt(count + 1);
  for (size_t i = 0; i < count; ++i) {
    Node& n = g.nodes[i];
    n.buffer = -1;
    if (n.op == Op::Reshape) {
      n.buffer = g.node(root[i]).buffer;
    } else if (computed(n)) {
      const std::int64_t need = numel(n.shape);
      plan.naiveElements += need;
      int best = -1;
      for (int s : freeSlots) {
        if (best < 0) { best = s; continue; }
        const std::int64_t have = plan.sizes[size_t(s)], bestHave = plan.sizes[size_t(best)];
        const bool fits = have >= need, bestFits = bestHave >= need;
        // Prefer the smallest slot that fits; failing that, the largest one (to grow least).
        if ((fits && !bestFits) || (fits == bestFits && (fits ? have < bestHave : have > bestHave))) best = s;
      }
      if (best >= 0) {
        freeSlots.erase(std::find(freeSlots.begin(), freeSlots.end(), best));
        plan.sizes[size_t(best)] = std::max(plan.sizes[size_t(best)], need);
      } else {
        best = int(plan.sizes.size());
        plan.sizes.push_back(need);
      }
      n.buffer = best;
      dyingAt[lastUse[i]].push_back(NodeId(i));
    }
    // Slots die after the node that reads them last has been given its own slot, so no node
    // writes over one of its inputs.
    for (NodeId dead : dyingAt[i]) freeSlots.push_back(g.node(dead).buffer);
  }
  for (std::int64_t s : plan.sizes) plan.totalElements += s;
  g.plan = std::move(plan);
}

}  // namespace cas::ir
