#pragma once
// Reverse-mode automatic differentiation as an IR-to-IR pass: appends to the graph the nodes
// that compute d(loss)/d(x) for each requested x, using the same builder as everything else.
#include <vector>

#include "core/ir/builder.hpp"

namespace cas::ir {

// `loss` must hold one element. Returns one gradient node per entry of `wrt`, each shaped like
// its input; an input the loss does not depend on gets a zero constant. Throws ShapeError for
// an op without a gradient rule on the path (second-order gradients are not supported).
std::vector<NodeId> appendGradients(Builder& b, NodeId loss, const std::vector<NodeId>& wrt);

}  // namespace cas::ir
