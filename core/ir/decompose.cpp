// Writes the fused Transformer ops in primitive ops (decompose.hpp says why).
#include "core/ir/decompose.hpp"

#include <cmath>

namespace cas::ir {

NodeId composedLayerNorm(Builder& b, NodeId x, NodeId gamma, NodeId beta, float eps) {
  const std::int64_t last = std::int64_t(b.shape(x).size()) - 1;
  NodeId mean = b.reduceMean(x, {last}, true);
  NodeId centred = b.sub(x, mean);
  NodeId variance = b.reduceMean(b.mul(centred, centred), {last}, true);
  NodeId inverse = b.div(b.scalar(1.0f), b.unary(Op::Sqrt, b.add(variance, b.scalar(eps))));
  return b.add(b.mul(b.mul(centred, inverse), gamma), beta);
}

// The additive mask of scores [B, H, T, S]: 0 where a query may see a key, -1e30 where not
// (finite, so NaN/Inf checks stay meaningful), or kNoNode when nothing is masked. Lengths below
// one count as one, as the fused kernels take them.
static NodeId scoreMask(Builder& b, std::int64_t batch, std::int64_t t, std::int64_t s, bool causal, NodeId lengths) {
  NodeId mask = kNoNode;
  if (causal) {
    std::vector<float> values(size_t(t * s));
    for (std::int64_t i = 0; i < t; ++i)
      for (std::int64_t j = 0; j < s; ++j) values[size_t(i * s + j)] = j > i ? -1e30f : 0.0f;
    mask = b.constant({t, s}, std::move(values));
  }
  if (lengths != kNoNode) {
    std::vector<float> positions(static_cast<size_t>(s));
    for (std::int64_t j = 0; j < s; ++j) positions[size_t(j)] = float(j);
    NodeId valid = b.binary(Op::Less, b.constant({1, 1, 1, s}, std::move(positions)),
                            b.reshape(b.binary(Op::Maximum, lengths, b.scalar(1.0f)), {batch, 1, 1, 1}));
    NodeId byLength = b.where(valid, b.scalar(0.0f), b.scalar(-1e30f));
    mask = mask == kNoNode ? byLength : b.add(byLength, mask);
  }
  return mask;
}

NodeId composedAttention(Builder& b, NodeId q, NodeId k, NodeId v, std::int64_t heads, bool causal, NodeId lengths) {
  const Shape qs = b.shape(q), ks = b.shape(k);
  const std::int64_t batch = qs[0], t = qs[1], d = qs[2], s = ks[1], dh = d / heads;
  auto split = [&](NodeId x, std::int64_t len) { return b.transpose(b.reshape(x, {batch, len, heads, dh}), {0, 2, 1, 3}); };
  NodeId qh = split(q, t), kh = split(k, s), vh = split(v, s);
  NodeId scores = b.scale(b.matmul(qh, kh, false, true), 1.0f / std::sqrt(float(dh)));  // [B, H, T, S]
  if (NodeId mask = scoreMask(b, batch, t, s, causal, lengths); mask != kNoNode) scores = b.add(scores, mask);
  NodeId out = b.matmul(b.softmax(scores, -1), vh);  // [B, H, T, dh]
  return b.reshape(b.transpose(out, {0, 2, 1, 3}), {batch, t, d});
}

Graph decomposeFusedOps(const Graph& g) {
  Graph out;
  out.name = g.name;
  out.outputs = g.outputs;
  out.updates = g.updates;
  Builder b(out);
  std::vector<NodeId> moved(g.nodes.size(), kNoNode);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    Node n = g.nodes[i];
    for (NodeId& in : n.inputs) in = moved[size_t(in)];
    b.setOrigin(n.label, n.line, n.column);
    b.setPrecision(n.precision);
    auto in = [&](size_t k) { return n.inputs[k]; };
    if (n.op == Op::LayerNorm) {
      moved[i] = composedLayerNorm(b, in(0), in(1), in(2), n.attrs.eps);
    } else if (n.op == Op::Attention) {
      moved[i] = composedAttention(b, in(0), in(1), in(2), n.attrs.heads, n.attrs.causal, n.inputs.size() > 3 ? in(3) : kNoNode);
    } else if (isAttention(n.op) || n.op == Op::LayerNormGrad) {
      throw ShapeError(std::string(opName(n.op)) + " has no composition; only forward graphs are decomposed");
    } else {
      n.buffer = -1;
      moved[i] = out.add(std::move(n));
    }
  }
  for (Output& o : out.outputs) o.node = moved[size_t(o.node)];
  return out;
}

}  // namespace cas::ir
