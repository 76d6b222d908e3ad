#include "core/ir/autodiff.hpp"

#include <algorithm>

namespace cas::ir {
namespace {

struct Adjoints {
  Builder& b;
  std::vector<NodeId> grad;

  void accumulate(NodeId target, NodeId g) {
    NodeId& slot = grad[size_t(target)];
    slot = slot == kNoNode ? g : b.add(slot, g);
  }
};

std::vector<std::int64_t> inversePermutation(const std::vector<std::int64_t>& perm) {
  std::vector<std::int64_t> inv(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inv[size_t(perm[i])] = std::int64_t(i);
  return inv;
}

Window2d windowOf(const Attrs& a) {
  return {a.kernelH, a.kernelW, a.strideH, a.strideW, a.padTop, a.padLeft, a.padBottom, a.padRight};
}

// Attention's gradients: the statistics of each query (its scores' log-sum-exp and g . output)
// once, then dq from them and [dk | dv] from them, each a fused kernel (attention.cuh).
template <typename Give, typename Want>
void attentionGradients(Builder& b, const Node& n, NodeId g, Give& give, Want& want) {
  std::vector<NodeId> inputs = {n.inputs[0], n.inputs[1], n.inputs[2], g};
  const bool masked = n.inputs.size() > 3;
  if (masked) inputs.push_back(n.inputs[3]);
  NodeId stats = b.make(Op::AttentionStats, inputs, n.attrs);
  inputs.insert(inputs.begin() + 4, stats);
  const std::int64_t d = b.shape(n.inputs[0]).back();
  if (want(0)) give(0, b.make(Op::AttentionGradQ, inputs, n.attrs));
  if (want(1) || want(2)) {
    NodeId kv = b.make(Op::AttentionGradKV, inputs, n.attrs);
    if (want(1)) give(1, b.slice(kv, 2, 0, d));
    if (want(2)) give(2, b.slice(kv, 2, d, d));
  }
}

// LayerNorm's gradients: dx fused (LayerNormGrad); dgamma the sum over rows of g times the
// normalised x (recomputed with gamma 1, beta 0), dbeta the sum of g.
template <typename Give, typename Want>
void layerNormGradients(Builder& b, const Node& n, NodeId g, Give& give, Want& want) {
  if (want(0)) give(0, b.make(Op::LayerNormGrad, {n.inputs[0], n.inputs[1], g}, n.attrs));
  const Shape& xs = b.shape(n.inputs[0]);
  std::vector<std::int64_t> rows(xs.size() - 1);
  for (size_t k = 0; k < rows.size(); ++k) rows[k] = std::int64_t(k);
  if (want(1)) {
    NodeId normalised = b.make(Op::LayerNorm, {n.inputs[0], b.constant({xs.back()}, {1.0f}), b.constant({xs.back()}, {0.0f})}, n.attrs);
    give(1, b.reduceSum(b.mul(g, normalised), rows, false));
  }
  if (want(2)) give(2, b.reduceSum(g, rows, false));
}

template <typename Give, typename Want>
void fusedLayerGradients(Builder& b, const Node& n, NodeId g, Give& give, Want& want) {
  if (n.op == Op::Attention) attentionGradients(b, n, g, give, want);
  else layerNormGradients(b, n, g, give, want);
}

// The gradient contributions of node `y` to its inputs, given the gradient `g` of its output.
void backprop(Builder& b, Adjoints& adj, NodeId y, NodeId g, const std::vector<bool>& needs) {
  const Node n = b.graph().node(y);  // copy: the builder appends to the node list
  auto in = [&](size_t k) { return n.inputs[k]; };
  auto shapeOf = [&](size_t k) { return b.shape(n.inputs[k]); };
  auto want = [&](size_t k) { return needs[size_t(n.inputs[k])]; };
  auto give = [&](size_t k, NodeId grad) {
    if (want(k)) adj.accumulate(in(k), b.sumToShape(grad, shapeOf(k)));
  };
  switch (n.op) {
    case Op::Neg: give(0, b.unary(Op::Neg, g)); break;
    case Op::Relu: give(0, b.mul(g, b.binary(Op::Greater, in(0), b.scalar(0)))); break;
    case Op::Tanh: give(0, b.mul(g, b.sub(b.scalar(1), b.mul(y, y)))); break;
    case Op::Sigmoid: give(0, b.mul(g, b.mul(y, b.sub(b.scalar(1), y)))); break;
    case Op::Gelu: give(0, b.binary(Op::GeluGrad, in(0), g)); break;
    case Op::Exp: give(0, b.mul(g, y)); break;
    case Op::Log: give(0, b.div(g, in(0))); break;
    case Op::Sqrt: give(0, b.div(g, b.scale(y, 2))); break;
    case Op::Add: give(0, g); give(1, g); break;
    case Op::Sub: give(0, g); if (want(1)) give(1, b.unary(Op::Neg, g)); break;
    case Op::Mul:
      if (want(0)) give(0, b.mul(g, in(1)));
      if (want(1)) give(1, b.mul(g, in(0)));
      break;
    case Op::Div:
      if (want(0)) give(0, b.div(g, in(1)));
      if (want(1)) give(1, b.unary(Op::Neg, b.div(b.mul(g, y), in(1))));
      break;
    case Op::Maximum:
    case Op::Minimum: {
      // Ties go to the first operand, as a clamp passes its gradient at the boundary.
      NodeId first = b.binary(n.op == Op::Maximum ? Op::GreaterEqual : Op::LessEqual, in(0), in(1));
      if (want(0)) give(0, b.mul(g, first));
      if (want(1)) give(1, b.mul(g, b.sub(b.scalar(1), first)));
      break;
    }
    case Op::Where: {
      NodeId zero = b.scalar(0);
      if (want(1)) give(1, b.where(in(0), g, zero));
      if (want(2)) give(2, b.where(in(0), zero, g));
      break;
    }
    case Op::Dropout: give(0, b.dropout(g, n.attrs.rate, n.attrs.seed)); break;
    case Op::Reshape: give(0, b.reshape(g, shapeOf(0))); break;
    case Op::Transpose: give(0, b.transpose(g, inversePermutation(n.attrs.ints))); break;
    case Op::BroadcastTo: give(0, g); break;  // sumToShape reduces it
    case Op::Concat: {
      std::int64_t offset = 0;
      for (size_t k = 0; k < n.inputs.size(); ++k) {
        const std::int64_t len = shapeOf(k)[size_t(n.attrs.axis)];
        if (want(k)) give(k, b.slice(g, n.attrs.axis, offset, len));
        offset += len;
      }
      break;
    }
    case Op::Slice: {
      const Shape full = shapeOf(0);
      const auto axis = size_t(n.attrs.axis);
      std::vector<NodeId> parts;
      Shape before = full, after = full;
      before[axis] = n.attrs.start;
      after[axis] = full[axis] - n.attrs.start - n.attrs.length;
      if (before[axis] > 0) parts.push_back(b.constant(before, {0.0f}));
      parts.push_back(g);
      if (after[axis] > 0) parts.push_back(b.constant(after, {0.0f}));
      give(0, b.concat(parts, n.attrs.axis));
      break;
    }
    case Op::ReduceSum: {
      Shape kept = shapeOf(0);
      for (std::int64_t ax : n.attrs.ints) kept[size_t(ax)] = 1;
      give(0, b.broadcastTo(b.reshape(g, kept), shapeOf(0)));
      break;
    }
    case Op::ReduceMax: {
      // Split evenly between tied maxima.
      Shape kept = shapeOf(0);
      for (std::int64_t ax : n.attrs.ints) kept[size_t(ax)] = 1;
      NodeId mask = b.binary(Op::Equal, in(0), b.broadcastTo(b.reshape(y, kept), shapeOf(0)));
      NodeId count = b.reduceSum(mask, n.attrs.ints, true);
      give(0, b.mul(mask, b.broadcastTo(b.div(b.reshape(g, kept), count), shapeOf(0))));
      break;
    }
    case Op::Softmax:
      give(0, b.mul(y, b.sub(g, b.reduceSum(b.mul(g, y), {n.attrs.axis}, true))));
      break;
    case Op::LogSoftmax:
      give(0, b.sub(g, b.mul(b.unary(Op::Exp, y), b.reduceSum(g, {n.attrs.axis}, true))));
      break;
    case Op::MatMul: {
      const bool ta = n.attrs.transposeA, tb = n.attrs.transposeB;
      NodeId a = in(0), bb = in(1);
      if (want(0)) give(0, ta ? b.matmul(bb, g, tb, true) : b.matmul(g, bb, false, !tb));
      if (want(1)) give(1, tb ? b.matmul(g, a, true, ta) : b.matmul(a, g, !ta, false));
      break;
    }
    case Op::Conv2d:
      if (want(0)) give(0, b.conv2dGradInput(g, in(1), windowOf(n.attrs), shapeOf(0)));
      if (want(1)) give(1, b.conv2dGradWeight(in(0), g, windowOf(n.attrs), shapeOf(1)));
      break;
    case Op::MaxPool2d: give(0, b.maxPool2dGrad(in(0), g, windowOf(n.attrs))); break;
    case Op::AvgPool2d: give(0, b.avgPool2dGrad(g, windowOf(n.attrs), shapeOf(0))); break;
    case Op::AvgPool2dGrad: give(0, b.avgPool2d(g, windowOf(n.attrs))); break;
    case Op::Attention: case Op::LayerNorm: fusedLayerGradients(b, n, g, give, want); break;
    case Op::Gather: give(0, b.scatterAddRows(in(1), g, shapeOf(0)[0])); break;
    case Op::ScatterAddRows: give(1, b.gather(g, in(0))); break;
    default:
      if (opInfo(n.op).differentiable || n.inputs.empty()) break;
      // Comparisons are piecewise constant: their gradient is zero, so they contribute nothing.
      if (n.op >= Op::Greater && n.op <= Op::NotEqual) break;
      throw ShapeError("no gradient rule for " + std::string(opName(n.op)) + " (second-order gradients are not supported)");
  }
}

}  // namespace

std::vector<NodeId> appendGradients(Builder& b, NodeId loss, const std::vector<NodeId>& wrt) {
  Graph& g = b.graph();
  if (numel(g.node(loss).shape) != 1) throw ShapeError("the loss must hold one element, got " + shapeText(g.node(loss).shape));
  const size_t forwardCount = size_t(loss) + 1;
  // needs[i]: node i depends on some wrt node, so gradients must flow into it.
  std::vector<bool> needs(forwardCount, false);
  for (NodeId w : wrt) needs[size_t(w)] = true;
  for (size_t i = 0; i < forwardCount; ++i)
    for (NodeId in : g.nodes[i].inputs)
      if (needs[size_t(in)]) needs[i] = true;

  Adjoints adj{b, std::vector<NodeId>(forwardCount, kNoNode)};
  const std::string label = "grad";
  b.setOrigin(label, 0, 0);
  adj.grad[size_t(loss)] = b.constant(g.node(loss).shape, {1.0f});
  for (size_t i = forwardCount; i-- > 0;) {
    if (adj.grad[i] == kNoNode || !needs[i] || g.nodes[i].inputs.empty()) continue;
    const Node& fwd = g.nodes[i];
    b.setOrigin(fwd.label.empty() ? label : fwd.label + "/grad", fwd.line, fwd.column);
    b.setPrecision(fwd.precision);  // a bf16 layer's backward products run in bf16 too
    if (adj.grad.size() < g.nodes.size()) adj.grad.resize(forwardCount);
    backprop(b, adj, NodeId(i), adj.grad[i], needs);
  }
  b.setPrecision(Precision::F32);
  std::vector<NodeId> out;
  for (NodeId w : wrt) out.push_back(adj.grad[size_t(w)] != kNoNode ? adj.grad[size_t(w)] : b.constant(g.node(w).shape, {0.0f}));
  return out;
}

}  // namespace cas::ir
