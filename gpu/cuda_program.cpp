#include "gpu/cuda_program.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>

#include "gpu/blas_call.hpp"
#include "gpu/conv_call.hpp"
#include "core/cuda_render/render.hpp"
#include "gpu/cuda_check.hpp"
#include "gpu/event_timer.hpp"
#include "gpu/occupancy_profiler.hpp"

namespace cas::gpu {
namespace {

using ir::Node;
using ir::NodeId;
using ir::Op;
using ir::numel;

constexpr std::uint64_t kAlign = 256;

std::uint64_t alignUp(std::uint64_t v, std::uint64_t a) { return (v + a - 1) / a * a; }

struct Launch {
  CUfunction function = nullptr;
  unsigned gridX = 1, gridY = 1, block = 256;
  std::vector<CUdeviceptr> args;
  std::vector<void*> argPointers;
  int registers = -1, sharedBytes = -1;
  double occupancy = -1;
};

class CudaProgram final : public DeviceProgram {
 public:
  CudaProgram(const ir::Graph& graph, std::shared_ptr<DeviceRuntime> runtime) : g_(graph), rt_(std::move(runtime)), stream_(rt_->compute) {
    const auto start = std::chrono::steady_clock::now();
    schedule_ = renderSchedule(g_);
    ContextScope scope(rt_->context);
    try {
      allocate();
      compileKernels();
      prepareLibraryCalls();
      capture();
    } catch (...) {
      releaseAll();
      throw;
    }
    compileMs_ = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  }

  ~CudaProgram() override {
    cuCtxPushCurrent(rt_->context);
    cuStreamSynchronize(stream_);
    timer_.reset();
    releaseAll();
    CUcontext c;
    cuCtxPopCurrent(&c);
  }

  const ir::Graph& graph() const override { return g_; }
  void setFiniteCheck(bool on) override { checkFinite_ = on; }

  bool hasRun() const override { return ran_; }

 protected:
  void doSetInput(NodeId id, const float* data, std::size_t count) override {
    ContextScope scope(rt_->context);
    if (auto it = stagedOffset_.find(id); it != stagedOffset_.end()) {
      if (uploadPending_) CAS_CU(cuEventSynchronize(uploaded_));  // the previous upload still reads the staging area
      uploadPending_ = false;
      std::memcpy(staging_ + it->second, data, count * sizeof(float));
      markDirty(it->second, it->second + count * sizeof(float));
      writtenOnDevice_.erase(id);
      return;
    }
    onDataStream([&] { CAS_CU(cuMemcpyHtoDAsync(address(id), data, count * sizeof(float), rt_->data)); });
  }

  void doReadInput(NodeId id, float* data, std::size_t count) const override {
    ContextScope scope(rt_->context);
    if (auto it = stagedOffset_.find(id); it != stagedOffset_.end() && !writtenOnDevice_.count(id)) {
      std::memcpy(data, staging_ + it->second, count * sizeof(float));
      return;
    }
    onDataStream([&] { CAS_CU(cuMemcpyDtoHAsync(data, address(id), count * sizeof(float), rt_->data)); });
  }

  void doReadOutput(NodeId id, float* data, std::size_t count) const override {
    ContextScope scope(rt_->context);
    CAS_CU(cuMemcpyDtoHAsync(data, address(id), count * sizeof(float), stream_));
    CAS_CU(cuStreamSynchronize(stream_));
  }

  void doCopyInputFrom(NodeId id, const exec::Executable& source, NodeId sourceId, std::size_t count) override {
    const auto* from = dynamic_cast<const CudaProgram*>(&source);
    if (!from || from->rt_ != rt_) return exec::Executable::doCopyInputFrom(id, source, sourceId, count);
    ContextScope scope(rt_->context);
    if (stagedOffset_.count(id)) writtenOnDevice_.insert(id);
    // After the source's queued runs, before this program's next run and the source's next one.
    CAS_CU(cuEventRecord(from->computed_, from->stream_));
    CAS_CU(cuStreamWaitEvent(stream_, from->computed_, 0));
    CAS_CU(cuMemcpyDtoDAsync(address(id), from->address(sourceId), count * sizeof(float), stream_));
    CAS_CU(cuEventRecord(computed_, stream_));
    CAS_CU(cuStreamWaitEvent(from->stream_, computed_, 0));
  }

 public:
  void run() override {
    ContextScope scope(rt_->context);
    upload();
    timer_->begin(stream_);
    if (graphExec_) CAS_CU(cuGraphLaunch(graphExec_, stream_));
    else enqueueAll(stream_);
    timer_->end(stream_);
    ran_ = true;
    if (checkFinite_) findNonFinite();
  }

  void finish() override {
    ContextScope scope(rt_->context);
    CAS_CU(cuStreamSynchronize(stream_));
  }

  std::optional<double> deviceSeconds() const override {
    ContextScope scope(rt_->context);
    return timer_->seconds();
  }

  std::vector<exec::KernelReport> profileKernels(int runs) override;
  std::vector<exec::RuntimeStat> runtimeStats() const override;

  CUdeviceptr inputAddress(const std::string& name) const override {
    const NodeId id = g_.findInput(name);
    if (id == ir::kNoNode) throw std::invalid_argument("the graph has no input named '" + name + "'");
    return address(id);
  }
  CUdeviceptr outputAddress(const std::string& name) const override {
    const NodeId id = g_.output(name);
    if (id == ir::kNoNode) throw std::invalid_argument("the graph has no output named '" + name + "'");
    return address(id);
  }
  void flushInputs() override {
    ContextScope scope(rt_->context);
    upload();
  }
  void recordOnCompute() override {
    ContextScope scope(rt_->context);
    enqueueAll(rt_->compute);
    ran_ = true;
  }
  const std::shared_ptr<DeviceRuntime>& runtime() const override { return rt_; }
  CUstream stream() const override { return stream_; }
  bool moveToStream(CUstream s) override {
    if (!graphExec_) return false;
    ContextScope scope(rt_->context);
    CAS_CU(cuStreamSynchronize(stream_));
    stream_ = s;
    return true;
  }
  void markWrittenOnDevice(const std::string& input) override {
    const NodeId id = g_.findInput(input);
    if (id == ir::kNoNode) throw std::invalid_argument("the graph has no input named '" + input + "'");
    if (stagedOffset_.count(id)) writtenOnDevice_.insert(id);
  }

 private:
  // Staged bytes [begin, end) to upload before the next run, kept apart from other inputs'
  // ranges so that an input written on the device is never overwritten from the staging area.
  void markDirty(std::size_t begin, std::size_t end) {
    for (auto& [b, e] : dirty_)
      if (begin <= e && b <= end) {
        b = std::min(b, begin);
        e = std::max(e, end);
        return;
      }
    dirty_.emplace_back(begin, end);
  }

  // Parameters and optimizer state move on the data stream, after everything queued on the
  // compute stream and before anything queued later (the caller waits for the copy).
  template <typename Copy>
  void onDataStream(Copy&& copy) const {
    CAS_CU(cuEventRecord(computed_, stream_));
    CAS_CU(cuStreamWaitEvent(rt_->data, computed_, 0));
    copy();
    CAS_CU(cuStreamSynchronize(rt_->data));
  }

  CUdeviceptr address(NodeId id) const {
    const NodeId s = schedule_.plan.storage[size_t(id)];
    if (s == ir::kNoNode) throw std::logic_error("node %" + std::to_string(id) + " has no storage");
    return base_ + offset_.at(s);
  }

  // --- compile ---------------------------------------------------------------------------

  void allocate() {
    std::vector<bool> updated(g_.nodes.size(), false);
    for (const ir::Update& u : g_.updates) updated[size_t(g_.findInput(u.input))] = true;
    // Layout: the accumulators that fills reset (grouped by value, so one memset per value),
    // then the staged inputs (one contiguous upload), then everything else.
    std::vector<std::pair<float, NodeId>> fills;
    for (const Step& s : schedule_.steps)
      if (s.kind == StepKind::Fill) fills.push_back({s.fill, s.node});
    std::stable_sort(fills.begin(), fills.end(), [](auto& a, auto& b) { return a.first < b.first; });
    std::uint64_t cursor = 0;
    auto place = [&](NodeId id, std::uint64_t align) {
      if (offset_.count(id)) return;
      cursor = alignUp(cursor, align);
      offset_[id] = cursor;
      cursor += std::uint64_t(numel(g_.node(id).shape)) * sizeof(float);
    };
    for (size_t k = 0; k < fills.size(); ++k) {
      if (k == 0 || fills[k].first != fills[k - 1].first) {
        cursor = alignUp(cursor, kAlign);
        fillRanges_.push_back({fills[k].first, cursor, 0});
      }
      place(fills[k].second, sizeof(float));
      fillRanges_.back().bytes = cursor - fillRanges_.back().offset;
    }
    cursor = alignUp(cursor, kAlign);
    stagedBegin_ = cursor;
    for (size_t i = 0; i < g_.nodes.size(); ++i)
      if (g_.nodes[i].op == Op::Input && !updated[i]) {
        place(NodeId(i), 16);
        stagedOffset_[NodeId(i)] = offset_[NodeId(i)] - stagedBegin_;
      }
    stagedBytes_ = cursor - stagedBegin_;
    for (size_t i = 0; i < g_.nodes.size(); ++i)
      if (schedule_.plan.storage[i] == NodeId(i)) place(NodeId(i), kAlign);
    totalBytes_ = std::max<std::uint64_t>(cursor, kAlign);
    base_ = rt_->pool.allocate(totalBytes_, "the buffers of graph '" + g_.name + "'");
    CAS_CU(cuMemsetD8Async(base_, 0, totalBytes_, rt_->compute));
    CAS_CU(cuEventCreate(&computed_, CU_EVENT_DISABLE_TIMING));
    if (stagedBytes_ > 0) {
      CAS_CU(cuMemHostAlloc(reinterpret_cast<void**>(&staging_), stagedBytes_, 0));
      std::memset(staging_, 0, stagedBytes_);
      CAS_CU(cuEventCreate(&uploaded_, CU_EVENT_DISABLE_TIMING));
    }
    for (size_t i = 0; i < g_.nodes.size(); ++i) {
      const Node& n = g_.nodes[i];
      if (n.op != Op::Constant || schedule_.plan.storage[i] != NodeId(i)) continue;
      std::vector<float> v = n.attrs.values;
      if (v.size() == 1) v.assign(size_t(numel(n.shape)), v[0]);
      CAS_CU(cuMemcpyHtoDAsync(base_ + offset_[NodeId(i)], v.data(), v.size() * sizeof(float), rt_->compute));
      CAS_CU(cuStreamSynchronize(rt_->compute));  // v is about to go away
    }
  }

  CUdeviceptr scratch(std::uint64_t bytes, const std::string& what) {
    CUdeviceptr p = rt_->pool.allocate(bytes, what);
    scratch_.push_back(p);
    return p;
  }

  void compileKernels() {
    std::string source = kernelPrelude();
    bool any = false;
    for (const Step& s : schedule_.steps)
      if (!s.source.empty()) {
        source += "\n" + s.source;
        any = true;
      }
    launches_.resize(schedule_.steps.size());
    if (!any) return;
    const auto start = std::chrono::steady_clock::now();
    std::vector<char> cubin = rt_->cache.cubin(source, g_.name + ".cu", rt_->arch, {}, &cacheOutcome_);
    kernelCompileMs_ = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    CAS_CU(cuModuleLoadData(&module_, cubin.data()));
    for (size_t k = 0; k < schedule_.steps.size(); ++k) {
      const Step& s = schedule_.steps[k];
      if (!isGenerated(s.kind)) continue;
      Launch& l = launches_[k];
      CAS_CU(cuModuleGetFunction(&l.function, module_, s.name.c_str()));
      for (NodeId p : s.params) l.args.push_back(base_ + offset_.at(p));
      CAS_CU(cuFuncGetAttribute(&l.registers, CU_FUNC_ATTRIBUTE_NUM_REGS, l.function));
      CAS_CU(cuFuncGetAttribute(&l.sharedBytes, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, l.function));
      if (s.kind == StepKind::Gemm || s.kind == StepKind::ImplicitConv) {
        l.gridX = unsigned(s.gridX);
        l.gridY = unsigned(s.gridY);
        l.block = unsigned(s.blockSize);
      } else {
        int minGrid = 0, block = 0;
        CAS_CU(cuOccupancyMaxPotentialBlockSize(&minGrid, &block, l.function, nullptr, 0, 0));
        // The calculator maximises occupancy; these kernels are small, so more, smaller blocks
        // spread them over more SMs (and more memory pipes): at most 256 threads.
        block = std::min(block, 256);
        // A kernel with fewer threads than the SMs could hold in one block each (a loss over a
        // batch of logits) takes smaller blocks, so that it runs on more SMs at once.
        std::int64_t total = 0;
        for (const Segment& seg : s.segments) total += seg.threads;
        if (total < std::int64_t(rt_->smCount) * block) block = int(std::max<std::int64_t>(32, (total / rt_->smCount + 31) / 32 * 32));
        if (rt_->threadsPerBlock > 0) block = rt_->threadsPerBlock;
        block = std::clamp(block / 32 * 32, 32, 1024);
        l.block = unsigned(block);
        std::int64_t blocks = 0;
        for (const Segment& seg : s.segments) blocks += (seg.threads + block - 1) / block;
        l.gridX = unsigned(std::max<std::int64_t>(blocks, 1));
      }
      int active = 0;
      CAS_CU(cuOccupancyMaxActiveBlocksPerMultiprocessor(&active, l.function, int(l.block), 0));
      l.occupancy = double(active) * l.block / double(rt_->maxThreadsPerSm);
      for (CUdeviceptr& a : l.args) l.argPointers.push_back(&a);
    }
  }

  void prepareLibraryCalls() {
    blas_.resize(schedule_.steps.size());
    conv_.resize(schedule_.steps.size());
    std::size_t workspace = 0;
    for (size_t k = 0; k < schedule_.steps.size(); ++k) {
      const Step& s = schedule_.steps[k];
      if (s.kind == StepKind::Blas) prepareBlas(g_.node(s.node), blas_[k]);
      if (s.kind == StepKind::Conv) {
        planConvCall(*rt_, g_, s, {[this](NodeId id) { return address(id); }, [this](std::uint64_t bytes, const std::string& what) { return scratch(bytes, what); }, module_}, conv_[k]);
        workspace = std::max(workspace, conv_[k].workspace);
      }
    }
    if (workspace > 0) convWorkspace_ = scratch(workspace, "the cuDNN workspace");
  }

  void prepareBlas(const Node& n, BlasCall& c) {
    c = planBlasCall(g_, n);
    if (ir::isHalfWidth(c.precision)) {
      c.lowA = scratch(std::uint64_t(numel(g_.node(n.inputs[0]).shape)) * 2, "a low-precision operand of " + n.label);
      c.lowB = scratch(std::uint64_t(numel(g_.node(n.inputs[1]).shape)) * 2, "a low-precision operand of " + n.label);
    }
  }

  void capture() {
    CUstream s = rt_->compute;
    CAS_CU(cuStreamSynchronize(s));
    const bool callsBlas = std::any_of(schedule_.steps.begin(), schedule_.steps.end(), [](const auto& st) { return st.kind == StepKind::Blas; });
    if (callsBlas) {  // the graph keeps this workspace: another program's graph may run beside it
      blasWorkspace_ = scratch(DeviceRuntime::kBlasWorkspaceBytes, "the cuBLAS workspace");
      CAS_BLAS(cublasSetWorkspace(rt_->blas, reinterpret_cast<void*>(blasWorkspace_), DeviceRuntime::kBlasWorkspaceBytes));
    }
    CAS_CU(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
    try {
      enqueueAll(s);
      if (callsBlas) CAS_BLAS(cublasSetWorkspace(rt_->blas, reinterpret_cast<void*>(rt_->blasWorkspace), DeviceRuntime::kBlasWorkspaceBytes));
    } catch (const std::exception& e) {
      if (callsBlas) cublasSetWorkspace(rt_->blas, reinterpret_cast<void*>(rt_->blasWorkspace), DeviceRuntime::kBlasWorkspaceBytes);
      CUgraph broken = nullptr;
      cuStreamEndCapture(s, &broken);
      if (broken) cuGraphDestroy(broken);
      captureNote_ = {kGraphStat, QT_TRANSLATE_NOOP("cas::RuntimeStats", "not captured (%1); steps are launched one by one"), {e.what()}};
      return;
    }
    CAS_CU(cuStreamEndCapture(s, &graph_));
    CAS_CU(cuGraphInstantiate(&graphExec_, graph_, 0));
    size_t nodes = 0;
    cuGraphGetNodes(graph_, nullptr, &nodes);
    captureNote_ = {kGraphStat, QT_TRANSLATE_NOOP("cas::RuntimeStats", "captured: %1 graph nodes, replayed per run"), {std::to_string(nodes)}};
  }

  // The changed part of the staging area goes up on the compute stream, so it lands after the
  // previous run has read the old values and before this run reads the new ones; setInput waits
  // for the copy (not for the run) before it writes the staging area again.
  void upload() {
    if (dirty_.empty()) return;
    for (const auto& [begin, end] : dirty_) CAS_CU(cuMemcpyHtoDAsync(base_ + stagedBegin_ + begin, staging_ + begin, end - begin, stream_));
    CAS_CU(cuEventRecord(uploaded_, stream_));
    uploadPending_ = true;
    dirty_.clear();
  }

  void enqueueAll(CUstream s) {
    for (const FillRange& f : fillRanges_) {
      std::uint32_t bits;
      std::memcpy(&bits, &f.value, sizeof bits);
      CAS_CU(cuMemsetD32Async(base_ + f.offset, bits, f.bytes / 4, s));
    }
    for (size_t k = 0; k < schedule_.steps.size(); ++k) enqueueStep(k, s);
  }

  void enqueueStep(size_t k, CUstream s) {
    const Step& step = schedule_.steps[k];
    switch (step.kind) {
      case StepKind::Fill: return;  // done by enqueueAll's memsets
      case StepKind::Kernel:
      case StepKind::Gemm:
      case StepKind::ImplicitConv: {
        // Programmatic dependent launch (sm_90+): the kernel's blocks may be scheduled while the
        // previous kernel drains; it waits in cas_wait_for_previous_kernel before any access.
        Launch& l = launches_[k];
        CUlaunchAttribute early{};
        early.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
        early.value.programmaticStreamSerializationAllowed = 1;
        CUlaunchConfig config{};
        config.gridDimX = l.gridX;
        config.gridDimY = l.gridY;
        config.gridDimZ = 1;
        config.blockDimX = l.block;
        config.blockDimY = 1;
        config.blockDimZ = 1;
        config.hStream = s;
        config.attrs = &early;
        config.numAttrs = rt_->arch >= 90 ? 1 : 0;
        CAS_CU(cuLaunchKernelEx(&config, l.function, l.argPointers.data(), nullptr));
        return;
      }
      case StepKind::Copy:
        CAS_CU(cuMemcpyDtoDAsync(address(step.target), address(step.node), std::uint64_t(numel(g_.node(step.node).shape)) * 4, s));
        return;
      case StepKind::Blas: {
        const Node& n = g_.node(step.node);
        enqueueBlasCall(*rt_, blas_[k], address(n.inputs[0]), address(n.inputs[1]), address(step.node), numel(g_.node(n.inputs[0]).shape),
                        numel(g_.node(n.inputs[1]).shape), s);
        return;
      }
      case StepKind::Conv:
        enqueueConvCall(*rt_, g_, step.node, conv_[k], [this](NodeId id) { return address(id); }, convWorkspace_, s);
        return;
    }
  }

  void findNonFinite() {
    CAS_CU(cuStreamSynchronize(stream_));
    std::vector<float> host;
    for (size_t i = 0; i < g_.nodes.size(); ++i) {
      const Node& n = g_.nodes[i];
      if (n.op == Op::Input || n.op == Op::Constant || schedule_.plan.storage[i] == ir::kNoNode) continue;
      host.resize(size_t(numel(n.shape)));
      CAS_CU(cuMemcpyDtoHAsync(host.data(), address(NodeId(i)), host.size() * sizeof(float), stream_));
      CAS_CU(cuStreamSynchronize(stream_));
      for (float v : host) {
        if (std::isfinite(v)) continue;
        throw exec::NonFiniteError(std::string(std::isnan(v) ? "NaN" : "Inf") + " first produced by " + ir::describeNode(g_, NodeId(i)) +
                                   " (first stored value with it; fused nodes are checked through their consumers)");
      }
    }
  }

  void releaseAll() {
    if (graphExec_) cuGraphExecDestroy(graphExec_);
    if (graph_) cuGraphDestroy(graph_);
    graphExec_ = nullptr;
    graph_ = nullptr;
    for (ConvCall& c : conv_) destroyConvCall(c);
    conv_.clear();
    if (module_) cuModuleUnload(module_);
    module_ = nullptr;
    for (CUdeviceptr p : scratch_) rt_->pool.release(p);
    scratch_.clear();
    if (base_) rt_->pool.release(base_);
    base_ = 0;
    if (staging_) cuMemFreeHost(staging_);
    staging_ = nullptr;
    if (uploaded_) cuEventDestroy(uploaded_);
    uploaded_ = nullptr;
    if (computed_) cuEventDestroy(computed_);
    computed_ = nullptr;
  }

  struct FillRange {
    float value;
    std::uint64_t offset, bytes;
  };

  ir::Graph g_;
  std::shared_ptr<DeviceRuntime> rt_;
  CUstream stream_;
  std::unique_ptr<EventTimer> timer_ = std::make_unique<EventTimer>();  // run() brackets, for deviceSeconds
  CUdeviceptr blasWorkspace_ = 0;  // this program's own, when it calls cuBLAS
  Schedule schedule_;
  std::map<NodeId, std::uint64_t> offset_;
  std::map<NodeId, std::size_t> stagedOffset_;
  std::vector<FillRange> fillRanges_;
  std::uint64_t stagedBegin_ = 0, stagedBytes_ = 0, totalBytes_ = 0;
  CUdeviceptr base_ = 0, convWorkspace_ = 0;
  std::vector<CUdeviceptr> scratch_;
  char* staging_ = nullptr;
  std::vector<std::pair<std::size_t, std::size_t>> dirty_;  // staged byte ranges to upload
  std::set<NodeId> writtenOnDevice_;                         // staged inputs newer on the device
  CUevent uploaded_ = nullptr;
  CUevent computed_ = nullptr;
  bool uploadPending_ = false;
  CUmodule module_ = nullptr;
  std::vector<Launch> launches_;
  std::vector<BlasCall> blas_;
  std::vector<ConvCall> conv_;
  CUgraph graph_ = nullptr;
  CUgraphExec graphExec_ = nullptr;
  static constexpr const char* kGraphStat = QT_TRANSLATE_NOOP("cas::RuntimeStats", "graph");
  exec::RuntimeStat captureNote_{kGraphStat, "", {}};
  exec::RuntimeStat occupancyNote_;  // how profileKernels measured achieved occupancy, or why it could not
  CacheOutcome cacheOutcome_ = CacheOutcome::Compiled;
  double compileMs_ = 0, kernelCompileMs_ = 0;
  bool checkFinite_ = false, ran_ = false;
};

std::vector<exec::KernelReport> CudaProgram::profileKernels(int runs) {
  ContextScope scope(rt_->context);
  runs = std::max(runs, 1);
  CAS_CU(cuStreamSynchronize(stream_));
  upload();
  CUstream s = rt_->compute;
  const size_t count = schedule_.steps.size();
  std::vector<CUevent> events(count + 1);
  for (CUevent& e : events) CAS_CU(cuEventCreate(&e, CU_EVENT_DEFAULT));
  std::vector<double> total(count, 0.0);
  for (int r = 0; r < runs + 1; ++r) {  // the first run warms up
    for (const FillRange& f : fillRanges_) {
      std::uint32_t bits;
      std::memcpy(&bits, &f.value, sizeof bits);
      CAS_CU(cuMemsetD32Async(base_ + f.offset, bits, f.bytes / 4, s));
    }
    CAS_CU(cuEventRecord(events[0], s));
    for (size_t k = 0; k < count; ++k) {
      enqueueStep(k, s);
      CAS_CU(cuEventRecord(events[k + 1], s));
    }
    CAS_CU(cuStreamSynchronize(s));
    if (r == 0) continue;
    for (size_t k = 0; k < count; ++k) {
      float ms = 0;
      CAS_CU(cuEventElapsedTime(&ms, events[k], events[k + 1]));
      total[k] += ms * 1000.0;
    }
  }
  for (CUevent e : events) cuEventDestroy(e);
  ran_ = true;
  // Achieved occupancy: one more pass over the generated kernels alone, under CUPTI (library
  // calls launch kernels of their own choosing, which could not be told apart).
  std::vector<size_t> generated;
  for (size_t k = 0; k < count; ++k)
    if (isGenerated(schedule_.steps[k].kind)) generated.push_back(k);
  const OccupancyMeasurement occupancy = measureAchievedOccupancy(rt_->context, rt_->device, int(generated.size()), [&] {
    for (size_t k : generated) enqueueStep(k, s);
  });
  CAS_CU(cuStreamSynchronize(s));
  const char* occupancyStat = QT_TRANSLATE_NOOP("cas::RuntimeStats", "achieved occupancy");
  occupancyNote_ = occupancy.error.empty()
                       ? exec::RuntimeStat{occupancyStat,
                                           QT_TRANSLATE_NOOP("cas::RuntimeStats", "measured through CUPTI's range profiler (%1, kernel replay) for generated kernels"),
                                           {"sm__warps_active"}}
                       : exec::RuntimeStat{occupancyStat, QT_TRANSLATE_NOOP("cas::RuntimeStats", "not measured: %1"), {occupancy.error}};
  std::vector<double> achieved(count, -1.0);
  for (size_t i = 0; i < occupancy.achieved.size(); ++i) achieved[generated[i]] = occupancy.achieved[i];
  std::vector<exec::KernelReport> out;
  for (size_t k = 0; k < count; ++k) {
    const Step& step = schedule_.steps[k];
    if (step.kind == StepKind::Fill) continue;
    exec::KernelReport r;
    r.name = step.name;
    r.label = step.label;
    for (const Segment& seg : step.segments) r.nodes += int(seg.members.size());
    r.timeUs = total[k] / runs;
    switch (step.kind) {
      case StepKind::Kernel:
      case StepKind::Gemm:
      case StepKind::ImplicitConv: {
        const Launch& l = launches_[k];
        r.kind = "generated";
        r.source = step.source;
        r.launch = "grid " + std::to_string(l.gridX) + (l.gridY > 1 ? "x" + std::to_string(l.gridY) : "") + " x block " + std::to_string(l.block);
        r.registers = l.registers;
        r.sharedBytes = l.sharedBytes;
        r.theoreticalOccupancy = l.occupancy;
        r.achievedOccupancy = achieved[k];
        break;
      }
      case StepKind::Blas: r.kind = "cuBLAS"; r.launch = blas_[k].precision == ir::Precision::F32    ? "fp32"
                                                        : blas_[k].precision == ir::Precision::TF32 ? "tf32 tensor cores"
                                                                                                    : "bf16/fp16 tensor cores";
        break;
      case StepKind::Conv:
        r.kind = "cuDNN";
        r.launch = describeConvCall(conv_[k]) + (step.fold > 1 ? ", space-to-depth " + std::to_string(step.fold) : "");
        break;
      case StepKind::Copy: r.kind = "copy"; break;
      case StepKind::Fill: break;
    }
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<exec::RuntimeStat> CudaProgram::runtimeStats() const {
  const KernelCacheStats cache = rt_->cache.stats();
  const PoolStats pool = rt_->pool.stats();
  int kernels = 0, library = 0;
  for (const Step& s : schedule_.steps) {
    if (isGenerated(s.kind)) ++kernels;
    if (s.kind == StepKind::Blas || s.kind == StepKind::Conv) ++library;
  }
  const char* outcome = cacheOutcome_ == CacheOutcome::Hit       ? QT_TRANSLATE_NOOP("cas::RuntimeStats", "hit (loaded from the kernel cache)")
                        : cacheOutcome_ == CacheOutcome::Rebuilt ? QT_TRANSLATE_NOOP("cas::RuntimeStats", "rebuilt (the cached entry was corrupt)")
                                                                 : QT_TRANSLATE_NOOP("cas::RuntimeStats", "compiled by NVRTC");
  const auto milliseconds = [](double ms) {
    char text[32];
    std::snprintf(text, sizeof text, "%.1f", ms);
    return std::string(text);
  };
  std::vector<exec::RuntimeStat> stats = {
      {QT_TRANSLATE_NOOP("cas::RuntimeStats", "kernels"),
       QT_TRANSLATE_NOOP("cas::RuntimeStats", "%1 generated, %2 library calls, %3 nodes fused without a buffer"),
       {std::to_string(kernels), std::to_string(library), std::to_string(schedule_.plan.fusedNodes)}},
      {QT_TRANSLATE_NOOP("cas::RuntimeStats", "module"), outcome, {}},
      {QT_TRANSLATE_NOOP("cas::RuntimeStats", "kernel cache"), QT_TRANSLATE_NOOP("cas::RuntimeStats", "%1 hits, %2 compiled, %3 rebuilt (%4)"),
       {std::to_string(cache.hits), std::to_string(cache.compiled), std::to_string(cache.rebuilt), rt_->cache.folder().string()}},
      {QT_TRANSLATE_NOOP("cas::RuntimeStats", "compile"), QT_TRANSLATE_NOOP("cas::RuntimeStats", "%1 ms in all, %2 ms for the module"),
       {milliseconds(compileMs_), milliseconds(kernelCompileMs_)}},
      captureNote_,
      {QT_TRANSLATE_NOOP("cas::RuntimeStats", "buffers"), "%1", {formatBytes(totalBytes_)}},
      rt_->pool.describe(),
      {QT_TRANSLATE_NOOP("cas::RuntimeStats", "pool allocations"), "%1", {std::to_string(pool.allocations)}},
      {QT_TRANSLATE_NOOP("cas::RuntimeStats", "pool device allocations"), "%1", {std::to_string(pool.deviceAllocations)}}};
  if (!occupancyNote_.format.empty()) stats.push_back(occupancyNote_);
  return stats;
}

}  // namespace

std::unique_ptr<exec::Executable> compileForCuda(const ir::Graph& graph, std::shared_ptr<DeviceRuntime> runtime) {
  return std::make_unique<CudaProgram>(graph, std::move(runtime));
}

}  // namespace cas::gpu
