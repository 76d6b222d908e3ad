#include "core/cuda_render/standalone_export.hpp"

#include <algorithm>
#include <map>

#include "cas/version.hpp"
#include "core/export/c_text.hpp"
#include "core/cuda_render/render.hpp"

namespace cas::gpu {
namespace {

using exports::ExportError;
using ir::NodeId;
using ir::numel;
using ir::Op;

constexpr std::int64_t kAlignFloats = 64;  // 256 bytes: what cudaMalloc guarantees, per buffer

std::string number(std::int64_t v) { return std::to_string(v); }

// The generated file's host code: fixed text, then the parts this policy fills in.
constexpr const char* kHostHelpers = R"(
#define CAS_TRY(call)                          \
  do {                                         \
    const cudaError_t cas_status = (call);     \
    if (cas_status != cudaSuccess) return cas_status; \
  } while (0)

/* Sets accumulators that atomic kernels add into (the schedule's fill steps). */
extern "C" __global__ void cas_fill(float* p, float value, int count) {
  const int i = int(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < count) p[i] = value;
}

)";

// Emitted when the policy has kernel steps (an unused static function is a warning).
constexpr const char* kBlockHelpers = R"(
/* The block size of a step kernel, as the CUDA backend picks it: the occupancy calculator's,
   at most 256 threads, smaller when the step has too few threads to give every SM a block. */
template <typename Kernel>
static unsigned cas_block_size(Kernel kernel, long long threads, int sms) {
  int min_grid = 0, block = 256;
  if (cudaOccupancyMaxPotentialBlockSize(&min_grid, &block, kernel, 0, 0) != cudaSuccess) block = 256;
  block = block < 256 ? block : 256;
  if (threads < (long long)sms * block) {
    const long long small = (threads / sms + 31) / 32 * 32;
    block = int(small < 32 ? 32 : small);
  }
  block = block / 32 * 32;
  return unsigned(block < 32 ? 32 : (block > 1024 ? 1024 : block));
}

static unsigned cas_blocks(long long threads, unsigned block) { return unsigned((threads + block - 1) / block); }
)";

// The CUDA text of the policy: kernels, weights, arena layout, launches.
class CudaWriter {
 public:
  CudaWriter(const ir::Graph& g, const exports::Weights& weights) : g_(g), weights_(weights) {
    ir::ScheduleTarget target;
    target.vendorLibraries = false;
    target.symmetricConvPadding = false;  // direct.cuh's convolution pads as the IR says
    try {
      schedule_ = renderSchedule(g_, target);
    } catch (const std::runtime_error& e) {
      throw ExportError(std::string("the standalone CUDA export cannot plan the policy: ") + e.what());
    }
    layOut();
  }

  std::int64_t arenaFloats() const { return arenaFloats_; }
  std::int64_t offsetOf(NodeId id) const { return offsets_.at(storage(id)); }

  std::string kernels() const {
    std::string s;
    for (const Step& st : schedule_.steps) {
      if (st.kind == StepKind::Blas || st.kind == StepKind::Conv || st.kind == StepKind::Copy)
        throw ExportError("the standalone CUDA export has no kernel for step '" + st.name + "' (" + ir::stepKindName(st.kind) + ")");
      if (!st.source.empty()) s += "\n" + st.source;
    }
    return s;
  }

  // Static arrays of the parameters' and constants' values, and the statements uploading them.
  std::string dataArrays() const {
    std::string s;
    for (const auto& [id, values] : uploads()) s += exports::staticArray(arrayName(id), values.second, values.first);
    return s;
  }
  std::string uploadStatements() const {
    std::string s;
    for (const auto& [id, values] : uploads())
      s += "  CAS_TRY(cudaMemcpyAsync(p->arena + " + number(offsets_.at(id)) + ", " + arrayName(id) + ", sizeof " + arrayName(id) +
           ", cudaMemcpyHostToDevice, p->stream));\n";
    return s;
  }

  // Block and grid sizes of the kernel steps (into p->block[k], p->grid[k]).
  std::string launchShapes() const {
    std::string s;
    int k = 0;
    for (const Step& st : schedule_.steps) {
      if (st.kind != StepKind::Kernel) continue;
      std::int64_t threads = 0;
      std::string grid;
      for (const Segment& seg : st.segments) {
        threads += seg.threads;
        grid += (grid.empty() ? "" : " + ") + std::string("cas_blocks(") + number(seg.threads) + ", p->block[" + number(k) + "])";
      }
      s += "  p->block[" + number(k) + "] = cas_block_size(" + st.name + ", " + number(threads) + ", sms);\n";
      s += "  p->grid[" + number(k) + "] = " + grid + ";\n";
      ++k;
    }
    return s;
  }
  int kernelSteps() const {
    return int(std::count_if(schedule_.steps.begin(), schedule_.steps.end(), [](const Step& st) { return st.kind == StepKind::Kernel; }));
  }

  // The statements of the forward pass on stream `s`, in the schedule's order.
  std::string enqueueStatements() const {
    std::string s;
    int k = 0;
    for (const Step& st : schedule_.steps) {
      if (st.kind == StepKind::Fill) {
        const std::int64_t count = numel(g_.node(st.node).shape);
        s += "  /* fill %" + number(st.node) + " */\n";
        s += "  cas_fill<<<" + number((count + 255) / 256) + ", 256, 0, s>>>(a + " + number(offsetOf(st.node)) + ", " +
             exports::floatLiteral(st.fill) + ", " + number(count) + ");\n  CAS_TRY(cudaGetLastError());\n";
        continue;
      }
      s += "  /* " + exports::commentText(st.describe()) + " */\n";
      if (st.kind == StepKind::Kernel) {
        s += "  config.gridDim = dim3(p->grid[" + number(k) + "], 1, 1);\n  config.blockDim = dim3(p->block[" + number(k) + "], 1, 1);\n";
        ++k;
      } else {  // Gemm, ImplicitConv: the renderer's grid and block
        s += "  config.gridDim = dim3(" + number(st.gridX) + ", " + number(st.gridY) + ", 1);\n  config.blockDim = dim3(" +
             number(st.blockSize) + ", 1, 1);\n";
      }
      s += "  CAS_TRY(cudaLaunchKernelEx(&config, " + st.name;
      for (NodeId param : st.params) s += ", a + " + number(offsets_.at(param));
      s += "));\n";
    }
    return s;
  }

 private:
  NodeId storage(NodeId id) const { return schedule_.plan.storage[size_t(id)]; }

  // Every buffer's offset in floats: fills' accumulators, inputs, the rest; each aligned.
  void layOut() {
    std::int64_t cursor = 0;
    for (size_t i = 0; i < g_.nodes.size(); ++i) {
      if (schedule_.plan.storage[i] != NodeId(i)) continue;
      offsets_[NodeId(i)] = cursor;
      cursor += (numel(g_.nodes[i].shape) + kAlignFloats - 1) / kAlignFloats * kAlignFloats;
    }
    arenaFloats_ = std::max<std::int64_t>(cursor, kAlignFloats);
  }

  // The values uploaded at create: parameters and constants that have storage, by node, with a
  // description for the array's comment.
  std::map<NodeId, std::pair<std::string, std::vector<float>>> uploads() const {
    std::map<NodeId, std::pair<std::string, std::vector<float>>> out;
    for (size_t i = 0; i < g_.nodes.size(); ++i) {
      const ir::Node& n = g_.nodes[i];
      if (schedule_.plan.storage[i] != NodeId(i)) continue;
      if (n.op == Op::Constant) {
        std::vector<float> v = n.attrs.values;
        if (v.size() == 1) v.assign(size_t(numel(n.shape)), v[0]);
        out[NodeId(i)] = {ir::describeNode(g_, NodeId(i)) + " " + ir::shapeText(n.shape, ", "), std::move(v)};
      } else if (n.op == Op::Input && n.attrs.role == ir::InputRole::Parameter) {
        const auto w = weights_.find(n.attrs.name);
        if (w == weights_.end() || std::int64_t(w->second.size()) != numel(n.shape))
          throw ExportError("the weights hold no " + ir::shapeText(n.shape, ", ") + " values for parameter '" + n.attrs.name + "'");
        out[NodeId(i)] = {n.attrs.name + " " + ir::shapeText(n.shape, ", "), w->second};
      } else if (n.op == Op::Input && !(n.attrs.role == ir::InputRole::Data && n.attrs.name == "obs")) {
        throw ExportError(ir::describeNode(g_, NodeId(i)) + " is an input other than the observation, which the CUDA API has no argument for");
      }
    }
    return out;
  }
  std::string arrayName(NodeId id) const { return (g_.node(id).op == Op::Constant ? "c" : "w") + number(id); }

  const ir::Graph& g_;
  const exports::Weights& weights_;
  Schedule schedule_;
  std::map<NodeId, std::int64_t> offsets_;
  std::int64_t arenaFloats_ = 0;
};

}  // namespace

exports::CSource writeStandaloneCuda(const ir::Graph& forward, const exports::Weights& weights, const exports::ExportMetadata& metadata,
                                     const std::string& headerName) {
  using exports::commentText;
  using exports::identifier;
  using exports::upper;
  const NodeId obs = forward.findInput("obs");
  if (obs == ir::kNoNode || forward.node(obs).shape.empty())
    throw ExportError("the CUDA export needs the policy's graph with its observation input \"obs\"");
  const std::int64_t batch = forward.node(obs).shape[0];
  for (const ir::Output& o : forward.outputs)
    if (forward.node(o.node).shape.empty() || forward.node(o.node).shape[0] != batch)
      throw ExportError("the policy's output '" + o.name + "' " + ir::shapeText(forward.node(o.node).shape, ", ") +
                        " does not start with the batch axis, so the CUDA API cannot hand it out per observation");
  const CudaWriter w(forward, weights);

  const std::string guard = upper(identifier(headerName));
  std::string outputParams, outputArgs, sizes, copiesOut;
  for (const ir::Output& o : forward.outputs) {
    const std::string c = identifier(o.name), size = "POLICY_CUDA_" + upper(c) + "_SIZE";
    outputParams += ", float* " + c;
    outputArgs += ", " + c;
    sizes += "#define " + size + " " + number(numel(forward.node(o.node).shape) / batch) + "  /* floats of " + commentText(o.name) +
             " per observation */\n";
    copiesOut += "  CAS_TRY(cudaMemcpyAsync(" + c + ", p->arena + " + number(w.offsetOf(o.node)) + ", sizeof(float) * " + size +
                 " * count, cudaMemcpyDefault, stream));\n";
  }
  const std::string about = commentText("Generated by cuda-agent " + std::string(kVersion) + " from project '" + metadata.project + "'" +
                                        (metadata.environment.empty() ? std::string() : " (environment " + metadata.environment + ")") +
                                        ", iteration " + number(metadata.iteration) + ".\n   Observation " +
                                        exports::jsonShape(metadata.observationShape) + "; actions " + exports::jsonStrings(metadata.actionNames) + ".");
  const std::int64_t kernels = std::max(1, w.kernelSteps());

  exports::CSource out;
  out.header = "/* " + commentText(headerName) + ": the policy's forward pass as standalone CUDA (the CUDA runtime only). " + about + "\n"
               "   Build the .cu with: nvcc -arch=sm_90 -O3 -c; link with the CUDA runtime (nvcc does). */\n"
               "#ifndef " + guard + "\n#define " + guard + "\n\n#include <cuda_runtime_api.h>\n\n"
               "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n"
               "#define POLICY_CUDA_BATCH " + number(batch) + "  /* observations per call, at most (the batch it was exported at) */\n"
               "#define POLICY_CUDA_OBS_SIZE " + number(numel(forward.node(obs).shape) / batch) + "  /* floats per observation, " +
               exports::jsonShape(metadata.observationShape) + " */\n" + sizes + "\n"
               "typedef struct policy_cuda policy_cuda;\n\n"
               "/* Allocates the device memory on the current device, uploads the weights and captures the forward pass as a CUDA\n"
               "   graph. Returns cudaSuccess and sets *policy, or the error (and *policy is NULL). */\n"
               "cudaError_t policy_cuda_create(policy_cuda** policy);\n\n"
               "/* Runs `count` observations (1 to POLICY_CUDA_BATCH), one after another in obs, and writes their outputs, one after\n"
               "   another. Each pointer may be host or device memory. The work goes on `stream` (0: the default stream), and the call\n"
               "   returns when it has finished. One call at a time per policy_cuda. */\n"
               "cudaError_t policy_cuda_forward(policy_cuda* policy, const float* obs" + outputParams + ", int count, cudaStream_t stream);\n\n"
               "/* The same, returning once the work is queued: the outputs are written when `stream` gets there, and host buffers\n"
               "   must stay valid until then (pinned host memory keeps the copies asynchronous). */\n"
               "cudaError_t policy_cuda_forward_async(policy_cuda* policy, const float* obs" + outputParams + ", int count, cudaStream_t stream);\n\n"
               "/* Frees what policy_cuda_create made; NULL is allowed. */\n"
               "void policy_cuda_destroy(policy_cuda* policy);\n\n"
               "#ifdef __cplusplus\n}\n#endif\n\n#endif\n";

  out.source = "/* The policy's forward pass as standalone CUDA. " + about + "\n"
               "   Kernels: the CUDA backend's templates (the .cuh files of core/cuda_render/kernels), then the steps rendered for this policy. */\n"
               "#include <math.h>\n#include <stdlib.h>\n\n#include <cuda_runtime.h>\n\n#include \"" + headerName + "\"\n\n"
               "/* ---- kernel templates ---- */\n" + kernelPrelude() + "\n/* ---- this policy's kernels ---- */" + w.kernels() + "\n"
               "/* ---- host code ---- */" + kHostHelpers + (w.kernelSteps() > 0 ? kBlockHelpers : "") + "\n" + w.dataArrays() + "\n"
               "#define POLICY_CUDA_ARENA_FLOATS " + number(w.arenaFloats()) + "\n"
               "#define POLICY_CUDA_KERNEL_STEPS " + number(kernels) + "\n\n"
               "struct policy_cuda {\n"
               "  float* arena;            /* every buffer of the pass (offsets are fixed in the code) */\n"
               "  cudaStream_t stream;     /* the capture stream */\n"
               "  cudaGraph_t graph;\n"
               "  cudaGraphExec_t exec;\n"
               "  int arch;                /* compute capability, 90 for sm_90 */\n"
               "  unsigned block[POLICY_CUDA_KERNEL_STEPS], grid[POLICY_CUDA_KERNEL_STEPS];\n"
               "};\n\n"
               "/* The pass on stream s: fills, then every step; each step kernel waits for the previous one in\n"
               "   cas_wait_for_previous_kernel, so it may launch early (programmatic dependent launch). */\n"
               "static cudaError_t policy_cuda_enqueue(const policy_cuda* p, cudaStream_t s) {\n"
               "  float* const a = p->arena;\n"
               "  cudaLaunchAttribute early;\n"
               "  early.id = cudaLaunchAttributeProgrammaticStreamSerialization;\n"
               "  early.val.programmaticStreamSerializationAllowed = 1;\n"
               "  cudaLaunchConfig_t config = {};\n"
               "  config.stream = s;\n"
               "  config.attrs = &early;\n"
               "  config.numAttrs = p->arch >= 90 ? 1 : 0;\n"
               "  (void)a;\n" + w.enqueueStatements() + "  return cudaSuccess;\n}\n\n"
               "static cudaError_t policy_cuda_setup(policy_cuda* p) {\n"
               "  int device = 0, sms = 1, major = 0, minor = 0;\n"
               "  CAS_TRY(cudaGetDevice(&device));\n"
               "  CAS_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));\n"
               "  CAS_TRY(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));\n"
               "  CAS_TRY(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));\n"
               "  p->arch = major * 10 + minor;\n"
               "  CAS_TRY(cudaStreamCreateWithFlags(&p->stream, cudaStreamNonBlocking));\n"
               "  CAS_TRY(cudaMalloc((void**)&p->arena, sizeof(float) * POLICY_CUDA_ARENA_FLOATS));\n"
               "  CAS_TRY(cudaMemsetAsync(p->arena, 0, sizeof(float) * POLICY_CUDA_ARENA_FLOATS, p->stream));\n" +
               w.uploadStatements() + w.launchShapes() +
               "  CAS_TRY(cudaStreamSynchronize(p->stream));\n"
               "  CAS_TRY(cudaStreamBeginCapture(p->stream, cudaStreamCaptureModeThreadLocal));\n"
               "  {\n"
               "    const cudaError_t queued = policy_cuda_enqueue(p, p->stream);\n"
               "    const cudaError_t ended = cudaStreamEndCapture(p->stream, &p->graph);\n"
               "    CAS_TRY(queued);\n"
               "    CAS_TRY(ended);\n"
               "  }\n"
               "  CAS_TRY(cudaGraphInstantiate(&p->exec, p->graph, 0));\n"
               "  return cudaSuccess;\n}\n\n"
               "cudaError_t policy_cuda_create(policy_cuda** policy) {\n"
               "  policy_cuda* p;\n"
               "  cudaError_t status;\n"
               "  if (!policy) return cudaErrorInvalidValue;\n"
               "  *policy = NULL;\n"
               "  p = (policy_cuda*)calloc(1, sizeof *p);\n"
               "  if (!p) return cudaErrorMemoryAllocation;\n"
               "  status = policy_cuda_setup(p);\n"
               "  if (status != cudaSuccess) {\n"
               "    policy_cuda_destroy(p);\n"
               "    return status;\n"
               "  }\n"
               "  *policy = p;\n"
               "  return cudaSuccess;\n}\n\n"
               "cudaError_t policy_cuda_forward_async(policy_cuda* p, const float* obs" + outputParams + ", int count, cudaStream_t stream) {\n"
               "  if (!p || !obs || count < 1 || count > POLICY_CUDA_BATCH) return cudaErrorInvalidValue;\n"
               "  CAS_TRY(cudaMemcpyAsync(p->arena + " + number(w.offsetOf(obs)) + ", obs, sizeof(float) * POLICY_CUDA_OBS_SIZE * count, "
               "cudaMemcpyDefault, stream));\n"
               "  CAS_TRY(cudaGraphLaunch(p->exec, stream));\n" + copiesOut + "  return cudaSuccess;\n}\n\n"
               "cudaError_t policy_cuda_forward(policy_cuda* p, const float* obs" + outputParams + ", int count, cudaStream_t stream) {\n"
               "  CAS_TRY(policy_cuda_forward_async(p, obs" + outputArgs + ", count, stream));\n"
               "  return cudaStreamSynchronize(stream);\n}\n\n"
               "void policy_cuda_destroy(policy_cuda* p) {\n"
               "  if (!p) return;\n"
               "  if (p->stream) cudaStreamSynchronize(p->stream);\n"
               "  if (p->exec) cudaGraphExecDestroy(p->exec);\n"
               "  if (p->graph) cudaGraphDestroy(p->graph);\n"
               "  if (p->arena) cudaFree(p->arena);\n"
               "  if (p->stream) cudaStreamDestroy(p->stream);\n"
               "  free(p);\n}\n";
  return out;
}

exports::CSource exportCuda(const exports::ExportablePolicy& policy, std::int64_t batch, const std::string& headerName) {
  return writeStandaloneCuda(exports::forwardGraph(policy, batch), policy.weights, policy.metadata, headerName);
}

}  // namespace cas::gpu
