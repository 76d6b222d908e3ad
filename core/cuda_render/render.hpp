#pragma once
// The CUDA renderer: each step of the IR's schedule (core/ir/schedule.hpp) becomes a call of
// one of the checked-in kernel templates (core/cuda_render/kernels/*.cuh, embedded for NVRTC), with the
// template arguments and the epilogue functor generated here:
//
//   Elementwise unit   cas_elementwise<Count>(b, [&](int i) { <members at i> })
//   Reduction unit     cas_reduce_rows / cas_reduce_columns<Outputs, Length, Chunks, IsMax>
//   Special unit       cas_softmax_rows, cas_map (transpose, slice), cas_pool2d(_grad),
//                      cas_gather_rows, cas_scatter_add_rows
//   Gemm unit          cas_gemm_narrow / cas_gemm_skinny / cas_gemm_tiled<M, N, K, ...>
//   ImplicitConv unit  cas_conv_forward / cas_conv_wgrad<geometry...>
//   Conv unit (16-bit) cas_to_nhwc(_fold), cas_from_nhwc around cuDNN
//
// No CUDA headers: the result is plain data (printed by `cuda-agent kernels`, compiled by
// cuda_program.cpp). Thread-safety: a Schedule is a plain value; the functions are pure.
#include <cstdint>
#include <string>
#include <vector>

#include "core/ir/schedule.hpp"

namespace cas::gpu {

using ir::StepKind;
using ir::isGenerated;

struct Segment {
  std::vector<ir::NodeId> members;  // nodes it computes, in order
  std::int64_t threads = 0;         // threads it needs
};

// One step of the schedule with its CUDA.
struct Step {
  StepKind kind = StepKind::Kernel;
  std::string name;                  // kernel function name, e.g. "k7_tanh_add"
  std::string source;                // the kernel's CUDA: the template calls and epilogues
  std::vector<ir::NodeId> params;    // buffer arguments, in parameter order
  std::vector<Segment> segments;     // one per unit
  ir::NodeId node = ir::kNoNode;     // Gemm/Blas/Conv/ImplicitConv/Fill: the node; Copy: the source output
  ir::NodeId target = ir::kNoNode;   // Copy: the input written
  float fill = 0;                    // Fill
  std::int64_t gridX = 0, gridY = 0;  // Gemm, ImplicitConv: blocks
  int blockSize = 256;                // Gemm, ImplicitConv: threads per block
  std::string label;                 // the PDL layers it computes, for reports
  // A bf16/fp16 input gradient (Conv): `source` holds the layout kernels <relayoutPrefix>_in0,
  // _in1, _out around cuDNN's NHWC kernels, with space-to-depth by `fold`.
  std::string relayoutPrefix;
  int fold = 1;
  std::string describe() const;      // "kernel k7_tanh_add: 3 nodes, 65536 threads"
};

struct Schedule {
  ir::Schedule plan;        // what runs where (the IR's schedule)
  std::vector<Step> steps;  // plan.steps, rendered
};

// The CUDA backend's scheduling target: its measured cost model, with the hand-tuning
// overrides CAS_GEMM_SPLIT_CHUNK (split-K rows per block) and CAS_GEMM_MAX_WORK (M*N*K above
// which fp32 products go to cuBLAS) from the environment.
ir::ScheduleTarget cudaTarget();

// Plans `g` for the CUDA target (or `target`) and renders every step. Throws
// std::runtime_error naming the node when the graph has something the backend cannot run.
Schedule renderSchedule(const ir::Graph& g);
Schedule renderSchedule(const ir::Graph& g, const ir::ScheduleTarget& target);

// What every module starts with: the device helpers and all kernel templates.
const std::string& kernelPrelude();

}  // namespace cas::gpu
