#pragma once
// The builder API: the one way nodes are made, by the PDL front end, autodiff, and core/train's
// losses and optimizers. Every node's shape is inferred here (inferShape); a misuse throws
// ShapeError with a sentence the caller turns into a diagnostic.
// Thread-safety: a Builder mutates its Graph; use one per thread.
#include <stdexcept>
#include <string>

#include "core/ir/graph.hpp"

namespace cas::ir {

struct ShapeError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The shape node `n` produces given its inputs in `g`; throws ShapeError when they do not fit.
Shape inferShape(const Graph& g, const Node& n);

// numpy broadcasting of two shapes; throws ShapeError.
Shape broadcastShapes(const Shape& a, const Shape& b);

struct Window2d {  // convolution and pooling geometry
  std::int64_t kernelH = 1, kernelW = 1, strideH = 1, strideW = 1;
  std::int64_t padTop = 0, padLeft = 0, padBottom = 0, padRight = 0;
};

class Builder {
 public:
  explicit Builder(Graph& g) : g_(g) {}

  // What the next nodes are attributed to (label, source position, precision).
  void setOrigin(std::string label, int line, int column) {
    label_ = std::move(label);
    line_ = line;
    column_ = column;
  }
  void setPrecision(Precision p) { precision_ = p; }
  Graph& graph() { return g_; }
  const Shape& shape(NodeId id) const { return g_.node(id).shape; }

  NodeId input(const std::string& name, Shape shape, InputRole role = InputRole::Data, Init init = Init::None,
               std::int64_t fanIn = 0);
  NodeId scalar(float value);
  NodeId constant(Shape shape, std::vector<float> values);

  NodeId unary(Op op, NodeId x);
  NodeId binary(Op op, NodeId a, NodeId b);
  NodeId add(NodeId a, NodeId b) { return binary(Op::Add, a, b); }
  NodeId sub(NodeId a, NodeId b) { return binary(Op::Sub, a, b); }
  NodeId mul(NodeId a, NodeId b) { return binary(Op::Mul, a, b); }
  NodeId div(NodeId a, NodeId b) { return binary(Op::Div, a, b); }
  NodeId scale(NodeId x, float s) { return mul(x, scalar(s)); }
  // |x| and sign(x) (-1, 0 or 1) from the table's ops; comparisons carry no gradient, so sign
  // belongs where none is needed.
  NodeId abs(NodeId x) { return binary(Op::Maximum, x, unary(Op::Neg, x)); }
  NodeId sign(NodeId x) { return sub(binary(Op::Greater, x, scalar(0)), binary(Op::Less, x, scalar(0))); }
  NodeId where(NodeId mask, NodeId a, NodeId b);
  NodeId clip(NodeId x, float lo, float hi);
  NodeId dropout(NodeId x, float rate, std::uint64_t seed);

  NodeId reshape(NodeId x, Shape shape);  // one -1 allowed
  NodeId transpose(NodeId x, std::vector<std::int64_t> perm);
  NodeId broadcastTo(NodeId x, Shape shape);
  NodeId concat(const std::vector<NodeId>& xs, std::int64_t axis);
  NodeId slice(NodeId x, std::int64_t axis, std::int64_t start, std::int64_t length);
  // Sums a broadcast result back to `target` (the shape before broadcasting).
  NodeId sumToShape(NodeId x, const Shape& target);

  NodeId reduceSum(NodeId x, std::vector<std::int64_t> axes, bool keepDims);
  NodeId reduceMax(NodeId x, std::vector<std::int64_t> axes, bool keepDims);
  NodeId reduceMean(NodeId x, std::vector<std::int64_t> axes, bool keepDims);
  NodeId softmax(NodeId x, std::int64_t axis);
  NodeId logSoftmax(NodeId x, std::int64_t axis);

  NodeId matmul(NodeId a, NodeId b, bool transposeA = false, bool transposeB = false);
  NodeId conv2d(NodeId x, NodeId w, const Window2d& win);
  NodeId conv2dGradInput(NodeId g, NodeId w, const Window2d& win, const Shape& inputShape);
  NodeId conv2dGradWeight(NodeId x, NodeId g, const Window2d& win, const Shape& weightShape);
  NodeId maxPool2d(NodeId x, const Window2d& win);
  NodeId maxPool2dGrad(NodeId x, NodeId g, const Window2d& win);
  NodeId avgPool2d(NodeId x, const Window2d& win);
  NodeId avgPool2dGrad(NodeId g, const Window2d& win, const Shape& inputShape);
  NodeId gather(NodeId table, NodeId ids);
  NodeId scatterAddRows(NodeId ids, NodeId g, std::int64_t rows);

  // The fused Transformer layers (ops.hpp's table says what they compute; core/ir/decompose.hpp
  // writes them in the primitive ops for the exports).
  NodeId layerNorm(NodeId x, NodeId gamma, NodeId beta, float eps);  // over the last axis
  // q [B,T,D], k and v [B,S,D]; lengths [B,1] (the valid keys of each sequence) or kNoNode.
  NodeId attention(NodeId q, NodeId k, NodeId v, std::int64_t heads, bool causal, NodeId lengths = kNoNode);

  // Adds a node (shape inferred) with the current origin.
  NodeId make(Op op, std::vector<NodeId> inputs, Attrs attrs = {});

 private:
  Graph& g_;
  std::string label_;
  int line_ = 0, column_ = 0;
  Precision precision_ = Precision::F32;
};

// Normalises a possibly negative axis for a rank; throws ShapeError when out of range.
std::int64_t normaliseAxis(std::int64_t axis, std::size_t rank);

}  // namespace cas::ir
