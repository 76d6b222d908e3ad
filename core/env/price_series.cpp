// Reading a price series from CSV (price_series.hpp): the file's size checked, then its bytes
// read whole (at most PriceSeriesLimits::maxFileBytes), then the header's columns found by name
// and each line split, parsed and checked against the one before it.
#include "core/env/price_series.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string_view>

#include "core/support/printable.hpp"

namespace cas::env {
namespace {

constexpr const char* kExpectedHeader = "Date,Open,High,Low,Close,Volume";

// The columns the series needs, in PriceSeries' order after the time.
enum Column { Time, Open, High, Low, Close, Volume, kColumns };
constexpr std::array<const char*, kColumns> kColumnNames = {"Date", "Open", "High", "Low", "Close", "Volume"};

[[noreturn]] void fail(const std::string& file, int line, const std::string& what) {
  throw PriceSeriesError(printable(file) + ":" + std::to_string(line) + ": " + what);
}

// `text` for a message: escaped, and cut after 40 bytes.
std::string shown(std::string_view text) {
  const bool cut = text.size() > 40;
  return "'" + printable(text.substr(0, 40)) + (cut ? "...'" : "'");
}

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool equalsIgnoringCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  return true;
}

std::vector<std::string_view> splitFields(std::string_view line) {
  std::vector<std::string_view> fields;
  size_t start = 0;
  for (size_t i = 0; i <= line.size(); ++i)
    if (i == line.size() || line[i] == ',') {
      fields.push_back(trimmed(line.substr(start, i - start)));
      start = i + 1;
    }
  return fields;
}

// Which column of the header is which; -1 where absent.
using ColumnIndex = std::array<int, kColumns>;

std::optional<Column> columnNamed(std::string_view name) {
  for (const char* time : {"date", "time", "datetime", "timestamp"})
    if (equalsIgnoringCase(name, time)) return Time;
  for (int c = Open; c < kColumns; ++c)
    if (equalsIgnoringCase(name, kColumnNames[size_t(c)])) return Column(c);
  return std::nullopt;
}

ColumnIndex readHeader(const std::string& file, int lineNumber, std::string_view line) {
  ColumnIndex index;
  index.fill(-1);
  const std::vector<std::string_view> names = splitFields(line);
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i].find('"') != std::string_view::npos)
      fail(file, lineNumber, "quoted column names are not supported; write the header without quotes, e.g. " + std::string(kExpectedHeader));
    const std::optional<Column> c = columnNamed(names[i]);
    if (!c) continue;
    if (index[*c] >= 0) fail(file, lineNumber, "two columns name the " + std::string(kColumnNames[*c]) + "; keep one of " + shown(names[i]) + " and the other");
    index[*c] = int(i);
  }
  for (int c = 0; c < kColumns; ++c)
    if (index[size_t(c)] < 0)
      fail(file, lineNumber, std::string("no ") + (c == Time ? "Date (or Time, Datetime, Timestamp)" : kColumnNames[size_t(c)]) +
                        " column in the header " + shown(line) + "; expected a header such as " + kExpectedHeader +
                        " (other columns are ignored); add or rename the column");
  return index;
}

// A price or volume field: a finite number from kMinPrice to kMaxPrice (a price) or not below zero (a volume).
double readNumber(const std::string& file, int line, std::string_view field, Column c) {
  const char* name = kColumnNames[size_t(c)];
  double v = 0;
  const auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), v);
  if (field.empty() || ec != std::errc() || end != field.data() + field.size())
    fail(file, line, std::string(name) + " " + (field.empty() ? std::string("is empty") : shown(field) + " is not a number") +
                         "; expected a decimal number such as 101.25; fix or remove the row");
  if (!std::isfinite(v)) fail(file, line, std::string(name) + " " + shown(field) + " is not finite; expected a finite number; fix or remove the row");
  if (c == Volume ? v < 0 : v <= 0)
    fail(file, line, std::string(name) + " " + shown(field) + (c == Volume ? " is negative; expected zero or more" : " is not above zero; expected a price above zero") +
                         "; fix or remove the row");
  if (c != Volume && (v < kMinPrice || v > kMaxPrice))
    fail(file, line, std::string(name) + " " + shown(field) + " is " + (v < kMinPrice ? "below 1e-9" : "above 1e9") +
                         ", outside the prices a series may hold (1e-9 to 1e9, which training computes with in float32); rescale the " +
                         "series' prices (say, in another unit) or fix the row");
  return v;
}

struct LineReader {
  std::string_view text;
  size_t at = 0;
  int number = 0;
  bool next(std::string_view& line) {
    if (at >= text.size()) return false;
    const size_t end = std::min(text.find('\n', at), text.size());
    line = text.substr(at, end - at);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    at = end + 1;
    ++number;
    return true;
  }
};

std::string readBytes(const std::string& path, const PriceSeriesLimits& limits) {
  std::error_code ec;
  const std::filesystem::path p(path);
  if (!std::filesystem::is_regular_file(p, ec)) fail(path, 0, "not a readable file; expected a CSV file of prices; check the path");
  const std::uintmax_t size = std::filesystem::file_size(p, ec);
  if (ec || size > std::uintmax_t(limits.maxFileBytes))
    fail(path, 0, "the file is " + (ec ? std::string("of unknown size") : std::to_string(size) + " bytes") + ", more than the " +
                      std::to_string(limits.maxFileBytes) + " a price series may have; split the series or keep the bars you train on");
  std::ifstream in(p, std::ios::binary);
  std::string bytes(size_t(size), '\0');
  if (!in || !in.read(bytes.data(), std::streamsize(size))) fail(path, 0, "could not be read; check the file's permissions");
  if (bytes.size() >= 3 && bytes.compare(0, 3, "\xEF\xBB\xBF") == 0) bytes.erase(0, 3);
  return bytes;
}

void readRow(const std::string& file, int line, std::string_view text, const ColumnIndex& index, size_t fieldCount, PriceSeries& s) {
  const std::vector<std::string_view> fields = splitFields(text);
  if (fields.size() != fieldCount)
    fail(file, line, std::to_string(fields.size()) + " fields where the header has " + std::to_string(fieldCount) +
                         "; expected one field per column, no quoting; fix or remove the row");
  std::int64_t time = 0;
  const std::string_view t = fields[size_t(index[Time])];
  if (!parseBarTime(t, time))
    fail(file, line, "time " + shown(t) + " is not a date; expected YYYY-MM-DD, YYYY-MM-DD HH:MM:SS or DD.MM.YYYY HH:MM:SS.fff; fix or remove the row");
  if (!s.times.empty() && time <= s.times.back())
    fail(file, line, "time " + shown(t) + (time == s.times.back() ? " repeats the row before's" : " is before the row before's") +
                         "; expected times strictly increasing, oldest first; sort the rows by time and drop duplicates");
  s.times.push_back(time);
  s.open.push_back(readNumber(file, line, fields[size_t(index[Open])], Open));
  s.high.push_back(readNumber(file, line, fields[size_t(index[High])], High));
  s.low.push_back(readNumber(file, line, fields[size_t(index[Low])], Low));
  s.close.push_back(readNumber(file, line, fields[size_t(index[Close])], Close));
  s.volume.push_back(readNumber(file, line, fields[size_t(index[Volume])], Volume));
}

// Days from 1970-01-01 to the civil date (Howard Hinnant's days_from_civil).
std::int64_t daysFromCivil(std::int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = unsigned(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + std::int64_t(doe) - 719468;
}

// Reads exactly `digits` decimal digits at `at` of `s`.
bool digitsAt(std::string_view s, size_t at, size_t digits, int& v) {
  if (at + digits > s.size()) return false;
  v = 0;
  for (size_t i = at; i < at + digits; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    v = v * 10 + (s[i] - '0');
  }
  return true;
}

// `HH:MM`, `HH:MM:SS` or `HH:MM:SS.f...` (up to milliseconds read; more digits are allowed).
bool parseClock(std::string_view s, std::int64_t& ms) {
  int h = 0, mi = 0, sec = 0, frac = 0;
  if (!digitsAt(s, 0, 2, h) || s.size() < 5 || s[2] != ':' || !digitsAt(s, 3, 2, mi) || h > 23 || mi > 59) return false;
  if (s.size() > 5 && (s[5] != ':' || !digitsAt(s, 6, 2, sec) || sec > 59)) return false;
  if (s.size() > 8) {
    if (s[8] != '.' || s.size() == 9) return false;
    for (size_t i = 9; i < s.size(); ++i) {
      if (s[i] < '0' || s[i] > '9') return false;
      if (i < 12) frac = frac * 10 + (s[i] - '0');
    }
    for (size_t i = s.size(); i < 12; ++i) frac *= 10;
  }
  ms = ((h * 60 + mi) * 60 + sec) * 1000LL + frac;
  return true;
}

}  // namespace

bool parseBarTime(std::string_view text, std::int64_t& milliseconds) {
  int y = 0, m = 0, d = 0;
  const bool iso = text.size() >= 10 && text[4] == '-' && text[7] == '-' && digitsAt(text, 0, 4, y) && digitsAt(text, 5, 2, m) && digitsAt(text, 8, 2, d);
  const bool dotted = !iso && text.size() >= 10 && text[2] == '.' && text[5] == '.' && digitsAt(text, 0, 2, d) && digitsAt(text, 3, 2, m) &&
                      digitsAt(text, 6, 4, y);
  if (!iso && !dotted) return false;
  constexpr int kDaysIn[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  if (m < 1 || m > 12 || d < 1 || d > kDaysIn[m - 1] || (m == 2 && d == 29 && !leap)) return false;
  std::int64_t clock = 0;
  if (text.size() > 10 && ((text[10] != ' ' && !(iso && text[10] == 'T')) || !parseClock(text.substr(11), clock))) return false;
  milliseconds = daysFromCivil(y, unsigned(m), unsigned(d)) * 86'400'000LL + clock;
  return true;
}

PriceSeries readPriceSeries(const std::string& path, const PriceSeriesNeed& need, const PriceSeriesLimits& limits) {
  const std::string bytes = readBytes(path, limits);
  LineReader lines{bytes};
  PriceSeries s;
  s.file = path;
  std::string_view line;
  std::optional<ColumnIndex> index;
  size_t fieldCount = 0;
  while (lines.next(line)) {
    if (line.size() > size_t(limits.maxLineBytes))
      fail(path, lines.number, "a line of " + std::to_string(line.size()) + " bytes, more than the " + std::to_string(limits.maxLineBytes) +
                                   " a line may have; expected one bar per line; check that this is a CSV file of prices");
    if (trimmed(line).empty()) continue;
    if (!index) {
      index = readHeader(path, lines.number, line);
      fieldCount = splitFields(line).size();
      continue;
    }
    if (s.size() >= limits.maxRows)
      fail(path, lines.number, "more than " + std::to_string(limits.maxRows) + " bars, the most a price series may have; keep the bars you train on");
    readRow(path, lines.number, line, *index, fieldCount, s);
  }
  if (!index) fail(path, 1, std::string("no header; expected a header such as ") + kExpectedHeader + " and one line per bar");
  if (s.size() < need.rows)
    fail(path, std::max(lines.number, 1), std::to_string(s.size()) + (s.size() == 1 ? " bar" : " bars") + ", fewer than the " + std::to_string(need.rows) + " " + need.reason +
                                               " needs; give a longer series or a shorter window");
  return s;
}

}  // namespace cas::env
