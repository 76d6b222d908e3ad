// The studio's search tree view on this machine's OpenGL (llvmpipe under Xvfb here, the software
// path): frames per second of the sunburst of a synthetic tree of --nodes nodes (100,000 by
// default), as issue 17 asks of "today's software path". The tree is Connect Four's shape (7
// moves a node, visits shared out by PUCT-like priors, values at random), built whole and handed
// to the view as the panel hands a snapshot; each frame is rendered and read back
// (grabFramebuffer), which makes llvmpipe finish it. Prints one JSON line.
//   xvfb-run -s "-screen 0 1920x1080x24" build/bench/tree_view/cas-bench-tree-view --nodes 100000
#include <QApplication>
#include <QCommandLineParser>
#include <QElapsedTimer>
#include <QImage>
#include <QOpenGLContext>
#include <QOpenGLFunctions>

#include <cstdio>
#include <random>

#include "widgets/search_tree_view.hpp"

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

}  // namespace

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  QCommandLineParser parser;
  parser.addHelpOption();
  parser.addOption({"nodes", "Nodes in the tree.", "N", "100000"});
  parser.addOption({"frames", "Frames timed.", "N", "120"});
  parser.addOption({"size", "Window size, WxH.", "WxH", "1280x800"});
  parser.addOption({"save", "Also save the last frame as this image (to look at).", "FILE"});
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
  cas::widgets::PreparedTree tree = cas::widgets::prepareTree(syntheticTree(nodes, 1));
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
  view.makeCurrent();
  const auto* renderer = reinterpret_cast<const char*>(view.context()->functions()->glGetString(GL_RENDERER));
  std::printf("{\"nodes\": %d, \"frames\": %d, \"width\": %d, \"height\": %d, \"build_ms\": %.1f, \"frame_ms\": %.2f, \"fps\": %.1f, "
              "\"renderer\": \"%s\"}\n",
              int(tree.layout->snapshot().nodes.size()), frames, view.width(), view.height(), buildMs, seconds * 1e3 / frames, frames / seconds,
              renderer ? renderer : "unknown");
  view.doneCurrent();
  return 0;
}
