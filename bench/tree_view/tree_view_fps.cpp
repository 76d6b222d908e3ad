// The studio's search tree view on this machine's OpenGL (llvmpipe under Xvfb here, the software
// path): frames per second of the sunburst of a synthetic tree of --nodes nodes (100,000 by
// default), as issue 17 asks of "today's software path". The tree is Connect Four's shape (7
// moves a node, visits shared out by PUCT-like priors, values at random), built whole and handed
// to the view as the panel hands a snapshot; each frame is rendered and read back
// (grabFramebuffer), which makes llvmpipe finish it. Prints one JSON line.
//   xvfb-run -s "-screen 0 1920x1080x24" build/bench/tree_view/cas-bench-tree-view --nodes 100000
// With --device (the GPU machine, a GL context on the NVIDIA GPU): the tree is a real one, grown
// by the CUDA backend's search on Connect Four (uniform leaf values) in device memory, and handed
// to the view as the engine hands a live snapshot: --nodes of it laid out on the device, written
// into the view's GL buffers through CUDA-GL interop, the host snapshot (the panel's 100,000
// nodes) for hit testing. Then --frames frames drawn, and --frames frames that each lay the tree
// out again, write it through interop and draw it (a live run's worst case: a new snapshot every
// frame); the JSON line adds the path the view names and the device's times per snapshot (the
// layout's from its kernels' start, after the tree's gather). With --device, build_ms includes
// growing the tree; every frame's time includes reading the frame back (grabFramebuffer).
#include <QApplication>
#include <QCommandLineParser>
#include <QElapsedTimer>
#include <QImage>
#include <QOpenGLContext>
#include <QOpenGLFunctions>

#include <cstdio>
#include <random>

#include "core/exec/backend.hpp"
#include "core/search/self_play_search.hpp"
#include "core/support/json_string.hpp"
#include "core/train/self_play.hpp"
#include "widgets/tree/search_tree_view.hpp"

namespace {

cas::train::TreeSnapshot syntheticTree(int nodes, std::uint32_t seed) {
  cas::train::TreeSnapshot s;
  s.environment = "connect4";
  s.treeCapacity = nodes;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> q(-1, 1), share(0.2f, 1.0f);
  s.nodes.push_back({-1, -1, 0, 0, 0, 0, 1});
  std::vector<int> budget{nodes * 4};  // visits each node passes down, breadth first
  for (size_t i = 0; i < s.nodes.size() && int(s.nodes.size()) < nodes; ++i) {
    const int left = budget[i] - 1;
    if (left < 7) continue;
    float weights[7], total = 0;
    for (float& w : weights) total += (w = share(rng) * share(rng));
    for (int a = 0; a < 7 && int(s.nodes.size()) < nodes; ++a) {
      const int visits = std::max(1, int(float(left) * weights[a] / total));
      s.nodes.push_back({std::int32_t(i), a, 0, 0, s.nodes[i].depth + 1, q(rng), weights[a] / total});
      budget.push_back(visits);
    }
  }
  // Visits as the search counts them: one for the node and its subtree's.
  for (auto& n : s.nodes) n.visits = 1;
  for (size_t i = s.nodes.size(); i-- > 1;) s.nodes[size_t(s.nodes[i].parent)].visits += s.nodes[i].visits;
  s.treeNodes = int(s.nodes.size());
  return s;
}

// A Connect Four search tree grown towards `nodes` nodes in the CUDA backend's device memory
// (nodes / 6 simulations; each expansion adds 7 children), as the view's snapshot: host nodes for
// hit testing, the device layout of up to `nodes` nodes (the JSON line says how many were drawn).
// Null with `error` set when there is no device search.
std::unique_ptr<cas::search::SelfPlaySearch> deviceTree(int nodes, cas::train::TreeSnapshot* snapshot, std::string* error) {
  const cas::exec::BackendEntry* cuda = cas::exec::BackendRegistry::instance().find("cuda");
  if (!cuda || !cuda->available()) {
    *error = cuda ? cuda->unavailableReason : "no CUDA backend was built";
    return nullptr;
  }
  cas::search::SearchConfig config;
  config.nodeBudget = 2 * nodes;
  config.leavesPerStep = 16;
  config.dirichletFraction = 0;
  cas::search::SearchSetup setup{"connect4", 1, config, 7, {cas::search::LeafEvaluator::Kind::Uniform, nullptr}};
  auto search = cuda->backend->deviceServices()->createSearch(setup, error);
  if (!search) return nullptr;
  search->search({0}, nodes / 6 + 1);
  *snapshot = cas::train::snapshotTree(*search, 0, cas::widgets::SearchTreePanel::kMaxNodes);
  snapshot->environment = "connect4";
  snapshot->deviceSunburst = search->deviceSunburst();
  if (!snapshot->deviceSunburst) {
    *error = "the CUDA backend's search keeps no device tree";
    return nullptr;
  }
  snapshot->deviceCounts = snapshot->deviceSunburst->layOut(0, nodes);
  return search;
}

}  // namespace

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  QCommandLineParser parser;
  parser.addHelpOption();
  parser.addOption({"nodes", "Nodes in the tree.", "N", "100000"});
  parser.addOption({"frames", "Frames timed.", "N", "120"});
  parser.addOption({"size", "Window size, WxH.", "WxH", "1280x800"});
  parser.addOption({"save", "Also save the last frame as this image (to look at).", "FILE"});
  parser.addOption({"device", "Grow the tree with the CUDA backend's search and draw it from device memory (CUDA-GL interop)."});
  parser.process(app);
  const int nodes = parser.value("nodes").toInt(), frames = parser.value("frames").toInt();
  const QStringList size = parser.value("size").split('x');
  if (nodes < 1 || frames < 1 || size.size() != 2) parser.showHelp(2);
  const QString unavailable = cas::widgets::openGlWidgetUnavailableReason();
  if (!unavailable.isEmpty()) {
    std::fprintf(stderr, "cas-bench-tree-view: %s\n", qPrintable(unavailable));
    return 2;
  }

  QElapsedTimer timer;
  timer.start();
  const bool device = parser.isSet("device");
  cas::train::TreeSnapshot snapshot;
  std::unique_ptr<cas::search::SelfPlaySearch> search;
  if (device) {
    std::string error;
    search = deviceTree(nodes, &snapshot, &error);
    if (!search) {
      std::fprintf(stderr, "cas-bench-tree-view: --device: %s\n", error.c_str());
      return 2;
    }
  } else {
    snapshot = syntheticTree(nodes, 1);
  }
  const std::shared_ptr<cas::search::DeviceSunburst> sunburst = snapshot.deviceSunburst;  // laid out again per frame below
  cas::widgets::PreparedTree tree = cas::widgets::prepareTree(std::move(snapshot));
  const double buildMs = double(timer.nsecsElapsed()) / 1e6;
  cas::widgets::SearchTreeView view;
  view.resize(size[0].toInt(), size[1].toInt());
  view.show();
  view.showTree(tree);
  for (int i = 0; i < 50; ++i) app.processEvents();  // exposed, initialised, first frame uploaded
  // grabFramebuffer renders a frame (paintGL) and reads it back, which makes llvmpipe finish it,
  // as the window's compositing does.
  for (int i = 0; i < 5; ++i) view.grabFramebuffer();
  timer.restart();
  QImage frame;
  for (int i = 0; i < frames; ++i) frame = view.grabFramebuffer();
  const double seconds = double(timer.nsecsElapsed()) / 1e9;
  if (parser.isSet("save") && !frame.save(parser.value("save"))) std::fprintf(stderr, "cas-bench-tree-view: could not write %s\n", qPrintable(parser.value("save")));
  const qint64 drawn = view.drawnNodes();
  const cas::widgets::TreeDrawingPath path = view.drawingPath();

  // A new snapshot every frame: the device lays the tree out again, the view writes it into its
  // buffers through interop (a new layout generation) and draws it; the host parts are reused.
  double liveSeconds = 0, layoutMs = 0, mapMs = 0, writeMs = 0;
  QString liveFallback;  // why the live frames left the interop path, if they did
  if (device && path.interop) {
    const auto host = std::static_pointer_cast<const cas::widgets::CpuTreeGeometry>(tree.geometry);  // prepareTree's
    timer.restart();
    for (int i = 0; i < frames; ++i) {
      const cas::search::DeviceSunburst::Counts counts = sunburst->layOut(0, nodes);
      view.showTree({tree.layout, tree.geometry, std::make_shared<const cas::widgets::DeviceTreeGeometry>(sunburst, counts, host), 0});
      view.grabFramebuffer();
      if (!view.drawingPath().interop) {  // a write failed: the view went back to the host's meshes
        liveFallback = view.drawingPath().sentence;
        break;
      }
      const cas::search::DeviceSunburst::Timing t = sunburst->timing();
      layoutMs += t.layoutMs, mapMs += t.mapMs, writeMs += t.writeMs;
    }
    liveSeconds = double(timer.nsecsElapsed()) / 1e9;
  }
  view.makeCurrent();
  const auto* renderer = reinterpret_cast<const char*>(view.context()->functions()->glGetString(GL_RENDERER));
  std::printf("{\"nodes\": %lld, \"frames\": %d, \"width\": %d, \"height\": %d, \"build_ms\": %.1f, \"frame_ms\": %.2f, \"fps\": %.1f, "
              "\"renderer\": \"%s\"",
              static_cast<long long>(drawn), frames, view.width(), view.height(), buildMs, seconds * 1e3 / frames, frames / seconds,
              renderer ? renderer : "unknown");
  if (device) {
    std::printf(", \"interop\": %s, \"path\": %s", path.interop ? "true" : "false", cas::jsonString(path.sentence.toStdString()).c_str());
    if (!liveFallback.isEmpty())
      std::printf(", \"live_fallback\": %s", cas::jsonString(liveFallback.toStdString()).c_str());
    else if (liveSeconds > 0)
      std::printf(", \"live_fps\": %.1f, \"live_layout_ms\": %.3f, \"live_map_ms\": %.3f, \"live_write_ms\": %.3f", frames / liveSeconds,
                  layoutMs / frames, mapMs / frames, writeMs / frames);
  }
  std::printf("}\n");
  view.doneCurrent();
  return 0;
}
