// SearchTreeView's layers drawn with QPainter over the GL frame (node labels, the legend, the
// root position, teaching captions) and the contents of its debug overlay (F12). The view's
// state, events and GL frame are in search_tree_view.cpp.
// Thread-safety: GUI thread only.
#include "widgets/tree/search_tree_view.hpp"

#include <QFontDatabase>
#include <QLinearGradient>
#include <QLocale>
#include <QPainter>

#include <algorithm>
#include <cmath>

#include "core/env/environments.hpp"

namespace cas::widgets {

namespace {

QColor qcolour(Rgba c, int alpha = -1) { return QColor(c.r, c.g, c.b, alpha < 0 ? c.a : alpha); }

QString signedNumber(double v, int decimals = 3) { return (v >= 0 ? QStringLiteral("+") : QString()) + QString::number(v, 'f', decimals); }

QString grouped(qint64 n) { return QLocale().toString(n); }

}  // namespace

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
  std::vector<ImGuiOverlay::Section> sections;
  sections.push_back({tr("Frame"),
                      {{tr("Frame time"), mean > 0 ? tr("%1 mean, %2 worst (%3 frames/s)").arg(ms(mean), ms(worst)).arg(1000 / mean, 0, 'f', 0) : tr("none yet")},
                       {tr("Drawn"), mode_ == TreeViewMode::Sunburst && renderer_.drawnLevel() >= 0
                                         ? tr("%1 indices, level of detail %2 of %3").arg(grouped(qint64(renderer_.drawnIndices()))).arg(renderer_.drawnLevel() + 1).arg(renderer_.levels())
                                         : tr("%1 indices").arg(grouped(qint64(renderer_.drawnIndices())))},
                       {tr("OpenGL"), renderer_.glVersion()},
                       {tr("Renderer"), renderer_.rendererName()}}});
  sections.push_back({tr("Snapshots"),
                      {{tr("Latency"), tr("%1 last, %2 mean (request to arrival)").arg(ms(pipeline_.lastLatencyMs), ms(pipeline_.meanLatencyMs))},
                       {tr("Received"), tr("%1, %2 superseded before drawing").arg(grouped(pipeline_.received), grouped(pipeline_.superseded))},
                       {tr("Preparation"), tr("%1 layout and meshes, %2 upload").arg(ms(pipeline_.lastBuildMs), ms(lastUploadMs_))}}});
  // The path is decided at the upload; until a tree is drawn there is none.
  if (!path_.sentence.isEmpty()) {
    std::vector<std::pair<QString, QString>> rows{{tr("Path"), path_.sentence}};
    if (path_.interop) {
      rows.push_back({tr("Device layout"), tr("%1 on the engine thread, for the snapshot").arg(ms(deviceTiming_.layoutMs))});
      rows.push_back({tr("Mapped buffers"), tr("%1 map and unmap, %2 the kernel writing them (per snapshot; frames between reuse them)")
                                                .arg(ms(deviceTiming_.mapMs), ms(deviceTiming_.writeMs))});
    }
    rows.push_back({tr("Superseded layouts"), tr("%1 drawn from the host instead").arg(grouped(supersededLayouts_))});
    sections.push_back({tr("Drawing path"), std::move(rows)});
  }
  sections.push_back({tr("Instrumentation"),
                      {{tr("Last kernel profile"),
                        profileMs_ < 0 ? tr("none yet (the Kernels dock's Measure or Live)")
                        : profiledSearchSteps_ > 0
                            ? tr("%1 on the engine thread, of which %2 for %n instrumented search step(s)", nullptr, profiledSearchSteps_).arg(ms(profileMs_), ms(searchProfileMs_))
                            : tr("%1 on the engine thread (no device search to instrument)").arg(ms(profileMs_))}}});
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
