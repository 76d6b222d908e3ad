#pragma once
// The search tree's sunburst as triangles, in code compiled for the host and the device (CAS_HD):
// the studio's tree view builds its meshes with it from a snapshot (widgets/tree/tree_geometry.cpp),
// and the CUDA backend writes the same vertices from the device tree straight into the view's
// OpenGL buffers (gpu/search/tree_geometry.cu), so both paths give one picture.
//
// A sector (angles clockwise from 12 o'clock, radii in tree units, y pointing down) is a strip
// of `sectorSegments(span)` quads, two vertices per chord end, inner then outer:
//
//   vertex 2j: inner radius, angle start + span * j / segments      indices per quad j:
//   vertex 2j+1: outer radius, same angle                            2j, 2j+1, 2j+2, 2j+1, 2j+3, 2j+2
//
// Thread-safety: pure functions.
#include <cstdint>

#include "core/support/host_device.hpp"

#ifndef __CUDACC__
#include <cmath>
#endif

namespace cas::search::mesh {

struct Rgba {
  std::uint8_t r = 0, g = 0, b = 0, a = 255;
};

// One vertex of the meshes, 36 bytes. `edge` holds distances (tree units) from the vertex to the
// four sides of its shape, interpolated across triangles, so the fragment shader can draw an
// outline of `outlineWidth` pixels at any zoom without extra geometry.
struct TreeVertex {
  float x, y;
  float edge[4];
  std::uint8_t fill[4];
  std::uint8_t outline[4];
  float outlineWidth;
};
static_assert(sizeof(TreeVertex) == 36, "the renderer's attribute layout assumes 36-byte vertices");

inline constexpr float kTwoPi = 6.28318530717958647692f;
// Arcs are cut into chords of at most this angle: smooth at the zoom levels the view allows,
// and a narrow sector (most of a large tree) is a single quad.
inline constexpr float kSegmentAngle = kTwoPi / 256;
inline constexpr float kFar = 1e6f;  // "no side here" in TreeVertex::edge
inline constexpr float kRootRadius = 0.5f;

// The view's colours that the meshes use (functions, which device code may call; the constants
// are the host's names for them).
CAS_HD constexpr Rgba backgroundColour() { return {24, 26, 31, 255}; }
CAS_HD constexpr Rgba principalColour() { return {255, 196, 56, 255}; }  // gold
CAS_HD constexpr Rgba unvisitedColour() { return {92, 96, 106, 255}; }
inline constexpr Rgba kBackground = backgroundColour();
inline constexpr Rgba kPrincipalVariation = principalColour();
inline constexpr Rgba kUnvisited = unvisitedColour();
inline constexpr float kOutlineWidth = 0.7f, kPrincipalOutlineWidth = 2.2f;
inline constexpr float kPrincipalTint = 0.22f;

CAS_HD inline std::uint8_t mixChannel(std::uint8_t x, std::uint8_t y, float t) {
  return std::uint8_t(floorf(float(x) + (float(y) - float(x)) * t + 0.5f));  // all terms >= 0: rounds half up
}

CAS_HD inline Rgba mix(Rgba a, Rgba b, float t) {
  return {mixChannel(a.r, b.r, t), mixChannel(a.g, b.g, t), mixChannel(a.b, b.b, t), mixChannel(a.a, b.a, t)};
}

// A diverging colour map for Q in [-1, 1] (clamped; NaN is 0): red for a move that loses for the
// player who made it, a light neutral grey at 0, blue for a move that wins. ColorBrewer's RdBu,
// with a softer neutral that does not glare on the dark background.
CAS_HD inline Rgba qColour(float q) {
  const Rgba stops[7] = {{178, 24, 43, 255},   {214, 96, 77, 255},  {244, 165, 130, 255}, {214, 214, 214, 255},
                         {146, 197, 222, 255}, {67, 147, 195, 255}, {33, 102, 172, 255}};
  if (!(q == q) || q > 1e30f || q < -1e30f) q = 0;  // NaN or infinite
  q = q < -1 ? -1 : (q > 1 ? 1 : q);
  const float t = (q + 1) / 2 * 6.0f;
  const int i = int(t) < 5 ? int(t) : 5;
  return mix(stops[i], stops[i + 1], t - float(i));
}

// A node's fill: Q's colour (grey when unvisited), tinted gold on the principal variation.
CAS_HD inline Rgba nodeFill(int visits, float q, bool principal) {
  const Rgba base = visits > 0 ? qColour(q) : unvisitedColour();
  return principal ? mix(base, principalColour(), kPrincipalTint) : base;
}

// A sector's angle before its siblings are fitted into the parent: its share of the root's visits.
CAS_HD inline float visitSpan(int visits, int rootVisits) { return rootVisits > 0 ? kTwoPi * float(visits) / float(rootVisits) : 0.0f; }

CAS_HD inline int sectorSegments(float span) {
  const int segments = int(ceilf(span / kSegmentAngle));
  return segments < 1 ? 1 : (segments > 256 ? 256 : segments);
}
CAS_HD inline int sectorVertices(float span) { return 2 * (sectorSegments(span) + 1); }
CAS_HD inline int sectorIndices(float span) { return 6 * sectorSegments(span); }

// Writes sector (start, span, inner, outer) at vertices[0 .. sectorVertices) and
// indices[0 .. sectorIndices), the indices counting from `base` (the first vertex's number).
CAS_HD inline void writeSector(float start, float span, float inner, float outer, Rgba fill, Rgba outline, float outlineWidth,
                               TreeVertex* vertices, std::uint32_t* indices, std::uint32_t base) {
  const bool fullCircle = span >= kTwoPi - 1e-4f;
  const int segments = sectorSegments(span);
  for (int j = 0; j <= segments; ++j) {
    const float along = span * float(j) / float(segments);
    const float angle = start + along;
    const float sn = sinf(angle), cs = cosf(angle);
    for (int side = 0; side < 2; ++side) {
      const float r = side == 0 ? inner : outer;
      TreeVertex& v = vertices[2 * j + side];
      v.x = r * sn;
      v.y = -r * cs;
      v.edge[0] = fullCircle ? kFar : along * r;
      v.edge[1] = fullCircle ? kFar : (span - along) * r;
      v.edge[2] = inner > 0 ? r - inner : kFar;
      v.edge[3] = outer - r;
      v.fill[0] = fill.r, v.fill[1] = fill.g, v.fill[2] = fill.b, v.fill[3] = fill.a;
      v.outline[0] = outline.r, v.outline[1] = outline.g, v.outline[2] = outline.b, v.outline[3] = outline.a;
      v.outlineWidth = outlineWidth;
    }
  }
  for (int j = 0; j < segments; ++j) {
    const std::uint32_t v = base + std::uint32_t(2 * j);
    std::uint32_t* q = indices + 6 * j;
    q[0] = v, q[1] = v + 1, q[2] = v + 2, q[3] = v + 1, q[4] = v + 3, q[5] = v + 2;
  }
}

}  // namespace cas::search::mesh
