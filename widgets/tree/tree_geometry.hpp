#pragma once
// Search-tree geometry, computed without a GL context: the sunburst and node-link layouts of a
// TreeSnapshot, hit testing, the moves that lead to a node, the PUCT terms shown in tooltips,
// what one simulation changed between two snapshots (teaching mode), and the triangle meshes the
// renderer draws.
//
// Tree space: y points down, as on screen. Sunburst: the root is a disc of radius 0.5 and depth d
// is the ring [d - 0.5, d + 0.5]; angles run clockwise from 12 o'clock, and a node's angular span
// is 2*pi * N(node) / N(root), so every sector's angle is proportional to its visits. Children
// sit inside their parent's span in snapshot (action) order, which keeps them in place from one
// snapshot to the next; the small remainder of a parent's span is the parent's own evaluation.
// Node-link: depth d at y = d * kLevelSpacing, one unit of x per leaf of the shown top levels.
//
// Vertex data reaches the GPU through one interface, TreeGeometrySource: the renderer sizes a
// vertex and an index buffer from counts() and asks the source to fill them, with its GL context
// current, once per snapshot. CpuTreeGeometry builds the meshes in host memory from a TreeLayout
// and uploads them (glBufferSubData): the reference, and the path on the CPU backend and on any
// OpenGL that no CUDA device runs. DeviceTreeGeometry (device_tree_geometry.hpp), for a search
// whose trees live on a GPU, has the device write the sunburst straight into the two buffers
// through CUDA-GL interop, so its vertices never pass through host memory. The TreeLayout
// (angles, principal variation, hit testing) stays on the host in both cases: the pointer
// interacts with it.
//
// Thread-safety: TreeLayout, SimulationTrace and CpuTreeGeometry are immutable once built; they
// may be built on a worker thread and then read from any thread. writeBuffers() runs on the thread
// whose GL context is current.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "core/search/tree_mesh.hpp"
#include "core/train/alphazero.hpp"

namespace cas::widgets {

enum class TreeViewMode { Sunburst, NodeLink };

using search::mesh::Rgba;
using search::mesh::TreeVertex;
using search::mesh::qColour;  // Q in [-1, 1]: red loses for the player who moved, blue wins

// The colours of the view, shared by the meshes, the renderer and the labels drawn over it.
namespace tree_colours {
inline constexpr Rgba kBackground = search::mesh::kBackground;
inline constexpr Rgba kPrincipalVariation = search::mesh::kPrincipalVariation;  // gold
inline constexpr Rgba kHover{255, 255, 255, 255};
inline constexpr Rgba kTeaching{72, 220, 255, 255};  // cyan
inline constexpr Rgba kUnvisited = search::mesh::kUnvisited;
inline constexpr Rgba kEdge{118, 124, 138, 255};
}  // namespace tree_colours

struct Sector {
  float start = 0, span = 0;    // radians, clockwise from 12 o'clock
  float inner = 0, outer = 0;   // tree units
};

struct LinkNode {
  int node = -1;        // index in the snapshot
  float x = 0, y = 0;   // centre, tree units
  float radius = 0;
};

class TreeLayout {
 public:
  static constexpr float kRootRadius = 0.5f;
  static constexpr float kLevelSpacing = 2.4f;  // node-link: tree units between depths
  static constexpr int kLinkDepth = 3;          // node-link: depths shown below the root
  static constexpr int kMaxLinkNodes = 1500;

  explicit TreeLayout(train::TreeSnapshot snapshot);

  const train::TreeSnapshot& snapshot() const { return snapshot_; }
  int size() const { return int(snapshot_.nodes.size()); }
  const train::TreeSnapshot::Node& node(int i) const { return snapshot_.nodes[size_t(i)]; }
  int firstChild(int i) const { return firstChild_[size_t(i)]; }  // -1 when none is in the snapshot
  int childCount(int i) const { return childCount_[size_t(i)]; }
  int maxDepth() const { return maxDepth_; }

  // Sunburst
  const Sector& sector(int i) const { return sectors_[size_t(i)]; }
  float sunburstRadius() const { return float(maxDepth_) + 0.5f; }
  int sunburstNodeAt(float x, float y) const;  // -1 when the point is on no visited node
  // Visited nodes below the root, longest arc (span times the ring's middle radius) first: a
  // frame labels from the front until arcs get too short, whatever the tree's size.
  const std::vector<int>& nodesByArc() const { return nodesByArc_; }

  // The most visited path from the root (ties: the first child), as snapshot indices.
  const std::vector<int>& principalVariation() const { return principalVariation_; }
  bool onPrincipalVariation(int i) const { return onPrincipalVariation_[size_t(i)] != 0; }

  // Node-link view of the top levels: all children of the root, visited nodes below it.
  const std::vector<LinkNode>& linkNodes() const { return linkNodes_; }
  int linkSlot(int node) const { return linkSlot_[size_t(node)]; }  // -1 when not shown
  int linkNodeAt(float x, float y) const;                           // a snapshot index or -1
  float linkWidth() const { return linkWidth_; }
  float linkHeight() const { return float(linkDepthShown_) * kLevelSpacing; }

  // Snapshot indices from the root to `node`, both included.
  std::vector<int> pathTo(int node) const;
  // The actions from the tree's root to `node`.
  std::vector<int> movesFromRoot(int node) const;
  // The node the actions lead to from the root, -1 when the snapshot does not hold it.
  int nodeAfter(const std::vector<int>& movesFromRoot) const;
  // The actions from the game's start: the moves that led to the root, then movesFromRoot.
  std::vector<int> movesFromStart(int node) const;
  // PUCT's exploration term for the edge into `node` as the search computes it:
  // U = c_puct * P * sqrt(N_parent) / (1 + N); 0 for the root.
  float explorationTerm(int node) const;
  int parentVisits(int node) const;  // N of the parent; 0 for the root

 private:
  void layOutSunburst();
  void layOutLinks();

  train::TreeSnapshot snapshot_;
  std::vector<int> firstChild_, childCount_;
  std::vector<Sector> sectors_;
  std::vector<int> nodesByArc_;
  std::vector<int> depthStart_;  // snapshot indices of each depth begin here (breadth-first order)
  int maxDepth_ = 0;
  std::vector<int> principalVariation_;
  std::vector<std::uint8_t> onPrincipalVariation_;
  std::vector<LinkNode> linkNodes_;
  std::vector<int> linkSlot_;
  float linkWidth_ = 1;
  int linkDepthShown_ = 0;
};

// What one simulation changed between two snapshots of the same root position: the selected
// path (its visits grew), the leaf it reached, the children the expansion created there and the
// value it backed up. With several leaves per step, the first grown path is traced.
struct SimulationTrace {
  std::vector<int> path;        // indices in `after`, root .. leaf
  std::vector<int> pathBefore;  // the same nodes in `before`; -1 for a node `before` lacks
  std::vector<int> expanded;    // children created at the leaf, indices in `after`
  // The value added to the leaf's sum, from the point of view of the player who moved into the
  // leaf; each level above receives it with the sign flipped.
  float leafValue = 0;
};

// Empty when the snapshots are of different positions or no path gained a visit.
std::optional<SimulationTrace> traceSimulation(const TreeLayout& before, const TreeLayout& after);

struct TreeMesh {
  std::vector<TreeVertex> vertices;
  std::vector<std::uint32_t> indices;  // triangles

  void appendSector(const Sector& s, Rgba fill, Rgba outline, float outlineWidth);
  void appendDisc(float x, float y, float radius, Rgba fill, Rgba outline, float outlineWidth);
  // A straight band from (x0, y0) to (x1, y1), `halfWidth` tree units either side.
  void appendBand(float x0, float y0, float x1, float y1, float halfWidth, Rgba fill);
};

// Fill colour of a node: Q's colour, tinted gold on the principal variation.
Rgba nodeFill(const TreeLayout& layout, int node);

// How the sunburst mesh sits in its buffers, so that a frame draws only what its zoom and
// viewport need. A large tree's outer rings hold far more sectors than pixels, and rasterising
// sub-pixel triangles is what costs a software renderer its frame rate; so the mesh holds
// levels of detail: level L merges neighbouring sectors of a ring into runs at least minArc tree
// units long (coloured by their visit-weighted mean), halving minArc from level to level, and the
// last level (minArc 0) has every sector. A frame uses the coarsest level whose runs are at most
// a pixel long, and per ring only the runs within the viewport's angles. The principal variation's
// sectors are never merged. Levels stop where merging no longer halves the sector count.
struct SunburstIndex {
  struct Ring {
    float inner = 0, outer = 0;
    std::vector<float> starts;             // each run's start angle, clockwise order
    std::vector<std::uint32_t> firstIndex;  // each run's first index, then the ring's end
  };
  struct Level {
    float minArc = 0;
    std::vector<Ring> rings;  // the root's disc first, then depth 1, 2, ...
  };
  std::vector<Level> levels;  // coarsest first; the last is exact
};

// The exact level only (every sector, as hit testing sees them).
TreeMesh buildSunburstMesh(const TreeLayout& layout);
// All levels into one mesh, with their index.
void buildSunburstLevels(const TreeLayout& layout, TreeMesh& mesh, SunburstIndex& index);
TreeMesh buildNodeLinkMesh(const TreeLayout& layout);

class TreeGeometrySource {
 public:
  struct Counts {
    std::size_t vertices = 0, indices = 0;
  };
  // Two GL buffers the renderer allocated with glBufferData, and their sizes in bytes.
  struct Target {
    unsigned vertexBuffer = 0, indexBuffer = 0;
    std::size_t vertexBytes = 0, indexBytes = 0;
  };
  virtual ~TreeGeometrySource() = default;
  virtual Counts counts(TreeViewMode mode) const = 0;
  // Where the sunburst's levels and rings are in the index buffer. It describes host-side
  // layout decisions, so a CUDA source computes it on the host too and writes the runs it lists.
  virtual const SunburstIndex& sunburstIndex() const = 0;
  // Fills the target's vertex buffer (counts().vertices TreeVertex records) and index buffer
  // (counts().indices 32-bit triangle indices), allocated at least that large, in the GL context
  // current on this thread. Returns false, having written nothing, when the geometry is no
  // longer there to write (a device layout replaced by a newer one). Throws std::runtime_error
  // when the device cannot write the buffers.
  virtual bool writeBuffers(TreeViewMode mode, const Target& target) const = 0;
};

class CpuTreeGeometry final : public TreeGeometrySource {
 public:
  explicit CpuTreeGeometry(const TreeLayout& layout);
  const TreeMesh& mesh(TreeViewMode mode) const { return mode == TreeViewMode::Sunburst ? sunburst_ : nodeLink_; }
  Counts counts(TreeViewMode mode) const override;
  const SunburstIndex& sunburstIndex() const override { return sunburstIndex_; }
  bool writeBuffers(TreeViewMode mode, const Target& target) const override;

 private:
  TreeMesh sunburst_, nodeLink_;
  SunburstIndex sunburstIndex_;
};

}  // namespace cas::widgets
