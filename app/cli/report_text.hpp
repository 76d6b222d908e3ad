#pragma once
// Small pieces the CLI's reports share: JSON strings, runtime-statistics lookups and the extent
// of a kernel's SM timeline.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "core/exec/kernel_report.hpp"

namespace cas::cli {

inline std::string jsonString(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (static_cast<unsigned char>(c) < 0x20) {  // a control character in a name stays one JSON string
      static const char* hex = "0123456789abcdef";
      out += "\\u00";
      out += hex[(c >> 4) & 0xf];
      out += hex[c & 0xf];
      continue;
    }
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// The value of `key` in name/value lines (runtimeStats()); empty when there is none.
inline std::string statValue(const std::vector<std::pair<std::string, std::string>>& stats, const std::string& key) {
  for (const auto& [k, v] : stats)
    if (k == key) return v;
  return {};
}

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
