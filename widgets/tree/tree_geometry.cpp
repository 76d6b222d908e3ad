#include "widgets/tree/tree_geometry.hpp"

#include <QOpenGLContext>
#include <QOpenGLFunctions>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <unordered_map>

namespace cas::widgets {

namespace {

using search::mesh::kFar;
using search::mesh::kTwoPi;
using search::mesh::mix;

TreeVertex vertex(float x, float y, const float (&edge)[4], Rgba fill, Rgba outline, float outlineWidth) {
  return {x, y, {edge[0], edge[1], edge[2], edge[3]}, {fill.r, fill.g, fill.b, fill.a}, {outline.r, outline.g, outline.b, outline.a}, outlineWidth};
}

}  // namespace

// --- TreeLayout -----------------------------------------------------------------------------

TreeLayout::TreeLayout(train::TreeSnapshot snapshot) : snapshot_(std::move(snapshot)) {
  const int n = size();
  firstChild_.assign(size_t(n), -1);
  childCount_.assign(size_t(n), 0);
  // Breadth first: a node's children are consecutive, and so are the nodes of one depth.
  for (int i = 1; i < n; ++i) {
    const int p = node(i).parent;
    if (p < 0 || p >= i) continue;  // not a tree in breadth-first order; the node stays detached
    if (firstChild_[size_t(p)] < 0) firstChild_[size_t(p)] = i;
    ++childCount_[size_t(p)];
  }
  for (int i = 0; i < n; ++i) maxDepth_ = std::max(maxDepth_, node(i).depth);
  depthStart_.assign(size_t(maxDepth_) + 2, n);
  for (int i = n - 1; i >= 0; --i) depthStart_[size_t(node(i).depth)] = i;
  for (int d = maxDepth_; d >= 0; --d) depthStart_[size_t(d)] = std::min(depthStart_[size_t(d)], depthStart_[size_t(d) + 1]);

  onPrincipalVariation_.assign(size_t(n), 0);
  if (n > 0) {
    for (int at = 0;;) {
      principalVariation_.push_back(at);
      onPrincipalVariation_[size_t(at)] = 1;
      int best = -1;
      for (int c = firstChild(at); c >= 0 && c < firstChild(at) + childCount(at); ++c)
        if (node(c).visits > 0 && (best < 0 || node(c).visits > node(best).visits)) best = c;
      if (best < 0) break;
      at = best;
    }
  }
  layOutSunburst();
  layOutLinks();
}

void TreeLayout::layOutSunburst() {
  const int n = size();
  sectors_.assign(size_t(n), {});
  if (n == 0) return;
  const int rootVisits = node(0).visits;
  sectors_[0] = {0, kTwoPi, 0, kRootRadius};
  for (int p = 0; p < n; ++p) {
    const int first = firstChild(p), count = childCount(p);
    if (count == 0) continue;
    const Sector& parent = sectors_[size_t(p)];
    float total = 0;
    for (int c = first; c < first + count; ++c) total += search::mesh::visitSpan(node(c).visits, rootVisits);
    // Children never spill out of their parent, even in a snapshot whose counts disagree.
    const float scale = total > parent.span ? parent.span / total : 1.0f;
    float start = parent.start;
    for (int c = first; c < first + count; ++c) {
      const float span = scale * search::mesh::visitSpan(node(c).visits, rootVisits);
      const float depth = float(node(c).depth);
      sectors_[size_t(c)] = {start, span, depth - 0.5f, depth + 0.5f};
      start += span;
    }
  }
  for (int i = 1; i < n; ++i)
    if (sectors_[size_t(i)].span > 0) nodesByArc_.push_back(i);
  auto arc = [this](int i) { return sectors_[size_t(i)].span * float(node(i).depth); };
  std::sort(nodesByArc_.begin(), nodesByArc_.end(), [&](int a, int b) { return arc(a) > arc(b); });
}

int TreeLayout::sunburstNodeAt(float x, float y) const {
  if (size() == 0) return -1;
  const float r = std::hypot(x, y);
  if (r < kRootRadius) return 0;
  const int depth = int(std::floor(r + 0.5f));
  if (depth < 1 || depth > maxDepth_) return -1;
  float angle = std::atan2(x, -y);
  if (angle < 0) angle += kTwoPi;
  // Within one depth the sectors follow each other clockwise in snapshot order.
  const auto begin = sectors_.begin() + depthStart_[size_t(depth)], end = sectors_.begin() + depthStart_[size_t(depth) + 1];
  auto it = std::upper_bound(begin, end, angle, [](float a, const Sector& s) { return a < s.start; });
  while (it != begin) {
    --it;
    if (angle < it->start + it->span) return int(it - sectors_.begin());
    if (it->span > 0) break;  // a zero-span sector never covers a point; look at the one before it
  }
  return -1;
}

void TreeLayout::layOutLinks() {
  const int n = size();
  linkSlot_.assign(size_t(n), -1);
  if (n == 0) return;
  // Levels are added while the bottom row stays readable: all children of the root, then the
  // visited nodes of each further depth, up to kLinkDepth.
  constexpr int kMaxLeaves = 96;
  auto attached = [this](int i) { return node(i).parent >= 0 && node(i).parent < i; };
  std::vector<std::uint8_t> shown(size_t(n), 0);
  shown[0] = 1;
  int count = 1;
  for (int depth = 1; depth <= std::min(kLinkDepth, maxDepth_); ++depth) {
    std::vector<int> level;
    for (int i = depthStart_[size_t(depth)]; i < depthStart_[size_t(depth) + 1]; ++i)
      if (attached(i) && shown[size_t(node(i).parent)] && (depth == 1 || node(i).visits > 0)) level.push_back(i);
    if (level.empty()) break;
    // Leaves of the layout if this level is added: this level's nodes, plus the shown nodes
    // above that would still have no shown child.
    std::vector<std::uint8_t> hasShownChild(size_t(n), 0);
    for (int i = 1; i < depthStart_[size_t(depth)]; ++i)
      if (shown[size_t(i)] && attached(i)) hasShownChild[size_t(node(i).parent)] = 1;
    for (int i : level) hasShownChild[size_t(node(i).parent)] = 1;
    int leaves = int(level.size());
    for (int i = 0; i < depthStart_[size_t(depth)]; ++i)
      if (shown[size_t(i)] && !hasShownChild[size_t(i)]) ++leaves;
    if (depth > 1 && (leaves > kMaxLeaves || count + int(level.size()) > kMaxLinkNodes)) break;
    for (int i : level) shown[size_t(i)] = 1;
    count += int(level.size());
    linkDepthShown_ = depth;
  }
  // A tidy layout: leaves left to right one unit apart, each parent centred over its children.
  const int rootVisits = std::max(1, node(0).visits);
  float nextLeaf = 0;
  auto place = [&](auto&& self, int i) -> float {
    float first = 0, last = 0;
    bool any = false;
    for (int c = firstChild(i); c >= 0 && c < firstChild(i) + childCount(i); ++c) {
      if (!shown[size_t(c)]) continue;
      const float x = self(self, c);
      if (!any) first = x;
      last = x;
      any = true;
    }
    const float x = any ? (first + last) / 2 : nextLeaf++;
    const float share = std::sqrt(float(node(i).visits) / float(rootVisits));
    linkSlot_[size_t(i)] = int(linkNodes_.size());
    linkNodes_.push_back({i, x, float(node(i).depth) * kLevelSpacing, std::min(0.42f, 0.12f + 0.3f * share)});
    return x;
  };
  place(place, 0);
  linkWidth_ = std::max(1.0f, nextLeaf);
}

int TreeLayout::linkNodeAt(float x, float y) const {
  for (const LinkNode& l : linkNodes_)
    if (std::hypot(x - l.x, y - l.y) <= std::max(l.radius, 0.2f)) return l.node;
  return -1;
}

std::vector<int> TreeLayout::pathTo(int i) const {
  std::vector<int> path;
  for (int at = i; at >= 0 && at < size(); at = node(at).parent) path.push_back(at);
  std::reverse(path.begin(), path.end());
  return path;
}

std::vector<int> TreeLayout::movesFromRoot(int i) const {
  std::vector<int> moves;
  for (int at : pathTo(i))
    if (at != 0) moves.push_back(node(at).action);
  return moves;
}

int TreeLayout::nodeAfter(const std::vector<int>& moves) const {
  if (size() == 0) return -1;
  int at = 0;
  for (int action : moves) {
    int next = -1;
    for (int c = firstChild(at); c >= 0 && c < firstChild(at) + childCount(at) && next < 0; ++c)
      if (node(c).action == action) next = c;
    if (next < 0) return -1;
    at = next;
  }
  return at;
}

std::vector<int> TreeLayout::movesFromStart(int i) const {
  std::vector<int> moves = snapshot_.rootMoves;
  const std::vector<int> below = movesFromRoot(i);
  moves.insert(moves.end(), below.begin(), below.end());
  return moves;
}

int TreeLayout::parentVisits(int i) const {
  const int p = node(i).parent;
  return p >= 0 ? node(p).visits : 0;
}

float TreeLayout::explorationTerm(int i) const {
  if (node(i).parent < 0) return 0;
  return snapshot_.cPuct * node(i).prior * std::sqrt(float(std::max(1, parentVisits(i)))) / float(1 + node(i).visits);
}

// --- Teaching: one simulation's trace -------------------------------------------------------

std::optional<SimulationTrace> traceSimulation(const TreeLayout& before, const TreeLayout& after) {
  const train::TreeSnapshot &b = before.snapshot(), &a = after.snapshot();
  if (b.nodes.empty() || a.nodes.empty() || b.board != a.board || b.rootMoves != a.rootMoves) return std::nullopt;
  if (a.nodes[0].visits <= b.nodes[0].visits) return std::nullopt;
  std::unordered_map<std::uint64_t, int> byEdge;  // (parent in before, action) -> index in before
  auto key = [](int parent, int action) { return std::uint64_t(std::uint32_t(parent)) << 32 | std::uint32_t(action); };
  for (int i = 1; i < before.size(); ++i) byEdge.emplace(key(b.nodes[size_t(i)].parent, b.nodes[size_t(i)].action), i);
  auto inBefore = [&](int parentBefore, int action) {
    if (parentBefore < 0) return -1;
    auto it = byEdge.find(key(parentBefore, action));
    return it == byEdge.end() ? -1 : it->second;
  };

  SimulationTrace trace;
  int at = 0, atBefore = 0;
  for (;;) {
    trace.path.push_back(at);
    trace.pathBefore.push_back(atBefore);
    int next = -1, nextBefore = -1;
    for (int c = after.firstChild(at); c >= 0 && c < after.firstChild(at) + after.childCount(at); ++c) {
      const int cb = inBefore(atBefore, a.nodes[size_t(c)].action);
      if (a.nodes[size_t(c)].visits > (cb >= 0 ? b.nodes[size_t(cb)].visits : 0)) {
        next = c;
        nextBefore = cb;
        break;
      }
    }
    if (next < 0) break;
    at = next;
    atBefore = nextBefore;
  }
  for (int c = after.firstChild(at); c >= 0 && c < after.firstChild(at) + after.childCount(at); ++c)
    if (inBefore(atBefore, a.nodes[size_t(c)].action) < 0) trace.expanded.push_back(c);
  const auto& leaf = a.nodes[size_t(at)];
  const float sumBefore = atBefore >= 0 ? b.nodes[size_t(atBefore)].q * float(b.nodes[size_t(atBefore)].visits) : 0;
  trace.leafValue = leaf.q * float(leaf.visits) - sumBefore;
  return trace;
}

// --- Meshes ---------------------------------------------------------------------------------

void TreeMesh::appendSector(const Sector& s, Rgba fill, Rgba outline, float outlineWidth) {
  const auto base = std::uint32_t(vertices.size());
  const std::size_t firstIndex = indices.size();
  vertices.resize(vertices.size() + std::size_t(search::mesh::sectorVertices(s.span)));
  indices.resize(indices.size() + std::size_t(search::mesh::sectorIndices(s.span)));
  search::mesh::writeSector(s.start, s.span, s.inner, s.outer, fill, outline, outlineWidth, vertices.data() + base, indices.data() + firstIndex, base);
}

void TreeMesh::appendDisc(float x, float y, float radius, Rgba fill, Rgba outline, float outlineWidth) {
  constexpr int kSides = 40;
  const auto centre = std::uint32_t(vertices.size());
  // Distances to the rim and to the far side of the disc, so the outline fades on tiny discs.
  vertices.push_back(vertex(x, y, {radius, radius, kFar, kFar}, fill, outline, outlineWidth));
  for (int k = 0; k < kSides; ++k) {
    const float angle = kTwoPi * float(k) / float(kSides);
    vertices.push_back(vertex(x + radius * std::sin(angle), y - radius * std::cos(angle), {0, 2 * radius, kFar, kFar}, fill, outline, outlineWidth));
  }
  for (int k = 0; k < kSides; ++k)
    indices.insert(indices.end(), {centre, centre + 1 + std::uint32_t(k), centre + 1 + std::uint32_t((k + 1) % kSides)});
}

void TreeMesh::appendBand(float x0, float y0, float x1, float y1, float halfWidth, Rgba fill) {
  const float length = std::hypot(x1 - x0, y1 - y0);
  if (length <= 0) return;
  const float nx = -(y1 - y0) / length * halfWidth, ny = (x1 - x0) / length * halfWidth;
  const auto base = std::uint32_t(vertices.size());
  const Rgba none{0, 0, 0, 0};
  vertices.push_back(vertex(x0 + nx, y0 + ny, {0, 2 * halfWidth, kFar, kFar}, fill, none, 0));
  vertices.push_back(vertex(x0 - nx, y0 - ny, {2 * halfWidth, 0, kFar, kFar}, fill, none, 0));
  vertices.push_back(vertex(x1 + nx, y1 + ny, {0, 2 * halfWidth, kFar, kFar}, fill, none, 0));
  vertices.push_back(vertex(x1 - nx, y1 - ny, {2 * halfWidth, 0, kFar, kFar}, fill, none, 0));
  indices.insert(indices.end(), {base, base + 1, base + 2, base + 1, base + 3, base + 2});
}

Rgba nodeFill(const TreeLayout& layout, int i) {
  return search::mesh::nodeFill(layout.node(i).visits, layout.node(i).q, layout.onPrincipalVariation(i));
}

namespace {

// One level of detail: the sectors of each ring in clockwise order, those shorter than `minArc`
// (tree units, at the ring's middle) merged with their neighbours into runs. Returns the runs.
std::size_t appendSunburstLevel(const TreeLayout& layout, float minArc, TreeMesh& mesh, SunburstIndex::Level& level) {
  level.minArc = minArc;
  std::size_t runs = 0;
  int depth = -1;
  SunburstIndex::Ring* ring = nullptr;
  struct Run {
    float start = 0, end = 0;
    double weight = 0, r = 0, g = 0, b = 0;
  } run;
  auto emitRun = [&](const Sector& s, Rgba fill, Rgba outline, float outlineWidth) {
    ring->starts.push_back(s.start);
    ring->firstIndex.push_back(std::uint32_t(mesh.indices.size()));
    mesh.appendSector(s, fill, outline, outlineWidth);
    ++runs;
  };
  auto flush = [&] {
    if (run.weight <= 0) return;
    const Rgba mean{std::uint8_t(run.r / run.weight), std::uint8_t(run.g / run.weight), std::uint8_t(run.b / run.weight), 255};
    emitRun({run.start, run.end - run.start, ring->inner, ring->outer}, mean, tree_colours::kBackground, search::mesh::kOutlineWidth);
    run = {};
  };
  auto closeRing = [&] {
    if (!ring) return;
    flush();
    ring->firstIndex.push_back(std::uint32_t(mesh.indices.size()));
  };
  for (int i = 0; i < layout.size(); ++i) {
    const Sector& s = layout.sector(i);
    if (layout.node(i).depth != depth) {
      closeRing();
      depth = layout.node(i).depth;
      ring = &level.rings.emplace_back();
      ring->inner = s.inner;
      ring->outer = s.outer;
    }
    if (s.span <= 0) continue;
    const float minSpan = depth > 0 ? minArc / float(depth) : 0;
    const bool pv = layout.onPrincipalVariation(i);
    if (pv || s.span >= minSpan) {
      flush();
      emitRun(s, nodeFill(layout, i), pv ? tree_colours::kPrincipalVariation : tree_colours::kBackground,
              pv ? search::mesh::kPrincipalOutlineWidth : search::mesh::kOutlineWidth);
      continue;
    }
    if (run.weight > 0 && s.start - run.end > minSpan) flush();  // a gap a run must not paper over
    if (run.weight <= 0) run.start = s.start;
    run.end = s.start + s.span;
    const Rgba c = nodeFill(layout, i);
    const double w = s.span;
    run.weight += w;
    run.r += w * c.r;
    run.g += w * c.g;
    run.b += w * c.b;
    if (run.end - run.start >= minSpan) flush();
  }
  closeRing();
  return runs;
}

}  // namespace

TreeMesh buildSunburstMesh(const TreeLayout& layout) {
  TreeMesh mesh;
  SunburstIndex::Level exact;
  appendSunburstLevel(layout, 0, mesh, exact);
  return mesh;
}

void buildSunburstLevels(const TreeLayout& layout, TreeMesh& mesh, SunburstIndex& index) {
  // The coarsest level suits about 10 pixels a tree unit (a whole deep tree in a small view).
  constexpr float kCoarsestArc = 0.1f;
  constexpr int kMaxCoarseLevels = 20;
  std::size_t sectors = 0;
  for (int i = 0; i < layout.size(); ++i) sectors += layout.sector(i).span > 0;
  float arc = kCoarsestArc;
  for (int l = 0; l < kMaxCoarseLevels; ++l, arc /= 2) {
    const std::size_t vertices = mesh.vertices.size(), indices = mesh.indices.size();
    SunburstIndex::Level level;
    if (appendSunburstLevel(layout, arc, mesh, level) * 3 > sectors) {  // finer levels merge even less
      mesh.vertices.resize(vertices);
      mesh.indices.resize(indices);
      break;
    }
    index.levels.push_back(std::move(level));
  }
  appendSunburstLevel(layout, 0, mesh, index.levels.emplace_back());
}

TreeMesh buildNodeLinkMesh(const TreeLayout& layout) {
  TreeMesh mesh;
  for (const LinkNode& l : layout.linkNodes()) {
    const int parent = layout.node(l.node).parent;
    if (parent < 0 || layout.linkSlot(parent) < 0) continue;
    const LinkNode& p = layout.linkNodes()[size_t(layout.linkSlot(parent))];
    const bool pv = layout.onPrincipalVariation(l.node);
    mesh.appendBand(p.x, p.y, l.x, l.y, pv ? 0.05f : 0.022f, pv ? tree_colours::kPrincipalVariation : tree_colours::kEdge);
  }
  for (const LinkNode& l : layout.linkNodes()) {
    const bool pv = layout.onPrincipalVariation(l.node);
    mesh.appendDisc(l.x, l.y, l.radius, nodeFill(layout, l.node), pv ? tree_colours::kPrincipalVariation : tree_colours::kBackground,
                    pv ? 2.2f : 1.0f);
  }
  return mesh;
}

// --- Geometry sources -----------------------------------------------------------------------

CpuTreeGeometry::CpuTreeGeometry(const TreeLayout& layout) : nodeLink_(buildNodeLinkMesh(layout)) {
  buildSunburstLevels(layout, sunburst_, sunburstIndex_);
}

TreeGeometrySource::Counts CpuTreeGeometry::counts(TreeViewMode mode) const {
  const TreeMesh& m = mesh(mode);
  return {m.vertices.size(), m.indices.size()};
}

bool CpuTreeGeometry::writeBuffers(TreeViewMode mode, const Target& target) const {
  const TreeMesh& m = mesh(mode);
  QOpenGLFunctions* gl = QOpenGLContext::currentContext()->functions();
  gl->glBindBuffer(GL_ARRAY_BUFFER, target.vertexBuffer);
  gl->glBufferSubData(GL_ARRAY_BUFFER, 0, GLsizeiptr(m.vertices.size() * sizeof(TreeVertex)), m.vertices.data());
  gl->glBindBuffer(GL_ELEMENT_ARRAY_BUFFER, target.indexBuffer);
  gl->glBufferSubData(GL_ELEMENT_ARRAY_BUFFER, 0, GLsizeiptr(m.indices.size() * sizeof(std::uint32_t)), m.indices.data());
  return true;
}

}  // namespace cas::widgets
