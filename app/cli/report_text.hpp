#pragma once
// Small pieces the CLI's reports share: JSON strings (core/support/json_string.hpp) and the
// extent of a kernel's SM timeline.
#include <algorithm>
#include <vector>

#include "core/exec/kernel_report.hpp"
#include "core/support/json_string.hpp"

namespace cas::cli {

// How many SMs a kernel's last launch ran on, and for how long its blocks ran in all.
struct TimelineExtent {
  int sms = 0;
  double spanUs = 0;
};
inline TimelineExtent timelineExtent(const exec::KernelReport& k) {
  std::vector<int> sms;
  TimelineExtent e;
  for (const exec::BlockSpan& b : k.timeline) {
    sms.push_back(b.sm);
    e.spanUs = std::max(e.spanUs, b.endUs);
  }
  std::sort(sms.begin(), sms.end());
  e.sms = int(std::unique(sms.begin(), sms.end()) - sms.begin());
  return e;
}

}  // namespace cas::cli
