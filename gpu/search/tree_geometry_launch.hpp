#pragma once
// What device_sunburst.cpp launches from tree_geometry.cu: the device sunburst's kernels over a
// game's gathered tree (search_kernels.cu's gatherTreeKernel layout), with CUB's scans between
// them. All launches go to the stream given; nothing here waits.
// Thread-safety: plain functions.
#include <cuda.h>

#include <cstddef>
#include <cstdint>

#include "gpu/search/tree_geometry.cuh"

namespace cas::gpu::search {

// A game's tree as gatherTreeKernel writes it: each field `budget` entries long, by slot.
struct GatheredTree {
  const std::int32_t* visitsField;
  const float* valueSumField;
  const std::int32_t* firstChildField;
  const std::int16_t* childCountField;
  CAS_HD int visits(std::int32_t s) const { return visitsField[s]; }
  CAS_HD float valueSum(std::int32_t s) const { return valueSumField[s]; }
  CAS_HD std::int32_t firstChild(std::int32_t s) const { return firstChildField[s]; }
  CAS_HD int childCount(std::int32_t s) const { return childCountField[s]; }
};

// Scratch bytes the scans need for up to maxNodes entries.
std::size_t sunburstScanBytes(int maxNodes);

void launchPlaceRoot(const GatheredTree& t, const SunburstNodes& n, CUstream s);
// Level [begin, end): counts[k] = the children of node begin + k, firsts their exclusive sum;
// the children are placed from number `end` on (those below maxNodes).
void launchLevel(const GatheredTree& t, const SunburstNodes& n, int begin, int end, int maxNodes, std::int32_t* counts, std::int32_t* firsts,
                 void* scratch, std::size_t scratchBytes, CUstream s);
void launchPrincipalVariation(const SunburstNodes& n, CUstream s);
// Each node's vertex and index counts, and their exclusive sums (where its sector starts).
void launchMeshCounts(const SunburstNodes& n, int count, std::uint32_t* vertexCounts, std::uint32_t* indexCounts, std::uint32_t* firstVertex,
                      std::uint32_t* firstIndex, void* scratch, std::size_t scratchBytes, CUstream s);
void launchWriteMesh(const SunburstNodes& n, int count, const std::uint32_t* firstVertex, const std::uint32_t* firstIndex,
                     cas::search::mesh::TreeVertex* vertices, std::uint32_t* indices, CUstream s);

}  // namespace cas::gpu::search
