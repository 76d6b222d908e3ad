#pragma once
// What the exporters write: a policy (its PDL source and the options it compiles with), its
// weights and the facts recorded beside it. The exporters compile it for the batch size they
// need: ONNX at the batch asked for (or at two sizes, to find the axes that grow with the batch),
// C at batch 1, since every sample of a PDL policy is computed on its own.
// Thread-safety: plain values and functions.
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "core/ir/graph.hpp"
#include "core/pdl/compiler.hpp"

namespace cas::exports {

// Why a policy cannot be exported, in a sentence that names the op, the parameter or the file.
struct ExportError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

using Weights = std::map<std::string, std::vector<float>>;  // by parameter name

// Why the ops without an exported form have none, the same in every format's table.
inline constexpr std::string_view kGradientOpHasNoForm = "it belongs to training graphs (gradients), never to a policy's forward pass";
inline constexpr std::string_view kFusedOpIsDecomposed =
    "the export decomposes fused Transformer layers into their composition (core/ir/decompose.hpp) first";
inline constexpr std::string_view kDropoutHasNoForm = "dropout is active only while training, and an exported policy is compiled for inference";

struct ExportMetadata {
  std::string project;      // the project's name
  std::string environment;  // "connect4"
  std::vector<std::int64_t> observationShape;  // per sample
  std::vector<std::string> actionNames;        // "column 1", ...
  std::int64_t iteration = 0;  // the checkpoint's training iteration; 0: the initial weights
};

struct ExportablePolicy {
  std::string source;           // PDL
  pdl::CompileOptions options;  // observation shape, action count, entry, algorithm (batch: set per export)
  Weights weights;
  ExportMetadata metadata;
};

// The policy's inference graph at `batch`, folded and with dead nodes removed; its inputs are
// "obs" and the parameters, its outputs the entry's (logits, value for AlphaZero). Throws
// ExportError when the policy does not compile or a parameter's weights are missing or of
// another size.
ir::Graph forwardGraph(const ExportablePolicy& policy, std::int64_t batch);

// For each node of `atTwo` (the forward graph at batch 2), which axes of its shape grow with the
// batch, found by comparing it with `atThree` (the same policy at batch 3). Throws ExportError
// when the two graphs differ in anything but those sizes.
std::vector<std::vector<bool>> batchAxes(const ir::Graph& atTwo, const ir::Graph& atThree);

// The JSON texts metadata and docs use: "[2, 6, 7]", ["column 1", "column 2"].
std::string jsonShape(const std::vector<std::int64_t>& shape);
std::string jsonStrings(const std::vector<std::string>& items);

}  // namespace cas::exports
