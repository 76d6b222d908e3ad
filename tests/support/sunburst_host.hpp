#pragma once
// The device sunburst's steps (gpu/search/tree_geometry.cuh) run on the host, in the kernels'
// order, over a core search::Tree: what tree_geometry.cu computes, as test_tree_geometry_port
// checks against the studio's mesh and test_tree_interop against the device's buffers.
#include <cstdint>
#include <vector>

#include "core/search/tree.hpp"
#include "gpu/search/tree_geometry.cuh"

namespace cas::test {

struct HostMesh {
  int nodes = 0;  // laid out (the snapshot's size)
  std::vector<search::mesh::TreeVertex> vertices;
  std::vector<std::uint32_t> indices;
};

// search::Tree's fields as the steps read them.
struct HostTree {
  const search::Tree& t;
  int visits(std::int32_t s) const { return t.visits[size_t(s)]; }
  float valueSum(std::int32_t s) const { return t.valueSum[size_t(s)]; }
  std::int32_t firstChild(std::int32_t s) const { return t.firstChild[size_t(s)]; }
  int childCount(std::int32_t s) const { return t.childCount[size_t(s)]; }
};

struct HostNodes {
  std::vector<std::int32_t> slot, parent, depth, firstChild, childCount, visits;
  std::vector<float> start, span, q;
  std::vector<std::uint8_t> principal;
  explicit HostNodes(int capacity)
      : slot(size_t(capacity)), parent(size_t(capacity)), depth(size_t(capacity)), firstChild(size_t(capacity)), childCount(size_t(capacity)),
        visits(size_t(capacity)), start(size_t(capacity)), span(size_t(capacity)), q(size_t(capacity)), principal(size_t(capacity)) {}
  gpu::search::SunburstNodes view() {
    return {slot.data(), parent.data(), depth.data(), firstChild.data(), childCount.data(), visits.data(), start.data(), span.data(), q.data(), principal.data()};
  }
};

// The kernels' schedule on the host: levels, the principal variation, the mesh.
inline HostMesh sunburstOnHost(const search::Tree& tree, int maxNodes) {
  HostTree t{tree};
  HostNodes nodes(maxNodes);
  const gpu::search::SunburstNodes n = nodes.view();
  gpu::search::placeRoot(t, n);
  int begin = 0, end = 1;
  while (end > begin && end < maxNodes) {
    std::vector<std::int32_t> first(size_t(end - begin));
    std::int32_t total = 0;
    for (int p = begin; p < end; ++p) {  // the scan of childrenOf
      first[size_t(p - begin)] = end + total;
      total += gpu::search::childrenOf(t, n.slot[p]);
    }
    for (int p = begin; p < end; ++p) gpu::search::placeChildren(t, n, p, first[size_t(p - begin)], maxNodes);
    begin = end;
    end = std::min(end + total, maxNodes);
  }
  const int count = end;
  gpu::search::markPrincipalVariation(n);
  HostMesh mesh;
  mesh.nodes = count;
  std::vector<std::uint32_t> firstVertex(static_cast<size_t>(count)), firstIndex(static_cast<size_t>(count));
  std::uint32_t vertices = 0, indices = 0;
  for (int i = 0; i < count; ++i) {
    firstVertex[size_t(i)] = vertices;
    firstIndex[size_t(i)] = indices;
    vertices += std::uint32_t(gpu::search::nodeVertices(n, i));
    indices += std::uint32_t(gpu::search::nodeIndices(n, i));
  }
  mesh.vertices.resize(vertices);
  mesh.indices.resize(indices);
  for (int i = 0; i < count; ++i) gpu::search::writeNodeSector(n, i, mesh.vertices.data(), mesh.indices.data(), firstVertex[size_t(i)], firstIndex[size_t(i)]);
  return mesh;
}

}  // namespace cas::test
