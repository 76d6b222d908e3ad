#include "gpu/search/device_sunburst.hpp"

#include <GL/gl.h>  // the GL types cudaGL.h declares with (no GL call is made here)
#include <cudaGL.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <stdexcept>

#include "core/search/tree_fields.hpp"
#include "gpu/cuda_check.hpp"
#include "gpu/search/tree_geometry_launch.hpp"

namespace cas::gpu::search {
namespace {

using cas::search::DeviceSunburst;
using cas::search::mesh::TreeVertex;

class CudaSunburst final : public DeviceSunburst {
 public:
  CudaSunburst(std::shared_ptr<DeviceRuntime> runtime, int budget, std::function<CUdeviceptr(int)> gather)
      : rt_(std::move(runtime)), budget_(budget), gather_(std::move(gather)) {
    ContextScope scope(rt_->context);
    CAS_CU(cuStreamCreate(&stream_, CU_STREAM_NON_BLOCKING));
    CAS_CU(cuEventCreate(&gathered_, CU_EVENT_DISABLE_TIMING));
    for (CUevent* e : {&start_, &laidOut_, &mapped_, &written_, &unmapped_}) CAS_CU(cuEventCreate(e, CU_EVENT_DEFAULT));
  }
  ~CudaSunburst() override {
    cuCtxPushCurrent(rt_->context);
    cuStreamSynchronize(stream_);
    for (auto& [buffer, r] : registered_) cuGraphicsUnregisterResource(r.resource);
    for (CUdeviceptr p : owned_) rt_->pool.release(p);
    for (CUevent e : {gathered_, start_, laidOut_, mapped_, written_, unmapped_}) cuEventDestroy(e);
    cuStreamDestroy(stream_);
    CUcontext popped;
    cuCtxPopCurrent(&popped);
  }

  bool glContextOnDevice(std::string* why) override {
    ContextScope scope(rt_->context);
    unsigned count = 0;
    CUdevice devices[8];
    const CUresult r = cuGLGetDevices(&count, devices, 8, CU_GL_DEVICE_LIST_ALL);
    if (r != CUDA_SUCCESS) {
      const char* text = nullptr;
      cuGetErrorString(r, &text);
      if (why) *why = std::string("no CUDA device runs the OpenGL context (") + (text ? text : "unknown error") + ")";
      return false;
    }
    if (std::find(devices, devices + std::min(count, 8u), rt_->device) == devices + std::min(count, 8u)) {
      if (why) *why = "the OpenGL context runs on another GPU than the search";
      return false;
    }
    return true;
  }

  Counts layOut(int game, int maxNodes) override {
    ContextScope scope(rt_->context);
    // The gather runs on the search's stream, after its queued steps, and is waited for before
    // the lock is taken: a view's write waits at most for the layout itself. Only this thread
    // gathers, and returning waits for the layout, so nothing overwrites the gathered tree early.
    const CUdeviceptr tree = gather_(game);
    CAS_CU(cuEventRecord(gathered_, rt_->compute));
    CAS_CU(cuEventSynchronize(gathered_));
    std::lock_guard lock(mutex_);
    // From here the arrays hold this layout: a write of an older one is refused, even when this
    // one throws half-way.
    const std::uint64_t generation = ++generation_;
    maxNodes = std::clamp(maxNodes, 1, budget_);
    reserve(maxNodes);
    const auto field = [&](cas::search::TreeField f) { return tree + cas::search::gatheredOffset(f, std::size_t(budget_)); };
    using cas::search::TreeField;
    const GatheredTree t{reinterpret_cast<const std::int32_t*>(field(TreeField::visits)), reinterpret_cast<const float*>(field(TreeField::valueSum)),
                         reinterpret_cast<const std::int32_t*>(field(TreeField::firstChild)),
                         reinterpret_cast<const std::int16_t*>(field(TreeField::childCount))};
    CUstream s = stream_;
    CAS_CU(cuEventRecord(start_, s));
    launchPlaceRoot(t, nodes_, s);
    int begin = 0, end = 1;
    while (end > begin && end < maxNodes) {
      const int width = end - begin;
      launchLevel(t, nodes_, begin, end, maxNodes, counts_, firsts_, scratch_, scratchBytes_, s);
      const std::int32_t total = readSum(firsts_ + width - 1, counts_ + width - 1);
      begin = end;
      end = int(std::min<std::int64_t>(std::int64_t(end) + total, maxNodes));
    }
    count_ = end;
    launchPrincipalVariation(nodes_, s);
    launchMeshCounts(nodes_, count_, vertexCounts_, indexCounts_, firstVertex_, firstIndex_, scratch_, scratchBytes_, s);
    counts_out_.generation = generation;
    counts_out_.nodes = count_;
    counts_out_.vertices = readSum(reinterpret_cast<std::int32_t*>(firstVertex_ + count_ - 1), reinterpret_cast<std::int32_t*>(vertexCounts_ + count_ - 1));
    counts_out_.indices = readSum(reinterpret_cast<std::int32_t*>(firstIndex_ + count_ - 1), reinterpret_cast<std::int32_t*>(indexCounts_ + count_ - 1));
    CAS_CU(cuEventRecord(laidOut_, s));
    CAS_CU(cuEventSynchronize(laidOut_));
    float ms = 0;
    CAS_CU(cuEventElapsedTime(&ms, start_, laidOut_));
    timing_.layoutMs = double(ms);
    return counts_out_;
  }

  bool writeGlBuffers(std::uint64_t generation, unsigned vertexBuffer, std::int64_t vertexBufferBytes, unsigned indexBuffer,
                      std::int64_t indexBufferBytes) override {
    std::lock_guard lock(mutex_);
    if (generation != generation_) return false;
    ContextScope scope(rt_->context);
    CUstream s = stream_;
    CUgraphicsResource resources[2] = {resourceFor(vertexBuffer, vertexBufferBytes), resourceFor(indexBuffer, indexBufferBytes)};
    CAS_CU(cuEventRecord(start_, s));
    CAS_CU(cuGraphicsMapResources(2, resources, s));
    bool fits = false;
    try {
      CUdeviceptr vertices = 0, indices = 0;
      std::size_t vertexBytes = 0, indexBytes = 0;
      CAS_CU(cuGraphicsResourceGetMappedPointer(&vertices, &vertexBytes, resources[0]));
      CAS_CU(cuGraphicsResourceGetMappedPointer(&indices, &indexBytes, resources[1]));
      fits = vertexBytes >= std::size_t(counts_out_.vertices) * sizeof(TreeVertex) &&
             indexBytes >= std::size_t(counts_out_.indices) * sizeof(std::uint32_t);
      CAS_CU(cuEventRecord(mapped_, s));
      if (fits)
        launchWriteMesh(nodes_, count_, firstVertex_, firstIndex_, reinterpret_cast<TreeVertex*>(vertices), reinterpret_cast<std::uint32_t*>(indices), s);
      CAS_CU(cuEventRecord(written_, s));
    } catch (...) {
      cuGraphicsUnmapResources(2, resources, s);  // mapped buffers would refuse every later map
      throw;
    }
    CAS_CU(cuGraphicsUnmapResources(2, resources, s));
    CAS_CU(cuEventRecord(unmapped_, s));
    CAS_CU(cuEventSynchronize(unmapped_));
    if (!fits) throw std::runtime_error("the OpenGL buffers are smaller than the tree's mesh");
    float map = 0, write = 0, unmap = 0;
    CAS_CU(cuEventElapsedTime(&map, start_, mapped_));
    CAS_CU(cuEventElapsedTime(&write, mapped_, written_));
    CAS_CU(cuEventElapsedTime(&unmap, written_, unmapped_));
    timing_.mapMs = double(map) + double(unmap);
    timing_.writeMs = double(write);
    return true;
  }

  void forgetGlBuffers() override {
    std::lock_guard lock(mutex_);
    ContextScope scope(rt_->context);
    for (auto& [buffer, r] : registered_) cuGraphicsUnregisterResource(r.resource);  // a failure leaves nothing to undo
    registered_.clear();
  }

  void readMesh(std::vector<TreeVertex>* vertices, std::vector<std::uint32_t>* indices) override {
    std::lock_guard lock(mutex_);
    ContextScope scope(rt_->context);
    const CUdeviceptr v = rt_->pool.allocate(std::max<std::uint64_t>(1, std::uint64_t(counts_out_.vertices) * sizeof(TreeVertex)), "a tree mesh's vertices");
    const CUdeviceptr i = rt_->pool.allocate(std::max<std::uint64_t>(1, std::uint64_t(counts_out_.indices) * 4), "a tree mesh's indices");
    launchWriteMesh(nodes_, count_, firstVertex_, firstIndex_, reinterpret_cast<TreeVertex*>(v), reinterpret_cast<std::uint32_t*>(i), stream_);
    vertices->resize(std::size_t(counts_out_.vertices));
    indices->resize(std::size_t(counts_out_.indices));
    CAS_CU(cuMemcpyDtoHAsync(vertices->data(), v, vertices->size() * sizeof(TreeVertex), stream_));
    CAS_CU(cuMemcpyDtoHAsync(indices->data(), i, indices->size() * 4, stream_));
    CAS_CU(cuStreamSynchronize(stream_));
    rt_->pool.release(v);
    rt_->pool.release(i);
  }

  Timing timing() const override {
    std::lock_guard lock(mutex_);
    return timing_;
  }

 private:
  // The layout arrays and the scans' scratch for `maxNodes` nodes (they only grow).
  void reserve(int maxNodes) {
    if (maxNodes <= capacity_) return;
    for (CUdeviceptr p : owned_) rt_->pool.release(p);
    owned_.clear();
    const auto n = std::uint64_t(maxNodes);
    auto take = [&](std::uint64_t bytes) {
      owned_.push_back(rt_->pool.allocate(bytes, "the tree view's layout"));
      return owned_.back();
    };
    nodes_.slot = reinterpret_cast<std::int32_t*>(take(n * 4));
    nodes_.parent = reinterpret_cast<std::int32_t*>(take(n * 4));
    nodes_.depth = reinterpret_cast<std::int32_t*>(take(n * 4));
    nodes_.firstChild = reinterpret_cast<std::int32_t*>(take(n * 4));
    nodes_.childCount = reinterpret_cast<std::int32_t*>(take(n * 4));
    nodes_.visits = reinterpret_cast<std::int32_t*>(take(n * 4));
    nodes_.start = reinterpret_cast<float*>(take(n * 4));
    nodes_.span = reinterpret_cast<float*>(take(n * 4));
    nodes_.q = reinterpret_cast<float*>(take(n * 4));
    nodes_.principal = reinterpret_cast<std::uint8_t*>(take(n));
    counts_ = reinterpret_cast<std::int32_t*>(take(n * 4));
    firsts_ = reinterpret_cast<std::int32_t*>(take(n * 4));
    vertexCounts_ = reinterpret_cast<std::uint32_t*>(take(n * 4));
    indexCounts_ = reinterpret_cast<std::uint32_t*>(take(n * 4));
    firstVertex_ = reinterpret_cast<std::uint32_t*>(take(n * 4));
    firstIndex_ = reinterpret_cast<std::uint32_t*>(take(n * 4));
    scratchBytes_ = std::max<std::size_t>(1, sunburstScanBytes(maxNodes));
    scratch_ = reinterpret_cast<void*>(take(scratchBytes_));
    capacity_ = maxNodes;
  }

  // a[0] + b[0], read back (waits for the stream).
  std::int32_t readSum(const std::int32_t* a, const std::int32_t* b) {
    std::int32_t values[2] = {0, 0};
    CAS_CU(cuMemcpyDtoHAsync(&values[0], reinterpret_cast<CUdeviceptr>(a), 4, stream_));
    CAS_CU(cuMemcpyDtoHAsync(&values[1], reinterpret_cast<CUdeviceptr>(b), 4, stream_));
    CAS_CU(cuStreamSynchronize(stream_));
    return values[0] + values[1];
  }

  // The buffer registered with CUDA, again when its size changed (glBufferData gave it a new store).
  CUgraphicsResource resourceFor(unsigned buffer, std::int64_t size) {
    auto it = registered_.find(buffer);
    if (it != registered_.end() && it->second.bytes != size) {
      cuGraphicsUnregisterResource(it->second.resource);
      registered_.erase(it);
      it = registered_.end();
    }
    if (it == registered_.end()) {
      Registration r{nullptr, size};
      CAS_CU(cuGraphicsGLRegisterBuffer(&r.resource, buffer, CU_GRAPHICS_REGISTER_FLAGS_WRITE_DISCARD));
      it = registered_.emplace(buffer, r).first;
    }
    return it->second.resource;
  }

  struct Registration {
    CUgraphicsResource resource;
    std::int64_t bytes;
  };

  std::shared_ptr<DeviceRuntime> rt_;
  int budget_;
  std::function<CUdeviceptr(int)> gather_;
  SunburstNodes nodes_{};
  std::int32_t *counts_ = nullptr, *firsts_ = nullptr;
  std::uint32_t *vertexCounts_ = nullptr, *indexCounts_ = nullptr, *firstVertex_ = nullptr, *firstIndex_ = nullptr;
  void* scratch_ = nullptr;
  std::size_t scratchBytes_ = 0;
  int capacity_ = 0, count_ = 0;
  Counts counts_out_;
  std::uint64_t generation_ = 0;
  Timing timing_;
  mutable std::mutex mutex_;  // layOut (the search's thread) against writes and reads (the view's)
  CUstream stream_ = nullptr;
  CUevent gathered_ = nullptr;
  std::vector<CUdeviceptr> owned_;
  std::map<unsigned, Registration> registered_;
  CUevent start_ = nullptr, laidOut_ = nullptr, mapped_ = nullptr, written_ = nullptr, unmapped_ = nullptr;
};

}  // namespace

std::unique_ptr<cas::search::DeviceSunburst> makeDeviceSunburst(std::shared_ptr<DeviceRuntime> runtime, int budget,
                                                                std::function<CUdeviceptr(int)> gather) {
  return std::make_unique<CudaSunburst>(std::move(runtime), budget, std::move(gather));
}

}  // namespace cas::gpu::search
