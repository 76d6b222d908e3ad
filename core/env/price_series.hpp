#pragma once
// A price series read from a CSV file: one row per bar, oldest first, as the trading
// environments (trading.hpp) step over it. The file is untrusted input, so every way it can be
// wrong is refused with `file:line: what was expected; what to do`, and reading is bounded in
// time and memory by PriceSeriesLimits (the file's size is checked before it is read).
//
// The format (gym-anytrading's bundled STOCKS_GOOGL.csv and FOREX_EURUSD_1H_ASK.csv are both
// examples): a header line naming the columns, then one line per bar, fields separated by
// commas, no quoting. Columns are found by name, case-insensitively, in any order:
//   - the time: `Date`, `Time`, `Datetime` or `Timestamp`, as `YYYY-MM-DD`, `YYYY-MM-DD HH:MM`,
//     `YYYY-MM-DD HH:MM:SS[.fff]` (a `T` may stand for the space) or `DD.MM.YYYY HH:MM:SS[.fff]`;
//     strictly increasing from row to row;
//   - `Open`, `High`, `Low`, `Close`: numbers from kMinPrice to kMaxPrice (1e-9 to 1e9): the
//     environments compute in float32 from prices and their differences (a reward is a price
//     difference, 10000 times one for forex), and prices such as 1e300 and 1e-300, each finite,
//     made a run's loss NaN; a series outside the range is in the wrong unit, and is rescaled;
//   - `Volume`: a finite number, zero or more.
// Other columns (`Adj Close`) are ignored. Blank lines are skipped; a UTF-8 byte order mark
// before the header and `\r\n` line ends are accepted.
// Thread-safety: readPriceSeries is a plain function; a PriceSeries is a value, readable from
// any thread once made.
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace cas::env {

// The prices a series may hold (see above).
constexpr double kMinPrice = 1e-9, kMaxPrice = 1e9;

struct PriceSeriesLimits {
  std::int64_t maxFileBytes = std::int64_t(64) << 20;  // 64 MiB
  int maxLineBytes = 1024;                             // without the line end
  int maxRows = 1'000'000;                             // bars, not counting the header
};

// What a caller needs of the series: at least `rows` bars, and the reason, for the refusal
// ("one episode: a window of 30 prices, 1 step and the bar before").
struct PriceSeriesNeed {
  int rows = 1;
  std::string reason = "a series";
};

struct PriceSeries {
  std::string file;                 // as given, for messages
  std::vector<std::int64_t> times;  // milliseconds since 1970-01-01 (the file's clock, no zone)
  std::vector<double> open, high, low, close, volume;
  int size() const { return int(close.size()); }
};

// The file's error, its message `file:line: ...` (file escaped for the terminal).
class PriceSeriesError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Reads `path` or throws PriceSeriesError; never reads more than limits.maxFileBytes.
PriceSeries readPriceSeries(const std::string& path, const PriceSeriesNeed& need = {}, const PriceSeriesLimits& limits = {});

// The time `text` names in one of the formats above, in milliseconds since 1970-01-01; false
// when it names none.
bool parseBarTime(std::string_view text, std::int64_t& milliseconds);

}  // namespace cas::env
