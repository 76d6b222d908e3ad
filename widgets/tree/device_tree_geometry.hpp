#pragma once
// The tree view's CUDA-GL interop path: a TreeGeometrySource whose sunburst the device writes
// straight into the renderer's GL buffers (search::DeviceSunburst, implemented by the CUDA
// backend's search, so that no CUDA header reaches the studio), and the choice, per snapshot,
// between that path and the host snapshot's meshes, with the sentence the view shows for it.
//
// The device mesh is the exact sunburst of the tree's first N nodes breadth first (every visited
// node a sector, as CpuTreeGeometry's finest level), N up to the snapshot request's device budget,
// which may be ten times the host snapshot's: hit testing, labels and the node-link diagram come
// from the host snapshot, whose nodes are the device mesh's first ones, laid out alike. The device
// mesh has no levels of detail and is not split by ring and angle, so the renderer draws it whole
// (on a GPU that draws a million-node tree several hundred times a second, culling buys nothing).
//
// Thread-safety: DeviceTreeGeometry is immutable once built and may be built on a worker thread;
// writeBuffers runs on the thread whose GL context is current (DeviceSunburst orders it against
// the engine's layouts). TreeDrawingPath is a plain value; InteropProbe is the GUI thread's.
#include <QString>

#include <cstdint>
#include <memory>

#include "core/search/device_sunburst.hpp"
#include "widgets/tree/tree_geometry.hpp"

namespace cas::widgets {

class DeviceTreeGeometry final : public TreeGeometrySource {
 public:
  // `host` supplies the node-link diagram (drawn from the host snapshot on every path).
  DeviceTreeGeometry(std::shared_ptr<search::DeviceSunburst> sunburst, search::DeviceSunburst::Counts counts, std::shared_ptr<const CpuTreeGeometry> host);

  Counts counts(TreeViewMode mode) const override;
  const SunburstIndex& sunburstIndex() const override { return index_; }
  // The sunburst through DeviceSunburst::writeGlBuffers (false when a newer layout replaced this
  // one); the node-link diagram from the host's mesh.
  bool writeBuffers(TreeViewMode mode, const Target& target) const override;

  const std::shared_ptr<search::DeviceSunburst>& sunburst() const { return sunburst_; }
  const search::DeviceSunburst::Counts& deviceCounts() const { return counts_; }

 private:
  std::shared_ptr<search::DeviceSunburst> sunburst_;
  search::DeviceSunburst::Counts counts_;
  std::shared_ptr<const CpuTreeGeometry> host_;
  SunburstIndex index_;  // one level, one ring holding every index
};

// Which path drew the tree shown, in one sentence for the status line and the debug overlay.
struct TreeDrawingPath {
  bool interop = false;
  QString sentence;
};

// Decides, with the view's GL context current, whether a snapshot's device sunburst can be
// written into that context's buffers: the context must run on the CUDA device that holds the
// tree (cuGLGetDevices; false for Mesa's software renderer, or a context on another GPU). The
// answer is kept per sunburst until forget() (a new GL context, or a write that failed).
class InteropProbe {
 public:
  // `rendererName`: the GL renderer string, for the sentence when the context is not on the device.
  bool usable(const std::shared_ptr<search::DeviceSunburst>& sunburst, const QString& rendererName, QString* sentenceWhenNot);
  void forget() { probed_.reset(); }

 private:
  std::shared_ptr<search::DeviceSunburst> probed_;
  bool usable_ = false;
  QString sentence_;
};

// The sentences of the paths (translated, in the view's context).
QString interopSentence(std::int64_t nodes);
QString hostPathSentence(const QString& reason);
// Why a snapshot came without a device sunburst: the search keeps its trees in host memory, or
// laying it out on the device failed (`deviceProblem`, the engine's message).
QString noDeviceTreeReason(const std::string& deviceProblem);

}  // namespace cas::widgets
