// The search tree's fragments (widgets/tree/tree_renderer.cpp); #version and precision prepended.
// The outline covers the pixels within outlineWidth of a side, and fades out on shapes too thin
// to hold two outlines and some fill (the outer rings of a large tree), which keep their colour.
// Antialiasing uses the same distances: the node-link view's discs and edges, and the overlay.
in vec4 vEdge;
in vec4 vFill;
in vec4 vOutline;
in float vOutlineWidth;
uniform float pixelsPerUnit;
uniform float antialias;  // 1: shapes fade out over their last pixel (needs blending)
out vec4 fragColour;
void main() {
  float side = min(min(vEdge.x, vEdge.y), min(vEdge.z, vEdge.w)) * pixelsPerUnit;
  float extent = min(vEdge.x + vEdge.y, vEdge.z + vEdge.w) * pixelsPerUnit;
  float w = vOutlineWidth;
  float room = smoothstep(2.0 * w + 0.5, 2.0 * w + 2.5, extent);
  float onOutline = (1.0 - smoothstep(w - 0.5, w + 0.5, side)) * step(0.01, w) * room * vOutline.a;
  float coverage = antialias > 0.5 ? clamp(side + 0.5, 0.0, 1.0) : 1.0;
  fragColour = vec4(mix(vFill.rgb, vOutline.rgb, onOutline), vFill.a * coverage);
}
