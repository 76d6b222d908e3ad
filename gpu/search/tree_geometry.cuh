#pragma once
// The sunburst of a search tree computed where the tree lives: the steps that
// tree_geometry.cu's kernels run over a device tree, one thread per node, and that
// tests/gpu/test_tree_geometry_port.cpp runs on the host over a core search::Tree, checking them
// against the studio's own layout (widgets/tree/tree_geometry.cpp) of the same tree's snapshot.
//
// The nodes are numbered as a snapshot numbers them (core/train/self_play.cpp): breadth first
// from the root, children in action order, the first maxNodes nodes. Level by level:
//
//   level d:   nodes [begin, end)          childrenOf(node) each  ──scan──► first child's number
//   level d+1: nodes [end, end + total)    placeChildren(node): slots, angles, depth, Q
//
// then the principal variation (markPrincipalVariation, one thread), then per node its sector's
// vertex and index counts (sectorVertices/Indices: 0 for a node without visits' span), a scan of
// those, and writeNodeSector into the mapped OpenGL buffers. The angles follow TreeLayout's
// rules exactly (tree_mesh.hpp's visitSpan, fitted into the parent), in the same order of
// floating-point operations, so the two paths agree bit for bit up to sinf/cosf.
//
// Layout arrays (SunburstNodes), one entry per node number, capacity maxNodes:
//   slot, parent, depth, firstChild, childCount, visits : i32     start, span, q : f32
//   principal : u8
// Thread-safety: a node's entries are written by the one thread that places it.
#include <cstdint>

#include "core/search/tree_mesh.hpp"
#include "core/support/host_device.hpp"

namespace cas::gpu::search {

struct SunburstNodes {
  std::int32_t* slot;
  std::int32_t* parent;
  std::int32_t* depth;
  std::int32_t* firstChild;  // number of the first child placed, -1 when none
  std::int32_t* childCount;  // children placed (within maxNodes)
  std::int32_t* visits;
  float* start;
  float* span;
  float* q;
  std::uint8_t* principal;
};

// The children a node has in the tree (0 when it is a leaf). `Tree` reads a tree's fields by
// slot: visits, valueSum, firstChild (negative: not expanded), childCount.
template <typename Tree>
CAS_HD int childrenOf(const Tree& t, std::int32_t slot) {
  return t.firstChild(slot) < 0 ? 0 : int(t.childCount(slot));
}

// The root: number 0, the whole disc.
template <typename Tree>
CAS_HD void placeRoot(const Tree& t, const SunburstNodes& n) {
  const int visits = t.visits(0);
  n.slot[0] = 0;
  n.parent[0] = -1;
  n.depth[0] = 0;
  n.visits[0] = visits;
  n.q[0] = visits > 0 ? t.valueSum(0) / float(visits) : 0.0f;
  n.start[0] = 0;
  n.span[0] = cas::search::mesh::kTwoPi;
  n.principal[0] = 0;
  n.firstChild[0] = -1;  // until its level places its children (none when maxNodes is 1)
  n.childCount[0] = 0;
}

// Places node `p`'s children at numbers first, first + 1, ... (those below maxNodes), fitted
// into p's sector in action order, as TreeLayout::layOutSunburst does.
template <typename Tree>
CAS_HD void placeChildren(const Tree& t, const SunburstNodes& n, std::int32_t p, std::int32_t first, std::int32_t maxNodes) {
  const std::int32_t slot = n.slot[p];
  const int count = childrenOf(t, slot);
  const int placed = first >= maxNodes ? 0 : (first + count > maxNodes ? maxNodes - first : count);
  n.firstChild[p] = placed > 0 ? first : -1;
  n.childCount[p] = placed;
  if (placed == 0) return;
  const int rootVisits = n.visits[0];
  // Over the children the snapshot holds, as TreeLayout sees them.
  float total = 0;
  for (int k = 0; k < placed; ++k) total += cas::search::mesh::visitSpan(t.visits(t.firstChild(slot) + k), rootVisits);
  const float parentSpan = n.span[p];
  const float scale = total > parentSpan ? parentSpan / total : 1.0f;
  float start = n.start[p];
  for (int k = 0; k < placed; ++k) {
    const std::int32_t c = t.firstChild(slot) + k, i = first + k;
    const int visits = t.visits(c);
    const float span = scale * cas::search::mesh::visitSpan(visits, rootVisits);
    n.slot[i] = c;
    n.parent[i] = p;
    n.depth[i] = n.depth[p] + 1;
    n.visits[i] = visits;
    n.q[i] = visits > 0 ? t.valueSum(c) / float(visits) : 0.0f;
    n.start[i] = start;
    n.span[i] = span;
    n.principal[i] = 0;
    n.firstChild[i] = -1;
    n.childCount[i] = 0;
    start += span;
  }
}

// The most visited path from the root (ties: the first child), as TreeLayout marks it.
CAS_HD inline void markPrincipalVariation(const SunburstNodes& n) {
  for (std::int32_t at = 0;;) {
    n.principal[at] = 1;
    std::int32_t best = -1;
    for (std::int32_t c = n.firstChild[at]; c >= 0 && c < n.firstChild[at] + n.childCount[at]; ++c)
      if (n.visits[c] > 0 && (best < 0 || n.visits[c] > n.visits[best])) best = c;
    if (best < 0) return;
    at = best;
  }
}

// The vertices and indices of node i's sector: none for a sector without span (no visits).
CAS_HD inline int nodeVertices(const SunburstNodes& n, std::int32_t i) {
  return n.span[i] > 0 ? cas::search::mesh::sectorVertices(n.span[i]) : 0;
}
CAS_HD inline int nodeIndices(const SunburstNodes& n, std::int32_t i) {
  return n.span[i] > 0 ? cas::search::mesh::sectorIndices(n.span[i]) : 0;
}

// Node i's sector at vertex `firstVertex` and index `firstIndex` of the buffers.
CAS_HD inline void writeNodeSector(const SunburstNodes& n, std::int32_t i, cas::search::mesh::TreeVertex* vertices,
                                   std::uint32_t* indices, std::uint32_t firstVertex, std::uint32_t firstIndex) {
  namespace mesh = cas::search::mesh;
  if (!(n.span[i] > 0)) return;
  const bool pv = n.principal[i] != 0;
  const float depth = float(n.depth[i]);
  const float inner = i == 0 ? 0.0f : depth - 0.5f, outer = i == 0 ? mesh::kRootRadius : depth + 0.5f;
  mesh::writeSector(n.start[i], n.span[i], inner, outer, mesh::nodeFill(n.visits[i], n.q[i], pv), pv ? mesh::principalColour() : mesh::backgroundColour(),
                    pv ? float(mesh::kPrincipalOutlineWidth) : float(mesh::kOutlineWidth), vertices + firstVertex, indices + firstIndex, firstVertex);
}

}  // namespace cas::gpu::search
