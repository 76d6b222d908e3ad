#pragma once
// Checks a graph's invariants: inputs defined before use, arity, every shape equal to what
// inferShape derives, unique input names, valid outputs and (after plan-memory) buffer sizes.
#include <string>
#include <vector>

#include "core/ir/graph.hpp"

namespace cas::ir {

// Empty when the graph is well formed; otherwise one sentence per problem.
std::vector<std::string> verify(const Graph& g);

}  // namespace cas::ir
