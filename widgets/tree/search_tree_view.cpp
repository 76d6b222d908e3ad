#include "widgets/tree/search_tree_view.hpp"

#include <QButtonGroup>
#include <QCursor>
#include <QCheckBox>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QLabel>
#include <QLinearGradient>
#include <QLocale>
#include <QMouseEvent>
#include <QGuiApplication>
#include <QOffscreenSurface>
#include <QOpenGLContext>
#include <QOpenGLFunctions>
#include <QPainter>
#include <QPushButton>
#include <QShortcut>
#include <QToolButton>
#include <QToolTip>
#include <QVBoxLayout>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>

#include "core/env/environments.hpp"
#include "widgets/runs/run_controller.hpp"

namespace cas::widgets {

namespace {

constexpr std::size_t kFrameHistory = 120;
constexpr int kFrameIntervalMs = 16;      // animation frames
constexpr int kDebugIntervalMs = 33;      // continuous redraw while the debug overlay is open
constexpr double kSecondsPerPathNode = 0.35;
constexpr double kExpansionSeconds = 1.2;

Rgba withAlpha(Rgba c, double alpha) {
  c.a = std::uint8_t(std::clamp(alpha, 0.0, 1.0) * 255);
  return c;
}

Rgba lighten(Rgba c, float t) {
  auto up = [t](std::uint8_t x) { return std::uint8_t(float(x) + (255 - float(x)) * t); };
  return {up(c.r), up(c.g), up(c.b), c.a};
}

QString signedNumber(double v, int decimals = 3) { return (v >= 0 ? QStringLiteral("+") : QString()) + QString::number(v, 'f', decimals); }

QString grouped(qint64 n) { return QLocale().toString(n); }

}  // namespace

PreparedTree prepareTree(train::TreeSnapshot snapshot) {
  QElapsedTimer clock;
  clock.start();
  auto layout = std::make_shared<const TreeLayout>(std::move(snapshot));
  auto host = std::make_shared<const CpuTreeGeometry>(*layout);
  PreparedTree tree{layout, host, nullptr, 0};
  const train::TreeSnapshot& s = layout->snapshot();
  if (s.deviceSunburst) tree.device = std::make_shared<const DeviceTreeGeometry>(s.deviceSunburst, s.deviceCounts, host);
  tree.buildMs = double(clock.nsecsElapsed()) / 1e6;
  return tree;
}

QString openGlWidgetUnavailableReason() {
  const QString platform = QGuiApplication::platformName();
  for (const char* rasterOnly : {"offscreen", "minimal", "minimalegl", "vnc", "linuxfb", "vkkhrdisplay"})
    if (platform == QLatin1String(rasterOnly))
      return SearchTreePanel::tr("The search tree is drawn with OpenGL, which Qt's \"%1\" platform cannot show in a window.").arg(platform);
  QOffscreenSurface surface;
  surface.create();
  QOpenGLContext context;
  if (!context.create() || !context.makeCurrent(&surface))
    return SearchTreePanel::tr("The search tree is drawn with OpenGL, but no OpenGL context can be created on this display.");
  context.doneCurrent();
  return {};
}

// --- SearchTreeView -------------------------------------------------------------------------

SearchTreeView::SearchTreeView(QWidget* parent) : QOpenGLWidget(parent) {
  setObjectName(QStringLiteral("searchTreeView"));
  setMouseTracking(true);
  setFocusPolicy(Qt::StrongFocus);
  setMinimumSize(240, 200);
  frameTimesMs_.reserve(kFrameHistory);
  connect(&frameTimer_, &QTimer::timeout, this, [this] {
    if (teaching_) advanceTeaching();
    update();
  });
}

SearchTreeView::~SearchTreeView() { releaseGl(); }

void SearchTreeView::releaseGl() {
  if (!renderer_.initialized() && !imgui_.initialized()) return;
  makeCurrent();
  if (writtenBy_) writtenBy_->forgetGlBuffers();  // before the buffers it registered go
  writtenBy_.reset();
  imgui_.release();
  renderer_.release();
  doneCurrent();
}

void SearchTreeView::initializeGL() {
  // A dock floated out or back gets a new context: everything is created and uploaded again.
  connect(context(), &QOpenGLContext::aboutToBeDestroyed, this, &SearchTreeView::releaseGl, Qt::UniqueConnection);
  glError_.clear();
  if (!renderer_.initialize(&glError_)) return;
  QString imguiError;
  if (!imgui_.initialize(&imguiError)) glError_ = imguiError;
  resetInterop();  // a new context: whether it runs on the tree's device is asked again
  uploadPending_ = true;
}

void SearchTreeView::resizeGL(int, int) { autoFit(); }

void SearchTreeView::showTree(PreparedTree tree) {
  teaching_.reset();
  highlightedPath_.clear();
  setShown(std::move(tree));
  if (!debugOverlay_) frameTimer_.stop();
}

void SearchTreeView::setShown(PreparedTree tree) {
  // The selected node stays selected while the tree grows from the same root: found again by
  // its moves, since breadth-first indices shift.
  const bool sameRoot = shown_.layout && tree.layout && shown_.layout->snapshot().rootMoves == tree.layout->snapshot().rootMoves;
  const std::vector<int> selectedMoves = selected_ >= 0 && shown_.layout ? shown_.layout->movesFromRoot(selected_) : std::vector<int>();
  shown_ = std::move(tree);
  drawnNodes_ = shown_.layout ? qint64(shown_.layout->snapshot().nodes.size()) : 0;  // until its upload says otherwise
  if (selected_ >= 0) selected_ = sameRoot ? shown_.layout->nodeAfter(selectedMoves) : -1;
  uploadPending_ = true;
  autoFit();
  update();
  // The node under the pointer, and so the tooltip, may differ in the new tree.
  hovered_ = -1;
  if (underMouse() && !pressed_) hover(mapFromGlobal(QCursor::pos()), QCursor::pos());
}

void SearchTreeView::showSteppedTree(PreparedTree after, const SimulationTrace& trace) {
  showTree(std::move(after));
  highlightedPath_ = trace.path;  // indices in the tree after the step, as an animation leaves them
  update();
}

void SearchTreeView::playSimulation(PreparedTree before, PreparedTree after, SimulationTrace trace) {
  highlightedPath_.clear();
  Teaching t;
  t.selectionS = std::max(1.0, kSecondsPerPathNode * double(trace.path.size()));
  t.expansionS = kExpansionSeconds;
  t.backupS = t.selectionS;
  t.before = before;
  t.after = std::move(after);
  t.trace = std::move(trace);
  t.clock.start();
  teaching_ = std::move(t);
  setShown(std::move(before));
  frameTimer_.start(kFrameIntervalMs);
}

SearchTreeView::TeachingPhase SearchTreeView::teachingPhase() const {
  if (!teaching_) return TeachingPhase::None;
  const double s = double(teaching_->clock.elapsed()) / 1000;
  if (s < teaching_->selectionS) return TeachingPhase::Selection;
  if (s < teaching_->selectionS + teaching_->expansionS) return TeachingPhase::Expansion;
  return TeachingPhase::Backup;
}

void SearchTreeView::advanceTeaching() {
  const double s = double(teaching_->clock.elapsed()) / 1000;
  if (!teaching_->showingAfter && s >= teaching_->selectionS) {
    teaching_->showingAfter = true;
    setShown(teaching_->after);
  }
  if (s >= teaching_->selectionS + teaching_->expansionS + teaching_->backupS) {
    highlightedPath_ = teaching_->trace.path;  // stays marked until the next tree
    teaching_.reset();
    if (!debugOverlay_) frameTimer_.stop();
  }
}

void SearchTreeView::setMode(TreeViewMode mode) {
  if (mode == mode_) return;
  mode_ = mode;
  userMoved_ = false;
  autoFit();
  update();
  emit modeChanged(mode);
}

void SearchTreeView::fitToView() {
  userMoved_ = false;
  autoFit();
  update();
}

float SearchTreeView::fitPixelsPerUnit() const {
  const double w = std::max(1, width()), h = std::max(1, height());
  if (!shown_.layout) return 40;
  // A tree of a move or two (a game just begun) keeps the scale of a few rings instead of
  // filling the view with its root.
  constexpr float kSmallestFitRadius = 3.5f;
  const Reserve r = fitReserve();
  const double free = h - r.top - r.bottom;
  if (mode_ == TreeViewMode::Sunburst) return float(0.94 * std::min(w, free) / 2 / std::max(kSmallestFitRadius, shown_.layout->sunburstRadius()));
  // As for the sunburst, a small tree keeps the scale of a wider one.
  const double tw = std::max(shown_.layout->linkWidth() + 1.0, 9.0),
               th = std::max(double(shown_.layout->linkHeight()) + 1.6, 3 * TreeLayout::kLevelSpacing + 1.6);
  return float(std::min(w / tw, free / th));
}

SearchTreeView::Reserve SearchTreeView::fitReserve() const {
  // The tree is fitted between what is drawn over it across the view's width: the teaching
  // caption at the top while a simulation is animated, and in the node-link diagram, whose
  // bottom level would run under it, the legend at the bottom. Not when that would leave less
  // than half the view.
  Reserve r;
  if (teaching_) r.top = 10 + teachingCaptionHeight() + 6;
  if (mode_ == TreeViewMode::NodeLink) r.bottom = legendRect().height() + 10;
  if (r.top + r.bottom > height() / 2.0) r = {};
  return r;
}

void SearchTreeView::autoFit() {
  if (userMoved_) return;
  pixelsPerUnit_ = fitPixelsPerUnit();
  // The tree's centre goes to the middle of the height left free by fitReserve().
  const Reserve r = shown_.layout ? fitReserve() : Reserve{};
  const double shift = (r.bottom - r.top) / 2 / pixelsPerUnit_;
  if (mode_ == TreeViewMode::Sunburst || !shown_.layout) centre_ = {0, shift};
  else centre_ = {double(shown_.layout->linkWidth() - 1) / 2, double(shown_.layout->linkHeight()) / 2 + shift};
}

void SearchTreeView::setDebugOverlayVisible(bool visible) {
  if (visible == debugOverlay_) return;
  debugOverlay_ = visible;
  if (visible) frameTimer_.start(kDebugIntervalMs);
  else if (!teaching_) frameTimer_.stop();
  update();
  emit debugOverlayToggled(visible);
}

void SearchTreeView::setPipelineStats(const PipelineStats& stats) { pipeline_ = stats; }

void SearchTreeView::setInstrumentationCost(double profileMs, double searchProfileMs, int searchSteps) {
  profileMs_ = profileMs;
  searchProfileMs_ = searchProfileMs;
  profiledSearchSteps_ = searchSteps;
}

void SearchTreeView::setEmptyMessage(const QString& message) {
  emptyMessage_ = message;
  update();
}

QPointF SearchTreeView::widgetToTree(QPointF p) const {
  return centre_ + (p - QPointF(width() / 2.0, height() / 2.0)) / pixelsPerUnit_;
}

QPointF SearchTreeView::treeToWidget(QPointF p) const {
  return (p - centre_) * pixelsPerUnit_ + QPointF(width() / 2.0, height() / 2.0);
}

int SearchTreeView::nodeAt(QPointF widgetPoint) const {
  if (!shown_.layout) return -1;
  const QPointF t = widgetToTree(widgetPoint);
  return mode_ == TreeViewMode::Sunburst ? shown_.layout->sunburstNodeAt(float(t.x()), float(t.y()))
                                         : shown_.layout->linkNodeAt(float(t.x()), float(t.y()));
}

QString SearchTreeView::actionName(int action) const {
  const std::string& environment = shown_.layout ? shown_.layout->snapshot().environment : std::string();
  if (!games_ || gamesEnvironment_ != environment) {
    gamesEnvironment_ = environment;
    try {
      games_ = env::makeBoardGames(environment, 1);
    } catch (const std::invalid_argument&) {
      games_.reset();
    }
  }
  return games_ ? QString::fromStdString(games_->actionName(action)) : QString::number(action);
}

QString SearchTreeView::nodeDescription(int i) const {
  if (!shown_.layout || i < 0 || i >= shown_.layout->size()) return {};
  const TreeLayout& l = *shown_.layout;
  const auto& n = l.node(i);
  QStringList lines;
  if (n.parent < 0) {
    lines << tr("<b>Root</b> — the position the search starts from");
  } else {
    QStringList moves;
    for (int a : l.movesFromRoot(i)) moves << actionName(a);
    lines << (n.depth > 1 ? tr("<b>Move %1</b> at depth %2 (moves from the root: %3)").arg(actionName(n.action)).arg(n.depth).arg(moves.join(QLatin1Char(' ')))
                          : tr("<b>Move %1</b> from the root").arg(actionName(n.action)));
  }
  lines << tr("N = %Ln visit(s)", nullptr, n.visits) + (n.parent >= 0 ? tr(" (parent: %1)").arg(grouped(l.parentVisits(i))) : QString());
  lines << (n.visits > 0 ? tr("Q = %1 for the player who made the move").arg(signedNumber(n.q)) : tr("Q: not visited yet"));
  if (n.parent >= 0) {
    const float u = l.explorationTerm(i);
    lines << tr("P = %1 (the network's prior)").arg(double(n.prior), 0, 'f', 3);
    lines << tr("U = c·P·√N<sub>parent</sub>/(1+N) = %1 × %2 × √%3 / %4 = %5")
                 .arg(double(l.snapshot().cPuct), 0, 'f', 2)
                 .arg(double(n.prior), 0, 'f', 3)
                 .arg(l.parentVisits(i))
                 .arg(1 + n.visits)
                 .arg(double(u), 0, 'f', 3);
    lines << tr("Q + U = %1 (the search picks the child with the highest)").arg(signedNumber(double(n.q + u)));
  }
  lines << tr("Virtual loss: %1").arg(n.virtualLoss);
  if (l.onPrincipalVariation(i)) lines << tr("On the principal variation (the most visited path)");
  lines << tr("<i>Click to show this position on the board.</i>");
  return lines.join(QStringLiteral("<br>"));
}

bool SearchTreeView::event(QEvent* e) {
  if (debugOverlay_ && imgui_.initialized()) {
    switch (e->type()) {
      case QEvent::MouseMove:
      case QEvent::MouseButtonPress:
      case QEvent::MouseButtonRelease:
      case QEvent::MouseButtonDblClick:
      case QEvent::Wheel:
      case QEvent::KeyPress:
      case QEvent::KeyRelease:
      case QEvent::FocusIn:
      case QEvent::FocusOut:
      case QEvent::Leave: {
        const bool taken = imgui_.handleEvent(e);
        update();
        // A drag that started on the tree stays the tree's, even over the overlay.
        if (taken && !pressed_) {
          QToolTip::hideText();
          e->accept();
          return true;
        }
        break;
      }
      default:
        break;
    }
  }
  return QOpenGLWidget::event(e);
}

void SearchTreeView::mousePressEvent(QMouseEvent* e) {
  if (e->button() != Qt::LeftButton) return;
  pressed_ = true;
  dragging_ = false;
  pressPos_ = e->position().toPoint();
  pressCentre_ = centre_;
}

void SearchTreeView::mouseMoveEvent(QMouseEvent* e) {
  if (pressed_) {
    const QPoint delta = e->position().toPoint() - pressPos_;
    if (!dragging_ && delta.manhattanLength() > 4) {
      dragging_ = true;
      QToolTip::hideText();
      setCursor(Qt::ClosedHandCursor);
    }
    if (dragging_) {
      centre_ = pressCentre_ - QPointF(delta) / pixelsPerUnit_;
      userMoved_ = true;
      update();
    }
    return;
  }
  hover(e->position(), e->globalPosition().toPoint());
}

void SearchTreeView::mouseReleaseEvent(QMouseEvent* e) {
  if (e->button() != Qt::LeftButton || !pressed_) return;
  pressed_ = false;
  if (dragging_) {
    dragging_ = false;
    unsetCursor();
    return;
  }
  const int node = nodeAt(e->position());
  if (node < 0 || !shown_.layout) return;
  selected_ = node;
  update();
  emit nodeSelected(node);
  emit positionSelected(QString::fromStdString(shown_.layout->snapshot().environment), shown_.layout->movesFromStart(node));
}

void SearchTreeView::mouseDoubleClickEvent(QMouseEvent* e) {
  if (e->button() == Qt::LeftButton) fitToView();
}

void SearchTreeView::wheelEvent(QWheelEvent* e) {
  const double fit = fitPixelsPerUnit();
  const QPointF anchor = widgetToTree(e->position());
  pixelsPerUnit_ = std::clamp(pixelsPerUnit_ * std::pow(1.0015, e->angleDelta().y()), fit / 4, fit * 5000);
  // The tree point under the pointer stays under it.
  centre_ = anchor - (e->position() - QPointF(width() / 2.0, height() / 2.0)) / pixelsPerUnit_;
  userMoved_ = true;
  update();
  e->accept();
}

void SearchTreeView::leaveEvent(QEvent* e) {
  if (hovered_ >= 0) {
    hovered_ = -1;
    update();
  }
  QOpenGLWidget::leaveEvent(e);
}

void SearchTreeView::hover(QPointF p, QPoint globalPos) {
  const int node = nodeAt(p);
  if (node == hovered_) return;
  hovered_ = node;
  update();
  if (node < 0) QToolTip::hideText();
  else QToolTip::showText(globalPos, nodeDescription(node), this, QRect(), 20000);
}

// --- Overlay: hover, selection, teaching ----------------------------------------------------

void SearchTreeView::appendNodeShape(TreeMesh& mesh, const TreeLayout& layout, int node, Rgba fill, Rgba outline, float width) const {
  if (node < 0 || node >= layout.size()) return;
  if (mode_ == TreeViewMode::Sunburst) {
    Sector s = layout.sector(node);
    if (s.span <= 0) return;
    mesh.appendSector(s, fill, outline, width);
  } else if (const int slot = layout.linkSlot(node); slot >= 0) {
    const LinkNode& l = layout.linkNodes()[size_t(slot)];
    mesh.appendDisc(l.x, l.y, l.radius, fill, outline, width);
  }
}

void SearchTreeView::appendTeachingGhosts(TreeMesh& mesh, double progress) const {
  // The new children of the expanded leaf have no visits, so no angle of their own: they are
  // shown inside the leaf's span on the next ring, shared by prior, as the expansion creates them.
  const TreeLayout& after = *teaching_->after.layout;
  const SimulationTrace& t = teaching_->trace;
  if (t.expanded.empty()) return;
  const int leaf = t.path.back();
  const Rgba ghost = withAlpha(tree_colours::kTeaching, 0.55 * progress);
  if (mode_ == TreeViewMode::Sunburst) {
    const Sector& s = after.sector(leaf);
    float total = 0;
    for (int c : t.expanded) total += std::max(after.node(c).prior, 1e-6f);
    float start = s.start;
    for (int c : t.expanded) {
      const float span = s.span * std::max(after.node(c).prior, 1e-6f) / total;
      mesh.appendSector({start, span, s.outer, s.outer + float(progress)}, ghost, tree_colours::kBackground, 0.7f);
      start += span;
    }
  } else if (const int slot = after.linkSlot(leaf); slot >= 0) {
    const LinkNode& l = after.linkNodes()[size_t(slot)];
    const auto n = float(t.expanded.size());
    for (size_t k = 0; k < t.expanded.size(); ++k) {
      const float x = l.x + (float(k) - (n - 1) / 2) * 0.32f, y = l.y + TreeLayout::kLevelSpacing * float(progress);
      mesh.appendBand(l.x, l.y, x, y, 0.015f, withAlpha(tree_colours::kEdge, progress));
      mesh.appendDisc(x, y, 0.12f, ghost, tree_colours::kTeaching, 1.0f);
    }
  }
}

TreeMesh SearchTreeView::overlayMesh() const {
  TreeMesh mesh;
  if (!shown_.layout) return mesh;
  const TreeLayout& shown = *shown_.layout;
  for (int node : highlightedPath_) appendNodeShape(mesh, shown, node, nodeFill(shown, node), tree_colours::kTeaching, 1.6f);
  if (teaching_) {
    const double s = double(teaching_->clock.elapsed()) / 1000;
    const SimulationTrace& t = teaching_->trace;
    const double pulse = 0.5 + 0.5 * std::sin(s * 9);
    const auto pathLength = double(t.path.size());
    switch (teachingPhase()) {
      case TeachingPhase::Selection: {
        const TreeLayout& before = *teaching_->before.layout;
        const TreeLayout& after = *teaching_->after.layout;
        const auto lit = size_t(std::min(pathLength, std::floor(s / teaching_->selectionS * pathLength) + 1));
        for (size_t k = 0; k < lit; ++k) {
          const bool newest = k + 1 == lit;
          const int b = t.pathBefore[k];
          // The view is still fitted to `before`. In the sunburst a leaf never visited before has no
          // sector yet, and its sector in `after` lies where it will grow. The node-link diagram of
          // `before` draws the root's unvisited children too; a node it lacks has no place in it
          // (`after` is laid out differently), so it first appears with the expansion.
          const bool drawnBefore = b >= 0 && (mode_ == TreeViewMode::Sunburst ? before.node(b).visits > 0 : before.linkSlot(b) >= 0);
          if (drawnBefore)
            appendNodeShape(mesh, before, b, lighten(nodeFill(before, b), newest ? float(0.15 + 0.35 * pulse) : 0.15f), tree_colours::kTeaching, 3.0f);
          else if (mode_ == TreeViewMode::Sunburst)
            appendNodeShape(mesh, after, t.path[k], withAlpha(tree_colours::kTeaching, 0.35 + 0.4 * pulse), tree_colours::kTeaching, 3.0f);
        }
        break;
      }
      case TeachingPhase::Expansion: {
        const double progress = std::clamp((s - teaching_->selectionS) / (0.7 * teaching_->expansionS), 0.0, 1.0);
        for (int node : t.path) appendNodeShape(mesh, shown, node, lighten(nodeFill(shown, node), 0.1f), tree_colours::kTeaching, 2.0f);
        appendNodeShape(mesh, shown, t.path.back(), lighten(nodeFill(shown, t.path.back()), float(0.5 * (1 - progress) + 0.3 * pulse)),
                        tree_colours::kHover, 3.0f);
        appendTeachingGhosts(mesh, progress);
        break;
      }
      case TeachingPhase::Backup: {
        const double into = (s - teaching_->selectionS - teaching_->expansionS) / teaching_->backupS;
        const auto lit = size_t(std::min(pathLength, std::floor(into * pathLength) + 1));
        appendTeachingGhosts(mesh, 1.0);
        for (size_t k = 0; k < lit; ++k) {
          const int node = t.path[t.path.size() - 1 - k];
          const bool newest = k + 1 == lit;
          appendNodeShape(mesh, shown, node, lighten(nodeFill(shown, node), newest ? float(0.2 + 0.4 * pulse) : 0.1f), tree_colours::kTeaching, 3.0f);
        }
        break;
      }
      case TeachingPhase::None:
        break;
    }
  }
  if (selected_ >= 0) appendNodeShape(mesh, shown, selected_, nodeFill(shown, selected_), tree_colours::kHover, 2.5f);
  if (hovered_ >= 0 && hovered_ != selected_) appendNodeShape(mesh, shown, hovered_, lighten(nodeFill(shown, hovered_), 0.25f), tree_colours::kHover, 1.5f);
  return mesh;
}

// --- Painting -------------------------------------------------------------------------------

void SearchTreeView::uploadShown() {
  TreeDrawingPath path;
  if (!shown_.device) {
    // After a refusal the panel stops asking for device layouts: the reason stays the refusal.
    path.sentence = refusal_.isEmpty() ? hostPathSentence(noDeviceTreeReason(shown_.layout->snapshot().deviceProblem)) : refusal_;
  } else if (!refusal_.isEmpty()) {
    path.sentence = refusal_;  // a layout asked for before the refusal
  } else {
    const std::shared_ptr<search::DeviceSunburst>& sunburst = shown_.device->sunburst();
    if (!interop_.usable(sunburst, renderer_.rendererName(), &refusal_)) {
      path.sentence = refusal_;
    } else {
      try {
        if (renderer_.upload(*shown_.device)) {
          path.interop = true;
          path.sentence = interopSentence(shown_.device->deviceCounts().nodes);
          drawnNodes_ = shown_.device->deviceCounts().nodes;
          deviceTiming_ = sunburst->timing();
          if (writtenBy_ && writtenBy_ != sunburst) writtenBy_->forgetGlBuffers();  // the previous run's
          writtenBy_ = sunburst;
          setDrawingPath(std::move(path));
          return;
        }
        // The engine laid out a newer tree before this one was drawn: this frame draws the host's
        // meshes of the same snapshot, and the next snapshot the device's again.
        ++supersededLayouts_;
        path.sentence = hostPathSentence(tr("the device had already laid out a newer tree"));
      } catch (const std::exception& e) {
        // Not tried again for this run: each try would fail alike.
        refusal_ = hostPathSentence(tr("CUDA could not write the OpenGL buffers (%1)").arg(QString::fromUtf8(e.what())));
        path.sentence = refusal_;
      }
    }
  }
  renderer_.upload(*shown_.geometry);
  setDrawingPath(std::move(path));
}

void SearchTreeView::resetInterop() {
  interop_.forget();
  refusal_.clear();
}

void SearchTreeView::setDrawingPath(TreeDrawingPath path) {
  const bool changed = path.sentence != path_.sentence || path.interop != path_.interop;
  path_ = std::move(path);
  if (changed) emit drawingPathChanged(path_.sentence);
}

void SearchTreeView::paintGL() {
  QElapsedTimer frame;
  frame.start();
  const qreal dpr = devicePixelRatioF();
  if (renderer_.initialized()) {
    if (uploadPending_ && shown_.geometry) {
      QElapsedTimer upload;
      upload.start();
      uploadShown();
      lastUploadMs_ = double(upload.nsecsElapsed()) / 1e6;
    }
    uploadPending_ = false;
    renderer_.setOverlay(overlayMesh());
    const auto ppu = float(pixelsPerUnit_ * dpr);
    renderer_.draw(mode_, {float(centre_.x()), float(centre_.y()), ppu, int(width() * dpr), int(height() * dpr)});
  } else {
    QOpenGLFunctions* gl = context()->functions();
    gl->glClearColor(float(tree_colours::kBackground.r) / 255, float(tree_colours::kBackground.g) / 255, float(tree_colours::kBackground.b) / 255, 1);
    gl->glClear(GL_COLOR_BUFFER_BIT);
  }
  {
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing);
    p.setRenderHint(QPainter::TextAntialiasing);
    if (!glError_.isEmpty() || !shown_.layout) {
      p.setPen(QColor(200, 204, 212));
      QFont f = font();
      f.setPointSizeF(f.pointSizeF() * 1.1);
      p.setFont(f);
      p.drawText(rect().adjusted(24, 24, -24, -24), Qt::AlignCenter | Qt::TextWordWrap, glError_.isEmpty() ? emptyMessage_ : glError_);
    } else {
      paintLabels(p);
      paintRootBoard(p);
      paintLegend(p);
      paintTeachingCaption(p);
    }
  }
  if (debugOverlay_ && imgui_.initialized()) {
    // The frame time shown is honest for a software renderer only when the frame has finished.
    context()->functions()->glFinish();
    const double ms = double(frame.nsecsElapsed()) / 1e6;
    if (frameTimesMs_.size() < kFrameHistory) frameTimesMs_.push_back(float(ms));
    else frameTimesMs_[nextFrameSlot_] = float(ms);
    nextFrameSlot_ = (nextFrameSlot_ + 1) % kFrameHistory;
    std::vector<float> ordered(frameTimesMs_.begin() + std::ptrdiff_t(frameTimesMs_.size() < kFrameHistory ? 0 : nextFrameSlot_), frameTimesMs_.end());
    ordered.insert(ordered.end(), frameTimesMs_.begin(), frameTimesMs_.begin() + std::ptrdiff_t(frameTimesMs_.size() < kFrameHistory ? 0 : nextFrameSlot_));
    imgui_.render(size(), dpr, debugSections(), ordered);
  }
}

}  // namespace cas::widgets
