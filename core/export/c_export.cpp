#include "core/export/c_export.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <set>

#include "cas/version.hpp"
#include "core/export/c_text.hpp"
#include "core/ir/passes.hpp"

namespace cas::exports {
namespace {

using ir::NodeId;
using ir::Op;
using ir::Shape;

std::string number(std::int64_t v) { return std::to_string(v); }

std::int64_t product(const Shape& s, size_t from, size_t to) {
  std::int64_t p = 1;
  for (size_t d = from; d < to; ++d) p *= s[d];
  return p;
}

// The stride of each axis of `out` in a tensor of shape `in` broadcast to it (numpy's rules,
// axes aligned at the right): 0 on the axes it is broadcast along.
std::vector<std::int64_t> broadcastStrides(const Shape& in, const Shape& out) {
  std::vector<std::int64_t> strides(out.size(), 0);
  std::int64_t stride = 1;
  for (size_t k = 0; k < in.size(); ++k) {
    const size_t axis = in.size() - 1 - k, outAxis = out.size() - 1 - k;
    if (in[axis] != 1) strides[outAxis] = stride;
    stride *= in[axis];
  }
  return strides;
}

// "d0 * 12 + d2" over loop counters d0, d1, ...; "0" when every stride is 0.
std::string indexExpression(const std::vector<std::int64_t>& strides) {
  std::string s;
  for (size_t d = 0; d < strides.size(); ++d) {
    if (strides[d] == 0) continue;
    if (!s.empty()) s += " + ";
    s += "d" + number(std::int64_t(d)) + (strides[d] == 1 ? "" : " * " + number(strides[d]));
  }
  return s.empty() ? "0" : s;
}

// The helpers the generated code may call, each emitted only when used (an unused static
// function is a warning, and the file compiles with -Werror).
enum class Helper { Tanh, Gelu, Softmax, Pool2d };

std::string helperSource(Helper h) {
  switch (h) {
    case Helper::Tanh: {
      // The rational function the CPU backend computes (core/ir/ops.hpp's fastTanh), from its constants.
      std::string s = "/* tanh as the CPU backend computes it: a rational function, accurate to a few ulp. */\n"
                      "static float cas_tanh(float x) {\n"
                      "  const float clamp = " + floatLiteral(ir::kTanhClamp) + ";\n"
                      "  float x2, p, q;\n"
                      "  x = x < -clamp ? -clamp : (x > clamp ? clamp : x);\n"
                      "  x2 = x * x;\n"
                      "  p = " + floatLiteral(ir::kTanhNumerator[0]) + ";\n";
      for (size_t k = 1; k < std::size(ir::kTanhNumerator); ++k) s += "  p = p * x2 + " + floatLiteral(ir::kTanhNumerator[k]) + ";\n";
      s += "  p = p * x;\n  q = " + floatLiteral(ir::kTanhDenominator[0]) + ";\n";
      for (size_t k = 1; k < std::size(ir::kTanhDenominator); ++k) s += "  q = q * x2 + " + floatLiteral(ir::kTanhDenominator[k]) + ";\n";
      return s + "  return p / q;\n}\n";
    }
    case Helper::Gelu:
      return "static float cas_gelu(float x) { return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f)); }\n";
    case Helper::Softmax:
      return "/* softmax (or log-softmax) over the middle axis of [outer, len, inner]. */\n"
             "static void cas_softmax(const float* x, float* y, long outer, long len, long inner, int logarithm) {\n"
             "  long r, k;\n"
             "  for (r = 0; r < outer * inner; ++r) {\n"
             "    const long base = (r / inner) * len * inner + r % inner;\n"
             "    float m = -HUGE_VALF, sum = 0.0f, log_sum;\n"
             "    for (k = 0; k < len; ++k) m = m < x[base + k * inner] ? x[base + k * inner] : m;\n"
             "    for (k = 0; k < len; ++k) sum += expf(x[base + k * inner] - m);\n"
             "    log_sum = logf(sum);\n"
             "    for (k = 0; k < len; ++k) {\n"
             "      const float shifted = x[base + k * inner] - m;\n"
             "      y[base + k * inner] = logarithm ? shifted - log_sum : expf(shifted) / sum;\n"
             "    }\n"
             "  }\n"
             "}\n";
    case Helper::Pool2d:
      return "/* max or average pooling of planes [planes, h, w]; the average counts the padding. */\n"
             "static void cas_pool2d(const float* x, float* y, long planes, long h, long wd, long kh, long kw, long sh, long sw,\n"
             "                       long pt, long pl, long oh, long ow, int is_max) {\n"
             "  long plane, oy, ox, i, j;\n"
             "  for (plane = 0; plane < planes; ++plane)\n"
             "    for (oy = 0; oy < oh; ++oy)\n"
             "      for (ox = 0; ox < ow; ++ox) {\n"
             "        float acc = is_max ? -HUGE_VALF : 0.0f;\n"
             "        for (i = 0; i < kh; ++i)\n"
             "          for (j = 0; j < kw; ++j) {\n"
             "            const long yy = oy * sh + i - pt, xx = ox * sw + j - pl;\n"
             "            float v;\n"
             "            if (yy < 0 || yy >= h || xx < 0 || xx >= wd) continue;\n"
             "            v = x[(plane * h + yy) * wd + xx];\n"
             "            acc = is_max ? (acc < v ? v : acc) : acc + v;\n"
             "          }\n"
             "        y[(plane * oh + oy) * ow + ox] = is_max ? acc : acc / (float)(kh * kw);\n"
             "      }\n"
             "}\n";
  }
  return {};
}

// The function being generated: each node's storage, the statements, the helpers they call.
class CProgram {
 public:
  CProgram(const ir::Graph& g, const Weights& weights) : g_(g), weights_(weights), storage_(g.nodes.size()), used_(g.nodes.size()) {
    // A convolution reads its weights from a copy laid out for it (see conv2d below).
    for (const ir::Node& n : g.nodes)
      for (size_t k = 0; k < n.inputs.size(); ++k) used_[size_t(n.inputs[k])] = used_[size_t(n.inputs[k])] || n.op != Op::Conv2d || k != 1;
    for (const ir::Output& o : g.outputs) used_[size_t(o.node)] = true;
  }
  // Whether any node or output reads node id's own array (an unused static array would be a warning).
  bool used(NodeId id) const { return used_[size_t(id)]; }
  // Floats of workspace after the memory plan's, for helpers' accumulators.
  void needScratch(std::int64_t floats) { scratch_ = std::max(scratch_, floats); }
  std::int64_t scratch() const { return scratch_; }

  const ir::Graph& ir() const { return g_; }
  const ir::Node& node(NodeId id) const { return g_.node(id); }
  const Shape& shape(NodeId id) const { return g_.node(id).shape; }
  const Weights& weights() const { return weights_; }
  // The C expression naming node id's first element ("obs", "w3", "v12").
  const std::string& ref(NodeId id) const { return storage_[size_t(id)]; }
  const std::string& in(NodeId id, size_t k) const { return ref(g_.node(id).inputs[k]); }
  void name(NodeId id, std::string storage) { storage_[size_t(id)] = std::move(storage); }

  void line(const std::string& text) { body_ += "  " + text + "\n"; }
  void use(Helper h) { helpers_.insert(h); }
  void addStatic(const std::string& text) { statics_ += text; }

  const std::string& body() const { return body_; }
  const std::string& statics() const { return statics_; }
  const std::set<Helper>& helpers() const { return helpers_; }

 private:
  const ir::Graph& g_;
  const Weights& weights_;
  std::vector<std::string> storage_;
  std::vector<bool> used_;
  std::int64_t scratch_ = 0;
  std::string body_, statics_;
  std::set<Helper> helpers_;
};

// `text` with `indent` before each of its lines.
std::string indented(const std::string& text, const std::string& indent) {
  std::string out = indent;
  for (char c : text) {
    out += c;
    if (c == '\n') out += indent;
  }
  return out;
}

// Each line of `code` as a statement line of the function.
void lines(CProgram& p, const std::string& code) {
  size_t from = 0;
  while (from <= code.size()) {
    const size_t at = code.find('\n', from);
    p.line(code.substr(from, at == std::string::npos ? std::string::npos : at - from));
    if (at == std::string::npos) break;
    from = at + 1;
  }
}

// Nested loops over `shape` with counters d0, d1, ... and a flat output index i; `statement`
// is the innermost statement.
void loopNest(CProgram& p, const Shape& shape, const std::string& statement) {
  p.line("{");
  p.line("  long i = 0;");
  std::string indent = "  ";
  for (size_t d = 0; d < shape.size(); ++d) {
    p.line(indent + "for (long d" + number(std::int64_t(d)) + " = 0; d" + number(std::int64_t(d)) + " < " + number(shape[d]) + "; ++d" +
           number(std::int64_t(d)) + ")");
    indent += "  ";
  }
  p.line(indent + "{ " + statement + " ++i; }");
  p.line("}");
}

// --- the forms ---------------------------------------------------------------------------------
// Each writes the statements computing IR node `id` into its storage p.ref(id).

// Leaves and reshapes get storage and no statements: a reshape is its input's storage.
void leaf(CProgram& p, NodeId id) {
  const ir::Node& n = p.node(id);
  if (n.op == Op::Constant) {
    std::vector<float> values = n.attrs.values;
    if (values.size() == 1) values.assign(size_t(ir::numel(n.shape)), n.attrs.values[0]);
    p.name(id, "c" + number(id));
    if (p.used(id)) p.addStatic(staticArray(p.ref(id), values, ir::describeNode(p.ir(), id) + " " + ir::shapeText(n.shape, ", ")));
    return;
  }
  if (n.attrs.role == ir::InputRole::Data && n.attrs.name == "obs") {
    p.name(id, "obs");
    return;
  }
  if (n.attrs.role == ir::InputRole::Parameter) {
    const auto w = p.weights().find(n.attrs.name);
    if (w == p.weights().end() || std::int64_t(w->second.size()) != ir::numel(n.shape))
      throw ExportError("the weights hold no " + ir::shapeText(n.shape, ", ") + " values for parameter '" + n.attrs.name + "'");
    p.name(id, "w" + number(id));
    if (p.used(id)) p.addStatic(staticArray(p.ref(id), w->second, n.attrs.name + " " + ir::shapeText(n.shape, ", ")));
    return;
  }
  throw ExportError(ir::describeNode(p.ir(), id) + " is an input other than the observation, which the C API has no argument for");
}

void reshape(CProgram& p, NodeId id) { p.name(id, p.in(id, 0)); }

// Elementwise ops: the op table's expression over $0, $1, $2 (plain C; the CUDA backend's
// epilogues use the same text), with numpy broadcasting.
void elementwiseWith(CProgram& p, NodeId id, std::string_view expression) {
  const ir::Node& n = p.node(id);
  const bool plain = std::all_of(n.inputs.begin(), n.inputs.end(), [&](NodeId in) {
    return p.shape(in) == n.shape || ir::numel(p.shape(in)) == 1;
  });
  std::string e(expression);
  for (size_t k = 0; k < n.inputs.size(); ++k) {
    const Shape& s = p.shape(n.inputs[k]);
    const std::string index = plain ? (s == n.shape ? "i" : "0") : indexExpression(broadcastStrides(s, n.shape));
    const std::string operand = p.in(id, k) + "[" + index + "]";
    const std::string placeholder = "$" + number(std::int64_t(k));
    for (size_t at = e.find(placeholder); at != std::string::npos; at = e.find(placeholder, at + operand.size())) e.replace(at, 2, operand);
  }
  if (e.find("cas_tanh(") != std::string::npos) p.use(Helper::Tanh);
  if (e.find("cas_gelu(") != std::string::npos) p.use(Helper::Gelu);
  if (plain) p.line("for (long i = 0; i < " + number(ir::numel(n.shape)) + "; ++i) " + p.ref(id) + "[i] = " + e + ";");
  else loopNest(p, n.shape, p.ref(id) + "[i] = " + e + ";");
}

void elementwise(CProgram& p, NodeId id) { elementwiseWith(p, id, ir::opInfo(p.node(id).op).cuda); }
void broadcastTo(CProgram& p, NodeId id) { elementwiseWith(p, id, "$0"); }

void transpose(CProgram& p, NodeId id) {
  const ir::Node& n = p.node(id);
  const Shape& xs = p.shape(n.inputs[0]);
  std::vector<std::int64_t> inStride(xs.size()), strides(n.shape.size());
  for (size_t d = xs.size(); d-- > 0;) inStride[d] = d + 1 < xs.size() ? inStride[d + 1] * xs[d + 1] : 1;
  for (size_t d = 0; d < strides.size(); ++d) strides[d] = inStride[size_t(n.attrs.ints[d])];
  loopNest(p, n.shape, p.ref(id) + "[i] = " + p.in(id, 0) + "[" + indexExpression(strides) + "];");
}

void concat(CProgram& p, NodeId id) {
  const ir::Node& n = p.node(id);
  const auto axis = size_t(n.attrs.axis);
  const std::int64_t outer = product(n.shape, 0, axis), inner = product(n.shape, axis + 1, n.shape.size());
  const std::int64_t row = n.shape[axis] * inner;
  std::int64_t offset = 0;
  for (size_t k = 0; k < n.inputs.size(); ++k) {
    const std::int64_t chunk = p.shape(n.inputs[k])[axis] * inner;
    p.line("for (long o = 0; o < " + number(outer) + "; ++o) for (long j = 0; j < " + number(chunk) + "; ++j) " + p.ref(id) + "[o * " +
           number(row) + " + " + number(offset) + " + j] = " + p.in(id, k) + "[o * " + number(chunk) + " + j];");
    offset += chunk;
  }
}

void slice(CProgram& p, NodeId id) {
  const ir::Node& n = p.node(id);
  const auto axis = size_t(n.attrs.axis);
  const Shape& xs = p.shape(n.inputs[0]);
  const std::int64_t outer = product(n.shape, 0, axis), inner = product(n.shape, axis + 1, n.shape.size());
  const std::int64_t chunk = n.attrs.length * inner, row = xs[axis] * inner, start = n.attrs.start * inner;
  p.line("for (long o = 0; o < " + number(outer) + "; ++o) for (long j = 0; j < " + number(chunk) + "; ++j) " + p.ref(id) + "[o * " +
         number(chunk) + " + j] = " + p.in(id, 0) + "[o * " + number(row) + " + " + number(start) + " + j];");
}

// Over the input's elements in order, each added to (or compared with) its output element.
void reduce(CProgram& p, NodeId id) {
  const ir::Node& n = p.node(id);
  const Shape& xs = p.shape(n.inputs[0]);
  const std::vector<std::int64_t> outStride = ir::reductionOutputStrides(xs, n.attrs.ints);
  const bool isMax = n.op == Op::ReduceMax;
  const std::string out = p.ref(id) + "[" + indexExpression(outStride) + "]", x = p.in(id, 0) + "[i]";
  p.line("for (long i = 0; i < " + number(ir::numel(n.shape)) + "; ++i) " + p.ref(id) + "[i] = " + (isMax ? "-HUGE_VALF" : "0.0f") + ";");
  loopNest(p, xs, isMax ? "if (" + out + " < " + x + ") " + out + " = " + x + ";" : out + " += " + x + ";");
}

void softmax(CProgram& p, NodeId id) {
  const ir::Node& n = p.node(id);
  const auto axis = size_t(n.attrs.axis);
  p.use(Helper::Softmax);
  p.line("cas_softmax(" + p.in(id, 0) + ", " + p.ref(id) + ", " + number(product(n.shape, 0, axis)) + ", " + number(n.shape[axis]) + ", " +
         number(product(n.shape, axis + 1, n.shape.size())) + ", " + (n.op == Op::LogSoftmax ? "1" : "0") + ");");
}

// One product per matrix of the broadcast leading axes, with every size a constant (the
// innermost loop, over the output's columns, vectorises at -O2). Each output sums its terms in
// the order of the inner dimension.
void matmul(CProgram& p, NodeId id) {
  const ir::Node& n = p.node(id);
  const Shape &as = p.shape(n.inputs[0]), &bs = p.shape(n.inputs[1]);
  const bool ta = n.attrs.transposeA, tb = n.attrs.transposeB;
  const std::int64_t m = n.shape[n.shape.size() - 2], cols = n.shape.back(), k = ta ? as[as.size() - 2] : as.back();
  const Shape lead(n.shape.begin(), n.shape.end() - 2);
  const std::vector<std::int64_t> aStrides = broadcastStrides(Shape(as.begin(), as.end() - 2), lead);
  const std::vector<std::int64_t> bStrides = broadcastStrides(Shape(bs.begin(), bs.end() - 2), lead);
  std::string code = "{\n  long i = 0;\n";
  std::string indent = "  ";
  for (size_t d = 0; d < lead.size(); ++d) {
    code += indent + filled("for (long d{D} = 0; d{D} < {SIZE}; ++d{D})\n", {{"D", number(std::int64_t(d))}, {"SIZE", number(lead[d])}});
    indent += "  ";
  }
  const std::string product = filled(
      "{\n"
      "  const float* const a = {A} + ({AI}) * {AM};\n"
      "  const float* const b = {B} + ({BI}) * {BM};\n"
      "  float* const c = {C} + i * {CM};\n"
      "  for (long r = 0; r < {CM}; ++r) c[r] = 0.0f;\n"
      "  for (long r = 0; r < {M}; ++r)\n"
      "    for (long p = 0; p < {K}; ++p) {\n"
      "      const float av = a[{AT}];\n"
      "      for (long j = 0; j < {N}; ++j) c[r * {N} + j] += av * b[{BT}];\n"
      "    }\n"
      "  ++i;\n"
      "}",
      {{"A", p.in(id, 0)}, {"B", p.in(id, 1)}, {"C", p.ref(id)}, {"AI", indexExpression(aStrides)}, {"BI", indexExpression(bStrides)},
       {"AM", number(m * k)}, {"BM", number(k * cols)}, {"CM", number(m * cols)}, {"M", number(m)}, {"K", number(k)}, {"N", number(cols)},
       {"AT", ta ? "p * " + number(m) + " + r" : "r * " + number(k) + " + p"}, {"BT", tb ? "j * " + number(k) + " + p" : "p * " + number(cols) + " + j"}});
  lines(p, code + indented(product, indent) + "\n}");
}

// The weights [o, c, kh, kw] are written again as [c, kh, kw, o], so that the innermost loop
// runs over the output channels: contiguous, as many as the layer has filters, and with every
// size a constant, a loop compilers vectorise at -O2. Each output sums its terms over channel,
// row and column. The weights must be known here: a parameter or a constant, as every PDL
// conv2d's are.
void conv2d(CProgram& p, NodeId id) {
  const ir::Node& n = p.node(id);
  const NodeId weight = n.inputs[1];
  const Shape &xs = p.shape(n.inputs[0]), &ws = p.shape(weight);
  const ir::Node& w = p.node(weight);
  std::vector<float> values;
  if (w.op == Op::Constant) values = w.attrs.values.size() == 1 ? std::vector<float>(size_t(ir::numel(ws)), w.attrs.values[0]) : w.attrs.values;
  else if (w.op == Op::Input && w.attrs.role == ir::InputRole::Parameter) values = p.weights().at(w.attrs.name);  // leaf() checked it
  else throw ExportError(ir::describeNode(p.ir(), id) + ": the C export needs a convolution's weights to be a parameter or a constant");
  const std::int64_t outputs = ws[0], taps = ws[1] * ws[2] * ws[3];
  std::vector<float> channelLast(values.size());
  for (std::int64_t oc = 0; oc < outputs; ++oc)
    for (std::int64_t t = 0; t < taps; ++t) channelLast[size_t(t * outputs + oc)] = values[size_t(oc * taps + t)];
  const std::string name = "wt" + number(id);
  p.addStatic(staticArray(name, channelLast, "the weights of " + ir::describeNode(p.ir(), id) + ", output channel last"));
  p.needScratch(outputs);
  const ir::Attrs& a = n.attrs;
  const std::string code = filled(
      "for (long b = 0; b < {N}; ++b)\n"
      "  for (long oy = 0; oy < {OH}; ++oy)\n"
      "    for (long ox = 0; ox < {OW}; ++ox) {\n"
      "      for (long oc = 0; oc < {O}; ++oc) scratch[oc] = 0.0f;\n"
      "      for (long ic = 0; ic < {C}; ++ic)\n"
      "        for (long i = 0; i < {KH}; ++i) {\n"
      "          const long yy = oy * {SH} + i - {PT};\n"
      "          if (yy < 0 || yy >= {H}) continue;\n"
      "          for (long j = 0; j < {KW}; ++j) {\n"
      "            const long xx = ox * {SW} + j - {PL};\n"
      "            const float* taps;\n"
      "            float v;\n"
      "            if (xx < 0 || xx >= {W}) continue;\n"
      "            v = {X}[((b * {C} + ic) * {H} + yy) * {W} + xx];\n"
      "            taps = {WT} + ((ic * {KH} + i) * {KW} + j) * {O};\n"
      "            for (long oc = 0; oc < {O}; ++oc) scratch[oc] += v * taps[oc];\n"
      "          }\n"
      "        }\n"
      "      for (long oc = 0; oc < {O}; ++oc) {Y}[((b * {O} + oc) * {OH} + oy) * {OW} + ox] = scratch[oc];\n"
      "    }",
      {{"N", number(xs[0])}, {"C", number(xs[1])}, {"H", number(xs[2])}, {"W", number(xs[3])}, {"O", number(outputs)},
       {"KH", number(a.kernelH)}, {"KW", number(a.kernelW)}, {"SH", number(a.strideH)}, {"SW", number(a.strideW)},
       {"PT", number(a.padTop)}, {"PL", number(a.padLeft)}, {"OH", number(n.shape[2])}, {"OW", number(n.shape[3])},
       {"X", p.in(id, 0)}, {"WT", name}, {"Y", p.ref(id)}});
  lines(p, code);
}

void pool2d(CProgram& p, NodeId id) {
  const ir::Node& n = p.node(id);
  const Shape& xs = p.shape(n.inputs[0]);
  const ir::Attrs& a = n.attrs;
  p.use(Helper::Pool2d);
  p.line("cas_pool2d(" + p.in(id, 0) + ", " + p.ref(id) + ", " + number(xs[0] * xs[1]) + ", " + number(xs[2]) + ", " + number(xs[3]) + ", " +
         number(a.kernelH) + ", " + number(a.kernelW) + ", " + number(a.strideH) + ", " + number(a.strideW) + ", " + number(a.padTop) + ", " +
         number(a.padLeft) + ", " + number(n.shape[2]) + ", " + number(n.shape[3]) + ", " + (n.op == Op::MaxPool2d ? "1" : "0") + ");");
}

// Rows of the table by id; an id that is not an integer in range is refused, as the CPU backend
// refuses it.
void gather(CProgram& p, NodeId id) {
  const ir::Node& n = p.node(id);
  const Shape& table = p.shape(n.inputs[0]);
  const std::string rows = number(table[0]), width = number(table[1]);
  p.line("for (long i = 0; i < " + number(ir::numel(p.shape(n.inputs[1]))) + "; ++i) {");
  p.line("  const float row = " + p.in(id, 1) + "[i];");
  p.line("  if (!(row >= 0.0f && row < " + rows + ".0f) || row != floorf(row)) return 1;");
  p.line("  for (long j = 0; j < " + width + "; ++j) " + p.ref(id) + "[i * " + width + " + j] = " + p.in(id, 0) + "[(long)row * " + width +
         " + j];");
  p.line("}");
}

// One row per IR op, in the IR's enum order (checked below): its form, or no form and why.
struct CForm {
  Op op;
  void (*write)(CProgram&, NodeId);
  std::string_view whyNone;
};

constexpr CForm kCForms[] = {
    {Op::Input, leaf, ""},
    {Op::Constant, leaf, ""},
    {Op::Neg, elementwise, ""},
    {Op::Relu, elementwise, ""},
    {Op::Tanh, elementwise, ""},
    {Op::Sigmoid, elementwise, ""},
    {Op::Gelu, elementwise, ""},
    {Op::Exp, elementwise, ""},
    {Op::Log, elementwise, ""},
    {Op::Sqrt, elementwise, ""},
    {Op::StopGradient, elementwise, ""},
    {Op::Add, elementwise, ""},
    {Op::Sub, elementwise, ""},
    {Op::Mul, elementwise, ""},
    {Op::Div, elementwise, ""},
    {Op::Maximum, elementwise, ""},
    {Op::Minimum, elementwise, ""},
    {Op::GeluGrad, nullptr, kGradientOpHasNoForm},
    {Op::Greater, elementwise, ""},
    {Op::GreaterEqual, elementwise, ""},
    {Op::Less, elementwise, ""},
    {Op::LessEqual, elementwise, ""},
    {Op::Equal, elementwise, ""},
    {Op::NotEqual, elementwise, ""},
    {Op::Where, elementwise, ""},
    {Op::Dropout, nullptr, kDropoutHasNoForm},
    {Op::Reshape, reshape, ""},
    {Op::Transpose, transpose, ""},
    {Op::BroadcastTo, broadcastTo, ""},
    {Op::Concat, concat, ""},
    {Op::Slice, slice, ""},
    {Op::ReduceSum, reduce, ""},
    {Op::ReduceMax, reduce, ""},
    {Op::Softmax, softmax, ""},
    {Op::LogSoftmax, softmax, ""},
    {Op::MatMul, matmul, ""},
    {Op::Conv2d, conv2d, ""},
    {Op::Conv2dGradInput, nullptr, kGradientOpHasNoForm},
    {Op::Conv2dGradWeight, nullptr, kGradientOpHasNoForm},
    {Op::MaxPool2d, pool2d, ""},
    {Op::MaxPool2dGrad, nullptr, kGradientOpHasNoForm},
    {Op::AvgPool2d, pool2d, ""},
    {Op::AvgPool2dGrad, nullptr, kGradientOpHasNoForm},
    {Op::Gather, gather, ""},
    {Op::ScatterAddRows, nullptr, kGradientOpHasNoForm},
    {Op::Attention, nullptr, kFusedOpIsDecomposed},
    {Op::AttentionStats, nullptr, kGradientOpHasNoForm},
    {Op::AttentionGradQ, nullptr, kGradientOpHasNoForm},
    {Op::AttentionGradKV, nullptr, kGradientOpHasNoForm},
    {Op::LayerNorm, nullptr, kFusedOpIsDecomposed},
    {Op::LayerNormGrad, nullptr, kGradientOpHasNoForm},
};

constexpr bool formsInEnumOrder() {
  for (size_t k = 0; k < std::size(kCForms); ++k)
    if (kCForms[k].op != Op(k)) return false;
  return std::size(kCForms) == size_t(Op::kCount);
}
static_assert(formsInEnumOrder(), "kCForms needs one row per IR op, in the order of CAS_IR_OPS");

}  // namespace

CSource writeC(const ir::Graph& forward, const Weights& weights, const ExportMetadata& metadata, const std::string& headerName) {
  const ir::NodeId obs = forward.findInput("obs");
  if (obs == ir::kNoNode || forward.node(obs).shape.empty() || forward.node(obs).shape[0] != 1)
    throw ExportError("the C export needs the policy's graph at batch 1, with its observation input \"obs\"");
  ir::Graph g = forward;
  ir::planMemory(g);  // the workspace's layout: slots reused once their values are dead
  std::vector<std::int64_t> slotOffset(g.plan.sizes.size());
  for (size_t s = 1; s < slotOffset.size(); ++s) slotOffset[s] = slotOffset[s - 1] + g.plan.sizes[s - 1];

  CProgram p(g, weights);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const NodeId id = NodeId(i);
    const ir::Node& n = g.nodes[i];
    const CForm& form = kCForms[size_t(n.op)];
    if (!form.write)
      throw ExportError("the IR op '" + std::string(ir::opName(n.op)) + "' has no C form (" + std::string(form.whyNone) + "): " +
                        ir::describeNode(g, id));
    if (n.buffer >= 0 && n.op != Op::Reshape) {
      p.name(id, "v" + number(id));
      p.line("/* " + commentText(ir::describeNode(g, id) + " " + ir::shapeText(n.shape, ", ")) + " */");
      p.line("float* const " + p.ref(id) + " = workspace + " + number(slotOffset[size_t(n.buffer)]) + ";");
    }
    form.write(p, id);
  }

  // The API: one pointer per output, named after it; sizes per sample.
  const std::string guard = upper(identifier(headerName));
  const std::int64_t obsSize = ir::numel(g.node(obs).shape);
  // The memory plan's slots, then the helpers' scratch (at least one float: C has no empty arrays).
  const std::int64_t workspace = std::max<std::int64_t>(1, g.plan.totalElements + p.scratch());
  std::string outputParams, outputNames, outputArgs, sizes;
  for (const ir::Output& o : g.outputs) {
    const std::string c = identifier(o.name);
    outputParams += ", float* " + c;
    outputNames += ", " + c;
    outputArgs += ", " + c + " + i * POLICY_" + upper(c) + "_SIZE";
    sizes += "#define POLICY_" + upper(c) + "_SIZE " + number(ir::numel(g.node(o.node).shape)) + "  /* floats of " + commentText(o.name) + " per sample */\n";
    p.line("memcpy(" + c + ", " + p.ref(o.node) + ", sizeof(float) * " + number(ir::numel(g.node(o.node).shape)) + ");");
  }
  const std::string about = commentText("Generated by cuda-agent " + std::string(kVersion) + " from project '" + metadata.project + "'" +
                            (metadata.environment.empty() ? std::string() : " (environment " + metadata.environment + ")") + ", iteration " + number(metadata.iteration) + ".\n   Observation " +
                            jsonShape(metadata.observationShape) + "; actions " + jsonStrings(metadata.actionNames) + ".");

  CSource out;
  out.header = "/* " + commentText(headerName) + ": the policy's forward pass in C99 (libm only, no allocation). " + about + " */\n"
               "#ifndef " + guard + "\n#define " + guard + "\n\n"
               "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n"
               "#define POLICY_OBS_SIZE " + number(obsSize) + "  /* floats per observation, " + jsonShape(metadata.observationShape) + " */\n" +
               sizes + "#define POLICY_WORKSPACE_FLOATS " + number(workspace) + "  /* what policy_forward_with needs */\n\n"
               "/* One observation in, its outputs out. Returns 0, or 1 when an embedding id in the observation is not an\n"
               "   integer in range. Uses a static workspace: one thread at a time. */\n"
               "int policy_forward(const float* obs" + outputParams + ");\n\n"
               "/* `batch` observations, one after another in obs, and their outputs, one after another. Uses the\n"
               "   static workspace: one thread at a time. Returns as policy_forward, at the first sample that fails. */\n"
               "int policy_forward_batch(const float* obs" + outputParams + ", long batch);\n\n"
               "/* policy_forward with the caller's workspace of POLICY_WORKSPACE_FLOATS floats: threads with a workspace\n"
               "   each may call it at once. */\n"
               "int policy_forward_with(float* workspace, const float* obs" + outputParams + ");\n\n"
               "#ifdef __cplusplus\n}\n#endif\n\n#endif\n";

  std::string helpers;
  for (Helper h : p.helpers()) helpers += helperSource(h) + "\n";
  out.source = "/* The policy's forward pass. " + about + " */\n"
               "#include <math.h>\n#include <string.h>\n\n#include \"" + headerName + "\"\n\n" + p.statics() + "\n" + helpers +
               "int policy_forward_with(float* workspace, const float* obs" + outputParams + ") {\n"
               "  float* const scratch = workspace + " + number(g.plan.totalElements) + ";\n  (void)scratch;\n  (void)obs;\n" + p.body() + "  return 0;\n}\n\n"
               "static float policy_workspace[POLICY_WORKSPACE_FLOATS];\n\n"
               "int policy_forward(const float* obs" + outputParams + ") {\n"
               "  return policy_forward_with(policy_workspace, obs" + outputNames + ");\n}\n\n"
               "int policy_forward_batch(const float* obs" + outputParams + ", long batch) {\n"
               "  long i;\n"
               "  for (i = 0; i < batch; ++i) {\n"
               "    const int status = policy_forward(obs + i * POLICY_OBS_SIZE" + outputArgs + ");\n"
               "    if (status != 0) return status;\n"
               "  }\n"
               "  return 0;\n}\n";
  return out;
}

CSource exportC(const ExportablePolicy& policy, const std::string& headerName) {
  return writeC(forwardGraph(policy, 1), policy.weights, policy.metadata, headerName);
}

}  // namespace cas::exports
