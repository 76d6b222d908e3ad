// The built-ins lowered into IR nodes, and their table (builtins(), at the end): a row per
// built-in with its parameters and its lowering. Each layer names itself, makes its parameters
// and records its output shape, parameter count and FLOPs for `cuda-agent check` and the studio.
#include <algorithm>
#include <cmath>
#include <map>

#include "core/pdl/compiler_internal.hpp"

namespace cas::pdl::detail {

std::string Compiler::layerName(Frame& frame, const std::string& kind, const Args& a) {
  const int index = frame.counters[kind]++;
  std::string name = frame.path + "/" + kind + "_" + std::to_string(index);
  if (a.named.count("name") && a.get("name").kind == Value::Kind::String) name = frame.path + "/" + a.get("name").s;
  b_.setOrigin(name, a.call.line, a.call.column);  // the layer's nodes carry its name
  return name;
}

std::optional<NodeId> Compiler::parameter(const std::string& name, Shape shape, ir::Init init, std::int64_t fanIn, Pos pos) {
  if (auto made = madeParameters_.find(name); made != madeParameters_.end() && made->second.step < unrollStep_ && made->second.shape == shape)
    return made->second.node;
  if (auto it = parameterPos_.find(name); it != parameterPos_.end()) {
    errorWithNote(pos, "a parameter named '" + name + "' already exists; give this layer another name=", it->second, "the first one is made here");
    return std::nullopt;
  }
  out_.parameterCount += ir::numel(shape);
  if (out_.parameterCount > kMaxParameters) {
    error(pos, "the network has more than " + std::to_string(kMaxParameters) + " parameters");
    throw Abort{};
  }
  parameterPos_[name] = pos;
  out_.parameters.push_back({name, shape});
  const NodeId node = b_.input(name, shape, ir::InputRole::Parameter, init, fanIn);
  madeParameters_[name] = {node, shape, unrollStep_};
  return node;
}

std::pair<std::int64_t, std::int64_t> Compiler::samePadding(std::int64_t in, std::int64_t kernel, std::int64_t stride) {
  const std::int64_t out = (in + stride - 1) / stride;
  const std::int64_t total = std::max<std::int64_t>(0, (out - 1) * stride + kernel - in);
  return {total / 2, total - total / 2};
}
Value Compiler::lowerWindow(const std::string& fn, const Args& a, Frame&, Pos pos) {
  auto x = tensorArg(a, "x");
  if (!x) return Value::poison();
  if (x->shape.size() != 3) {
    error(a.pos("x"), fn + " expects a [channels, height, width] tensor, got shape " + shapeText(x->shape));
    return Value::poison();
  }
  auto kernel = intArg(a, "kernel", 2, 1, 4096);
  if (!kernel) return Value::poison();
  auto stride = intArg(a, "stride", *kernel, 1, 4096);
  auto padding = choiceArg(a, "padding", "valid", {"valid", "same"});
  if (!stride || !padding) return Value::poison();
  ir::Window2d w{*kernel, *kernel, *stride, *stride};
  if (*padding == "same") {
    std::tie(w.padTop, w.padBottom) = samePadding(x->shape[1], *kernel, *stride);
    std::tie(w.padLeft, w.padRight) = samePadding(x->shape[2], *kernel, *stride);
  } else if (*kernel > x->shape[1] || *kernel > x->shape[2]) {
    error(a.pos("kernel"), fn + "'s " + std::to_string(*kernel) + "x" + std::to_string(*kernel) + " window does not fit the " +
                               std::to_string(x->shape[1]) + "x" + std::to_string(x->shape[2]) + " input");
    return Value::poison();
  }
  NodeId y = fn == "max_pool2d" ? b_.maxPool2d(x->node, w) : b_.avgPool2d(x->node, w);
  Shape s(b_.shape(y).begin() + 1, b_.shape(y).end());
  return tensor(y, s, pos);
}

template <ir::Op op>
Value Compiler::lowerUnary(const std::string& fn, const Args& a, Frame&, Pos pos) {
  const Value& v = a.get("x");
  if (v.isNumber()) {
    const double r = ir::applyElementwise(op, float(v.asDouble()));
    if (!std::isfinite(r)) {
      error(pos, fn + "(" + numberText(v.asDouble()) + ") is not a finite number");
      return Value::poison();
    }
    return Value::number(r);
  }
  auto x = tensorArg(a, "x");
  if (!x) return Value::poison();
  return tensor(b_.unary(op, x->node), x->shape, pos);
}

Value Compiler::lowerDense(const std::string&, const Args& a, Frame& frame, Pos pos) {
  auto x = tensorArg(a, "x");
  auto units = intArg(a, "units", 0, 1, kMaxElementsPerSample);
  auto bias = boolArg(a, "bias", true);
  if (!x || !units || !bias) return Value::poison();
  const std::string name = layerName(frame, "dense", a);
  const std::int64_t k = ir::numel(x->shape);
  if (!checkSize({k, *units}, a.pos("units"), true)) return Value::poison();
  std::int64_t params = 0;
  auto y = affine(name, b_.reshape(x->node, {opt_.batch, k}), *units, *bias, pos, &params);
  if (!y) return Value::poison();
  recordLayer(name, "dense", {*units}, params, 2 * k * *units, pos);
  return tensor(*y, {*units}, pos);
}

// rows [N, K] times the layer's weight [K, units], plus its bias when asked: dense's and
// linear's parameters, counted into `params`.
std::optional<NodeId> Compiler::affine(const std::string& name, NodeId rows, std::int64_t units, bool bias, Pos pos, std::int64_t* params) {
  const std::int64_t k = b_.shape(rows).back();
  auto w = parameter(name + "/weight", {k, units}, ir::Init::FanInUniform, k, pos);
  if (!w) return std::nullopt;
  NodeId y = b_.matmul(rows, *w);
  *params = k * units;
  if (!bias) return y;
  auto bv = parameter(name + "/bias", {units}, ir::Init::FanInUniform, k, pos);
  if (!bv) return std::nullopt;
  *params += units;
  return b_.add(y, *bv);
}

// A dense layer over the last axis, the same weights at every position: [..., K] -> [..., units]
// (a Transformer's projections; dense flattens instead).
Value Compiler::lowerLinear(const std::string&, const Args& a, Frame& frame, Pos pos) {
  auto x = tensorArg(a, "x");
  auto units = intArg(a, "units", 0, 1, kMaxElementsPerSample);
  auto bias = boolArg(a, "bias", true);
  if (!x || !units || !bias) return Value::poison();
  if (x->shape.empty()) {
    error(a.pos("x"), "linear needs a tensor with at least one axis (its last axis is transformed); got a scalar tensor");
    return Value::poison();
  }
  const std::string name = layerName(frame, "linear", a);
  const std::int64_t k = x->shape.back(), positions = ir::numel(x->shape) / k;
  Shape outShape = x->shape;
  outShape.back() = *units;
  if (!checkSize({k, *units}, a.pos("units"), true) || !checkSize(outShape, a.pos("units"))) return Value::poison();
  std::int64_t params = 0;
  auto y = affine(name, b_.reshape(x->node, {opt_.batch * positions, k}), *units, *bias, pos, &params);
  if (!y) return Value::poison();
  recordLayer(name, "linear", outShape, params, 2 * k * *units * positions, pos);
  return tensor(b_.reshape(*y, withBatch(outShape)), outShape, pos);
}

Value Compiler::lowerConv2d(const std::string&, const Args& a, Frame& frame, Pos pos) {
  auto x = tensorArg(a, "x");
  if (!x) return Value::poison();
  if (x->shape.size() != 3) {
    error(a.pos("x"), "conv2d expects a [channels, height, width] tensor, got shape " + shapeText(x->shape));
    return Value::poison();
  }
  auto filters = intArg(a, "filters", 0, 1, 1 << 20);
  auto kernel = intArg(a, "kernel", 3, 1, 4096);
  auto stride = intArg(a, "stride", 1, 1, 4096);
  auto padding = choiceArg(a, "padding", "same", {"same", "valid"});
  auto bias = boolArg(a, "bias", true);
  if (!filters || !kernel || !stride || !padding || !bias) return Value::poison();
  const std::int64_t c = x->shape[0], h = x->shape[1], wd = x->shape[2], k = *kernel;
  ir::Window2d win{k, k, *stride, *stride};
  if (*padding == "same") {
    std::tie(win.padTop, win.padBottom) = samePadding(h, k, *stride);
    std::tie(win.padLeft, win.padRight) = samePadding(wd, k, *stride);
  } else if (k > h || k > wd) {
    error(a.pos("kernel"), "conv2d's " + std::to_string(k) + "x" + std::to_string(k) + " kernel does not fit the " + std::to_string(h) +
                               "x" + std::to_string(wd) + " input with padding='valid'");
    return Value::poison();
  }
  if (!checkSize({*filters, c, k, k}, a.pos("filters"), true)) return Value::poison();
  const std::string name = layerName(frame, "conv2d", a);
  auto w = parameter(name + "/weight", {*filters, c, k, k}, ir::Init::FanInUniform, c * k * k, pos);
  if (!w) return Value::poison();
  NodeId y = b_.conv2d(x->node, *w, win);
  Shape s(b_.shape(y).begin() + 1, b_.shape(y).end());
  if (!checkSize(s, pos)) return Value::poison();
  std::int64_t params = *filters * c * k * k;
  if (*bias) {
    auto bv = parameter(name + "/bias", {*filters}, ir::Init::FanInUniform, c * k * k, pos);
    if (!bv) return Value::poison();
    y = b_.add(y, b_.reshape(*bv, {*filters, 1, 1}));
    params += *filters;
  }
  recordLayer(name, "conv2d", s, params, 2 * c * k * k * ir::numel(s), pos);
  return tensor(y, s, pos);
}

Value Compiler::lowerFlatten(const std::string&, const Args& a, Frame&, Pos pos) {
  auto x = tensorArg(a, "x");
  if (!x) return Value::poison();
  const std::int64_t k = ir::numel(x->shape);
  return tensor(b_.reshape(x->node, {opt_.batch, k}), {k}, pos);
}

// Permutes the per-sample axes (the batch axis stays first): reversed by default, as numpy's.
Value Compiler::lowerTranspose(const std::string&, const Args& a, Frame&, Pos pos) {
  auto x = tensorArg(a, "x");
  if (!x) return Value::poison();
  const size_t rank = x->shape.size();
  std::vector<std::int64_t> perm = {0};
  if (a.has("axes")) {
    auto axes = axesArg(a, "axes", rank, true);
    if (!axes) return Value::poison();
    if (axes->size() != rank) {
      error(a.pos("axes"), "transpose's axes must name each of the tensor's " + std::to_string(rank) + " axes once, got " + std::to_string(axes->size()));
      return Value::poison();
    }
    perm.insert(perm.end(), axes->begin(), axes->end());
  } else {
    for (size_t d = rank; d > 0; --d) perm.push_back(std::int64_t(d));
  }
  Shape shape;
  for (size_t d = 1; d < perm.size(); ++d) shape.push_back(x->shape[size_t(perm[d] - 1)]);
  return tensor(b_.transpose(x->node, perm), shape, pos);
}

Value Compiler::lowerReshape(const std::string&, const Args& a, Frame&, Pos pos) {
  auto x = tensorArg(a, "x");
  if (!x) return Value::poison();
  const Value& sv = a.get("shape");
  std::vector<Value> dims = sv.kind == Value::Kind::Tuple ? sv.items : std::vector<Value>{sv};
  Shape target;
  int unknown = 0;
  for (const Value& d : dims) {
    if (d.kind != Value::Kind::Int || d.i == 0 || d.i < -1) {
      error(a.pos("shape"), "reshape's shape must be positive integers (one may be -1), got " + describe(d));
      return Value::poison();
    }
    unknown += d.i == -1;
    target.push_back(d.i);
  }
  std::int64_t known = 1;
  for (std::int64_t d : target)
    if (d > 0 && __builtin_mul_overflow(known, d, &known)) known = std::numeric_limits<std::int64_t>::max();
  const std::int64_t total = ir::numel(x->shape);
  if (unknown > 1) {
    error(a.pos("shape"), "reshape's shape may have only one -1, got " + shapeText(target));
    return Value::poison();
  }
  if ((unknown == 0 && known != total) || (unknown == 1 && total % known != 0)) {
    error(a.pos("shape"), "cannot reshape a tensor of shape " + shapeText(x->shape) + " (" + std::to_string(total) + " elements) to " +
                              shapeText(target));
    return Value::poison();
  }
  for (std::int64_t& d : target)
    if (d == -1) d = total / known;
  return tensor(b_.reshape(x->node, withBatch(target)), target, pos);
}

Value Compiler::lowerConcat(const std::string&, const Args& a, Frame&, Pos pos) {
  if (a.positional.empty()) {
    error(pos, "concat needs at least one tensor");
    return Value::poison();
  }
  std::vector<NodeId> nodes;
  for (size_t i = 0; i < a.positional.size(); ++i) {
    const Value& v = a.positional[i];
    if (v.kind != Value::Kind::Tensor) {
      error(a.positionalPos[i], "concat expects tensors, got " + describe(v));
      return Value::poison();
    }
    nodes.push_back(v.node);
  }
  const Shape& first = a.positional[0].shape;
  if (first.empty()) {
    error(a.positionalPos[0], "concat needs tensors with at least one axis");
    return Value::poison();
  }
  auto axes = axesArg(a, "axis", first.size(), false);
  if (!axes) return Value::poison();
  if (!a.has("axis")) (*axes)[0] = 1;  // default: the first per-sample axis
  const std::int64_t ax = (*axes)[0] - 1;
  Shape s = first;
  for (size_t i = 1; i < a.positional.size(); ++i) {
    const Shape& o = a.positional[i].shape;
    if (o.size() != first.size()) {
      error(a.positionalPos[i], "concat needs tensors with the same number of axes, got " + shapeText(first) + " and " + shapeText(o));
      return Value::poison();
    }
    bool fits = true;
    for (size_t d = 0; fits && d < o.size(); ++d) fits = std::int64_t(d) == ax || o[d] == first[d];
    if (!fits) {
      error(a.positionalPos[i], "concat along axis " + std::to_string(ax) + " needs equal shapes on the other axes, got " + shapeText(first) +
                                    " and " + shapeText(o));
      return Value::poison();
    }
    s[size_t(ax)] += o[size_t(ax)];
  }
  // Each part within the limit, their sum may not be: three of 2^27 elements make 3 x 2^27.
  if (!checkSize(s, pos)) return Value::poison();
  return tensor(b_.concat(nodes, ax + 1), s, pos);
}

Value Compiler::lowerMatmul(const std::string&, const Args& a, Frame& frame, Pos pos) {
  auto x = tensorArg(a, "a");
  auto y = tensorArg(a, "b");
  if (!x || !y) return Value::poison();
  if (x->shape.size() != 2 || y->shape.size() != 2) {
    error(pos, "matmul expects two matrices (2-D tensors per sample), got shapes " + shapeText(x->shape) + " and " + shapeText(y->shape));
    return Value::poison();
  }
  if (x->shape[1] != y->shape[0]) {
    error(pos, "matmul cannot multiply " + shapeText(x->shape) + " by " + shapeText(y->shape) + ": the first has " +
                   std::to_string(x->shape[1]) + " columns but the second has " + std::to_string(y->shape[0]) + " rows");
    return Value::poison();
  }
  Shape s = {x->shape[0], y->shape[1]};
  if (!checkSize(s, pos)) return Value::poison();  // [32768, 1] x [1, 32768]: 2^30 elements from 2^15 each
  recordLayer(frame.path + "/matmul", "matmul", s, 0, 2 * x->shape[0] * x->shape[1] * y->shape[1], pos);
  return tensor(b_.matmul(x->node, y->node), s, pos);
}

Value Compiler::lowerEmbedding(const std::string&, const Args& a, Frame& frame, Pos pos) {
  auto ids = tensorArg(a, "ids");
  auto vocab = intArg(a, "vocab", 0, 1, kMaxElementsPerSample);
  auto dim = intArg(a, "dim", 0, 1, kMaxElementsPerSample);
  if (!ids || !vocab || !dim) return Value::poison();
  if (!checkSize({*vocab, *dim}, a.pos("vocab"), true)) return Value::poison();
  Shape s = ids->shape;
  s.push_back(*dim);
  if (!checkSize(s, pos)) return Value::poison();
  const std::string name = layerName(frame, "embedding", a);
  auto table = parameter(name + "/table", {*vocab, *dim}, ir::Init::Normal, *dim, pos);
  if (!table) return Value::poison();
  recordLayer(name, "embedding", s, *vocab * *dim, 0, pos);
  return tensor(b_.gather(*table, ids->node), s, pos);
}

// A learned tensor of the given per-sample shape, the same for every sample (a Transformer's
// position table): a parameter broadcast over the batch.
Value Compiler::lowerParam(const std::string&, const Args& a, Frame& frame, Pos pos) {
  const Value& sv = a.get("shape");
  std::vector<Value> dims = sv.kind == Value::Kind::Tuple ? sv.items : std::vector<Value>{sv};
  Shape shape;
  for (const Value& d : dims) {
    if (d.kind != Value::Kind::Int || d.i < 1) {
      error(a.pos("shape"), "param's shape must be positive integers, got " + describe(d));
      return Value::poison();
    }
    shape.push_back(d.i);
  }
  auto init = choiceArg(a, "init", "zeros", {"zeros", "ones", "normal"});
  if (!init || !checkSize(shape, a.pos("shape"), true)) return Value::poison();
  const std::string name = layerName(frame, "param", a);
  const ir::Init kind = *init == "zeros" ? ir::Init::Zeros : *init == "ones" ? ir::Init::Ones : ir::Init::Normal;
  auto p = parameter(name + "/value", shape, kind, 0, pos);
  if (!p) return Value::poison();
  recordLayer(name, "param", shape, ir::numel(shape), 0, pos);
  return tensor(b_.broadcastTo(*p, withBatch(shape)), shape, pos);
}

Value Compiler::lowerLayerNorm(const std::string&, const Args& a, Frame& frame, Pos pos) {
  auto x = tensorArg(a, "x");
  auto eps = numberArg(a, "eps", 1e-5, 1e-12, 1.0);
  if (!x || !eps) return Value::poison();
  if (x->shape.empty()) {
    error(a.pos("x"), "layer_norm needs a tensor with at least one axis");
    return Value::poison();
  }
  const std::int64_t d = x->shape.back();
  const std::string name = layerName(frame, "layer_norm", a);
  auto gamma = parameter(name + "/gamma", {d}, ir::Init::Ones, d, pos);
  auto beta = parameter(name + "/beta", {d}, ir::Init::Zeros, d, pos);
  if (!gamma || !beta) return Value::poison();
  recordLayer(name, "layer_norm", x->shape, 2 * d, 8 * ir::numel(x->shape), pos);
  return tensor(b_.layerNorm(x->node, *gamma, *beta, float(*eps)), x->shape, pos);
}

Value Compiler::lowerAttention(const std::string&, const Args& a, Frame& frame, Pos pos) {
  auto q = tensorArg(a, "q");
  auto k = tensorArg(a, "k");
  auto v = tensorArg(a, "v");
  auto heads = intArg(a, "heads", 1, 1, 4096);
  auto causal = boolArg(a, "causal", false);
  if (!q || !k || !v || !heads || !causal) return Value::poison();
  for (const auto* t : {&*q, &*k, &*v})
    if (t->shape.size() != 2) {
      error(pos, "attention expects [sequence, width] tensors for q, k and v, got shape " + shapeText(t->shape));
      return Value::poison();
    }
  const std::int64_t t = q->shape[0], d = q->shape[1], s = k->shape[0];
  if (k->shape[1] != d || v->shape != k->shape) {
    error(pos, "attention needs k and v of shape [S, " + std::to_string(d) + "] with the same S, got " + shapeText(k->shape) + " and " +
                   shapeText(v->shape));
    return Value::poison();
  }
  if (d % *heads != 0) {
    error(a.pos("heads"), "attention's width " + std::to_string(d) + " is not divisible by heads=" + std::to_string(*heads));
    return Value::poison();
  }
  if (!checkSize({*heads, t, s}, pos)) return Value::poison();
  recordLayer(frame.path + "/attention", "attention", q->shape, 0, 4 * t * s * d, pos);
  return tensor(b_.attention(q->node, k->node, v->node, *heads, *causal), q->shape, pos);
}

Value Compiler::lowerDropout(const std::string&, const Args& a, Frame& frame, Pos pos) {
  auto x = tensorArg(a, "x");
  auto rate = numberArg(a, "rate", 0, 0, 1, true);
  if (!x || !rate) return Value::poison();
  const std::string name = layerName(frame, "dropout", a);
  if (!opt_.training || *rate == 0) return *x;
  std::uint64_t seed = opt_.seed ^ 0x9E3779B97F4A7C15ull;
  for (char c : name) seed = (seed ^ std::uint8_t(c)) * 1099511628211ull;
  return tensor(b_.dropout(x->node, float(*rate), seed), x->shape, pos);
}

Value Compiler::lowerSoftmax(const std::string& fn, const Args& a, Frame&, Pos pos) {
  auto x = tensorArg(a, "x");
  if (!x) return Value::poison();
  if (x->shape.empty()) {
    error(a.pos("x"), fn + " needs a tensor with at least one axis");
    return Value::poison();
  }
  auto axes = axesArg(a, "axis", x->shape.size(), false);
  if (!axes) return Value::poison();
  NodeId y = fn == "softmax" ? b_.softmax(x->node, (*axes)[0]) : b_.logSoftmax(x->node, (*axes)[0]);
  return tensor(y, x->shape, pos);
}

Value Compiler::lowerReduce(const std::string& fn, const Args& a, Frame&, Pos pos) {
  auto x = tensorArg(a, "x");
  auto keep = boolArg(a, "keepdims", false);
  if (!x || !keep) return Value::poison();
  auto axes = axesArg(a, "axis", x->shape.size(), true);
  if (!axes) return Value::poison();
  if (axes->empty()) return *x;
  NodeId y = fn == "sum" ? b_.reduceSum(x->node, *axes, *keep) : fn == "mean" ? b_.reduceMean(x->node, *axes, *keep) : b_.reduceMax(x->node, *axes, *keep);
  Shape s(b_.shape(y).begin() + 1, b_.shape(y).end());
  return tensor(y, s, pos);
}

Value Compiler::lowerClip(const std::string&, const Args& a, Frame&, Pos pos) {
  auto x = tensorArg(a, "x");
  auto lo = numberArg(a, "lo", 0, -1e30, 1e30);
  auto hi = numberArg(a, "hi", 0, -1e30, 1e30);
  if (!x || !lo || !hi) return Value::poison();
  if (*lo > *hi) {
    error(a.pos("lo"), "clip's lo (" + numberText(*lo) + ") is greater than its hi (" + numberText(*hi) + ")");
    return Value::poison();
  }
  return tensor(b_.clip(x->node, float(*lo), float(*hi)), x->shape, pos);
}

Value Compiler::lowerWhere(const std::string&, const Args& a, Frame&, Pos pos) {
  auto mask = tensorArg(a, "mask");
  if (!mask) return Value::poison();
  const Value &x = a.get("a"), &y = a.get("b");
  for (const char* n : {"a", "b"}) {
    const Value& v = a.get(n);
    if (!v.isNumber() && v.kind != Value::Kind::Tensor) {
      error(a.pos(n), std::string("where's ") + n + " must be a tensor or a number, got " + describe(v));
      return Value::poison();
    }
  }
  Shape s;
  try {
    s = ir::broadcastShapes(mask->shape, ir::broadcastShapes(x.kind == Value::Kind::Tensor ? x.shape : Shape{},
                                                             y.kind == Value::Kind::Tensor ? y.shape : Shape{}));
  } catch (const ir::ShapeError&) {
    error(pos, "where's mask, a and b do not broadcast: " + shapeText(mask->shape) + ", " + shapeText(x.shape) + ", " + shapeText(y.shape));
    return Value::poison();
  }
  if (!checkSize(s, pos)) return Value::poison();
  return tensor(b_.where(operand(*mask, s.size()), operand(x, s.size()), operand(y, s.size())), s, pos);
}

// --- the table ---------------------------------------------------------------------------------

// Every built-in, once: its parameters (in positional order, required or not) and its lowering.
// The compiler binds a call's arguments by the parameters and hands them to the lowering.
const std::map<std::string, BuiltinSpec>& builtins() {
  using C = Compiler;
  static const std::map<std::string, BuiltinSpec> table = {
      {"dense", {{{"x", true}, {"units", true}, {"bias", false}, {"name", false}}, false, &C::lowerDense}},
      {"linear", {{{"x", true}, {"units", true}, {"bias", false}, {"name", false}}, false, &C::lowerLinear}},
      {"conv2d", {{{"x", true}, {"filters", true}, {"kernel", false}, {"stride", false}, {"padding", false}, {"bias", false}, {"name", false}}, false, &C::lowerConv2d}},
      {"max_pool2d", {{{"x", true}, {"kernel", false}, {"stride", false}, {"padding", false}}, false, &C::lowerWindow}},
      {"avg_pool2d", {{{"x", true}, {"kernel", false}, {"stride", false}, {"padding", false}}, false, &C::lowerWindow}},
      {"flatten", {{{"x", true}}, false, &C::lowerFlatten}},
      {"reshape", {{{"x", true}, {"shape", true}}, false, &C::lowerReshape}},
      {"transpose", {{{"x", true}, {"axes", false}}, false, &C::lowerTranspose}},
      {"concat", {{{"axis", false}}, true, &C::lowerConcat}},
      {"matmul", {{{"a", true}, {"b", true}}, false, &C::lowerMatmul}},
      {"param", {{{"shape", true}, {"init", false}, {"name", false}}, false, &C::lowerParam}},
      {"embedding", {{{"ids", true}, {"vocab", true}, {"dim", true}, {"name", false}}, false, &C::lowerEmbedding}},
      {"layer_norm", {{{"x", true}, {"eps", false}, {"name", false}}, false, &C::lowerLayerNorm}},
      {"attention", {{{"q", true}, {"k", true}, {"v", true}, {"heads", false}, {"causal", false}}, false, &C::lowerAttention}},
      {"dropout", {{{"x", true}, {"rate", true}}, false, &C::lowerDropout}},
      {"relu", {{{"x", true}}, false, &C::lowerUnary<ir::Op::Relu>}},
      {"tanh", {{{"x", true}}, false, &C::lowerUnary<ir::Op::Tanh>}},
      {"sigmoid", {{{"x", true}}, false, &C::lowerUnary<ir::Op::Sigmoid>}},
      {"gelu", {{{"x", true}}, false, &C::lowerUnary<ir::Op::Gelu>}},
      {"exp", {{{"x", true}}, false, &C::lowerUnary<ir::Op::Exp>}},
      {"log", {{{"x", true}}, false, &C::lowerUnary<ir::Op::Log>}},
      {"softmax", {{{"x", true}, {"axis", false}}, false, &C::lowerSoftmax}},
      {"log_softmax", {{{"x", true}, {"axis", false}}, false, &C::lowerSoftmax}},
      {"sum", {{{"x", true}, {"axis", false}, {"keepdims", false}}, false, &C::lowerReduce}},
      {"mean", {{{"x", true}, {"axis", false}, {"keepdims", false}}, false, &C::lowerReduce}},
      {"max", {{{"x", true}, {"axis", false}, {"keepdims", false}}, false, &C::lowerReduce}},
      {"clip", {{{"x", true}, {"lo", true}, {"hi", true}}, false, &C::lowerClip}},
      {"where", {{{"mask", true}, {"a", true}, {"b", true}}, false, &C::lowerWhere}},
  };
  return table;
}

Value Compiler::lower(const std::string& fn, const Args& a, Frame& frame, Pos pos) {
  return (this->*builtins().at(fn).lower)(fn, a, frame, pos);
}

}  // namespace cas::pdl::detail
