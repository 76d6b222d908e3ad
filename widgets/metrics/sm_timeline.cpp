#include "widgets/metrics/sm_timeline.hpp"

#include <QLocale>
#include <QPainter>

#include <algorithm>

namespace cas::widgets {
namespace {

constexpr int kMargin = 6, kAxisWidth = 44;

}  // namespace

SmTimeline::SmTimeline(QWidget* parent) : QWidget(parent) {
  setObjectName(QStringLiteral("smTimeline"));
  setToolTip(tr("Each row is an SM, each bar a block of an instrumented kernel, placed at the time the SM ran it; the kernels of one "
                "simulation step follow each other from left to right."));
}

void SmTimeline::setKernels(const std::vector<exec::KernelReport>& kernels) {
  lanes_.clear();
  sms_ = 0;
  totalUs_ = 0;
  for (const exec::KernelReport& k : kernels) {
    if (k.timeline.empty()) continue;
    Lane lane;
    lane.name = QString::fromStdString(k.name);
    lane.offsetUs = totalUs_;
    for (const exec::BlockSpan& b : k.timeline) {
      lane.durationUs = std::max(lane.durationUs, b.endUs);
      sms_ = std::max(sms_, b.sm + 1);
    }
    lane.blocks = k.timeline;
    totalUs_ += lane.durationUs;
    lanes_.push_back(std::move(lane));
  }
  update();
}

int SmTimeline::blockCount() const {
  int n = 0;
  for (const Lane& l : lanes_) n += int(l.blocks.size());
  return n;
}

QString SmTimeline::summary() const {
  if (lanes_.empty()) return {};
  const QLocale locale;
  return tr("SM timeline of one simulation step: %n kernel(s), %1 blocks on %2 SMs over %3 µs", nullptr, int(lanes_.size()))
      .arg(locale.toString(blockCount()))
      .arg(sms_)
      .arg(totalUs_, 0, 'f', 1);
}

QColor SmTimeline::colourOf(int lane) {
  static const QColor kColours[] = {QColor(86, 180, 233), QColor(230, 159, 0), QColor(0, 158, 115), QColor(204, 121, 167),
                                    QColor(240, 228, 66), QColor(213, 94, 0)};
  return kColours[lane % int(std::size(kColours))];
}

QRectF SmTimeline::plotArea() const {
  const int line = fontMetrics().height();
  // Summary, legend above; the time axis below.
  return QRectF(kMargin + kAxisWidth, kMargin + 2 * line + 4, std::max(1, width() - 2 * kMargin - kAxisWidth),
                std::max(1, height() - 2 * kMargin - 3 * line - 8));
}

QRectF SmTimeline::blockRect(int lane, int sm, double startUs, double endUs) const {
  const QRectF area = plotArea();
  const double scale = totalUs_ > 0 ? area.width() / totalUs_ : 0, row = sms_ > 0 ? area.height() / sms_ : 0;
  const double offset = lanes_[size_t(lane)].offsetUs;
  const double x0 = area.left() + (offset + startUs) * scale, x1 = area.left() + (offset + endUs) * scale;
  return QRectF(x0, area.top() + sm * row, std::max(1.0, x1 - x0), std::max(1.0, row));
}

void SmTimeline::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), palette().base());
  if (lanes_.empty()) return;
  const int line = fontMetrics().height();
  p.setPen(palette().text().color());
  p.drawText(QRectF(kMargin, kMargin, width() - 2 * kMargin, line), Qt::AlignLeft | Qt::AlignVCenter, summary());
  double x = kMargin;
  for (size_t i = 0; i < lanes_.size(); ++i) {  // legend
    p.fillRect(QRectF(x, kMargin + line + 4, line * 0.8, line * 0.8), colourOf(int(i)));
    x += line;
    const QString name = lanes_[i].name;
    p.drawText(QPointF(x, kMargin + 2 * line + 1), name);
    x += fontMetrics().horizontalAdvance(name) + line;
  }
  const QRectF area = plotArea();
  p.drawText(QRectF(kMargin, area.top(), kAxisWidth - 4, line), Qt::AlignRight | Qt::AlignVCenter, tr("SM 0"));
  p.drawText(QRectF(kMargin, area.bottom() - line, kAxisWidth - 4, line), Qt::AlignRight | Qt::AlignVCenter, tr("SM %1").arg(sms_ - 1));
  p.setRenderHint(QPainter::Antialiasing, false);
  for (size_t i = 0; i < lanes_.size(); ++i)
    for (const exec::BlockSpan& b : lanes_[i].blocks) p.fillRect(blockRect(int(i), b.sm, b.startUs, b.endUs), colourOf(int(i)));
  p.setPen(palette().mid().color());
  p.drawRect(area);
  p.setPen(palette().text().color());
  p.drawText(QRectF(area.left(), area.bottom() + 2, area.width() / 2, line), Qt::AlignLeft | Qt::AlignTop, tr("0 µs"));
  p.drawText(QRectF(area.center().x(), area.bottom() + 2, area.width() / 2, line), Qt::AlignRight | Qt::AlignTop,
             tr("%1 µs").arg(totalUs_, 0, 'f', 1));
}

}  // namespace cas::widgets
