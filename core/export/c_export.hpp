#pragma once
// The policy as standalone C99 source: one .c and one .h, libm only, no allocation at all (a
// static workspace, or one the caller passes), the weights as static const arrays. The forward
// graph is generated at batch 1, node by node (one loop nest or helper call per IR node, storage
// as the IR's memory plan lays it out); the batched function runs it once per sample. Every IR
// op maps through one table (kCForms in c_export.cpp, a row per op of CAS_IR_OPS); an op without
// a C form stops the export with an ExportError naming it and the PDL call it came from.
//
// The API the header declares (for outputs logits and value; a policy with other outputs gets
// one pointer per output, in order, named after it):
//   int policy_forward(const float* obs, float* logits, float* value);   one sample
//   int policy_forward_batch(const float* obs, float* logits, float* value, long batch);
//   int policy_forward_with(float* workspace, const float* obs, float* logits, float* value);
// Each returns 0, or 1 when an observation holds an embedding id that is not an integer in range
// (the CPU backend refuses the same input). policy_forward and policy_forward_batch share one
// static workspace, so one thread at a time calls them; policy_forward_with, given a workspace
// of POLICY_WORKSPACE_FLOATS floats per thread, may run on many threads at once.
// Thread-safety: plain functions.
#include <string>

#include "core/export/exportable_policy.hpp"

namespace cas::exports {

struct CSource {
  std::string header;  // the .h
  std::string source;  // the .c, which includes the header as "<headerName>"
};

// Throws ExportError.
CSource exportC(const ExportablePolicy& policy, const std::string& headerName);

// The same from a forward graph at batch 1 (forwardGraph's form).
CSource writeC(const ir::Graph& graph, const Weights& weights, const ExportMetadata& metadata, const std::string& headerName);

}  // namespace cas::exports
