#include "core/exec/runtime_stat.hpp"

namespace cas::exec {

std::string fillPlaceholders(std::string_view format, const std::vector<std::string>& args) {
  std::string out;
  out.reserve(format.size());
  for (std::size_t i = 0; i < format.size(); ++i) {
    const char c = format[i];
    if (c == '%' && i + 1 < format.size() && format[i + 1] >= '1' && format[i + 1] <= '9') {
      const std::size_t index = std::size_t(format[i + 1] - '1');
      if (index < args.size()) {
        out += args[index];
        ++i;
        continue;
      }
    }
    out += c;
  }
  return out;
}

std::string statValue(const std::vector<RuntimeStat>& stats, std::string_view name) {
  for (const RuntimeStat& s : stats)
    if (s.name == name) return s.value();
  return {};
}

}  // namespace cas::exec
