#pragma once
// The graph IR: a topologically ordered list of nodes, each producing one f32 tensor of a static
// shape (the batch size is part of the shape: a graph is built for one batch size).
//
//   %3 = conv2d %0, %1  stride=1 pad=1,1,1,1  : [2,32,84,84]  buf=2  # policy/conv2d_0 @4:13
//
// Node ids are indices into Graph::nodes; every input id is smaller than its user's id.
// Thread-safety: a Graph is a plain value; passes mutate it, backends read it.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/ir/ops.hpp"

namespace cas::ir {

using Shape = std::vector<std::int64_t>;
using NodeId = std::int32_t;
inline constexpr NodeId kNoNode = -1;

std::int64_t numel(const Shape& s);
// For a reduction of `input` over `axes` (kept or not): each input axis's stride in the output,
// 0 for the reduced axes. Input element at coordinates c goes to output sum(c[d] * stride[d]).
std::vector<std::int64_t> reductionOutputStrides(const Shape& input, const std::vector<std::int64_t>& axes);
// "[2,32,84,84]", compact for dumps and margins; prose (diagnostics, listings) passes ", " for
// "[2, 32, 84, 84]". The one text of a shape: no other code formats one.
std::string shapeText(const Shape& s, std::string_view separator = ",");

enum class InputRole : std::uint8_t { Data, Parameter, State };
// The arithmetic of a node's products (matmul, convolution). F32 stores and multiplies in fp32.
// BF16/F16 multiply 16-bit copies of the operands with fp32 sums. TF32 keeps fp32 operands and
// results but lets tensor cores round the operands to TF32 (10-bit mantissa) for the products,
// as JAX (DEFAULT precision) and cuDNN do by default on Ampere and later. The CPU backend
// computes all of them in fp32.
enum class Precision : std::uint8_t { F32, BF16, F16, TF32 };
const char* precisionName(Precision p);
// BF16 and F16: the precisions whose operands are 16-bit copies (relayouts, implicit GEMMs).
inline bool isHalfWidth(Precision p) { return p == Precision::BF16 || p == Precision::F16; }

// How a parameter is initialised (CPU and GPU backends use the same seeded procedure).
enum class Init : std::uint8_t { None, FanInUniform, Ones, Zeros, Normal };

// Attributes; each op reads the fields its table entry documents in graph.cpp's printer.
struct Attrs {
  std::vector<std::int64_t> ints;  // Reshape/BroadcastTo: shape; Transpose: perm; Reduce*: axes
  std::int64_t axis = 0;           // Concat, Slice, Softmax, LogSoftmax
  std::int64_t start = 0, length = 0;  // Slice
  bool keepDims = false;           // Reduce*
  bool transposeA = false, transposeB = false;  // MatMul
  std::int64_t kernelH = 0, kernelW = 0, strideH = 1, strideW = 1;  // Conv2d, pools
  std::int64_t padTop = 0, padLeft = 0, padBottom = 0, padRight = 0;
  Shape refShape;                  // grad ops: the shape they produce (input or weight shape)
  float rate = 0;                  // Dropout
  std::uint64_t seed = 0;          // Dropout
  std::int64_t heads = 1;          // Attention and its gradients
  bool causal = false;             // Attention and its gradients
  float eps = 1e-5f;               // LayerNorm, LayerNormGrad
  // Input
  std::string name;
  InputRole role = InputRole::Data;
  Init init = Init::None;
  std::int64_t fanIn = 0;
  // Constant
  std::vector<float> values;  // numel(shape) values, or one value broadcast to the shape
};

struct Node {
  Op op = Op::Constant;
  std::vector<NodeId> inputs;
  Shape shape;
  Attrs attrs;
  Precision precision = Precision::F32;
  std::string label;  // the PDL layer or expression it came from, e.g. "policy/conv2d_0"
  int line = 0, column = 0;  // source position in the PDL file, 0 when none
  // Set by passes:
  std::int32_t buffer = -1;  // "plan-memory": storage slot (inputs and constants have none)
};

struct Output {
  std::string name;
  NodeId node;
};

struct BufferPlan {
  std::vector<std::int64_t> sizes;  // elements per slot
  std::int64_t totalElements = 0;   // sum of sizes (what the plan allocates)
  std::int64_t naiveElements = 0;   // what one buffer per node would take
};

// After each run, output `output` is copied into input `input` (a training step's new
// parameters and optimizer state).
struct Update {
  std::string output;
  std::string input;
};

struct Graph {
  std::string name;
  std::vector<Node> nodes;
  std::vector<Output> outputs;
  std::vector<Update> updates;
  BufferPlan plan;  // valid after "plan-memory"

  NodeId add(Node n);
  const Node& node(NodeId id) const { return nodes[size_t(id)]; }
  Node& node(NodeId id) { return nodes[size_t(id)]; }
  NodeId findInput(const std::string& name) const;
  std::vector<NodeId> inputsWithRole(InputRole role) const;
  NodeId output(const std::string& name) const;  // kNoNode when absent
};

// A node for error messages: "%7 conv2d in policy/conv2d_0 (line 4:13)".
std::string describeNode(const Graph& g, NodeId id);

// The readable text form (printed by `cuda-agent check --ir`).
std::string toText(const Graph& g);

}  // namespace cas::ir
