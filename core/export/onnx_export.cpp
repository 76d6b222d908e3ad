#include "core/export/onnx_export.hpp"

#include <bit>
#include <iterator>

#include "cas/version.hpp"
#include "core/export/proto_writer.hpp"

namespace cas::exports {
namespace {

using ir::NodeId;
using ir::Op;

static_assert(std::endian::native == std::endian::little, "raw_data is written in the machine's byte order, which ONNX requires be little-endian");

// onnx.proto's enums, the values we write.
enum class ElemType : int { Float = 1, Int64 = 7, Bool = 9 };
enum class AttrType : int { Float = 1, Int = 2, Ints = 7 };

// The IR version each opset was released with (onnx/helper.py's VERSION_TABLE).
int irVersionFor(int opset) {
  if (opset <= 14) return 7;
  if (opset <= 18) return 8;
  if (opset <= 20) return 9;
  return 10;
}

ProtoMessage attrInt(std::string_view name, std::int64_t v) {
  ProtoMessage a;  // AttributeProto: name 1, i 3, type 20
  a.bytes(1, name).int64(3, v).varint(20, int(AttrType::Int));
  return a;
}

ProtoMessage attrInts(std::string_view name, const std::vector<std::int64_t>& values) {
  ProtoMessage a;  // AttributeProto: name 1, ints 8, type 20
  a.bytes(1, name);
  for (std::int64_t v : values) a.int64(8, v);
  a.varint(20, int(AttrType::Ints));
  return a;
}

// TensorProto: dims 1, data_type 2, name 8, raw_data 9.
ProtoMessage tensor(const std::string& name, const ir::Shape& dims, ElemType type, std::string_view raw) {
  ProtoMessage t;
  for (std::int64_t d : dims) t.int64(1, d);
  t.varint(2, std::uint64_t(type));
  t.bytes(8, name);
  t.bytes(9, raw);
  return t;
}

template <typename T>
std::string_view rawBytes(const std::vector<T>& v) {
  return {reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T)};
}

// An axis of a graph input or output: a size, or the batch (named) or another size that grows
// with it (unnamed).
struct Dim {
  std::int64_t size = 0;
  bool dynamic = false;
  std::string name;
};

// ValueInfoProto (name 1, type 2) of a float tensor: TypeProto.tensor_type 1 { elem_type 1,
// shape 2 { dim 1 { dim_value 1 | dim_param 2 } } }.
ProtoMessage valueInfo(const std::string& name, const std::vector<Dim>& dims) {
  ProtoMessage shape;
  for (const Dim& d : dims) {
    ProtoMessage dim;
    if (!d.dynamic) dim.int64(1, d.size);
    else if (!d.name.empty()) dim.bytes(2, d.name);
    shape.message(1, dim);
  }
  ProtoMessage tensorType;
  tensorType.varint(1, int(ElemType::Float)).message(2, shape);
  ProtoMessage type;
  type.message(1, tensorType);
  ProtoMessage info;
  info.bytes(1, name).message(2, type);
  return info;
}

// The graph being written: nodes, initializers, inputs, each as serialised protos, and the
// names of the values the IR's nodes produce.
class OnnxGraph {
 public:
  OnnxGraph(const ir::Graph& g, const std::vector<std::vector<bool>>* grows, const Weights& weights, int opset)
      : g_(g), grows_(grows), weights_(weights), opset_(opset) {}

  const ir::Graph& ir() const { return g_; }
  const ir::Node& node(NodeId id) const { return g_.node(id); }
  int opset() const { return opset_; }
  bool grows(NodeId id, size_t axis) const { return grows_ && (*grows_)[size_t(id)][axis]; }

  // The value node `id` produces: an input's or parameter's own name, "vN" for the others.
  std::string value(NodeId id) const {
    const ir::Node& n = g_.node(id);
    return n.op == Op::Input ? n.attrs.name : "v" + std::to_string(id);
  }
  std::vector<std::string> inputs(NodeId id) const {
    std::vector<std::string> names;
    for (NodeId in : g_.node(id).inputs) names.push_back(value(in));
    return names;
  }
  // A fresh name for an intermediate value of node `id`'s form.
  std::string temporary(NodeId id) { return "v" + std::to_string(id) + "_" + std::to_string(temporaries_++); }

  std::vector<Dim> dims(NodeId id) const {
    std::vector<Dim> out;
    const ir::Shape& s = g_.node(id).shape;
    for (size_t d = 0; d < s.size(); ++d) {
      Dim dim{s[d], grows(id, d), {}};
      // The graphs compared are at batch 2 and 3: a growing axis of size 2 is the batch itself.
      if (dim.dynamic && s[d] == 2) dim.name = "batch";
      out.push_back(dim);
    }
    return out;
  }

  // NodeProto: input 1, output 2, name 3, op_type 4, attribute 5, doc_string 6. Each is named
  // after the IR node it comes from and documents it ("%7 conv2d in policy/conv2d_0 (line 4:13)").
  void add(NodeId from, std::string_view opType, const std::vector<std::string>& in, const std::string& out,
           const std::vector<ProtoMessage>& attributes = {}) {
    ProtoMessage n;
    for (const std::string& i : in) n.bytes(1, i);
    n.bytes(2, out);
    n.bytes(3, out);
    n.bytes(4, opType);
    for (const ProtoMessage& a : attributes) n.message(5, a);
    n.bytes(6, ir::describeNode(g_, from));
    nodes_.push_back(std::move(n));
  }

  std::string int64s(NodeId from, const std::vector<std::int64_t>& values) {
    const std::string name = temporary(from);
    initializers_.push_back(tensor(name, {std::int64_t(values.size())}, ElemType::Int64, rawBytes(values)));
    return name;
  }
  std::string scalar(NodeId from, float value) {
    const std::string name = temporary(from);
    initializers_.push_back(tensor(name, {}, ElemType::Float, rawBytes(std::vector<float>{value})));
    return name;
  }
  void initializer(const std::string& name, const ir::Shape& dims, const std::vector<float>& values) {
    initializers_.push_back(tensor(name, dims, ElemType::Float, rawBytes(values)));
  }
  void graphInput(NodeId id) { inputs_.push_back(valueInfo(value(id), dims(id))); }
  const Weights& weights() const { return weights_; }

  // GraphProto: node 1, name 2, initializer 5, input 11, output 12.
  ProtoMessage finish(const std::string& name) {
    ProtoMessage graph;
    for (const ProtoMessage& n : nodes_) graph.message(1, n);
    graph.bytes(2, name);
    for (const ProtoMessage& t : initializers_) graph.message(5, t);
    for (const ProtoMessage& i : inputs_) graph.message(11, i);
    for (const ir::Output& o : g_.outputs) graph.message(12, valueInfo(o.name, dims(o.node)));
    return graph;
  }

  void addOutputs() {
    // Outputs are copies under the entry's names, so that an output may be any value (an input,
    // or the same node as another output).
    for (const ir::Output& o : g_.outputs) add(o.node, "Identity", {value(o.node)}, o.name);
  }

 private:
  const ir::Graph& g_;
  const std::vector<std::vector<bool>>* grows_;
  const Weights& weights_;
  int opset_;
  int temporaries_ = 0;
  std::vector<ProtoMessage> nodes_, initializers_, inputs_;
};

// --- the forms ---------------------------------------------------------------------------------
// Each writes the ONNX nodes computing IR node `id` into the value g.value(id); `type` is its
// row's ONNX op type.

[[noreturn]] void notDynamic(const OnnxGraph& g, NodeId id, const std::string& why) {
  throw ExportError(ir::describeNode(g.ir(), id) + " " + why + ", so the policy cannot be exported with a dynamic batch; give --batch N");
}

void leaf(OnnxGraph& g, NodeId id, std::string_view) {
  const ir::Node& n = g.node(id);
  if (n.op == Op::Constant) {
    for (size_t d = 0; d < n.shape.size(); ++d)
      if (g.grows(id, d)) notDynamic(g, id, "is a constant whose shape grows with the batch");
    std::vector<float> values = n.attrs.values;
    if (values.size() == 1) values.assign(size_t(ir::numel(n.shape)), n.attrs.values[0]);
    g.initializer(g.value(id), n.shape, values);
    return;
  }
  switch (n.attrs.role) {
    case ir::InputRole::Data: g.graphInput(id); return;
    case ir::InputRole::Parameter: {
      const auto w = g.weights().find(n.attrs.name);
      if (w == g.weights().end() || std::int64_t(w->second.size()) != ir::numel(n.shape))
        throw ExportError("the weights hold no " + ir::shapeText(n.shape, ", ") + " values for parameter '" + n.attrs.name + "'");
      g.initializer(g.value(id), n.shape, w->second);
      return;
    }
    case ir::InputRole::State: break;
  }
  throw ExportError(ir::describeNode(g.ir(), id) + " is optimizer state, which an exported policy has no use for");
}

void same(OnnxGraph& g, NodeId id, std::string_view type) { g.add(id, type, g.inputs(id), g.value(id)); }

// Comparisons give booleans in ONNX and 1.0 or 0.0 in the IR.
void comparison(OnnxGraph& g, NodeId id, std::string_view type) {
  std::string result = g.temporary(id);
  g.add(id, type, g.inputs(id), result);
  if (g.node(id).op == Op::NotEqual) {
    const std::string negated = g.temporary(id);
    g.add(id, "Not", {result}, negated);
    result = negated;
  }
  g.add(id, "Cast", {result}, g.value(id), {attrInt("to", int(ElemType::Float))});
}

// gelu(x) = 0.5 * x * (1 + erf(x / sqrt(2))), the IR's exact form (Gelu is an op only from opset 20).
void gelu(OnnxGraph& g, NodeId id, std::string_view) {
  const std::string x = g.inputs(id)[0];
  const std::string scaled = g.temporary(id), erf = g.temporary(id), onePlus = g.temporary(id), half = g.temporary(id);
  g.add(id, "Mul", {x, g.scalar(id, 0.70710678118654752f)}, scaled);
  g.add(id, "Erf", {scaled}, erf);
  g.add(id, "Add", {erf, g.scalar(id, 1.0f)}, onePlus);
  g.add(id, "Mul", {x, g.scalar(id, 0.5f)}, half);
  g.add(id, "Mul", {half, onePlus}, g.value(id));
}

// where(mask != 0, a, b): ONNX's Where takes a boolean condition; a cast to bool is "!= 0".
void where(OnnxGraph& g, NodeId id, std::string_view) {
  const std::vector<std::string> in = g.inputs(id);
  const std::string condition = g.temporary(id);
  g.add(id, "Cast", {in[0]}, condition, {attrInt("to", int(ElemType::Bool))});
  g.add(id, "Where", {condition, in[1], in[2]}, g.value(id));
}

// With a dynamic batch, the one axis that grows with it is left to Reshape (-1).
void reshape(OnnxGraph& g, NodeId id, std::string_view) {
  std::vector<std::int64_t> target = g.node(id).shape;
  int growing = 0;
  for (size_t d = 0; d < target.size(); ++d)
    if (g.grows(id, d)) {
      target[d] = -1;
      ++growing;
    }
  if (growing > 1) notDynamic(g, id, "reshapes to more than one axis that grows with the batch");
  g.add(id, "Reshape", {g.inputs(id)[0], g.int64s(id, target)}, g.value(id));
}

void transpose(OnnxGraph& g, NodeId id, std::string_view) {
  g.add(id, "Transpose", g.inputs(id), g.value(id), {attrInts("perm", g.node(id).attrs.ints)});
}

// Expand broadcasts both ways: a growing axis is given as 1 where the input has it already.
void broadcastTo(OnnxGraph& g, NodeId id, std::string_view) {
  const ir::Node& n = g.node(id);
  const NodeId x = n.inputs[0];
  const size_t offset = n.shape.size() - g.node(x).shape.size();
  std::vector<std::int64_t> target = n.shape;
  for (size_t d = 0; d < target.size(); ++d) {
    if (!g.grows(id, d)) continue;
    if (d < offset || !g.grows(x, d - offset)) notDynamic(g, id, "broadcasts a tensor to the batch");
    target[d] = 1;
  }
  g.add(id, "Expand", {g.value(x), g.int64s(id, target)}, g.value(id));
}

void concat(OnnxGraph& g, NodeId id, std::string_view) {
  g.add(id, "Concat", g.inputs(id), g.value(id), {attrInt("axis", g.node(id).attrs.axis)});
}

void slice(OnnxGraph& g, NodeId id, std::string_view) {
  const ir::Attrs& a = g.node(id).attrs;
  g.add(id, "Slice", {g.inputs(id)[0], g.int64s(id, {a.start}), g.int64s(id, {a.start + a.length}), g.int64s(id, {a.axis})}, g.value(id));
}

// ReduceSum takes its axes as an input from opset 13, ReduceMax from opset 18 (before: an
// attribute). No axes reduce nothing in the IR, and everything in ONNX.
void reduce(OnnxGraph& g, NodeId id, std::string_view type) {
  const ir::Attrs& a = g.node(id).attrs;
  const std::string x = g.inputs(id)[0];
  if (a.ints.empty()) {
    g.add(id, "Identity", {x}, g.value(id));
    return;
  }
  const ProtoMessage keep = attrInt("keepdims", a.keepDims ? 1 : 0);
  if (g.node(id).op == Op::ReduceMax && g.opset() < 18) g.add(id, type, {x}, g.value(id), {attrInts("axes", a.ints), keep});
  else g.add(id, type, {x, g.int64s(id, a.ints)}, g.value(id), {keep});
}

void softmax(OnnxGraph& g, NodeId id, std::string_view type) {
  g.add(id, type, g.inputs(id), g.value(id), {attrInt("axis", g.node(id).attrs.axis)});
}

// The IR's transposes of an operand swap its last two axes.
void matmul(OnnxGraph& g, NodeId id, std::string_view) {
  const ir::Node& n = g.node(id);
  std::vector<std::string> in = g.inputs(id);
  const bool transposed[2] = {n.attrs.transposeA, n.attrs.transposeB};
  for (size_t k = 0; k < 2; ++k) {
    if (!transposed[k]) continue;
    std::vector<std::int64_t> perm(g.node(n.inputs[k]).shape.size());
    for (size_t d = 0; d < perm.size(); ++d) perm[d] = std::int64_t(d);
    std::swap(perm[perm.size() - 1], perm[perm.size() - 2]);
    const std::string swapped = g.temporary(id);
    g.add(id, "Transpose", {in[k]}, swapped, {attrInts("perm", perm)});
    in[k] = swapped;
  }
  g.add(id, "MatMul", in, g.value(id));
}

// Conv and the pools: the IR's pads are top, left, bottom, right, as ONNX's begins then ends.
// The IR's average counts the padding (count_include_pad).
void window(OnnxGraph& g, NodeId id, std::string_view type) {
  const ir::Attrs& a = g.node(id).attrs;
  std::vector<ProtoMessage> attributes = {attrInts("kernel_shape", {a.kernelH, a.kernelW}), attrInts("strides", {a.strideH, a.strideW}),
                                          attrInts("pads", {a.padTop, a.padLeft, a.padBottom, a.padRight})};
  if (g.node(id).op == Op::AvgPool2d) attributes.push_back(attrInt("count_include_pad", 1));
  g.add(id, type, g.inputs(id), g.value(id), attributes);
}

// The IR's ids are floats; Gather's indices are integers.
void gather(OnnxGraph& g, NodeId id, std::string_view) {
  const std::vector<std::string> in = g.inputs(id);
  const std::string ids = g.temporary(id);
  g.add(id, "Cast", {in[1]}, ids, {attrInt("to", int(ElemType::Int64))});
  g.add(id, "Gather", {in[0], ids}, g.value(id), {attrInt("axis", 0)});
}

// One row per IR op, in the IR's enum order (checked below): the ONNX op type the form writes
// and the form, or no form and why.
struct OnnxForm {
  Op op;
  std::string_view type;
  void (*write)(OnnxGraph&, NodeId, std::string_view);
  std::string_view whyNone;
};

constexpr OnnxForm kOnnxForms[] = {
    {Op::Input, "", leaf, ""},
    {Op::Constant, "", leaf, ""},
    {Op::Neg, "Neg", same, ""},
    {Op::Relu, "Relu", same, ""},
    {Op::Tanh, "Tanh", same, ""},
    {Op::Sigmoid, "Sigmoid", same, ""},
    {Op::Gelu, "", gelu, ""},
    {Op::Exp, "Exp", same, ""},
    {Op::Log, "Log", same, ""},
    {Op::Sqrt, "Sqrt", same, ""},
    {Op::StopGradient, "Identity", same, ""},
    {Op::Add, "Add", same, ""},
    {Op::Sub, "Sub", same, ""},
    {Op::Mul, "Mul", same, ""},
    {Op::Div, "Div", same, ""},
    {Op::Maximum, "Max", same, ""},
    {Op::Minimum, "Min", same, ""},
    {Op::GeluGrad, "", nullptr, kGradientOpHasNoForm},
    {Op::Greater, "Greater", comparison, ""},
    {Op::GreaterEqual, "GreaterOrEqual", comparison, ""},
    {Op::Less, "Less", comparison, ""},
    {Op::LessEqual, "LessOrEqual", comparison, ""},
    {Op::Equal, "Equal", comparison, ""},
    {Op::NotEqual, "Equal", comparison, ""},
    {Op::Where, "Where", where, ""},
    {Op::Dropout, "", nullptr, kDropoutHasNoForm},
    {Op::Reshape, "Reshape", reshape, ""},
    {Op::Transpose, "Transpose", transpose, ""},
    {Op::BroadcastTo, "Expand", broadcastTo, ""},
    {Op::Concat, "Concat", concat, ""},
    {Op::Slice, "Slice", slice, ""},
    {Op::ReduceSum, "ReduceSum", reduce, ""},
    {Op::ReduceMax, "ReduceMax", reduce, ""},
    {Op::Softmax, "Softmax", softmax, ""},
    {Op::LogSoftmax, "LogSoftmax", softmax, ""},
    {Op::MatMul, "MatMul", matmul, ""},
    {Op::Conv2d, "Conv", window, ""},
    {Op::Conv2dGradInput, "", nullptr, kGradientOpHasNoForm},
    {Op::Conv2dGradWeight, "", nullptr, kGradientOpHasNoForm},
    {Op::MaxPool2d, "MaxPool", window, ""},
    {Op::MaxPool2dGrad, "", nullptr, kGradientOpHasNoForm},
    {Op::AvgPool2d, "AveragePool", window, ""},
    {Op::AvgPool2dGrad, "", nullptr, kGradientOpHasNoForm},
    {Op::Gather, "Gather", gather, ""},
    {Op::ScatterAddRows, "", nullptr, kGradientOpHasNoForm},
    {Op::Attention, "", nullptr, kFusedOpIsDecomposed},
    {Op::AttentionStats, "", nullptr, kGradientOpHasNoForm},
    {Op::AttentionGradQ, "", nullptr, kGradientOpHasNoForm},
    {Op::AttentionGradKV, "", nullptr, kGradientOpHasNoForm},
    {Op::LayerNorm, "", nullptr, kFusedOpIsDecomposed},
    {Op::LayerNormGrad, "", nullptr, kGradientOpHasNoForm},
};

constexpr bool formsInEnumOrder() {
  for (size_t k = 0; k < std::size(kOnnxForms); ++k)
    if (kOnnxForms[k].op != Op(k)) return false;
  return std::size(kOnnxForms) == size_t(Op::kCount);
}
static_assert(formsInEnumOrder(), "kOnnxForms needs one row per IR op, in the order of CAS_IR_OPS");

ProtoMessage metadataEntry(std::string_view key, std::string_view value) {
  ProtoMessage e;  // StringStringEntryProto: key 1, value 2
  e.bytes(1, key).bytes(2, value);
  return e;
}

}  // namespace

std::string writeOnnx(const ir::Graph& graph, const std::vector<std::vector<bool>>* grows, const Weights& weights,
                      const ExportMetadata& metadata, int opset) {
  if (opset < kMinOnnxOpset || opset > kMaxOnnxOpset)
    throw ExportError("ONNX opset " + std::to_string(opset) + " is not supported; choose one in [" + std::to_string(kMinOnnxOpset) + ", " +
                      std::to_string(kMaxOnnxOpset) + "]");
  OnnxGraph g(graph, grows, weights, opset);
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const NodeId id = NodeId(i);
    const OnnxForm& form = kOnnxForms[size_t(graph.nodes[i].op)];
    if (!form.write)
      throw ExportError("the IR op '" + std::string(ir::opName(form.op)) + "' has no ONNX form (" + std::string(form.whyNone) + "): " +
                        ir::describeNode(graph, id));
    form.write(g, id, form.type);
  }
  g.addOutputs();

  // ModelProto: ir_version 1, producer_name 2, producer_version 3, graph 7, opset_import 8
  // (OperatorSetIdProto: version 2, the default domain), metadata_props 14.
  ProtoMessage model;
  model.int64(1, irVersionFor(opset));
  model.bytes(2, "cuda-agent");
  model.bytes(3, kVersion);
  model.message(7, g.finish(metadata.project.empty() ? "policy" : metadata.project));
  ProtoMessage opsetImport;
  opsetImport.int64(2, opset);
  model.message(8, opsetImport);
  model.message(14, metadataEntry("project", metadata.project));
  model.message(14, metadataEntry("environment", metadata.environment));
  model.message(14, metadataEntry("observation_shape", jsonShape(metadata.observationShape)));
  model.message(14, metadataEntry("action_names", jsonStrings(metadata.actionNames)));
  model.message(14, metadataEntry("iteration", std::to_string(metadata.iteration)));
  model.message(14, metadataEntry("cuda_agent_version", kVersion));
  return model.data();
}

std::string exportOnnx(const ExportablePolicy& policy, const OnnxOptions& options) {
  if (options.batch > 0) return writeOnnx(forwardGraph(policy, options.batch), nullptr, policy.weights, policy.metadata, options.opset);
  // The batch axes are the ones that differ between the graphs at batch 2 and batch 3.
  const ir::Graph atTwo = forwardGraph(policy, 2);
  const std::vector<std::vector<bool>> grows = batchAxes(atTwo, forwardGraph(policy, 3));
  return writeOnnx(atTwo, &grows, policy.weights, policy.metadata, options.opset);
}

}  // namespace cas::exports
