#include "gpu/conv_call.hpp"

#include <algorithm>

#include "gpu/cuda_check.hpp"
#include "gpu/device_runtime.hpp"
#include "core/cuda_render/render.hpp"

namespace cas::gpu {
namespace {

using ir::Node;
using ir::NodeId;
using ir::Op;
using ir::numel;

cudnnDataType_t dnnType(ir::Precision p) {
  return p == ir::Precision::BF16 ? CUDNN_DATA_BFLOAT16 : p == ir::Precision::F16 ? CUDNN_DATA_HALF : CUDNN_DATA_FLOAT;
}

// The low-precision copy of node `source` (`elements` values) made by kernel <prefix><suffix>.
LowCopy lowCopy(const ir::Graph& g, const Step& step, const ConvProgram& program, NodeId source, const std::string& suffix, std::int64_t elements) {
  LowCopy copy;
  copy.buffer = program.keep(std::uint64_t(elements) * 2, "a low-precision copy of " + g.node(source).label);
  copy.threads = elements;
  copy.source = source;
  CAS_CU(cuModuleGetFunction(&copy.make, program.module, (step.relayoutPrefix + suffix).c_str()));
  return copy;
}

// The fastest of cuDNN's timed algorithms that succeeded; an fp32 node takes one timed with FMA
// or default math (the search ran with the descriptor's FMA math; on Ampere and later default
// math would allow TF32, so `cuda-agent kernels` names the math each convolution runs with).
template <typename Perf>
void pickAlgorithm(const Perf* perf, int found, ConvCall& c, const ir::Graph& g, NodeId id) {
  const Node& n = g.node(id);
  for (int i = 0; i < found; ++i)
    if (perf[i].status == CUDNN_STATUS_SUCCESS && (n.precision != ir::Precision::F32 || perf[i].mathType == CUDNN_FMA_MATH ||
                                                    perf[i].mathType == CUDNN_DEFAULT_MATH)) {
      c.algo = int(perf[i].algo);
      c.math = perf[i].mathType;
      c.workspace = perf[i].memory;
      CAS_DNN(cudnnSetConvolutionMathType(c.conv, perf[i].mathType));
      return;
    }
  throw CudaError("cuDNN has no algorithm for " + ir::describeNode(g, id));
}

// Pool memory released when it goes out of scope (the algorithm search's trial workspace).
struct Borrowed {
  DeviceRuntime& rt;
  CUdeviceptr ptr;
  Borrowed(DeviceRuntime& runtime, std::uint64_t bytes, const std::string& what) : rt(runtime), ptr(runtime.pool.allocate(bytes, what)) {}
  ~Borrowed() { rt.pool.release(ptr); }
  Borrowed(const Borrowed&) = delete;
  Borrowed& operator=(const Borrowed&) = delete;
};

// A generated layout kernel (src, dst), grid-stride over `threads`.
void launchLayout(const DeviceRuntime& rt, CUfunction f, CUdeviceptr from, CUdeviceptr to, std::int64_t threads, CUstream s) {
  void* args[] = {&from, &to};
  const unsigned blocks = unsigned(std::min<std::int64_t>((threads + 255) / 256, std::int64_t(rt.smCount) * 16));
  CAS_CU(cuLaunchKernel(f, std::max(blocks, 1u), 1, 1, 256, 1, 1, 0, s, args, nullptr));
}

}  // namespace

void planConvCall(DeviceRuntime& rt, const ir::Graph& g, const Step& step, const ConvProgram& program, ConvCall& c) {
  const NodeId id = step.node;
  const Node& n = g.node(id);
  cudnnHandle_t dnn = rt.dnn();
  ir::Shape xs, ws, ys;
  if (n.op == Op::Conv2d) { xs = g.node(n.inputs[0]).shape; ws = g.node(n.inputs[1]).shape; ys = n.shape; }
  else if (n.op == Op::Conv2dGradInput) { xs = n.attrs.refShape; ws = g.node(n.inputs[1]).shape; ys = g.node(n.inputs[0]).shape; }
  else { xs = g.node(n.inputs[0]).shape; ws = n.shape; ys = g.node(n.inputs[1]).shape; }
  c.precision = n.precision;
  const cudnnDataType_t type = dnnType(n.precision);
  const bool low = ir::isHalfWidth(n.precision);
  const auto& a = n.attrs;
  const int f = step.fold;
  const int xc = int(xs[1]) * f * f, xh = int(xs[2]) / f, xw = int(xs[3]) / f;
  CAS_DNN(cudnnCreateTensorDescriptor(&c.x));
  CAS_DNN(cudnnCreateTensorDescriptor(&c.y));
  CAS_DNN(cudnnCreateFilterDescriptor(&c.w));
  CAS_DNN(cudnnCreateConvolutionDescriptor(&c.conv));
  const cudnnTensorFormat_t layout = low ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
  CAS_DNN(cudnnSetTensor4dDescriptor(c.x, layout, type, int(xs[0]), xc, xh, xw));
  CAS_DNN(cudnnSetTensor4dDescriptor(c.y, layout, type, int(ys[0]), int(ys[1]), int(ys[2]), int(ys[3])));
  CAS_DNN(cudnnSetFilter4dDescriptor(c.w, type, layout, int(ws[0]), xc, int(ws[2]) / f, int(ws[3]) / f));
  CAS_DNN(cudnnSetConvolution2dDescriptor(c.conv, int(a.padTop), int(a.padLeft), int(a.strideH) / f, int(a.strideW) / f, 1, 1,
                                          CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
  // fp32 stays fp32 (FMA only); tf32 lets cuDNN round fp32 operands to TF32 on tensor cores;
  // bf16/fp16 use tensor cores with fp32 accumulation.
  const bool tensorCores = low || n.precision == ir::Precision::TF32;
  CAS_DNN(cudnnSetConvolutionMathType(c.conv, tensorCores ? CUDNN_TENSOR_OP_MATH : CUDNN_FMA_MATH));
  if (low) {
    // cuDNN runs only input gradients in low precision (the layout kernels of core/cuda_render/kernels/relayout.cuh).
    c.operand[0] = lowCopy(g, step, program, n.inputs[0], "_in0", numel(ys));
    c.operand[1] = lowCopy(g, step, program, n.inputs[1], "_in1", numel(ws));
    c.result = program.keep(std::uint64_t(xs[0] * xc * xh * xw) * 2, "a low-precision result of " + n.label);
    CAS_CU(cuModuleGetFunction(&c.fromOut, program.module, (step.relayoutPrefix + "_out").c_str()));
    c.outThreads = numel(n.shape);
  }
  // Autotune: cuDNN times its algorithms on these shapes once; the fastest that fits wins.
  constexpr int kCandidates = 8;
  int found = 0;
  const std::size_t limit = 256ull << 20;
  const Borrowed trial(rt, limit, "cuDNN's algorithm search");
  // in0 and in1 are the node's inputs, out its result, as cuDNN sees them.
  CUdeviceptr in0 = program.address(n.inputs[0]), in1 = program.address(n.inputs[1]), out = program.address(id);
  if (low) in0 = c.operand[0].buffer, in1 = c.operand[1].buffer, out = c.result;
  auto ptr = [](CUdeviceptr p) { return reinterpret_cast<void*>(p); };
  if (n.op == Op::Conv2d) {
    cudnnConvolutionFwdAlgoPerf_t perf[kCandidates];
    CAS_DNN(cudnnFindConvolutionForwardAlgorithmEx(dnn, c.x, ptr(in0), c.w, ptr(in1), c.conv, c.y, ptr(out), kCandidates, &found, perf, ptr(trial.ptr), limit));
    pickAlgorithm(perf, found, c, g, id);
  } else if (n.op == Op::Conv2dGradInput) {
    cudnnConvolutionBwdDataAlgoPerf_t perf[kCandidates];
    CAS_DNN(cudnnFindConvolutionBackwardDataAlgorithmEx(dnn, c.w, ptr(in1), c.y, ptr(in0), c.conv, c.x, ptr(out), kCandidates, &found, perf, ptr(trial.ptr), limit));
    pickAlgorithm(perf, found, c, g, id);
  } else {
    cudnnConvolutionBwdFilterAlgoPerf_t perf[kCandidates];
    CAS_DNN(cudnnFindConvolutionBackwardFilterAlgorithmEx(dnn, c.x, ptr(in0), c.y, ptr(in1), c.conv, c.w, ptr(out), kCandidates, &found, perf, ptr(trial.ptr), limit));
    pickAlgorithm(perf, found, c, g, id);
  }
}

void enqueueConvCall(DeviceRuntime& rt, const ir::Graph& g, NodeId id, const ConvCall& c, const std::function<CUdeviceptr(NodeId)>& address,
                     CUdeviceptr workspace, CUstream s) {
  const Node& n = g.node(id);
  CUdeviceptr in0 = address(n.inputs[0]), in1 = address(n.inputs[1]), out = address(id);
  const bool low = ir::isHalfWidth(c.precision);
  if (low) {
    for (const LowCopy& copy : c.operand) launchLayout(rt, copy.make, address(copy.source), copy.buffer, copy.threads, s);
    in0 = c.operand[0].buffer;
    in1 = c.operand[1].buffer;
  }
  const float one = 1.0f, zero = 0.0f;
  auto ptr = [](CUdeviceptr p) { return reinterpret_cast<void*>(p); };
  cudnnHandle_t dnn = rt.dnn();
  const CUdeviceptr result = low ? c.result : out;
  if (n.op == Op::Conv2d)
    CAS_DNN(cudnnConvolutionForward(dnn, &one, c.x, ptr(in0), c.w, ptr(in1), c.conv, cudnnConvolutionFwdAlgo_t(c.algo), ptr(workspace),
                                    c.workspace, &zero, c.y, ptr(result)));
  else if (n.op == Op::Conv2dGradInput)
    CAS_DNN(cudnnConvolutionBackwardData(dnn, &one, c.w, ptr(in1), c.y, ptr(in0), c.conv, cudnnConvolutionBwdDataAlgo_t(c.algo),
                                         ptr(workspace), c.workspace, &zero, c.x, ptr(result)));
  else
    CAS_DNN(cudnnConvolutionBackwardFilter(dnn, &one, c.x, ptr(in0), c.y, ptr(in1), c.conv, cudnnConvolutionBwdFilterAlgo_t(c.algo),
                                           ptr(workspace), c.workspace, &zero, c.w, ptr(result)));
  if (low) launchLayout(rt, c.fromOut, c.result, out, c.outThreads, s);
}

void destroyConvCall(ConvCall& c) {
  if (c.x) cudnnDestroyTensorDescriptor(c.x);
  if (c.y) cudnnDestroyTensorDescriptor(c.y);
  if (c.w) cudnnDestroyFilterDescriptor(c.w);
  if (c.conv) cudnnDestroyConvolutionDescriptor(c.conv);
  c.x = nullptr, c.y = nullptr, c.w = nullptr, c.conv = nullptr;
}

std::string describeConvCall(const ConvCall& c) {
  const char* math = c.math == CUDNN_FMA_MATH            ? "FMA math"
                     : c.math == CUDNN_TENSOR_OP_MATH     ? "tensor-op math"
                     : c.math == CUDNN_DEFAULT_MATH       ? "default math"
                                                          : "tensor-op math with conversion";
  return "algorithm " + std::to_string(c.algo) + ", " + math;
}

}  // namespace cas::gpu
