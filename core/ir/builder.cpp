#include "core/ir/builder.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace cas::ir {
namespace {

[[noreturn]] void fail(const std::string& message) { throw ShapeError(message); }

std::int64_t windowOut(std::int64_t in, std::int64_t kernel, std::int64_t stride, std::int64_t padA, std::int64_t padB) {
  const std::int64_t span = in + padA + padB - kernel;
  if (span < 0) return 0;
  return span / stride + 1;
}

Shape windowShape(const Node& n, const Shape& x, std::int64_t channels) {
  const Attrs& a = n.attrs;
  if (x.size() != 4) fail(std::string(opName(n.op)) + " expects a [N, C, H, W] input, got " + shapeText(x));
  if (a.kernelH < 1 || a.kernelW < 1 || a.strideH < 1 || a.strideW < 1 || a.padTop < 0 || a.padLeft < 0 ||
      a.padBottom < 0 || a.padRight < 0)
    fail(std::string(opName(n.op)) + " has an invalid window");
  const std::int64_t oh = windowOut(x[2], a.kernelH, a.strideH, a.padTop, a.padBottom);
  const std::int64_t ow = windowOut(x[3], a.kernelW, a.strideW, a.padLeft, a.padRight);
  if (oh < 1 || ow < 1)
    fail("a " + std::to_string(a.kernelH) + "x" + std::to_string(a.kernelW) + " window does not fit the " +
         std::to_string(x[2]) + "x" + std::to_string(x[3]) + " input");
  return {x[0], channels, oh, ow};
}

}  // namespace

std::int64_t normaliseAxis(std::int64_t axis, std::size_t rank) {
  const auto r = std::int64_t(rank);
  if (axis < -r || axis >= r) fail("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  return axis < 0 ? axis + r : axis;
}

Shape broadcastShapes(const Shape& a, const Shape& b) {
  const size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const std::int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const std::int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1) fail("shapes " + shapeText(a) + " and " + shapeText(b) + " do not broadcast");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

namespace {

// Attention and its gradients (the inputs ops.hpp's table lists).
Shape attentionShape(const Node& n, const std::vector<const Shape*>& in) {
  const size_t before = attentionInputsBeforeLengths(n.op);
  if (in.size() != before && in.size() != before + 1)
    fail(std::string(opName(n.op)) + " takes " + std::to_string(before) + " inputs, or one more for the lengths");
  const Shape &q = *in[0], &k = *in[1], &v = *in[2];
  if (q.size() != 3 || k.size() != 3 || v.size() != 3) fail("attention expects [B, T, D] tensors");
  const std::int64_t b = q[0], t = q[1], d = q[2], s = k[1];
  if (k[2] != d || v[2] != d || v[1] != s || k[0] != b || v[0] != b)
    fail("attention's k and v must be [S, " + std::to_string(d) + "] with the same S, got " + shapeText(k) + " and " + shapeText(v));
  const std::int64_t heads = n.attrs.heads;
  if (heads < 1 || d % heads != 0) fail("attention's width " + std::to_string(d) + " is not divisible by heads=" + std::to_string(heads));
  if (n.op != Op::Attention && *in[3] != q) fail("attention's output gradient must have the shape of q, " + shapeText(q));
  const Shape stats = {b, heads, t, 2};
  if (before == 5 && *in[4] != stats) fail("attention's statistics must be " + shapeText(stats));
  if (in.size() > before && *in.back() != Shape{b, 1}) fail("attention's lengths must be [" + std::to_string(b) + ", 1]");
  switch (n.op) {
    case Op::AttentionStats: return stats;
    case Op::AttentionGradKV: return {b, s, 2 * d};
    default: return q;
  }
}

Shape layerNormShape(const Node& n, const std::vector<const Shape*>& in) {
  const Shape& x = *in[0];
  if (x.empty()) fail("layer_norm needs a tensor with at least one axis");
  if (*in[1] != Shape{x.back()}) fail("layer_norm's gamma must be [" + std::to_string(x.back()) + "], got " + shapeText(*in[1]));
  const Shape& third = *in[2];
  if (n.op == Op::LayerNorm && third != Shape{x.back()}) fail("layer_norm's beta must be [" + std::to_string(x.back()) + "], got " + shapeText(third));
  if (n.op == Op::LayerNormGrad && third != x) fail("layer_norm_grad's gradient must have the shape of x, " + shapeText(x));
  if (!(n.attrs.eps > 0.0f)) fail("layer_norm's eps must be positive");
  return x;
}

std::vector<const Shape*> inputShapes(const Graph& g, const Node& n) {
  std::vector<const Shape*> in;
  for (NodeId id : n.inputs) {
    if (id < 0 || size_t(id) >= g.nodes.size()) fail("input %" + std::to_string(id) + " does not exist");
    in.push_back(&g.node(id).shape);
  }
  return in;
}

}  // namespace

Shape inferShape(const Graph& g, const Node& n) {
  const OpInfo& info = opInfo(n.op);
  if (info.arity >= 0 && int(n.inputs.size()) != info.arity)
    fail(std::string(info.name) + " takes " + std::to_string(info.arity) + " inputs, got " + std::to_string(n.inputs.size()));
  if (info.arity < 0 && n.inputs.empty()) fail(std::string(info.name) + " needs at least one input");
  const std::vector<const Shape*> in = inputShapes(g, n);
  if (isAttention(n.op) || n.op == Op::LayerNorm || n.op == Op::LayerNormGrad) return isAttention(n.op) ? attentionShape(n, in) : layerNormShape(n, in);
  const Attrs& a = n.attrs;
  switch (info.kind) {
    case OpKind::Leaf:
      for (std::int64_t d : n.shape)
        if (d < 0) fail("negative dimension in " + shapeText(n.shape));
      if (n.op == Op::Constant && a.values.size() != 1 && std::int64_t(a.values.size()) != numel(n.shape))
        fail("constant has " + std::to_string(a.values.size()) + " values for shape " + shapeText(n.shape));
      return n.shape;
    case OpKind::Unary:
      if (n.op == Op::Dropout && (a.rate < 0 || a.rate >= 1)) fail("dropout rate must be in [0, 1)");
      return *in[0];
    case OpKind::Binary: return broadcastShapes(*in[0], *in[1]);
    case OpKind::Ternary: return broadcastShapes(*in[0], broadcastShapes(*in[1], *in[2]));
    case OpKind::Shape:
      switch (n.op) {
        case Op::Reshape:
          if (numel(a.ints) != numel(*in[0])) fail("cannot reshape " + shapeText(*in[0]) + " to " + shapeText(a.ints));
          return a.ints;
        case Op::Transpose: {
          if (a.ints.size() != in[0]->size()) fail("transpose needs a permutation of " + std::to_string(in[0]->size()) + " axes");
          std::vector<bool> seen(a.ints.size());
          Shape out;
          for (std::int64_t p : a.ints) {
            if (p < 0 || size_t(p) >= seen.size() || seen[size_t(p)]) fail("transpose's permutation is not valid");
            seen[size_t(p)] = true;
            out.push_back((*in[0])[size_t(p)]);
          }
          return out;
        }
        case Op::BroadcastTo:
          if (broadcastShapes(*in[0], a.ints) != a.ints) fail("cannot broadcast " + shapeText(*in[0]) + " to " + shapeText(a.ints));
          return a.ints;
        case Op::Concat: {
          Shape out = *in[0];
          const std::int64_t axis = normaliseAxis(a.axis, out.size());
          if (axis != a.axis) fail("concat's axis must be normalised");
          for (size_t i = 1; i < in.size(); ++i) {
            const Shape& s = *in[i];
            bool fits = s.size() == out.size();
            for (size_t d = 0; fits && d < s.size(); ++d) fits = std::int64_t(d) == axis || s[d] == out[d];
            if (!fits) fail("concat needs equal shapes except on axis " + std::to_string(axis) + ", got " + shapeText(*in[0]) + " and " + shapeText(s));
            out[size_t(axis)] += s[size_t(axis)];
          }
          return out;
        }
        case Op::Slice: {
          Shape out = *in[0];
          const std::int64_t axis = normaliseAxis(a.axis, out.size());
          if (a.start < 0 || a.length < 0 || a.start + a.length > out[size_t(axis)]) fail("slice is out of range");
          out[size_t(axis)] = a.length;
          return out;
        }
        default: break;
      }
      break;
    case OpKind::Reduction: {
      const Shape& x = *in[0];
      if (n.op == Op::Softmax || n.op == Op::LogSoftmax) {
        normaliseAxis(a.axis, x.size());
        return x;
      }
      std::vector<bool> reduced(x.size());
      for (std::int64_t ax : a.ints) {
        const std::int64_t k = normaliseAxis(ax, x.size());
        if (k != ax || reduced[size_t(k)]) fail("reduction axes must be normalised and distinct");
        reduced[size_t(k)] = true;
      }
      Shape out;
      for (size_t d = 0; d < x.size(); ++d) {
        if (!reduced[d]) out.push_back(x[d]);
        else if (a.keepDims) out.push_back(1);
      }
      return out;
    }
    case OpKind::Layer:
      switch (n.op) {
        case Op::MatMul: {
          const Shape &x = *in[0], &y = *in[1];
          if (x.size() < 2 || y.size() < 2) fail("matmul needs matrices, got " + shapeText(x) + " and " + shapeText(y));
          const std::int64_t m = a.transposeA ? x[x.size() - 1] : x[x.size() - 2];
          const std::int64_t k = a.transposeA ? x[x.size() - 2] : x[x.size() - 1];
          const std::int64_t k2 = a.transposeB ? y[y.size() - 1] : y[y.size() - 2];
          const std::int64_t nn = a.transposeB ? y[y.size() - 2] : y[y.size() - 1];
          if (k != k2) fail("matmul's inner dimensions differ: " + shapeText(x) + " and " + shapeText(y));
          Shape lead = broadcastShapes(Shape(x.begin(), x.end() - 2), Shape(y.begin(), y.end() - 2));
          lead.push_back(m);
          lead.push_back(nn);
          return lead;
        }
        case Op::Conv2d: {
          const Shape &x = *in[0], &w = *in[1];
          if (w.size() != 4) fail("conv2d expects a [O, C, KH, KW] weight, got " + shapeText(w));
          if (x.size() == 4 && x[1] != w[1]) fail("conv2d's input has " + std::to_string(x[1]) + " channels, the weight expects " + std::to_string(w[1]));
          if (w[2] != a.kernelH || w[3] != a.kernelW) fail("conv2d's kernel attributes differ from its weight");
          return windowShape(n, x, w[0]);
        }
        case Op::Conv2dGradInput: {
          Node fwd = n;
          fwd.op = Op::Conv2d;
          if (a.refShape.size() != 4) fail("conv2d_grad_input needs the input shape");
          if (windowShape(fwd, a.refShape, (*in[1])[0]) != *in[0]) fail("conv2d_grad_input's gradient does not fit");
          return a.refShape;
        }
        case Op::Conv2dGradWeight: {
          Node fwd = n;
          fwd.op = Op::Conv2d;
          if (a.refShape.size() != 4) fail("conv2d_grad_weight needs the weight shape");
          if (windowShape(fwd, *in[0], a.refShape[0]) != *in[1]) fail("conv2d_grad_weight's gradient does not fit");
          return a.refShape;
        }
        case Op::MaxPool2d:
        case Op::AvgPool2d: return windowShape(n, *in[0], in[0]->size() == 4 ? (*in[0])[1] : 0);
        case Op::MaxPool2dGrad: {
          if (windowShape(n, *in[0], (*in[0])[1]) != *in[1]) fail("max_pool2d_grad's gradient does not fit");
          return *in[0];
        }
        case Op::AvgPool2dGrad:
          if (a.refShape.size() != 4 || windowShape(n, a.refShape, a.refShape[1]) != *in[0]) fail("avg_pool2d_grad's gradient does not fit");
          return a.refShape;
        case Op::Gather: {
          const Shape &table = *in[0], &ids = *in[1];
          if (table.size() != 2) fail("gather expects a [V, D] table, got " + shapeText(table));
          Shape out = ids;
          out.push_back(table[1]);
          return out;
        }
        case Op::ScatterAddRows: {
          const Shape &ids = *in[0], &gs = *in[1];
          if (gs.size() != ids.size() + 1 || !std::equal(ids.begin(), ids.end(), gs.begin()))
            fail("scatter_add_rows' gradient does not fit its ids");
          if (a.refShape.size() != 2) fail("scatter_add_rows needs the table shape");
          return {a.refShape[0], gs.back()};
        }
        default: break;
      }
      break;
  }
  fail(std::string("no shape rule for ") + std::string(info.name));
}

NodeId Builder::make(Op op, std::vector<NodeId> inputs, Attrs attrs) {
  Node n;
  n.op = op;
  n.inputs = std::move(inputs);
  n.attrs = std::move(attrs);
  n.label = label_;
  n.line = line_;
  n.column = column_;
  n.precision = precision_;
  n.shape = inferShape(g_, n);
  return g_.add(std::move(n));
}

NodeId Builder::input(const std::string& name, Shape shape, InputRole role, Init init, std::int64_t fanIn) {
  Node n;
  n.op = Op::Input;
  n.shape = std::move(shape);
  n.attrs.name = name;
  n.attrs.role = role;
  n.attrs.init = init;
  n.attrs.fanIn = fanIn;
  n.label = label_;
  n.line = line_;
  n.column = column_;
  n.shape = inferShape(g_, n);
  return g_.add(std::move(n));
}

NodeId Builder::scalar(float value) { return constant({}, {value}); }

NodeId Builder::constant(Shape shape, std::vector<float> values) {
  Node n;
  n.op = Op::Constant;
  n.shape = std::move(shape);
  n.attrs.values = std::move(values);
  n.label = label_;
  n.line = line_;
  n.column = column_;
  n.shape = inferShape(g_, n);
  return g_.add(std::move(n));
}

NodeId Builder::unary(Op op, NodeId x) { return make(op, {x}); }
NodeId Builder::binary(Op op, NodeId a, NodeId b) { return make(op, {a, b}); }
NodeId Builder::where(NodeId mask, NodeId a, NodeId b) { return make(Op::Where, {mask, a, b}); }

NodeId Builder::clip(NodeId x, float lo, float hi) {
  if (!(lo <= hi)) fail("clip needs lo <= hi");
  return binary(Op::Minimum, binary(Op::Maximum, x, scalar(lo)), scalar(hi));
}

NodeId Builder::dropout(NodeId x, float rate, std::uint64_t seed) {
  Attrs a;
  a.rate = rate;
  a.seed = seed;
  return make(Op::Dropout, {x}, a);
}

NodeId Builder::reshape(NodeId x, Shape target) {
  const std::int64_t total = numel(shape(x));
  std::int64_t known = 1;
  int unknown = -1;
  for (size_t i = 0; i < target.size(); ++i) {
    if (target[i] == -1) {
      if (unknown >= 0) fail("reshape allows one -1, got " + shapeText(target));
      unknown = int(i);
    } else if (target[i] < 0) {
      fail("reshape's dimensions must be positive or -1, got " + shapeText(target));
    } else {
      known *= target[i];
    }
  }
  if (unknown >= 0) {
    if (known == 0 || total % known != 0) fail("cannot reshape " + shapeText(shape(x)) + " to " + shapeText(target));
    target[size_t(unknown)] = total / known;
  }
  if (target == shape(x)) return x;
  Attrs a;
  a.ints = std::move(target);
  return make(Op::Reshape, {x}, a);
}

NodeId Builder::transpose(NodeId x, std::vector<std::int64_t> perm) {
  Attrs a;
  a.ints = std::move(perm);
  return make(Op::Transpose, {x}, a);
}

NodeId Builder::broadcastTo(NodeId x, Shape target) {
  if (shape(x) == target) return x;
  Attrs a;
  a.ints = std::move(target);
  return make(Op::BroadcastTo, {x}, a);
}

NodeId Builder::concat(const std::vector<NodeId>& xs, std::int64_t axis) {
  if (xs.empty()) fail("concat needs at least one tensor");
  Attrs a;
  a.axis = normaliseAxis(axis, shape(xs[0]).size());
  if (xs.size() == 1) return xs[0];
  return make(Op::Concat, xs, a);
}

NodeId Builder::slice(NodeId x, std::int64_t axis, std::int64_t start, std::int64_t length) {
  Attrs a;
  a.axis = normaliseAxis(axis, shape(x).size());
  a.start = start;
  a.length = length;
  return make(Op::Slice, {x}, a);
}

NodeId Builder::sumToShape(NodeId x, const Shape& target) {
  const Shape s = shape(x);
  if (s == target) return x;
  if (s.size() < target.size()) fail("cannot sum " + shapeText(s) + " to " + shapeText(target));
  const size_t lead = s.size() - target.size();
  std::vector<std::int64_t> axes;
  for (size_t d = 0; d < s.size(); ++d)
    if (d < lead || (target[d - lead] == 1 && s[d] != 1)) axes.push_back(std::int64_t(d));
  NodeId r = axes.empty() ? x : reduceSum(x, axes, true);
  return reshape(r, target);
}

NodeId Builder::reduceSum(NodeId x, std::vector<std::int64_t> axes, bool keepDims) {
  for (auto& ax : axes) ax = normaliseAxis(ax, shape(x).size());
  std::sort(axes.begin(), axes.end());
  Attrs a;
  a.ints = std::move(axes);
  a.keepDims = keepDims;
  return make(Op::ReduceSum, {x}, a);
}

NodeId Builder::reduceMax(NodeId x, std::vector<std::int64_t> axes, bool keepDims) {
  for (auto& ax : axes) ax = normaliseAxis(ax, shape(x).size());
  std::sort(axes.begin(), axes.end());
  Attrs a;
  a.ints = std::move(axes);
  a.keepDims = keepDims;
  return make(Op::ReduceMax, {x}, a);
}

NodeId Builder::reduceMean(NodeId x, std::vector<std::int64_t> axes, bool keepDims) {
  std::int64_t count = 1;
  for (std::int64_t ax : axes) count *= shape(x)[size_t(normaliseAxis(ax, shape(x).size()))];
  return scale(reduceSum(x, std::move(axes), keepDims), count ? 1.0f / float(count) : 0.0f);
}

NodeId Builder::softmax(NodeId x, std::int64_t axis) {
  Attrs a;
  a.axis = normaliseAxis(axis, shape(x).size());
  return make(Op::Softmax, {x}, a);
}

NodeId Builder::logSoftmax(NodeId x, std::int64_t axis) {
  Attrs a;
  a.axis = normaliseAxis(axis, shape(x).size());
  return make(Op::LogSoftmax, {x}, a);
}

NodeId Builder::matmul(NodeId a, NodeId b, bool transposeA, bool transposeB) {
  Attrs at;
  at.transposeA = transposeA;
  at.transposeB = transposeB;
  return make(Op::MatMul, {a, b}, at);
}

static Attrs windowAttrs(const Window2d& w) {
  Attrs a;
  a.kernelH = w.kernelH;
  a.kernelW = w.kernelW;
  a.strideH = w.strideH;
  a.strideW = w.strideW;
  a.padTop = w.padTop;
  a.padLeft = w.padLeft;
  a.padBottom = w.padBottom;
  a.padRight = w.padRight;
  return a;
}

NodeId Builder::conv2d(NodeId x, NodeId w, const Window2d& win) { return make(Op::Conv2d, {x, w}, windowAttrs(win)); }

NodeId Builder::conv2dGradInput(NodeId g, NodeId w, const Window2d& win, const Shape& inputShape) {
  Attrs a = windowAttrs(win);
  a.refShape = inputShape;
  return make(Op::Conv2dGradInput, {g, w}, a);
}

NodeId Builder::conv2dGradWeight(NodeId x, NodeId g, const Window2d& win, const Shape& weightShape) {
  Attrs a = windowAttrs(win);
  a.refShape = weightShape;
  return make(Op::Conv2dGradWeight, {x, g}, a);
}

NodeId Builder::maxPool2d(NodeId x, const Window2d& win) { return make(Op::MaxPool2d, {x}, windowAttrs(win)); }
NodeId Builder::maxPool2dGrad(NodeId x, NodeId g, const Window2d& win) { return make(Op::MaxPool2dGrad, {x, g}, windowAttrs(win)); }
NodeId Builder::avgPool2d(NodeId x, const Window2d& win) { return make(Op::AvgPool2d, {x}, windowAttrs(win)); }

NodeId Builder::avgPool2dGrad(NodeId g, const Window2d& win, const Shape& inputShape) {
  Attrs a = windowAttrs(win);
  a.refShape = inputShape;
  return make(Op::AvgPool2dGrad, {g}, a);
}

NodeId Builder::gather(NodeId table, NodeId ids) { return make(Op::Gather, {table, ids}); }

NodeId Builder::scatterAddRows(NodeId ids, NodeId g, std::int64_t rows) {
  Attrs a;
  a.refShape = {rows, shape(g).back()};
  return make(Op::ScatterAddRows, {ids, g}, a);
}

NodeId Builder::layerNorm(NodeId x, NodeId gamma, NodeId beta, float eps) {
  Attrs a;
  a.eps = eps;
  return make(Op::LayerNorm, {x, gamma, beta}, a);
}

NodeId Builder::attention(NodeId q, NodeId k, NodeId v, std::int64_t heads, bool causal, NodeId lengths) {
  Attrs a;
  a.heads = heads;
  a.causal = causal;
  std::vector<NodeId> inputs = {q, k, v};
  if (lengths != kNoNode) inputs.push_back(lengths);
  return make(Op::Attention, inputs, a);
}

}  // namespace cas::ir
