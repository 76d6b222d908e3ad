#pragma once
// The fused Transformer ops (Attention, LayerNorm) written in the primitive ops they replace:
// matmuls, a softmax and elementwise arithmetic. The exports (C, ONNX, standalone CUDA) run
// this first, so their code and their consumers need no fused kernels, and the tests hold the
// fused kernels of both backends to it.
// Thread-safety: pure functions of their arguments.
#include "core/ir/builder.hpp"

namespace cas::ir {

// The graph with every Attention and LayerNorm node replaced by its composition (same outputs,
// updates, labels and precisions). Throws ShapeError on their gradient ops, which only training
// graphs hold.
Graph decomposeFusedOps(const Graph& g);

// The compositions, appended to `b`'s graph: what Attention and LayerNorm compute.
NodeId composedLayerNorm(Builder& b, NodeId x, NodeId gamma, NodeId beta, float eps);
NodeId composedAttention(Builder& b, NodeId q, NodeId k, NodeId v, std::int64_t heads, bool causal, NodeId lengths);

}  // namespace cas::ir
