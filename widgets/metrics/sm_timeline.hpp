#pragma once
// The SM timeline of the Kernels dock: which SM ran each block of the instrumented kernels, and
// when (exec::KernelReport::timeline, recorded by the device search's instrumentation). The
// kernels are laid end to end in the order given, as one simulation step runs them, each in its
// own colour, one row per SM:
//
//   legend      ■ search_select_masked  ■ search_expand_backup
//   SM 0        ▇▇▇   ▇▇      ▇▇▇▇▇
//   ...
//   SM n-1      ▇▇  ▇▇▇▇    ▇▇▇
//               0 µs ───────────────── total µs
//
// Empty (and hidden by the dock) when no kernel carries a timeline: the CPU backend, and the
// inference graph's kernels, which are not instrumented.
// Thread-safety: GUI thread only.
#include <QColor>
#include <QString>
#include <QWidget>

#include <vector>

#include "core/exec/kernel_report.hpp"

namespace cas::widgets {

class SmTimeline : public QWidget {
  Q_OBJECT
 public:
  explicit SmTimeline(QWidget* parent = nullptr);

  void setKernels(const std::vector<cas::exec::KernelReport>& kernels);
  bool hasTimeline() const { return !lanes_.empty(); }
  int smCount() const { return sms_; }      // rows: the highest SM seen, plus one
  double spanMicroseconds() const { return totalUs_; }
  int blockCount() const;
  QString summary() const;                  // the line drawn above the rows
  // The colour a kernel of the timeline is drawn in (its position among those with a timeline).
  static QColor colourOf(int lane);
  // Where a block of lane `lane` on `sm` from `startUs` to `endUs` is drawn, in widget pixels.
  QRectF blockRect(int lane, int sm, double startUs, double endUs) const;

  QSize sizeHint() const override { return {480, 220}; }
  QSize minimumSizeHint() const override { return {240, 120}; }

 protected:
  void paintEvent(QPaintEvent* event) override;

 private:
  struct Lane {
    QString name;
    double offsetUs = 0, durationUs = 0;
    std::vector<cas::exec::BlockSpan> blocks;
  };
  QRectF plotArea() const;

  std::vector<Lane> lanes_;
  int sms_ = 0;
  double totalUs_ = 0;
};

}  // namespace cas::widgets
