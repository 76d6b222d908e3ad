#include "widgets/search_tree_view.hpp"

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
#include "widgets/run_controller.hpp"

namespace cas::widgets {

namespace {

constexpr std::size_t kFrameHistory = 120;
constexpr int kFrameIntervalMs = 16;      // animation frames
constexpr int kDebugIntervalMs = 33;      // continuous redraw while the debug overlay is open
constexpr double kSecondsPerPathNode = 0.35;
constexpr double kExpansionSeconds = 1.2;

QColor qcolour(Rgba c, int alpha = -1) { return QColor(c.r, c.g, c.b, alpha < 0 ? c.a : alpha); }

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
  auto geometry = std::make_shared<const CpuTreeGeometry>(*layout);
  return {std::move(layout), std::move(geometry), double(clock.nsecsElapsed()) / 1e6};
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

void SearchTreeView::paintGL() {
  QElapsedTimer frame;
  frame.start();
  const qreal dpr = devicePixelRatioF();
  if (renderer_.initialized()) {
    if (uploadPending_ && shown_.geometry) {
      QElapsedTimer upload;
      upload.start();
      renderer_.upload(*shown_.geometry);
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

void SearchTreeView::paintLabels(QPainter& p) const {
  const TreeLayout& l = *shown_.layout;
  if (l.size() == 0) return;  // an empty snapshot (a run whose algorithm has no search) has no labels
  QFont f = font();
  f.setPointSizeF(std::max(7.0, f.pointSizeF() * 0.9));
  p.setFont(f);
  const QFontMetrics fm(f);
  const QRectF bounds = rect();
  auto textColour = [](Rgba c) { return 0.299 * c.r + 0.587 * c.g + 0.114 * c.b > 150 ? QColor(20, 22, 26) : QColor(245, 246, 248); };
  if (mode_ == TreeViewMode::Sunburst) {
    const double ring = pixelsPerUnit_;
    if (ring < fm.height() + 2) return;
    const QPointF root = treeToWidget({0, 0});
    if (ring * TreeLayout::kRootRadius * 2 > fm.horizontalAdvance(QStringLiteral("N 00000"))) {
      p.setPen(textColour(nodeFill(l, 0)));
      p.drawText(QRectF(root.x() - 40, root.y() - 20, 80, 40), Qt::AlignCenter, tr("N %1").arg(grouped(l.node(0).visits)));
    }
    for (int i : l.nodesByArc()) {
      const Sector& s = l.sector(i);
      const auto& n = l.node(i);
      const double mid = double(n.depth);
      const double arc = double(s.span) * mid * ring;
      if (arc < fm.height() * 1.6) break;  // and so are all the nodes after it
      const double a = double(s.start + s.span / 2);
      const QPointF c = treeToWidget({mid * std::sin(a), -mid * std::cos(a)});
      if (!bounds.contains(c)) continue;
      p.setPen(textColour(nodeFill(l, i)));
      const bool room = arc > fm.horizontalAdvance(QStringLiteral("N 0000")) * 1.3 && ring > fm.height() * 2.4;
      const QString text = room ? actionName(n.action) + QLatin1Char('\n') + tr("N %1").arg(grouped(n.visits)) : actionName(n.action);
      p.drawText(QRectF(c.x() - 60, c.y() - 30, 120, 60), Qt::AlignCenter, text);
    }
    return;
  }
  // Room for a label under a disc: the gap to its neighbours on the same level.
  std::vector<const LinkNode*> byLevel;
  for (const LinkNode& ln : l.linkNodes()) byLevel.push_back(&ln);
  std::sort(byLevel.begin(), byLevel.end(), [](const LinkNode* a, const LinkNode* b) { return a->y != b->y ? a->y < b->y : a->x < b->x; });
  std::vector<double> room(l.linkNodes().size(), 1e9);
  for (size_t k = 0; k + 1 < byLevel.size(); ++k) {
    if (byLevel[k]->y != byLevel[k + 1]->y) continue;
    const double gap = double(byLevel[k + 1]->x - byLevel[k]->x) * pixelsPerUnit_;
    for (const LinkNode* n : {byLevel[k], byLevel[k + 1]}) {
      double& r = room[size_t(l.linkSlot(n->node))];
      r = std::min(r, gap);
    }
  }
  for (const LinkNode& ln : l.linkNodes()) {
    const QPointF c = treeToWidget({ln.x, ln.y});
    const double r = ln.radius * pixelsPerUnit_;
    const double space = room[size_t(l.linkSlot(ln.node))];
    if (!bounds.adjusted(-40, -40, 40, 40).contains(c)) continue;
    const auto& n = l.node(ln.node);
    // The move inside its disc where it fits, else before the visits below the disc.
    const bool inside = r >= fm.height() * 0.55;
    if (inside && n.parent >= 0) {
      p.setPen(textColour(nodeFill(l, ln.node)));
      p.drawText(QRectF(c.x() - r, c.y() - r, 2 * r, 2 * r), Qt::AlignCenter, actionName(n.action));
    }
    // Each label fits in the gap to its neighbours less a margin, so that neighbouring labels
    // never touch; the move goes before the visits where that fits too.
    QString below = n.visits > 0 ? tr("N %1").arg(grouped(n.visits)) : QString();
    if (!inside && n.parent >= 0) {
      const QString withMove = below.isEmpty() ? actionName(n.action) : actionName(n.action) + QStringLiteral(" · ") + below;
      if (space >= fm.horizontalAdvance(withMove) + 8) below = withMove;
    }
    if (!below.isEmpty() && space >= fm.horizontalAdvance(below) + 8) {
      // On a patch of background, so an edge passing below does not cross the text.
      const double w = fm.horizontalAdvance(below) + 6;
      p.setPen(Qt::NoPen);
      p.setBrush(qcolour(tree_colours::kBackground, 210));
      p.drawRoundedRect(QRectF(c.x() - w / 2, c.y() + r + 1, w, fm.height()), 3, 3);
      p.setPen(QColor(170, 176, 188));
      p.drawText(QRectF(c.x() - 50, c.y() + r + 1, 100, fm.height()), Qt::AlignHCenter | Qt::AlignTop, below);
    }
  }
}

QFont SearchTreeView::legendFont() const {
  QFont f = font();
  f.setPointSizeF(std::max(7.0, f.pointSizeF() * 0.85));
  return f;
}

QRectF SearchTreeView::legendRect() const {
  const QFontMetrics fm(legendFont());
  const int barWidth = 150, pad = 8, line = fm.height();
  const int boxWidth = std::max({barWidth, fm.horizontalAdvance(tr("Q for the player who made the move")),
                                 fm.horizontalAdvance(tr("Principal variation (most visits)")) + 18}) +
                       2 * pad;
  const int boxHeight = pad + line + 4 + 10 + line + 6 + line + pad;
  return {10, double(height() - boxHeight - 10), double(boxWidth), double(boxHeight)};
}

void SearchTreeView::paintLegend(QPainter& p) const {
  const QFont f = legendFont();
  p.setFont(f);
  const QFontMetrics fm(f);
  const QString caption = tr("Q for the player who made the move");
  const QString pv = tr("Principal variation (most visits)");
  const int barWidth = 150, pad = 8, line = fm.height();
  const QRectF box = legendRect();
  const double boxWidth = box.width();
  p.setPen(Qt::NoPen);
  p.setBrush(QColor(12, 13, 16, 200));
  p.drawRoundedRect(box, 6, 6);
  p.setPen(QColor(200, 204, 212));
  double y = box.top() + pad;
  p.drawText(QRectF(box.left() + pad, y, boxWidth, line), Qt::AlignLeft | Qt::AlignVCenter, caption);
  y += line + 4;
  QLinearGradient gradient(box.left() + pad, 0, box.left() + pad + barWidth, 0);
  for (int k = 0; k <= 8; ++k) gradient.setColorAt(k / 8.0, qcolour(qColour(float(k) / 4 - 1)));
  p.setPen(Qt::NoPen);
  p.setBrush(gradient);
  p.drawRect(QRectF(box.left() + pad, y, barWidth, 10));
  y += 10;
  p.setPen(QColor(160, 166, 178));
  const QRectF ticks(box.left() + pad, y, barWidth, line);
  p.drawText(ticks, Qt::AlignLeft | Qt::AlignVCenter, tr("−1 loses"));
  p.drawText(ticks, Qt::AlignHCenter | Qt::AlignVCenter, QStringLiteral("0"));
  p.drawText(ticks, Qt::AlignRight | Qt::AlignVCenter, tr("+1 wins"));
  y += line + 6;
  p.setPen(QPen(qcolour(tree_colours::kPrincipalVariation), 2));
  p.setBrush(Qt::NoBrush);
  p.drawRect(QRectF(box.left() + pad + 1, y + line / 2.0 - 5, 10, 10));
  p.setPen(QColor(200, 204, 212));
  p.drawText(QRectF(box.left() + pad + 18, y, boxWidth, line), Qt::AlignLeft | Qt::AlignVCenter, pv);
}

void SearchTreeView::paintRootBoard(QPainter& p) const {
  const QString board = QString::fromStdString(shown_.layout->snapshot().board).trimmed();
  if (board.isEmpty() || height() < 260) return;
  QFont mono = QFontDatabase::systemFont(QFontDatabase::FixedFont);
  mono.setPointSizeF(std::max(7.0, font().pointSizeF() * 0.9));
  QFont title = font();
  title.setPointSizeF(std::max(7.0, font().pointSizeF() * 0.85));
  const QFontMetrics fm(mono), tm(title);
  const QStringList rows = board.split(QLatin1Char('\n'));
  int w = tm.horizontalAdvance(tr("Root position"));
  for (const QString& r : rows) w = std::max(w, fm.horizontalAdvance(r));
  const QRectF box(10, 10, w + 16, tm.height() + 4 + fm.height() * rows.size() + 12);
  p.setPen(Qt::NoPen);
  p.setBrush(QColor(12, 13, 16, 200));
  p.drawRoundedRect(box, 6, 6);
  p.setFont(title);
  p.setPen(QColor(160, 166, 178));
  p.drawText(QPointF(box.left() + 8, box.top() + 6 + tm.ascent()), tr("Root position"));
  // Stones drawn as on the Board dock (crosses and rings, or red and yellow discs), in colours
  // lightened for the dark background; cell numbers and empty points dim. As letters, an O beside
  // the cell numbers reads as a zero.
  const env::EnvironmentInfo* game = env::findEnvironment(shown_.layout->snapshot().environment);
  const bool discs = game && game->board && game->board->stones == env::BoardGeometry::Stones::Discs;
  const QColor first = discs ? QColor(239, 83, 80) : QColor(110, 160, 255);
  const QColor second = discs ? QColor(251, 192, 45) : QColor(245, 130, 90);
  const double size = std::min(fm.horizontalAdvance(QLatin1Char('0')), fm.ascent()) * 0.85;
  p.setFont(mono);
  for (int k = 0; k < rows.size(); ++k) {
    const double baseline = box.top() + 6 + tm.height() + 4 + fm.ascent() + k * fm.height();
    double x = box.left() + 8;
    for (const QChar c : rows[k]) {
      const double advance = fm.horizontalAdvance(c);
      const QRectF cell(x + (advance - size) / 2, baseline - fm.ascent() + (fm.ascent() - size) / 2 + 1, size, size);
      if (c == QLatin1Char('X') || c == QLatin1Char('O')) {
        const QColor colour = c == QLatin1Char('X') ? first : second;
        if (discs) {
          p.setPen(Qt::NoPen);
          p.setBrush(colour);
          p.drawEllipse(cell);
        } else if (c == QLatin1Char('X')) {
          p.setPen(QPen(colour, 1.8, Qt::SolidLine, Qt::RoundCap));
          p.drawLine(cell.topLeft(), cell.bottomRight());
          p.drawLine(cell.topRight(), cell.bottomLeft());
        } else {
          p.setPen(QPen(colour, 1.8));
          p.setBrush(Qt::NoBrush);
          p.drawEllipse(cell);
        }
      } else {
        p.setPen(QColor(125, 131, 143));
        p.drawText(QPointF(x, baseline), QString(c));
      }
      x += advance;
    }
  }
}

QString SearchTreeView::teachingBody(TeachingPhase phase) const {
  const SimulationTrace& t = teaching_->trace;
  const TreeLayout& after = *teaching_->after.layout;
  const int leaf = t.path.back();
  const QString leafMove = after.node(leaf).parent >= 0 ? actionName(after.node(leaf).action) : tr("root");
  switch (phase) {
    case TeachingPhase::Selection:
      return tr("From the root the search follows, at each node, the child with the highest Q + U.");
    case TeachingPhase::Expansion:
      return t.expanded.empty() ? tr("The leaf (move %1) ends the game or was expanded before: its value comes without new children.").arg(leafMove)
                                : tr("The network evaluates the leaf (move %1) and adds its %2 children, each with its prior P.").arg(leafMove).arg(t.expanded.size());
    case TeachingPhase::Backup:
      return tr("The value climbs back to the root: each node on the path gains a visit and its Q moves toward the value, "
                "whose sign flips at every level as the players alternate.");
    case TeachingPhase::None:
      break;
  }
  return {};
}

double SearchTreeView::teachingCaptionWidth() const { return std::min(double(width()) - 40, 560.0); }

double SearchTreeView::teachingCaptionHeight(TeachingPhase phase) const {
  if (phase == TeachingPhase::None) {  // the tallest, so that the tree keeps its place throughout
    double h = 0;
    for (TeachingPhase p : {TeachingPhase::Selection, TeachingPhase::Expansion, TeachingPhase::Backup}) h = std::max(h, teachingCaptionHeight(p));
    return h;
  }
  QFont bold = font();
  bold.setBold(true);
  const QFontMetrics bm(bold), fm(font());
  const QRectF bodyRect = fm.boundingRect(QRect(0, 0, int(teachingCaptionWidth()) - 24, 1000), Qt::TextWordWrap, teachingBody(phase));
  return 10 + bm.height() + 4 + bodyRect.height() + 4 + fm.height() + 10;
}

void SearchTreeView::paintTeachingCaption(QPainter& p) const {
  if (!teaching_) return;
  const SimulationTrace& t = teaching_->trace;
  const TreeLayout& before = *teaching_->before.layout;
  const TreeLayout& after = *teaching_->after.layout;
  const double s = double(teaching_->clock.elapsed()) / 1000;
  QString title, body, detail;
  switch (teachingPhase()) {
    case TeachingPhase::Selection: {
      title = tr("1 · Selection");
      const auto k = size_t(std::min(double(t.path.size() - 1), std::floor(s / teaching_->selectionS * double(t.path.size()))));
      const int b = t.pathBefore[k];
      if (k == 0) {
        detail = tr("Root: N %1").arg(grouped(before.node(0).visits));
      } else if (b >= 0) {
        const auto& n = before.node(b);
        const int parent = n.parent;
        detail = tr("Move %1: Q %2 + U %3 = %4, the best of %5 children")
                     .arg(actionName(n.action), signedNumber(n.q), QString::number(double(before.explorationTerm(b)), 'f', 3),
                          signedNumber(double(n.q + before.explorationTerm(b))))
                     .arg(before.childCount(parent));
      }
      break;
    }
    case TeachingPhase::Expansion:
      title = tr("2 · Expansion");
      detail = tr("Value for the player who moved into the leaf: %1").arg(signedNumber(double(t.leafValue)));
      break;
    case TeachingPhase::Backup: {
      title = tr("3 · Backup");
      const double into = (s - teaching_->selectionS - teaching_->expansionS) / teaching_->backupS;
      const auto k = size_t(std::min(double(t.path.size() - 1), std::floor(into * double(t.path.size()))));
      const size_t at = t.path.size() - 1 - k;
      const int a = t.path[at], b = t.pathBefore[at];
      const auto& na = after.node(a);
      const QString who = na.parent >= 0 ? tr("Move %1").arg(actionName(na.action)) : tr("Root");
      detail = tr("%1: N %2 → %3, Q %4 → %5")
                   .arg(who, grouped(b >= 0 ? before.node(b).visits : 0), grouped(na.visits), b >= 0 ? signedNumber(before.node(b).q) : tr("none"),
                        signedNumber(na.q));
      break;
    }
    case TeachingPhase::None:
      return;
  }
  body = teachingBody(teachingPhase());
  QFont bold = font();
  bold.setBold(true);
  const QFontMetrics bm(bold), fm(font());
  const double w = teachingCaptionWidth();
  const QRectF bodyRect = fm.boundingRect(QRect(0, 0, int(w) - 24, 1000), Qt::TextWordWrap, body);
  const double h = teachingCaptionHeight(teachingPhase());
  const QRectF box((width() - w) / 2, 10, w, h);
  p.setPen(QPen(qcolour(tree_colours::kTeaching), 1.5));
  p.setBrush(QColor(12, 13, 16, 225));
  p.drawRoundedRect(box, 8, 8);
  p.setFont(bold);
  p.setPen(qcolour(tree_colours::kTeaching));
  p.drawText(QRectF(box.left() + 12, box.top() + 10, w - 24, bm.height()), Qt::AlignLeft | Qt::AlignVCenter, title);
  p.setFont(font());
  p.setPen(QColor(225, 228, 234));
  p.drawText(QRectF(box.left() + 12, box.top() + 14 + bm.height(), w - 24, bodyRect.height()), Qt::TextWordWrap, body);
  p.setPen(QColor(255, 214, 120));
  p.drawText(QRectF(box.left() + 12, box.top() + 18 + bm.height() + bodyRect.height(), w - 24, fm.height()), Qt::AlignLeft | Qt::AlignVCenter, detail);
}

std::vector<ImGuiOverlay::Section> SearchTreeView::debugSections() const {
  auto ms = [](double v) { return v < 0 ? tr("none yet") : tr("%1 ms").arg(v, 0, 'f', v < 10 ? 2 : 1); };
  double sum = 0, worst = 0;
  for (float t : frameTimesMs_) {
    sum += double(t);
    worst = std::max(worst, double(t));
  }
  const double mean = frameTimesMs_.empty() ? 0 : sum / double(frameTimesMs_.size());
  const QString description = renderer_.description();
  const qsizetype dash = description.indexOf(QStringLiteral(" — "));
  std::vector<ImGuiOverlay::Section> sections;
  sections.push_back({tr("Frame"),
                      {{tr("Frame time"), mean > 0 ? tr("%1 mean, %2 worst (%3 frames/s)").arg(ms(mean), ms(worst)).arg(1000 / mean, 0, 'f', 0) : tr("none yet")},
                       {tr("Drawn"), mode_ == TreeViewMode::Sunburst && renderer_.drawnLevel() >= 0
                                         ? tr("%1 indices, level of detail %2 of %3").arg(grouped(qint64(renderer_.drawnIndices()))).arg(renderer_.drawnLevel() + 1).arg(renderer_.levels())
                                         : tr("%1 indices").arg(grouped(qint64(renderer_.drawnIndices())))},
                       {tr("OpenGL"), description.left(dash)},
                       {tr("Renderer"), dash < 0 ? QString() : description.mid(dash + 3)}}});
  sections.push_back({tr("Snapshots"),
                      {{tr("Latency"), tr("%1 last, %2 mean (request to arrival)").arg(ms(pipeline_.lastLatencyMs), ms(pipeline_.meanLatencyMs))},
                       {tr("Received"), tr("%1, %2 superseded before drawing").arg(grouped(pipeline_.received), grouped(pipeline_.superseded))},
                       {tr("Preparation"), tr("%1 layout and meshes, %2 upload").arg(ms(pipeline_.lastBuildMs), ms(lastUploadMs_))}}});
  sections.push_back({tr("Queues"),
                      {{tr("Snapshot requests in flight"), QString::number(pipeline_.requestsInFlight)},
                       {tr("Snapshots waiting for the worker"), QString::number(pipeline_.buildsWaiting)}}});
  if (shown_.layout) {
    const train::TreeSnapshot& s = shown_.layout->snapshot();
    const TreeGeometrySource::Counts mesh = renderer_.uploaded(TreeViewMode::Sunburst);
    const double share = s.treeCapacity > 0 ? 100.0 * s.treeNodes / s.treeCapacity : 0;
    sections.push_back({tr("Tree"),
                        {{tr("Snapshot"), tr("%1 nodes, depth %2, root N %3, iteration %4")
                                              .arg(grouped(qint64(s.nodes.size())))
                                              .arg(shown_.layout->maxDepth())
                                              .arg(grouped(s.nodes.empty() ? 0 : s.nodes[0].visits), grouped(s.iteration))},
                         {tr("Sunburst mesh"), tr("%1 vertices, %2 indices").arg(grouped(qint64(mesh.vertices)), grouped(qint64(mesh.indices)))},
                         {tr("Allocator"), s.treeCapacity > 0 ? tr("%1 of %2 nodes in use (%3%)").arg(grouped(s.treeNodes), grouped(s.treeCapacity)).arg(share, 0, 'f', 1)
                                                             : tr("%1 nodes in use").arg(grouped(s.treeNodes))},
                         {tr("Recycled"), tr("%1 nodes so far").arg(grouped(s.recycledNodes))}}});
  }
  return sections;
}

}  // namespace cas::widgets
