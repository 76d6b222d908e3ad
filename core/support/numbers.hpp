#pragma once
// Whole-token number parsing for command lines and run files: "5abc", "1e3" for an integer,
// "2x6x7" or "-1" for a count are refused instead of being read by their prefix.
// Thread-safety: plain functions.
#include <charconv>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string_view>

namespace cas {

// A decimal integer in [min, max] spelled by the whole of `text` ("-3", "42"; not "+4", "4.0",
// "0x10", " 4").
inline std::optional<std::int64_t> parseInteger(std::string_view text, std::int64_t min, std::int64_t max) {
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || v < min || v > max) return std::nullopt;
  return v;
}

// A finite decimal number in [min, max] spelled by the whole of `text` ("0.5", "1e-3", "-2").
inline std::optional<double> parseNumber(std::string_view text, double min, double max) {
  double v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || !std::isfinite(v) || v < min || v > max)
    return std::nullopt;
  return v;
}

}  // namespace cas
