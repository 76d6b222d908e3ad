#pragma once
// From an IR graph to the CUDA backend's schedule: which nodes become one kernel, in what order
// the steps run, what each generated kernel's CUDA source is, and which buffers it touches.
// No CUDA headers: the schedule and the sources are plain data (printed by `cuda-agent kernels`,
// compiled by cuda_program.cpp). Thread-safety: a Schedule is a plain value.
//
// Fusion, in order:
//   1. vertical: elementwise nodes of one shape join their producer's group when no path leaves
//      and re-enters the group; a group may end in one reduction; a group may start with a
//      matmul (a generated tiled GEMM whose epilogue is the rest of the group) when the cost
//      model prefers that to cuBLAS (fp32, K <= 512, M*N*K small); likewise a bf16/fp16
//      convolution (a generated implicit GEMM on tensor cores).
//   2. horizontal: groups that are independent and sit at the same as-late-as-possible level
//      share one launch, each in its own range of blocks (Adam over every parameter, the sums of
//      squares of every gradient).
//   3. updates: a graph update (output -> input) writes in place when the output is computed by
//      an elementwise kernel after every other reader of the input; otherwise a copy follows.
#include <cstdint>
#include <string>
#include <vector>

#include "core/ir/graph.hpp"

namespace cas::gpu {

enum class StepKind {
  Kernel,    // a generated kernel: one or more segments, launched over their summed blocks
  Gemm,      // a generated tiled GEMM with a fused elementwise epilogue (fixed 16x16 threads)
  Blas,      // matmul through cuBLAS (fp32, or bf16 tensor cores with fp32 accumulation)
  Conv,      // Conv2d / Conv2dGradInput / Conv2dGradWeight through cuDNN (bf16/fp16: input gradients only)
  ImplicitConv,  // a generated tensor-core convolution (bf16/fp16 Conv2d with a fused elementwise
                 // epilogue, Conv2dGradWeight added atomically; gpu/implicit_conv.hpp)
  Fill,      // set a node's buffer to a value (accumulators of atomic kernels)
  Copy,      // device-to-device copy of an update that cannot be done in place
};

// Steps whose kernel is generated (one launch of a kernel in the module, named step.name).
inline bool isGenerated(StepKind k) { return k == StepKind::Kernel || k == StepKind::Gemm || k == StepKind::ImplicitConv; }

struct Segment {
  std::vector<ir::NodeId> members;  // nodes it computes, in order
  std::int64_t threads = 0;         // threads it needs
};

struct Step {
  StepKind kind = StepKind::Kernel;
  std::string name;                  // kernel function name, e.g. "k7_tanh_add"
  std::string source;                // full CUDA source (Kernel, Gemm)
  std::vector<ir::NodeId> params;    // buffer arguments, in parameter order
  std::vector<Segment> segments;     // Kernel
  ir::NodeId node = ir::kNoNode;     // Gemm/Blas/Conv/Fill: the node; Copy: the source output
  ir::NodeId target = ir::kNoNode;   // Copy: the input written
  float fill = 0;                    // Fill
  std::int64_t gridX = 0, gridY = 0;  // Gemm, ImplicitConv: tiles
  int blockSize = 256;                // Gemm, ImplicitConv: threads per block
  std::string label;                 // the PDL layers it computes, for reports
  // A bf16/fp16 input gradient (Conv; codegen.cpp, emitConvRelayouts): `source` holds the
  // generated layout kernels <relayoutPrefix>_in0, _in1, _out around cuDNN's NHWC kernels, with
  // space-to-depth by `fold`.
  std::string relayoutPrefix;
  int fold = 1;
  std::string describe() const;      // "kernel k7_tanh_add: 3 nodes, 65536 threads"
};

struct ScheduleOptions {
  bool fuseGemmEpilogues = true;
  bool horizontalFusion = true;
};

struct Schedule {
  std::vector<Step> steps;
  // storage[node]: the node whose buffer holds this node's value (itself, an aliased reshape
  // source, or the input an in-place update writes); kNoNode when the node is never stored.
  std::vector<ir::NodeId> storage;
  int fusedNodes = 0;  // computed nodes that live inside a kernel without a buffer
};

// Throws std::runtime_error naming the node when the graph has something this backend cannot
// run yet (the message says what and where).
Schedule planSchedule(const ir::Graph& g, const ScheduleOptions& options = {});

// The device helpers every generated kernel includes (tanh, gelu, dropout hash, atomics).
const std::string& kernelPrelude();

}  // namespace cas::gpu
