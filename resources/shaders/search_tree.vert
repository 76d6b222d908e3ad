// The search tree's vertices (widgets/tree/tree_renderer.cpp). The #version line and the precision
// come from the context (desktop OpenGL 3.3 or OpenGL ES 3.0) and are prepended when compiled.
layout(location = 0) in vec2 position;
layout(location = 1) in vec4 edge;
layout(location = 2) in vec4 fill;
layout(location = 3) in vec4 outline;
layout(location = 4) in float outlineWidth;
uniform vec2 centre;
uniform vec2 scale;  // tree units to clip space, y flipped
out vec4 vEdge;
out vec4 vFill;
out vec4 vOutline;
out float vOutlineWidth;
void main() {
  vEdge = edge;
  vFill = fill;
  vOutline = outline;
  vOutlineWidth = outlineWidth;
  gl_Position = vec4((position - centre) * scale, 0.0, 1.0);
}
