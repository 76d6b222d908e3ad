#include "core/ir/graph.hpp"

#include <sstream>

namespace cas::ir {

std::int64_t numel(const Shape& s) {
  std::int64_t n = 1;
  for (std::int64_t d : s) n *= d;
  return n;
}

std::vector<std::int64_t> reductionOutputStrides(const Shape& input, const std::vector<std::int64_t>& axes) {
  std::vector<bool> reduced(input.size(), false);
  for (std::int64_t ax : axes) reduced[size_t(ax)] = true;
  std::vector<std::int64_t> outStride(input.size(), 0);
  std::int64_t stride = 1;
  for (size_t d = input.size(); d-- > 0;)
    if (!reduced[d]) {
      outStride[d] = stride;
      stride *= input[d];
    }
  return outStride;
}

std::string shapeText(const Shape& s, std::string_view separator) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) {
    if (i) out += separator;
    out += std::to_string(s[i]);
  }
  return out + "]";
}

const char* precisionName(Precision p) {
  switch (p) {
    case Precision::F32: return "f32";
    case Precision::BF16: return "bf16";
    case Precision::F16: return "f16";
    case Precision::TF32: return "tf32";
  }
  return "f32";
}

NodeId Graph::add(Node n) {
  nodes.push_back(std::move(n));
  return NodeId(nodes.size() - 1);
}

NodeId Graph::findInput(const std::string& inputName) const {
  for (size_t i = 0; i < nodes.size(); ++i)
    if (nodes[i].op == Op::Input && nodes[i].attrs.name == inputName) return NodeId(i);
  return kNoNode;
}

std::vector<NodeId> Graph::inputsWithRole(InputRole role) const {
  std::vector<NodeId> out;
  for (size_t i = 0; i < nodes.size(); ++i)
    if (nodes[i].op == Op::Input && nodes[i].attrs.role == role) out.push_back(NodeId(i));
  return out;
}

NodeId Graph::output(const std::string& outputName) const {
  for (const Output& o : outputs)
    if (o.name == outputName) return o.node;
  return kNoNode;
}

static std::string ints(const std::vector<std::int64_t>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s;
}

static std::string attrText(const Node& n) {
  const Attrs& a = n.attrs;
  std::ostringstream s;
  switch (n.op) {
    case Op::Input: {
      const char* role = a.role == InputRole::Data ? "data" : a.role == InputRole::Parameter ? "param" : "state";
      s << " " << role << " \"" << a.name << "\"";
      break;
    }
    case Op::Constant:
      if (a.values.size() == 1) s << " " << a.values[0];
      else s << " (" << a.values.size() << " values)";
      break;
    case Op::Reshape: case Op::BroadcastTo: break;  // the result shape says it all
    case Op::Transpose: s << " perm=" << ints(a.ints); break;
    case Op::Concat: case Op::Softmax: case Op::LogSoftmax: s << " axis=" << a.axis; break;
    case Op::Slice: s << " axis=" << a.axis << " start=" << a.start << " length=" << a.length; break;
    case Op::ReduceSum: case Op::ReduceMax: s << " axes=" << ints(a.ints) << (a.keepDims ? " keepdims" : ""); break;
    case Op::MatMul: s << (a.transposeA ? " transpose_a" : "") << (a.transposeB ? " transpose_b" : ""); break;
    case Op::Dropout: s << " rate=" << a.rate << " seed=" << a.seed; break;
    case Op::Attention: case Op::AttentionStats: case Op::AttentionGradQ: case Op::AttentionGradKV:
      s << " heads=" << a.heads << (a.causal ? " causal" : "") << (n.inputs.size() > attentionInputsBeforeLengths(n.op) ? " lengths" : "");
      break;
    case Op::LayerNorm: case Op::LayerNormGrad: s << " eps=" << a.eps; break;
    case Op::Conv2d: case Op::Conv2dGradInput: case Op::Conv2dGradWeight:
    case Op::MaxPool2d: case Op::MaxPool2dGrad: case Op::AvgPool2d: case Op::AvgPool2dGrad:
      s << " kernel=" << a.kernelH << "x" << a.kernelW << " stride=" << a.strideH << "," << a.strideW
        << " pad=" << a.padTop << "," << a.padLeft << "," << a.padBottom << "," << a.padRight;
      break;
    default: break;
  }
  return s.str();
}

std::string describeNode(const Graph& g, NodeId id) {
  const Node& n = g.node(id);
  std::string s = "%" + std::to_string(id) + " " + std::string(opName(n.op));
  if (!n.label.empty()) s += " in " + n.label;
  if (n.line > 0) s += " (line " + std::to_string(n.line) + ":" + std::to_string(n.column) + ")";
  return s;
}

std::string toText(const Graph& g) {
  std::ostringstream s;
  s << "graph " << g.name << " (" << g.nodes.size() << " nodes)\n";
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    s << "  %" << i << " = " << opName(n.op);
    for (size_t k = 0; k < n.inputs.size(); ++k) s << (k ? ", %" : " %") << n.inputs[k];
    s << attrText(n) << " : " << shapeText(n.shape);
    if (n.precision != Precision::F32) s << " " << precisionName(n.precision);
    if (n.buffer >= 0) s << " buf=" << n.buffer;
    if (!n.label.empty() || n.line > 0) {
      s << "  #";
      if (!n.label.empty()) s << " " << n.label;
      if (n.line > 0) s << " @" << n.line << ":" << n.column;
    }
    s << "\n";
  }
  for (const Output& o : g.outputs) s << "  output " << o.name << " = %" << o.node << "\n";
  if (!g.plan.sizes.empty())
    s << "  memory plan: " << g.plan.sizes.size() << " buffers, " << g.plan.totalElements << " floats (one per node: "
      << g.plan.naiveElements << ")\n";
  return s.str();
}

}  // namespace cas::ir
