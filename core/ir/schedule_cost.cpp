#include "core/ir/schedule_cost.hpp"

#include <cstdio>
#include <set>

namespace cas::ir {
namespace {

constexpr std::int64_t kFloatBytes = 4;

// The multiply-adds of node `n` times 2, when it is a product or a convolution; 0 otherwise.
double productFlops(const Graph& g, const Node& n) {
  switch (n.op) {
    case Op::MatMul: {
      const Shape& a = g.node(n.inputs[0]).shape;
      const std::int64_t k = n.attrs.transposeA ? a[a.size() - 2] : a.back();
      return 2.0 * double(numel(n.shape)) * double(k);
    }
    case Op::Conv2d: {  // y [N, K, HO, WO] from w [K, C, R, S]
      const Shape& w = g.node(n.inputs[1]).shape;
      return 2.0 * double(numel(n.shape)) * double(w[1] * w[2] * w[3]);
    }
    case Op::Conv2dGradInput: {  // dy [N, K, HO, WO], w [K, C, R, S]
      const Shape& w = g.node(n.inputs[1]).shape;
      return 2.0 * double(numel(g.node(n.inputs[0]).shape)) * double(w[1] * w[2] * w[3]);
    }
    case Op::Conv2dGradWeight:  // x, dy [N, K, HO, WO]; dw [K, C, R, S]
      return 2.0 * double(numel(g.node(n.inputs[1]).shape)) * double(n.shape[1] * n.shape[2] * n.shape[3]);
    case Op::Attention:  // q [B, T, D], k [B, S, D]: scores and the weighted sum
    case Op::AttentionStats:
    case Op::AttentionGradQ:
      return 4.0 * double(numel(n.shape.size() == 3 ? n.shape : g.node(n.inputs[0]).shape)) * double(g.node(n.inputs[1]).shape[1]);
    case Op::AttentionGradKV:  // scores again, then dk and dv
      return 6.0 * double(numel(g.node(n.inputs[0]).shape)) * double(g.node(n.inputs[1]).shape[1]);
    default:
      return 0;
  }
}

std::string megabytes(std::int64_t bytes) {
  char t[32];
  std::snprintf(t, sizeof t, "%.1f MB", double(bytes) / 1e6);
  return t;
}

std::string gigaflops(double flops) {
  char t[32];
  std::snprintf(t, sizeof t, "%.2f GFLOP", flops / 1e9);
  return t;
}

}  // namespace

std::vector<StepCost> estimateStepCosts(const Schedule& s, const Graph& g) {
  std::vector<StepCost> costs(s.steps.size());
  auto bytesOf = [&](NodeId id) { return numel(g.node(id).shape) * kFloatBytes; };
  for (size_t k = 0; k < s.steps.size(); ++k) {
    const Step& st = s.steps[k];
    StepCost& c = costs[k];
    if (st.kind == StepKind::Fill) {
      c.bytesWritten = bytesOf(st.node);
      continue;
    }
    if (st.kind == StepKind::Copy) {
      c.bytesRead = c.bytesWritten = bytesOf(st.node);
      continue;
    }
    std::set<NodeId> read;  // buffers (or slices) this step loads, each once
    for (int u : st.units) {
      for (NodeId m : s.units[size_t(u)].members) {
        const Node& n = g.node(m);
        c.productFlops += productFlops(g, n);
        if (s.stored[size_t(m)]) c.bytesWritten += bytesOf(m);
        for (NodeId in : n.inputs) {
          if (s.unitOf[size_t(s.root[size_t(in)])] == u && !s.view[size_t(s.root[size_t(in)])]) continue;  // computed in this kernel, in registers
          const Node& source = g.node(in);
          if (source.op == Op::Constant && source.attrs.values.size() == 1) continue;  // a literal (uniform, any shape)
          // A reshape reads its root's buffer; a slice (its own root) loads only its own elements.
          const NodeId key = s.root[size_t(in)];
          if (read.insert(key).second) c.bytesRead += bytesOf(key);
        }
      }
    }
  }
  return costs;
}

std::string costText(const Schedule& s, const std::vector<StepCost>& costs) {
  StepCost total;
  for (const StepCost& c : costs) {
    total.bytesRead += c.bytesRead;
    total.bytesWritten += c.bytesWritten;
    total.productFlops += c.productFlops;
  }
  const double bytes = double(total.bytesRead + total.bytesWritten);
  std::string t = "cost (a floor: stored fp32 buffers each read or written once a step, and the products' arithmetic):\n";
  int shown = 0;
  for (size_t k = 0; k < costs.size(); ++k) {
    const StepCost& c = costs[k];
    if (double(c.bytesRead + c.bytesWritten) < 0.01 * bytes && c.productFlops < 0.01 * total.productFlops) continue;
    ++shown;
    const Step& st = s.steps[k];
    t += "  step " + std::to_string(k) + "  " + stepKindName(st.kind) + "  " + st.name + ": " + megabytes(c.bytesRead) + " read, " +
         megabytes(c.bytesWritten) + " written" + (c.productFlops > 0 ? ", " + gigaflops(c.productFlops) : "") +
         (st.label.empty() ? "" : "  [" + st.label + "]") + "\n";
  }
  t += "  " + std::to_string(costs.size() - size_t(shown)) + " other step(s) under 1% of either\n";
  t += "  total: " + megabytes(total.bytesRead) + " read, " + megabytes(total.bytesWritten) + " written, " + gigaflops(total.productFlops) +
       " in products\n";
  return t;
}

}  // namespace cas::ir
