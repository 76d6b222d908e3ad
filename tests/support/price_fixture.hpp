#pragma once
// Price series for tests, made up here (a seeded random walk of daily bars), never third-party
// data; and the example projects made loadable where they name a series that is fetched rather
// than committed (projects/trading-ppo's prices.csv, which scripts/trading-data copies from the
// installed gym-anytrading).
// Thread-safety: plain functions.
#include <QDir>
#include <QFile>
#include <QRegularExpression>
#include <QString>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>

namespace cas::test {

// `bars` daily bars from 2000-01-01 in the CSV format of docs/trading.md: closes follow a random
// walk of about 1% a day from 100 (with a slow swing, so that there is something to learn),
// seeded by `seed`.
inline std::string syntheticPrices(int bars, std::uint64_t seed = 1) {
  using namespace std::chrono;
  std::string out = "Date,Open,High,Low,Close,Volume\n";
  std::uint64_t state = seed * 0x9E3779B97F4A7C15ull + 1;
  double close = 100;
  for (int i = 0; i < bars; ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    const double uniform = double(state >> 11) / double(1ull << 53);  // [0, 1)
    const double open = close;
    close = open * std::exp(0.02 * (uniform - 0.5) + 0.004 * std::sin(i / 15.0));
    const year_month_day day{sys_days{year{2000} / January / 1} + days{i}};
    char line[160];
    std::snprintf(line, sizeof line, "%04d-%02u-%02u,%.4f,%.4f,%.4f,%.4f,%d\n", int(day.year()), unsigned(day.month()), unsigned(day.day()), open,
                  std::max(open, close) * 1.002, std::min(open, close) * 0.998, close, 1000 + i);
    out += line;
  }
  return out;
}

inline bool writeText(const QString& path, const std::string& text) {
  QFile f(path);
  return f.open(QIODevice::WriteOnly | QIODevice::Truncate) && f.write(text.data(), qint64(text.size())) == qint64(text.size());
}

// The example project `folder`, ready to load: the folder itself, or, when its project.toml
// names a series (`series = "..."`) that is not there, a copy of its project.toml and policy.pdl
// in `scratch` (a folder of the same name) beside a synthetic series of 2,335 bars (as many as
// gym-anytrading's GOOGL file holds).
inline QString loadableExample(const QString& folder, const QString& scratch) {
  QFile toml(folder + QStringLiteral("/project.toml"));
  if (!toml.open(QIODevice::ReadOnly)) return folder;
  const QString text = QString::fromUtf8(toml.readAll());
  const QRegularExpressionMatch m = QRegularExpression(QStringLiteral("^series\\s*=\\s*\"([^\"]+)\""), QRegularExpression::MultilineOption).match(text);
  if (!m.hasMatch() || QFile::exists(folder + QLatin1Char('/') + m.captured(1))) return folder;
  const QString copy = scratch + QLatin1Char('/') + QDir(folder).dirName();
  QDir().mkpath(copy);
  for (const QString& file : {QStringLiteral("project.toml"), QStringLiteral("policy.pdl")}) {
    QFile::remove(copy + QLatin1Char('/') + file);
    QFile::copy(folder + QLatin1Char('/') + file, copy + QLatin1Char('/') + file);
  }
  writeText(copy + QLatin1Char('/') + m.captured(1), syntheticPrices(2335));
  return copy;
}

}  // namespace cas::test
