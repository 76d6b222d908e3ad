// The device sunburst's kernels (tree_geometry.cuh's steps, one thread per node) over a game's
// tree gathered into contiguous arrays (gatherTreeKernel's layout: visits, valueSum, prior,
// firstChild, ... each `budget` long), and the scans between them (CUB).
//
//   placeRoot            1 thread
//   per level: countChildren  ──ExclusiveSum──►  placeChildren      a thread per node of the level
//   markPrincipalVariation  1 thread
//   meshCounts  ──ExclusiveSum (vertices, indices)──►  writeMesh     a thread per node
//
// Compiled like the search's kernels (no fused multiply-adds, IEEE division): the angles are
// the host's bits; only sinf and cosf differ from the host's by an ulp or so.
#include <cub/device/device_scan.cuh>

#include <string>

#include "gpu/cuda_check.hpp"
#include "gpu/search/tree_geometry_launch.hpp"

namespace cas::gpu::search {
namespace {

constexpr int kThreads = 256;

cudaStream_t runtimeStream(CUstream s) { return reinterpret_cast<cudaStream_t>(s); }
unsigned blocksFor(std::int64_t n) { return unsigned((n + kThreads - 1) / kThreads); }

__global__ void placeRootKernel(GatheredTree t, SunburstNodes n) { placeRoot(t, n); }

__global__ void countChildrenKernel(GatheredTree t, SunburstNodes n, int begin, int end, std::int32_t* counts) {
  const int i = begin + int(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < end) counts[i - begin] = childrenOf(t, n.slot[i]);
}

__global__ void placeChildrenKernel(GatheredTree t, SunburstNodes n, int begin, int end, const std::int32_t* firsts, int next, int maxNodes) {
  const int i = begin + int(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < end) placeChildren(t, n, i, next + firsts[i - begin], maxNodes);
}

__global__ void principalVariationKernel(SunburstNodes n) { markPrincipalVariation(n); }

__global__ void meshCountsKernel(SunburstNodes n, int count, std::uint32_t* vertices, std::uint32_t* indices) {
  const int i = int(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= count) return;
  vertices[i] = std::uint32_t(nodeVertices(n, i));
  indices[i] = std::uint32_t(nodeIndices(n, i));
}

__global__ void writeMeshKernel(SunburstNodes n, int count, const std::uint32_t* firstVertex, const std::uint32_t* firstIndex,
                                cas::search::mesh::TreeVertex* vertices, std::uint32_t* indices) {
  const int i = int(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < count) writeNodeSector(n, i, vertices, indices, firstVertex[i], firstIndex[i]);
}

// A launch that failed throws here, rather than leaving the runtime's error for a later check.
void checkLaunch(const char* kernel) {
  const cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) throw CudaError(std::string(kernel) + " did not launch: " + cudaGetErrorString(e));
}

template <typename T>
void exclusiveSum(const T* in, T* out, int n, void* scratch, std::size_t scratchBytes, CUstream s) {
  const cudaError_t e = cub::DeviceScan::ExclusiveSum(scratch, scratchBytes, in, out, n, runtimeStream(s));
  if (e != cudaSuccess) throw CudaError(std::string("the tree view's scan failed: ") + cudaGetErrorString(e));
}

}  // namespace

std::size_t sunburstScanBytes(int maxNodes) {
  std::size_t a = 0, b = 0;
  cub::DeviceScan::ExclusiveSum(nullptr, a, static_cast<const std::int32_t*>(nullptr), static_cast<std::int32_t*>(nullptr), maxNodes);
  cub::DeviceScan::ExclusiveSum(nullptr, b, static_cast<const std::uint32_t*>(nullptr), static_cast<std::uint32_t*>(nullptr), maxNodes);
  return a > b ? a : b;
}

void launchPlaceRoot(const GatheredTree& t, const SunburstNodes& n, CUstream s) {
  placeRootKernel<<<1, 1, 0, runtimeStream(s)>>>(t, n);
  checkLaunch("sunburst_place_root");
}

void launchLevel(const GatheredTree& t, const SunburstNodes& n, int begin, int end, int maxNodes, std::int32_t* counts, std::int32_t* firsts,
                 void* scratch, std::size_t scratchBytes, CUstream s) {
  const int width = end - begin;
  countChildrenKernel<<<blocksFor(width), kThreads, 0, runtimeStream(s)>>>(t, n, begin, end, counts);
  checkLaunch("sunburst_count_children");
  exclusiveSum(counts, firsts, width, scratch, scratchBytes, s);
  placeChildrenKernel<<<blocksFor(width), kThreads, 0, runtimeStream(s)>>>(t, n, begin, end, firsts, end, maxNodes);
  checkLaunch("sunburst_place_children");
}

void launchPrincipalVariation(const SunburstNodes& n, CUstream s) {
  principalVariationKernel<<<1, 1, 0, runtimeStream(s)>>>(n);
  checkLaunch("sunburst_principal_variation");
}

void launchMeshCounts(const SunburstNodes& n, int count, std::uint32_t* vertexCounts, std::uint32_t* indexCounts, std::uint32_t* firstVertex,
                      std::uint32_t* firstIndex, void* scratch, std::size_t scratchBytes, CUstream s) {
  meshCountsKernel<<<blocksFor(count), kThreads, 0, runtimeStream(s)>>>(n, count, vertexCounts, indexCounts);
  checkLaunch("sunburst_mesh_counts");
  exclusiveSum(vertexCounts, firstVertex, count, scratch, scratchBytes, s);
  exclusiveSum(indexCounts, firstIndex, count, scratch, scratchBytes, s);
}

void launchWriteMesh(const SunburstNodes& n, int count, const std::uint32_t* firstVertex, const std::uint32_t* firstIndex,
                     cas::search::mesh::TreeVertex* vertices, std::uint32_t* indices, CUstream s) {
  if (count <= 0) return;
  writeMeshKernel<<<blocksFor(count), kThreads, 0, runtimeStream(s)>>>(n, count, firstVertex, firstIndex, vertices, indices);
  checkLaunch("sunburst_write_mesh");
}

}  // namespace cas::gpu::search
