#pragma once
// A search tree's sunburst computed on the device that holds the tree, and written into OpenGL
// buffers through CUDA-GL interop: the GL side of the interop as core sees it, implemented by the
// CUDA backend's search (gpu/search/device_sunburst.cpp), so that the studio includes no CUDA
// header. The mesh is tree_mesh.hpp's exact sunburst (every visited node a sector), numbered and
// laid out as the studio lays out a snapshot (widgets/tree/tree_geometry.hpp), so the two paths draw
// the same picture; the CPU snapshot path stays the reference.
//
//   layOut(game, maxNodes)      the tree's first maxNodes nodes, breadth first, on the device;
//                               returns the mesh's sizes (the caller sizes its buffers) and a
//                               generation number that names this layout
//   writeGlBuffers(generation, vbo, bytes, ibo, bytes)   GL context current: registers each
//                               buffer with CUDA once (again when its size changes), maps both,
//                               writes, unmaps; false when a later layOut replaced that layout
//   readMesh(...)               the same mesh into host memory (tests; views without interop)
//
// Thread-safety: layOut runs on the thread that drives the search, between its steps (it reads
// the trees the search writes); writeGlBuffers and readMesh may run on another thread (the one
// whose GL context is current) at the same time: a mutex orders them, and their device work runs
// on a stream of the sunburst's own, so a write waits at most for a layout, never for the
// search's queued work.
#include <cstdint>
#include <string>
#include <vector>

#include "core/search/tree_mesh.hpp"

namespace cas::search {

class DeviceSunburst {
 public:
  struct Counts {
    std::int64_t nodes = 0, vertices = 0, indices = 0;
    std::uint64_t generation = 0;  // which layOut these are of (from 1)
  };
  struct Timing {
    double layoutMs = 0;  // layOut: the levels, the principal variation, the mesh's sizes
    double mapMs = 0;     // mapping and unmapping the two buffers
    double writeMs = 0;   // the kernel writing them
  };

  virtual ~DeviceSunburst() = default;

  // Whether the OpenGL context current on this thread runs on this search's CUDA device
  // (cuGLGetDevices); false with the reason otherwise (software OpenGL, another GPU).
  virtual bool glContextOnDevice(std::string* why) = 0;
  virtual Counts layOut(int game, int maxNodes) = 0;
  // Writes layout `generation`'s mesh; returns false, writing nothing, when a later layOut has
  // replaced it (the caller keeps what it drew, or asks again). Throws std::runtime_error when
  // CUDA cannot register or map a buffer, or a buffer is smaller than the layout's counts (then
  // the caller falls back to the snapshot path). The sizes are the buffers' (glBufferData's) in
  // bytes: a new size is registered anew.
  virtual bool writeGlBuffers(std::uint64_t generation, unsigned vertexBuffer, std::int64_t vertexBufferBytes, unsigned indexBuffer,
                              std::int64_t indexBufferBytes) = 0;
  // Unregisters every buffer writeGlBuffers registered, with their GL context still current:
  // the context is about to delete them, and a later buffer may get the same name.
  virtual void forgetGlBuffers() = 0;
  virtual void readMesh(std::vector<mesh::TreeVertex>* vertices, std::vector<std::uint32_t>* indices) = 0;
  // The last layOut's and writeGlBuffers' times (CUDA events).
  virtual Timing timing() const = 0;
};

}  // namespace cas::search
