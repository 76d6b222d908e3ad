#include "core/cuda_render/render.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string_view>

#include "core/cuda_render/implicit_conv.hpp"

namespace cas::gpu {

extern const std::string_view kKernelTemplates;  // core/cuda_render/kernels/*.cuh (embed_kernels.cmake)

namespace {

using ir::Graph;
using ir::kNoNode;
using ir::Node;
using ir::NodeId;
using ir::numel;
using ir::Op;
using ir::Shape;
using ir::Unit;
using ir::UnitKind;

std::int64_t envInt(const char* name, std::int64_t fallback) {
  const char* env = std::getenv(name);
  return env && *env ? std::max<std::int64_t>(1, std::atoll(env)) : fallback;
}

// A tiled GEMM's shape: BM x BN outputs per block in K steps of BK, TM x TN outputs per thread.
struct GemmTile {
  int bm, bn, bk, tm, tn;
  int threads() const { return (bm / tm) * (bn / tn); }
};

// The tile of every tiled GEMM. CAS_GEMM_TILE="BM,BN,BK,TM,TN" overrides it (for tuning by hand).
GemmTile gemmTile() {
  if (const char* env = std::getenv("CAS_GEMM_TILE"); env && *env) {
    GemmTile t{};
    if (std::sscanf(env, "%d,%d,%d,%d,%d", &t.bm, &t.bn, &t.bk, &t.tm, &t.tn) == 5 && t.tm > 0 && t.tn > 0 && t.bm % t.tm == 0 &&
        t.bn % t.tn == 0 && t.bm % 4 == 0 && t.bn % 4 == 0 && (t.bm * t.bk) % t.threads() == 0 && (t.bn * t.bk) % t.threads() == 0)
      return t;
  }
  // Measured on the H200 for the MLPs' products (1024 x 256 x 256 and smaller): larger tiles
  // leave SMs idle, so every tiled GEMM uses 32 x 32 in K steps of 16, 4 x 2 outputs a thread
  // (a 16- and an 8-byte shared load per 8 FMAs); merged launches share the block size.
  return {32, 32, 16, 4, 2};
}

// The blocks per SM the tiled GEMMs ask the compiler to fit (it caps registers to allow them).
std::int64_t tileBlocksPerSm() { return envInt("CAS_GEMM_BLOCKS_PER_SM", 1); }

std::string floatLiteral(float v) {
  if (v != v) return "__int_as_float(0x7fc00000)";
  if (v == 1.0f / 0.0f) return "__int_as_float(0x7f800000)";
  if (v == -1.0f / 0.0f) return "__int_as_float(0xff800000)";
  char text[64];
  std::snprintf(text, sizeof text, "%.9gf", double(v));
  std::string s = text;
  if (s.find_first_of(".en") == std::string::npos) s.insert(s.size() - 1, ".0");
  return s;
}

std::vector<std::int64_t> stridesOf(const Shape& s) {
  std::vector<std::int64_t> st(s.size(), 1);
  for (size_t d = s.size(); d-- > 1;) st[d - 1] = st[d] * s[d];
  return st;
}

std::int64_t product(const Shape& sh, size_t from, size_t to) {
  std::int64_t v = 1;
  for (size_t d = from; d < to; ++d) v *= sh[d];
  return v;
}

std::string str(std::int64_t v) { return std::to_string(v); }
std::string boolean(bool v) { return v ? "true" : "false"; }

// The index into a tensor of shape `from` (numpy-broadcast to `to`) for flat index `i` of `to`.
std::string broadcastIndex(const Shape& from, const Shape& to, const std::string& i) {
  const std::int64_t fromCount = numel(from), toCount = numel(to);
  if (fromCount == toCount) return i;
  if (fromCount == 1) return "0";
  const size_t rank = to.size(), offset = rank - from.size();
  Shape padded(offset, 1);
  padded.insert(padded.end(), from.begin(), from.end());
  // A trailing block (a bias row): i % fromCount. A leading block: i / (toCount / fromCount).
  size_t firstKept = 0;
  while (firstKept < rank && padded[firstKept] == 1) ++firstKept;
  bool trailing = true;
  for (size_t d = firstKept; d < rank; ++d) trailing = trailing && padded[d] == to[d];
  if (trailing) return "(" + i + " % " + str(fromCount) + ")";
  size_t lastKept = rank;
  while (lastKept > 0 && padded[lastKept - 1] == 1) --lastKept;
  bool leading = true;
  for (size_t d = 0; d < lastKept; ++d) leading = leading && padded[d] == to[d];
  if (leading) return "(" + i + " / " + str(toCount / fromCount) + ")";
  const auto toStride = stridesOf(to), fromStride = stridesOf(padded);
  std::string expr;
  for (size_t d = 0; d < rank; ++d) {
    if (padded[d] == 1) continue;
    if (!expr.empty()) expr += " + ";
    expr += "((" + i + " / " + str(toStride[d]) + ") % " + str(to[d]) + ") * " + str(fromStride[d]);
  }
  return "(" + expr + ")";
}

// The op table's CUDA expression of an elementwise op, with $k replaced by operand k.
std::string opExpression(Op op, const std::vector<std::string>& operands) {
  const std::string_view pattern = ir::opInfo(op).cuda;
  if (pattern.empty()) throw std::logic_error("op " + std::string(ir::opName(op)) + " has no CUDA expression");
  std::string out;
  for (size_t k = 0; k < pattern.size(); ++k) {
    if (pattern[k] == '$' && k + 1 < pattern.size() && pattern[k + 1] >= '0' && pattern[k + 1] <= '2') {
      out += operands.at(size_t(pattern[k + 1] - '0'));
      ++k;
    } else {
      out += pattern[k];
    }
  }
  return out;
}

// The flat input index of output o and reduced position r: kept axes enumerate o, reduced axes
// enumerate r, both row-major.
std::string reductionIndex(const Shape& xs, const std::vector<bool>& reduced) {
  const auto inStride = stridesOf(xs);
  auto axisTerms = [&](bool wantReduced, const std::string& var) {
    std::vector<size_t> axes;
    for (size_t d = 0; d < xs.size(); ++d)
      if (reduced[d] == wantReduced && xs[d] != 1) axes.push_back(d);
    std::string expr;
    std::int64_t below = 1;
    for (size_t k = axes.size(); k-- > 0;) {
      const size_t d = axes[k];
      std::string coord = below == 1 ? var : "(" + var + " / " + str(below) + ")";
      if (k != 0) coord = "(" + coord + " % " + str(xs[d]) + ")";
      if (!expr.empty()) expr += " + ";
      expr += coord + (inStride[d] == 1 ? "" : " * " + str(inStride[d]));
      below *= xs[d];
    }
    return expr.empty() ? std::string("0") : expr;
  };
  return "(" + axisTerms(false, "o") + ") + (" + axisTerms(true, "r") + ")";
}

// Indents every line of `text` by `by`.
std::string indent(const std::string& text, const std::string& by) {
  std::string out;
  size_t start = 0;
  while (start < text.size()) {
    const size_t end = text.find('\n', start);
    const std::string line = text.substr(start, end == std::string::npos ? std::string::npos : end - start + 1);
    out += (line == "\n" ? "" : by) + line;
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return out;
}

// The kernel's buffer parameters, p0, p1, ... in order of first use.
struct Params {
  std::vector<NodeId> buffers;  // storage nodes, in parameter order
  std::map<NodeId, int> index;
  std::string name(NodeId storageNode) {
    auto [it, added] = index.emplace(storageNode, int(buffers.size()));
    if (added) buffers.push_back(storageNode);
    return "p" + std::to_string(it->second);
  }
  std::string list() const {
    std::string text;
    for (size_t k = 0; k < buffers.size(); ++k) text += (k ? ", " : "") + std::string("float* p") + std::to_string(k);
    return text;
  }
};

class Renderer {
 public:
  Renderer(const Graph& g, ir::Schedule plan) : g_(g), plan_(std::move(plan)) {}

  Schedule run() {
    Schedule out;
    for (const ir::Step& st : plan_.steps) out.steps.push_back(render(st));
    out.plan = std::move(plan_);
    return out;
  }

 private:
  const Node& node(NodeId id) const { return g_.node(id); }
  NodeId storageOf(NodeId id) const { return plan_.storage[size_t(id)]; }
  const Unit& unit(int u) const { return plan_.units[size_t(u)]; }
  // Whether `in` (or, for a reshape, its root) is a member of unit u, held in a local variable.
  bool local(NodeId in, int u) const {
    const NodeId root = plan_.root[size_t(in)];
    return u >= 0 && !plan_.view[size_t(root)] && plan_.unitOf[size_t(root)] == u;
  }

  // The value of `in` for unit u's computations, as an expression: a member's local variable,
  // or a load from memory at the broadcast index of flat index `i` in `shape`.
  std::string operand(NodeId in, int u, const Shape& shape, const std::string& i, Params& p) const {
    if (local(in, u)) return "v" + std::to_string(plan_.root[size_t(in)]);
    const Node& src = node(in);
    const NodeId root = plan_.root[size_t(in)];
    if (plan_.view[size_t(root)]) {
      const Node& slice = node(root);
      const Shape& xs = node(slice.inputs[0]).shape;
      const std::int64_t inner = product(xs, size_t(slice.attrs.axis) + 1, xs.size());
      const std::string at = "(" + broadcastIndex(src.shape, shape, i) + ")";
      const std::int64_t rowIn = xs[size_t(slice.attrs.axis)] * inner, rowOut = slice.attrs.length * inner;
      const std::string mapped = "((" + at + " / " + str(rowOut) + ") * " + str(rowIn) + " + " + str(slice.attrs.start * inner) + " + " + at +
                                 " % " + str(rowOut) + ")";
      if (local(slice.inputs[0], u)) throw std::logic_error("a view reads its own kernel's member");
      return operand(slice.inputs[0], -1, xs, mapped, p);
    }
    if (src.op == Op::Constant && src.attrs.values.size() == 1) return floatLiteral(src.attrs.values[0]);
    return p.name(storageOf(in)) + "[" + broadcastIndex(src.shape, shape, i) + "]";
  }

  // Statements computing unit u's members (but `skip` and the head) at flat index `i` of
  // `shape`, storing those the schedule stores: the epilogue of every template call. A member
  // may have another shape of as many elements (it reads a member through a reshape); its
  // operands broadcast to its own shape.
  std::string members(int u, const Shape& shape, const std::string& i, Params& p, NodeId skip) const {
    std::ostringstream s;
    for (NodeId m : unit(u).members) {
      if (m == skip || m == unit(u).head) continue;
      const Node& n = node(m);
      if (numel(n.shape) != numel(shape)) throw std::logic_error("member " + ir::describeNode(g_, m) + " does not match its unit's elements");
      auto arg = [&](size_t k) { return operand(n.inputs[k], u, n.shape, i, p); };
      std::string expr;
      if (n.op == Op::BroadcastTo) {
        expr = arg(0);
      } else if (n.op == Op::Concat) {
        const auto axis = size_t(n.attrs.axis);
        const std::int64_t inner = product(n.shape, axis + 1, n.shape.size());
        const std::string rowOut = str(n.shape[axis] * inner);
        const std::string o = "((" + i + ") / " + rowOut + ")", c = "((" + i + ") % " + rowOut + ")";
        std::int64_t offset = 0;
        for (size_t k = 0; k < n.inputs.size(); ++k) {
          const Shape& part = node(n.inputs[k]).shape;
          const std::int64_t rowIn = part[axis] * inner;
          const std::string load = operand(n.inputs[k], -1, part, o + " * " + str(rowIn) + " + " + c + " - " + str(offset), p);
          expr += k + 1 < n.inputs.size() ? "(" + c + " < " + str(offset + rowIn) + " ? " + load + " : " : load;
          offset += rowIn;
        }
        expr += std::string(n.inputs.size() - 1, ')');
      } else if (n.op == Op::Softmax || n.op == Op::LogSoftmax) {  // a short row, per element
        const auto axis = size_t(n.attrs.axis);
        const std::string load = operand(n.inputs[0], -1, n.shape, "j", p);
        expr = "cas_softmax_element<" + str(n.shape[axis]) + ", " + str(product(n.shape, axis + 1, n.shape.size())) + ", " +
               boolean(n.op == Op::LogSoftmax) + ">(" + i + ", [&](int j) { return " + load + "; })";
      } else if (n.op == Op::Dropout) {
        expr = "(cas_dropout_keep(" + std::to_string(n.attrs.seed) + "ull, " + i + ", " + floatLiteral(n.attrs.rate) + ") ? " + arg(0) + " * " +
               floatLiteral(1.0f / (1.0f - n.attrs.rate)) + " : 0.f)";
      } else if (ir::isElementwise(n.op)) {
        std::vector<std::string> operands;
        for (size_t k = 0; k < n.inputs.size(); ++k) operands.push_back(arg(k));
        expr = opExpression(n.op, operands);
      } else {
        throw std::logic_error("unexpected member " + ir::describeNode(g_, m));
      }
      s << "const float v" << m << " = " << expr << ";  // " << ir::opName(n.op) << "\n";
      if (plan_.stored[size_t(m)]) s << p.name(storageOf(m)) << "[" << i << "] = v" << m << ";\n";
    }
    return s.str();
  }

  // The epilogue functor of a GEMM or a forward convolution: the head's value is acc.
  std::string epilogue(int u, const Shape& shape, Params& p) const {
    const NodeId head = unit(u).head;
    std::string body = "const float v" + std::to_string(head) + " = acc;\n";
    if (plan_.stored[size_t(head)]) body += p.name(storageOf(head)) + "[i] = v" + std::to_string(head) + ";\n";
    body += members(u, shape, "i", p, kNoNode);
    return "[&](int i, float acc) {\n" + indent(body, "  ") + "}";
  }

  // One Elementwise, Reduction or Special unit as a segment call: `if (<call>) return;`.
  std::string segment(int u, Params& p) const {
    const Unit& un = unit(u);
    std::ostringstream s;
    s << "// segment: " << un.members.size() << " node(s), " << un.threads << " threads\n";
    if (un.kind == UnitKind::Elementwise) {
      s << "if (cas_elementwise<" << un.threads << ">(b, [&](int i) {\n" << indent(members(u, un.shape, "i", p, kNoNode), "      ") << "    })) return;\n";
    } else if (un.kind == UnitKind::Reduction) {
      const Node& r = node(un.reduction);
      const NodeId source = r.inputs[0];
      const Shape& xs = node(source).shape;
      std::vector<bool> reduced(xs.size(), false);
      for (std::int64_t ax : r.attrs.ints) reduced[size_t(ax)] = true;
      const std::string out = p.name(storageOf(un.reduction));
      std::string body = members(u, xs, "i", p, un.reduction);
      body += "return " + operand(source, u, xs, "i", p) + ";\n";
      s << "if (cas_reduce_" << (un.reduce.layout == ir::ReductionLayout::Rows ? "rows" : "columns") << "<" << un.reduce.outputs << ", "
        << un.reduce.length << ", " << un.reduce.chunks << ", " << boolean(r.op == Op::ReduceMax) << ">(b, " << out << ",\n"
        << "      [](int o, int r) { return " << reductionIndex(xs, reduced) << "; },\n"
        << "      [&](int i) {\n" << indent(body, "        ") << "      })) return;\n";
    } else {
      s << "if (" << special(un.head, p) << ") return;\n";
    }
    return s.str();
  }

  std::string special(NodeId id, Params& p) const {
    const Node& n = node(id);
    const Shape& xs = node(n.inputs[0]).shape;
    auto in = [&](size_t k) { return p.name(storageOf(n.inputs[k])); };
    const std::string out = p.name(storageOf(id));
    const std::int64_t count = numel(n.shape);
    const ir::Attrs& a = n.attrs;
    switch (n.op) {
      case Op::Softmax:
      case Op::LogSoftmax: {
        const auto axis = size_t(a.axis);
        return "cas_softmax_rows<" + str(count / n.shape[axis]) + ", " + str(n.shape[axis]) + ", " + str(product(n.shape, axis + 1, n.shape.size())) +
               ", " + boolean(n.op == Op::LogSoftmax) + ">(b, " + in(0) + ", " + out + ")";
      }
      case Op::Transpose: {
        const auto inStride = stridesOf(xs), outStride = stridesOf(n.shape);
        std::string src;
        for (size_t d = 0; d < n.shape.size(); ++d) {
          if (n.shape[d] == 1) continue;
          if (!src.empty()) src += " + ";
          src += "((t / " + str(outStride[d]) + ") % " + str(n.shape[d]) + ") * " + str(inStride[size_t(a.ints[d])]);
        }
        return "cas_map<" + str(count) + ">(b, " + in(0) + ", " + out + ", [](int t) { return " + (src.empty() ? "0" : src) + "; })";
      }
      case Op::Slice: {
        const auto axis = size_t(a.axis);
        const std::int64_t inner = product(xs, axis + 1, xs.size()), rowIn = xs[axis] * inner, rowOut = a.length * inner;
        return "cas_map<" + str(count) + ">(b, " + in(0) + ", " + out + ", [](int t) { return (t / " + str(rowOut) + ") * " + str(rowIn) + " + " +
               str(a.start * inner) + " + t % " + str(rowOut) + "; })";
      }
      case Op::MaxPool2d:
      case Op::AvgPool2d:
        return "cas_pool2d<" + str(count) + ", " + poolArguments(xs[2], xs[3], n.shape[2], n.shape[3], a) + ", " + boolean(n.op == Op::MaxPool2d) +
               ">(b, " + in(0) + ", " + out + ")";
      case Op::MaxPool2dGrad:
      case Op::AvgPool2dGrad: {
        const bool isMax = n.op == Op::MaxPool2dGrad;
        const Shape& gs = node(n.inputs[isMax ? 1 : 0]).shape;
        return "cas_pool2d_grad<" + str(numel(gs)) + ", " + poolArguments(n.shape[2], n.shape[3], gs[2], gs[3], a) + ", " + boolean(isMax) + ">(b, " +
               (isMax ? in(0) : std::string("nullptr")) + ", " + in(isMax ? 1 : 0) + ", " + out + ")";
      }
      case Op::Gather:
        return "cas_gather_rows<" + str(count) + ", " + str(xs[0]) + ", " + str(xs[1]) + ">(b, " + in(0) + ", " + in(1) + ", " + out + ")";
      case Op::MatMul: {  // planned without cuBLAS (ScheduleTarget::vendorLibraries)
        const Shape& bs = node(n.inputs[1]).shape;
        const std::int64_t rows = n.shape[n.shape.size() - 2], cols = n.shape.back(), k = a.transposeA ? xs[xs.size() - 2] : xs.back();
        const std::string first = matrixOffset(xs, n.shape, rows * k), second = matrixOffset(bs, n.shape, k * cols);
        const bool single = first == "0" && second == "0";
        return "cas_matmul_direct<" + str(count) + ", " + str(rows) + ", " + str(cols) + ", " + str(k) + ", " + boolean(a.transposeA) + ", " +
               boolean(a.transposeB) + ", " + str(ir::directLanes(count, k)) + ">(b, " + in(0) + ", " + in(1) + ", " + out + ", [](int" + (single ? "" : " m") + ") { return make_int2(" +
               first + ", " + second + "); })";
      }
      case Op::Conv2d: {  // an fp32 convolution planned without cuDNN (ScheduleTarget::vendorLibraries)
        const Shape& ws = node(n.inputs[1]).shape;
        return "cas_conv2d_direct<" + str(count) + ", " + str(xs[1]) + ", " + str(xs[2]) + ", " + str(xs[3]) + ", " + str(ws[0]) + ", " +
               str(n.shape[2]) + ", " + str(n.shape[3]) + ", " + str(a.kernelH) + ", " + str(a.kernelW) + ", " + str(a.strideH) + ", " +
               str(a.strideW) + ", " + str(a.padTop) + ", " + str(a.padLeft) + ", " + str(ir::directLanes(count, ws[1] * ws[2] * ws[3])) + ">(b, " +
               in(0) + ", " + in(1) + ", " + out + ")";
      }
      case Op::Attention:
      case Op::AttentionStats:
      case Op::AttentionGradQ:
      case Op::AttentionGradKV: return attentionCall(n, p);
      case Op::LayerNorm:
      case Op::LayerNormGrad:
        return std::string(n.op == Op::LayerNorm ? "cas_layer_norm<" : "cas_layer_norm_grad<") + str(count / n.shape.back()) + ", " +
               str(n.shape.back()) + ">(b, " + in(0) + ", " + in(1) + ", " + in(2) + ", " + floatLiteral(a.eps) + ", " + out + ")";
      case Op::ScatterAddRows:
        return "cas_scatter_add_rows<" + str(numel(node(n.inputs[1]).shape)) + ", " + str(n.shape[0]) + ", " + str(n.shape[1]) + ">(b, " + in(0) +
               ", " + in(1) + ", " + out + ")";
      default: throw std::runtime_error("the CUDA backend cannot run " + ir::describeNode(g_, id) + " yet");
    }
  }

  // A call of attention.cuh (or attention_mma.cuh): template arguments <rows, T, S, D, H, causal>
  // (and bf16 on tensor cores), then the inputs
  // before the lengths, the lengths (or nullptr), the output.
  std::string attentionCall(const Node& n, Params& p) const {
    const Shape &qs = node(n.inputs[0]).shape, &ks = node(n.inputs[1]).shape;
    const size_t fixed = ir::attentionInputsBeforeLengths(n.op);
    const std::int64_t rows = qs[0] * n.attrs.heads * (n.op == Op::AttentionGradKV ? ks[1] : qs[1]);
    const bool mma = ir::attentionOnTensorCores(g_, n);
    const char* name = n.op == Op::Attention        ? (mma ? "cas_attention_forward_mma<" : "cas_attention_forward<")
                       : n.op == Op::AttentionStats ? (mma ? "cas_attention_stats_mma<" : "cas_attention_stats<")
                       : n.op == Op::AttentionGradQ ? (mma ? "cas_attention_grad_q_mma<" : "cas_attention_grad_q<")
                                                    : (mma ? "cas_attention_grad_kv_mma<" : "cas_attention_grad_kv<");
    std::string call = std::string(name) + str(rows) + ", " + str(qs[1]) + ", " +
                       str(ks[1]) + ", " + str(qs[2]) + ", " + str(n.attrs.heads) + ", " + boolean(n.attrs.causal) +
                       (mma ? ", " + boolean(n.precision == ir::Precision::BF16) : std::string()) + ">(b";  // attention_mma.cuh: bf16 or fp16
    for (size_t k = 0; k < fixed; ++k) call += ", " + p.name(storageOf(n.inputs[k]));
    call += ", " + (n.inputs.size() > fixed ? p.name(storageOf(n.inputs.back())) : std::string("nullptr"));
    return call + ", " + p.name(storageOf(ir::NodeId(&n - g_.nodes.data()))) + ")";
  }

  // The first element of matrix m (an index over the product's leading axes `out` minus the
  // last two) in an operand of shape `s` whose leading axes broadcast to them (numpy's rules).
  static std::string matrixOffset(const Shape& s, const Shape& out, std::int64_t matrixSize) {
    const Shape lead(out.begin(), out.end() - 2), own(s.begin(), s.end() - 2);
    const std::vector<std::int64_t> leadStride = stridesOf(lead);
    std::string offset;
    std::int64_t matrices = 1;  // matrices per step along the operand's axis
    for (size_t k = 0; k < own.size(); ++k) {
      const size_t axis = own.size() - 1 - k, outAxis = lead.size() - 1 - k;
      if (own[axis] != 1)
        offset += (offset.empty() ? "" : " + ") + std::string("((m / ") + str(leadStride[outAxis]) + ") % " + str(lead[outAxis]) + ") * " +
                  str(matrices * matrixSize);
      matrices *= own[axis];
    }
    return offset.empty() ? "0" : offset;
  }

  static std::string poolArguments(std::int64_t h, std::int64_t w, std::int64_t oh, std::int64_t ow, const ir::Attrs& a) {
    return str(h) + ", " + str(w) + ", " + str(oh) + ", " + str(ow) + ", " + str(a.kernelH) + ", " + str(a.kernelW) + ", " + str(a.strideH) + ", " +
           str(a.strideW) + ", " + str(a.padTop) + ", " + str(a.padLeft);
  }

  // A step's place among the computing steps (the number in generated kernels' names).
  int kernelIndex(const ir::Step& st) const {
    int index = 0;
    for (const ir::Step& other : plan_.steps) {
      if (&other == &st) break;
      if (other.kind != StepKind::Fill) ++index;
    }
    return index;
  }

  static std::string from(const std::string& label) { return label.empty() ? "" : "; from " + label; }

  Step render(const ir::Step& st) const {
    Step step;
    step.kind = st.kind;
    step.name = st.name;
    step.node = st.node;
    step.target = st.target;
    step.fill = st.fill;
    step.label = st.label;
    for (int u : st.units) step.segments.push_back({unit(u).members, unit(u).threads});
    switch (st.kind) {
      case StepKind::Kernel: renderKernel(st, step); break;
      case StepKind::Gemm: renderGemmStep(st, step); break;
      case StepKind::ImplicitConv: renderImplicitConv(st, step); break;
      case StepKind::Blas: step.name = "cublas_" + st.name; break;
      case StepKind::Conv:
        step.name = "cudnn_" + st.name;
        if (ir::isHalfWidth(node(st.node).precision)) renderRelayouts(step, kernelIndex(st));
        break;
      case StepKind::Fill:
      case StepKind::Copy: break;
    }
    return step;
  }

  void renderKernel(const ir::Step& st, Step& step) const {
    Params p;
    std::string body;
    size_t nodes = 0;
    for (int u : st.units) {
      body += segment(u, p);
      nodes += unit(u).members.size();
    }
    std::ostringstream s;
    s << "// " << step.name << ": " << st.units.size() << " segment(s) over " << nodes << " IR node(s)" << from(step.label) << "\n";
    s << "// Launch: a 1-D grid; segment k owns the next ceil(threads_k / blockDim.x) blocks.\n";
    s << "extern \"C\" __global__ void " << step.name << "(" << p.list() << ") {\n  cas_wait_for_previous_kernel();\n  int b = blockIdx.x;\n"
      << indent(body, "  ") << "}\n";
    step.source = s.str();
    step.params = p.buffers;
  }

  // The template call of one GEMM unit, its grid and block.
  struct GemmCall {
    std::string call, comment;
    std::int64_t gridX = 1, gridY = 1;
    int threads = 256;
  };

  // A GEMM unit's grid and block (GemmCall's gridX, gridY, threads).
  GemmCall gemmShape(int u) const {
    const ir::GemmPlan& g = unit(u).gemm;
    GemmCall c;
    switch (g.variant) {
      case ir::GemmVariant::Narrow: c.gridX = (g.m + 7) / 8; break;
      case ir::GemmVariant::Skinny: c.gridX = (g.n + 31) / 32; break;
      case ir::GemmVariant::Tiled:
      case ir::GemmVariant::SplitK: {
        const GemmTile t = gemmTile();
        c.threads = t.threads();
        c.gridX = (g.n + t.bn - 1) / t.bn;
        c.gridY = (g.m + t.bm - 1) / t.bm * g.split;
        break;
      }
    }
    return c;
  }

  // The template call of GEMM unit u, its block coordinates `bx`, `by` (tiled variants).
  GemmCall gemmCall(int u, Params& p, const std::string& bx, const std::string& by) const {
    const Unit& un = unit(u);
    const ir::GemmPlan& g = un.gemm;
    const Node& mm = node(un.head);
    const std::string a = p.name(storageOf(mm.inputs[0])), b = p.name(storageOf(mm.inputs[1]));
    GemmCall c = gemmShape(u);
    const bool split = g.variant == ir::GemmVariant::SplitK;
    const std::string epi = split ? "[&](int i, float acc) { atomicAdd(&" + p.name(storageOf(un.head)) + "[i], acc); }" : epilogue(u, mm.shape, p);
    const std::string dims = str(g.m) + ", " + str(g.n) + ", " + str(g.k) + ", " + boolean(g.transposeA) + ", " + boolean(g.transposeB);
    c.comment = "C[" + str(g.m) + "," + str(g.n) + "] = A" + (g.transposeA ? "^T" : "") + " x B" + (g.transposeB ? "^T" : "") + " (K " + str(g.k) + ")" +
                (split ? ", split into " + str(g.split) + " K chunks added atomically" : ", then " + str(std::int64_t(un.members.size()) - 1) + " fused node(s)");
    if (g.variant == ir::GemmVariant::Narrow || g.variant == ir::GemmVariant::Skinny) {
      c.call = std::string(g.variant == ir::GemmVariant::Narrow ? "cas_gemm_narrow<" : "cas_gemm_skinny<") + dims + ">(" + a + ", " + b + ", " + epi + ");\n";
    } else {
      const GemmTile t = gemmTile();
      c.call = "cas_gemm_tiled<" + dims + ", " + str(t.bm) + ", " + str(t.bn) + ", " + str(t.bk) + ", " + str(t.tm) + ", " + str(t.tn) + ", " + str(g.split) +
               ">(" + a + ", " + b + ", " + bx + ", " + by + ", tiles, " + epi + ");\n";
    }
    return c;
  }

  void renderGemmStep(const ir::Step& st, Step& step) const {
    Params p;
    std::ostringstream s, body;
    const GemmTile t = gemmTile();
    const bool single = st.units.size() == 1;
    const ir::GemmVariant variant = unit(st.units[0]).gemm.variant;
    if (single && (variant == ir::GemmVariant::Narrow || variant == ir::GemmVariant::Skinny)) {
      const GemmCall c = gemmCall(st.units[0], p, "", "");
      s << "// " << step.name << ": " << c.comment << from(step.label) << "\n";
      s << "// Launch: " << c.gridX << " block(s) of 256 threads; "
        << (variant == ir::GemmVariant::Narrow ? "warp = row, lanes stride over K" : "lane = column, warps split K") << ".\n";
      s << "extern \"C\" __global__ void __launch_bounds__(256) " << step.name << "(" << p.list() << ") {\n  cas_wait_for_previous_kernel();\n"
        << indent(c.call, "  ") << "}\n";
      step.gridX = c.gridX;
      step.gridY = 1;
      step.blockSize = 256;
      step.segments[0].threads = c.gridX * 256;
    } else if (single) {
      const GemmCall c = gemmCall(st.units[0], p, "blockIdx.x", "blockIdx.y");
      s << "// " << step.name << ": " << c.comment << from(step.label) << "\n";
      s << "// Launch: grid (" << c.gridX << ", " << c.gridY << ") of " << t.bm << "x" << t.bn << " tiles, " << c.threads << " threads with " << t.tm
        << "x" << t.tn << " outputs each, K steps of " << t.bk << ".\n";
      s << "extern \"C\" __global__ void __launch_bounds__(" << c.threads << ", " << tileBlocksPerSm() << ") " << step.name << "(" << p.list()
        << ") {\n  cas_wait_for_previous_kernel();\n  __shared__ __align__(16) cas_gemm_tiles<" << t.bm << ", " << t.bn << ", " << t.bk << "> tiles;\n"
        << indent(c.call, "  ") << "}\n";
      step.gridX = c.gridX;
      step.gridY = c.gridY;
      step.blockSize = c.threads;
      step.segments[0].threads = c.gridX * c.gridY * c.threads;
    } else {
      // Tiled GEMMs of one level share a launch, each in its own range of blocks; kernels of
      // their level ride along (with the GEMMs' block size).
      std::int64_t blocks = 0;
      std::string comments;
      for (size_t k = 0; k < st.units.size(); ++k) {
        const int u = st.units[k];
        if (unit(u).kind != UnitKind::Gemm) {
          body << segment(u, p);
          blocks += (unit(u).threads + t.threads() - 1) / t.threads();
          continue;
        }
        const GemmCall shape = gemmShape(u);
        const std::int64_t count = shape.gridX * shape.gridY;
        const GemmCall c = gemmCall(u, p, "b % " + str(shape.gridX), "b / " + str(shape.gridX));
        body << "// " << c.comment << ": grid (" << c.gridX << ", " << c.gridY << ")\n";
        body << "if (b < " << count << ") {\n" << indent(c.call, "  ") << "  return;\n}\nb -= " << count << ";\n";
        blocks += count;
        step.segments[k].threads = count * t.threads();
      }
      s << "// " << step.name << ": " << st.units.size() << " independent GEMMs and kernels in one launch, each in its own range of blocks"
        << from(step.label) << "\n";
      s << "// Launch: " << blocks << " blocks of " << t.threads() << " threads; " << t.bm << "x" << t.bn << " tiles, " << t.tm << "x" << t.tn
        << " outputs a thread, K steps of " << t.bk << ".\n";
      s << "extern \"C\" __global__ void __launch_bounds__(" << t.threads() << ", " << tileBlocksPerSm() << ") " << step.name << "(" << p.list()
        << ") {\n  cas_wait_for_previous_kernel();\n  __shared__ __align__(16) cas_gemm_tiles<" << t.bm << ", " << t.bn << ", " << t.bk << "> tiles;\n"
        << "  int b = blockIdx.x;\n" << indent(body.str(), "  ") << "}\n";
      step.gridX = blocks;
      step.gridY = 1;
      step.blockSize = t.threads();
    }
    step.source = s.str();
    step.params = p.buffers;
  }

  void renderImplicitConv(const ir::Step& st, Step& step) const {
    const int u = st.units[0];
    const Node& n = node(unit(u).head);
    const bool forward = n.op == Op::Conv2d;
    Params p;
    const std::string x = p.name(storageOf(n.inputs[0])), other = p.name(storageOf(n.inputs[1]));
    const std::string tail = forward ? epilogue(u, n.shape, p) : p.name(storageOf(unit(u).head));
    const bool halfWidth = ir::isHalfWidth(n.precision);
    const ImplicitConvKernel k = halfWidth ? implicitConv(forward ? ConvPass::Forward : ConvPass::WeightGradient, convGeometry(g_, n),
                                                          n.precision == ir::Precision::BF16, x, other, tail)
                                           : forward ? imageForward(convGeometry(g_, n), x, other, tail)
                                                     : imageWeightGradient(convGeometry(g_, n), x, other, tail);
    std::ostringstream s;
    if (halfWidth)
      s << "// " << step.name << ": " << ir::opName(n.op) << " as an implicit GEMM on tensor cores ("
        << (n.precision == ir::Precision::BF16 ? "bf16" : "fp16") << " products, fp32 sums)"
        << (forward ? ", then " + str(std::int64_t(unit(u).members.size()) - 1) + " fused node(s)" : ", added atomically") << from(step.label) << "\n";
    else
      s << "// " << step.name << ": " << ir::opName(n.op) << " over small images, one staged in shared memory at a time (fp32 products)"
        << (forward ? ", then " + str(std::int64_t(unit(u).members.size()) - 1) + " fused node(s)" : ", added atomically") << from(step.label) << "\n";
    s << k.comment;
    s << "extern \"C\" __global__ void __launch_bounds__(" << k.blockSize << ", " << k.blocksPerSm << ") " << step.name << "(" << p.list()
      << ") {\n  cas_wait_for_previous_kernel();\n" << indent(k.call, "  ") << "}\n";
    step.source = s.str();
    step.gridX = k.gridX;
    step.gridY = k.gridY;
    step.blockSize = k.blockSize;
    step.params = p.buffers;
    step.segments[0].threads = k.gridX * k.gridY * k.blockSize;
  }

  // A bf16/fp16 input gradient runs on cuDNN's NHWC kernels, on 16-bit copies made by the
  // layout templates: _in0 (the output gradient) and _in1 (the filter), folded by the stride
  // where the convolution allows; _out moves the result back to NCHW fp32.
  void renderRelayouts(Step& step, int index) const {
    const Node& n = node(step.node);
    step.fold = relayoutFold(g_, n);
    step.relayoutPrefix = "k" + std::to_string(index) + "_" + std::string(ir::opName(n.op));
    step.source = relayoutSource(step.relayoutPrefix, step.name, step.label, g_, n, step.fold);
  }

  const Graph& g_;
  ir::Schedule plan_;
};

}  // namespace

std::string Step::describe() const {
  std::ostringstream s;
  std::int64_t threads = 0;
  size_t nodes = 0;
  for (const Segment& seg : segments) {
    threads += seg.threads;
    nodes += seg.members.size();
  }
  switch (kind) {
    case StepKind::Kernel: s << "kernel " << name << ": " << segments.size() << " segment(s), " << nodes << " node(s), " << threads << " threads"; break;
    case StepKind::Gemm: s << "kernel " << name << ": GEMM + " << nodes - 1 << " fused node(s), grid " << gridX << "x" << gridY; break;
    case StepKind::Blas: s << name << " (cuBLAS)"; break;
    case StepKind::Conv: s << name << " (cuDNN)"; break;
    case StepKind::ImplicitConv: s << "kernel " << name << ": generated convolution + " << nodes - 1 << " fused node(s), grid " << gridX << "x" << gridY; break;
    case StepKind::Fill: s << "fill %" << node; break;
    case StepKind::Copy: s << "copy %" << node << " -> %" << target; break;
  }
  if (!label.empty()) s << "  [" << label << "]";
  return s.str();
}

ir::ScheduleTarget cudaTarget() {
  ir::ScheduleTarget t;
  t.splitChunk = envInt("CAS_GEMM_SPLIT_CHUNK", t.splitChunk);
  t.gemmMaxWork = envInt("CAS_GEMM_MAX_WORK", t.gemmMaxWork);
  return t;
}

Schedule renderSchedule(const Graph& g) { return renderSchedule(g, cudaTarget()); }

Schedule renderSchedule(const Graph& g, const ir::ScheduleTarget& target) { return Renderer(g, ir::planSchedule(g, target)).run(); }

const std::string& kernelPrelude() {
  static const std::string prelude = [] {
    // tanh from the constants the CPU backend uses, in the same order of operations.
    std::string tanh = "// tanh as core/ir/ops.hpp's fastTanh computes it (generated from its constants).\n"
                       "__device__ __forceinline__ float cas_tanh(float x) {\n"
                       "  const float kClamp = " + floatLiteral(ir::kTanhClamp) + ";\n"
                       "  x = x < -kClamp ? -kClamp : (x > kClamp ? kClamp : x);\n"
                       "  const float x2 = x * x;\n"
                       "  float p = " + floatLiteral(ir::kTanhNumerator[0]) + ";\n";
    for (size_t k = 1; k < std::size(ir::kTanhNumerator); ++k) tanh += "  p = p * x2 + " + floatLiteral(ir::kTanhNumerator[k]) + ";\n";
    tanh += "  p = p * x;\n  float q = " + floatLiteral(ir::kTanhDenominator[0]) + ";\n";
    for (size_t k = 1; k < std::size(ir::kTanhDenominator); ++k) tanh += "  q = q * x2 + " + floatLiteral(ir::kTanhDenominator[k]) + ";\n";
    tanh += "  return p / q;\n}\n";
    return tanh + std::string(kKernelTemplates);
  }();
  return prelude;
}

}  // namespace cas::gpu
