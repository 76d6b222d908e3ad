#pragma once
// ONNX from the IR, written with our own protobuf writer (proto_writer.hpp): a ModelProto with
// one graph whose input is "obs", whose outputs are the policy's (logits, value), whose
// initializers are the weights, and whose metadata_props record the project, environment,
// observation shape, action names, iteration and our version. Every IR op maps through one table
// (kOnnxForms in onnx_export.cpp, a row per op of CAS_IR_OPS); an op without an ONNX form stops
// the export with an ExportError naming it and the PDL call it came from.
// Thread-safety: plain functions.
#include <cstdint>
#include <string>
#include <vector>

#include "core/export/exportable_policy.hpp"

namespace cas::exports {

inline constexpr int kMinOnnxOpset = 13;  // Softmax over one axis, ReduceSum's axes as an input
inline constexpr int kMaxOnnxOpset = 21;
inline constexpr int kDefaultOnnxOpset = 17;
inline constexpr std::int64_t kMaxOnnxBatch = 1 << 20;  // the largest fixed batch size offered

struct OnnxOptions {
  int opset = kDefaultOnnxOpset;
  std::int64_t batch = 0;  // 0: dynamic (the batch axis is named "batch"); else that batch size
};

// The ONNX model's bytes. Throws ExportError.
std::string exportOnnx(const ExportablePolicy& policy, const OnnxOptions& options);

// The same from a forward graph (forwardGraph's form). `grows`: null for the graph's own batch
// size; else batchAxes(graph, ...), and the axes marked there are left to the batch.
std::string writeOnnx(const ir::Graph& graph, const std::vector<std::vector<bool>>* grows, const Weights& weights,
                      const ExportMetadata& metadata, int opset);

}  // namespace cas::exports
