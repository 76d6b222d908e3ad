#pragma once
// A convolution through cuDNN: descriptors made and the algorithm autotuned once, when a graph is
// compiled, then the call enqueued on a stream at every run. Forward (Conv2d), input gradient
// (Conv2dGradInput) and weight gradient (Conv2dGradWeight), NCHW.
// fp32 stays fp32 (FMA math); tf32 lets cuDNN round the fp32 operands to TF32 on tensor cores;
// a bf16/fp16 convolution that reaches cuDNN (the input gradient: the others are generated
// implicit GEMMs) runs in NHWC on low-precision copies of its operands that the schedule's layout
// kernels make (core/cuda_render/kernels/relayout.cuh), with space-to-depth by the step's fold, and its result
// comes back to the fp32 NCHW buffer through another layout kernel.
// Thread-safety: a ConvCall is a plain value holding cuDNN descriptors (destroyConvCall frees
// them); planning and enqueueing use the runtime's cuDNN handle, so they run on the thread that
// drives that runtime.
#include <cuda.h>
#include <cudnn.h>

#include <cstdint>
#include <functional>
#include <string>

#include "core/ir/graph.hpp"

namespace cas::gpu {

struct DeviceRuntime;
struct Step;

// A bf16/fp16 copy of a tensor in another layout, made by a generated layout kernel (src, dst).
struct LowCopy {
  CUdeviceptr buffer = 0;
  CUfunction make = nullptr;
  std::int64_t threads = 0;    // of `make`
  ir::NodeId source = ir::kNoNode;
};

struct ConvCall {
  cudnnTensorDescriptor_t x = nullptr, y = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  int algo = 0;
  cudnnMathType_t math = CUDNN_FMA_MATH;  // the math type the algorithm was timed with
  std::size_t workspace = 0;  // bytes the algorithm needs
  ir::Precision precision = ir::Precision::F32;
  // bf16/fp16 input gradient: the two operands as low-precision NHWC copies; cuDNN's NHWC
  // low-precision result comes back through `fromOut`.
  LowCopy operand[2];
  CUdeviceptr result = 0;
  CUfunction fromOut = nullptr;
  std::int64_t outThreads = 0;
};

// What a call needs of the program that owns it: where a node's buffer lies, device memory that
// lives as long as the program (named for the pool's errors), and the module holding the
// schedule's layout kernels.
struct ConvProgram {
  std::function<CUdeviceptr(ir::NodeId)> address;
  std::function<CUdeviceptr(std::uint64_t bytes, const std::string& what)> keep;
  CUmodule module = nullptr;
};

// The call for step `step` (a Conv step) of graph `g`: descriptors, low-precision copies, and the
// fastest algorithm that cuDNN's timed search finds on the program's buffers within a 256 MiB
// trial workspace. Throws CudaError when cuDNN has none for the node. On a throw the descriptors
// made so far stay in `c` for destroyConvCall.
void planConvCall(DeviceRuntime& rt, const ir::Graph& g, const Step& step, const ConvProgram& program, ConvCall& c);

// Enqueues node `id`'s convolution on stream `s`, with `workspace` (at least c.workspace bytes).
void enqueueConvCall(DeviceRuntime& rt, const ir::Graph& g, ir::NodeId id, const ConvCall& c,
                     const std::function<CUdeviceptr(ir::NodeId)>& address, CUdeviceptr workspace, CUstream s);

void destroyConvCall(ConvCall& c);

// "algorithm 1, FMA math" (tensor-op math, default math), for kernel reports.
std::string describeConvCall(const ConvCall& c);

}  // namespace cas::gpu
