#include "widgets/tree/device_tree_geometry.hpp"

#include <QLocale>

#include <limits>
#include <string>

#include "widgets/tree/search_tree_view.hpp"

namespace cas::widgets {

DeviceTreeGeometry::DeviceTreeGeometry(std::shared_ptr<search::DeviceSunburst> sunburst, search::DeviceSunburst::Counts counts,
                                       std::shared_ptr<const CpuTreeGeometry> host)
    : sunburst_(std::move(sunburst)), counts_(counts), host_(std::move(host)) {
  // The renderer culls by ring and angle: one ring that no viewport misses, one run from angle 0.
  SunburstIndex::Ring ring;
  ring.inner = 0;
  ring.outer = std::numeric_limits<float>::max();
  ring.starts = {0.0f};
  ring.firstIndex = {0, std::uint32_t(counts_.indices)};
  SunburstIndex::Level level;
  level.minArc = 0;
  level.rings.push_back(std::move(ring));
  index_.levels.push_back(std::move(level));
}

TreeGeometrySource::Counts DeviceTreeGeometry::counts(TreeViewMode mode) const {
  if (mode == TreeViewMode::Sunburst) return {std::size_t(counts_.vertices), std::size_t(counts_.indices)};
  return host_->counts(mode);
}

bool DeviceTreeGeometry::writeBuffers(TreeViewMode mode, const Target& target) const {
  if (mode != TreeViewMode::Sunburst) return host_->writeBuffers(mode, target);
  return sunburst_->writeGlBuffers(counts_.generation, target.vertexBuffer, std::int64_t(target.vertexBytes), target.indexBuffer,
                                   std::int64_t(target.indexBytes));
}

bool InteropProbe::usable(const std::shared_ptr<search::DeviceSunburst>& sunburst, const QString& rendererName, QString* sentenceWhenNot) {
  if (probed_ != sunburst) {
    std::string why;
    usable_ = sunburst->glContextOnDevice(&why);
    sentence_ = usable_ ? QString()
                        : hostPathSentence(SearchTreeView::tr("the OpenGL context (%1) does not run on the CUDA device that holds the tree")
                                               .arg(rendererName.isEmpty() ? SearchTreeView::tr("unknown renderer") : rendererName));
    probed_ = sunburst;
  }
  if (!usable_ && sentenceWhenNot) *sentenceWhenNot = sentence_;
  return usable_;
}

QString interopSentence(std::int64_t nodes) {
  return SearchTreeView::tr("Drawn from device memory through CUDA-GL interop: %1 nodes written by the GPU.").arg(QLocale().toString(qint64(nodes)));
}

QString hostPathSentence(const QString& reason) { return SearchTreeView::tr("Drawn from a host snapshot: %1.").arg(reason); }

QString noDeviceTreeReason(const std::string& deviceProblem) {
  if (deviceProblem.empty()) return SearchTreeView::tr("the search keeps its trees in host memory");
  return SearchTreeView::tr("the device could not lay the tree out (%1)").arg(QString::fromStdString(deviceProblem));
}

}  // namespace cas::widgets
