// `cuda-agent bench solver`: how long the perfect player takes per position of random play at
// given depths (moves played), in weak and strong mode. Each position is solved with an empty
// transposition table, as Pascal Pons' benchmark measures, so the figures are per position and
// not helped by the one before.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <new>
#include <random>

#include "app/cli/commands.hpp"
#include "app/cli/report_text.hpp"
#include "core/env/perfect_play.hpp"
#include "core/support/atomic_file.hpp"

namespace cas::cli {
namespace {

struct Row {
  int depth = 0;
  std::string mode;
  int positions = 0, solved = 0;
  double mean = 0, median = 0, max = 0, meanNodes = 0;  // over the solved positions
};

std::string seconds(double s) {
  char b[32];
  if (s < 1e-3) std::snprintf(b, sizeof b, "%.1f us", s * 1e6);
  else if (s < 1) std::snprintf(b, sizeof b, "%.2f ms", s * 1e3);
  else std::snprintf(b, sizeof b, "%.2f s", s);
  return b;
}

int benchSolver(const SolverBenchOptions& o);

}  // namespace

int runBenchSolver(const SolverBenchOptions& o) {
  try {
    return benchSolver(o);
  } catch (const std::bad_alloc&) {  // each position's solver allocates its table anew
    std::cerr << "error: the perfect player's transposition table of " << formatBytes(std::uint64_t(o.tableMib) << 20)
              << " cannot be allocated (out of memory); give a smaller --table-mib\n";
    return 1;
  }
}

namespace {

int benchSolver(const SolverBenchOptions& o) {
  const env::EnvironmentInfo* e = env::findEnvironment(o.env);
  if (!e || !e->perfectPlayer || !e->board) {
    std::cerr << "bench solver: '" << o.env << "' has no perfect player\n";
    return 2;
  }
  const int cells = e->board->rows * e->board->columns;
  for (int d : o.depths)
    if (d < 0 || d >= cells) {
      std::cerr << "bench solver: depth " << d << " is not a number of moves a game of " << o.env << " can have played and go on (0 to "
                << cells - 1 << ")\n";
      return 2;
    }
  std::vector<env::SolveMode> modes;
  if (o.mode != "strong") modes.push_back(env::SolveMode::Weak);
  if (o.mode != "weak") modes.push_back(env::SolveMode::Strong);
  const std::size_t tableBytes = std::size_t(o.tableMib) << 20;

  auto scratch = env::makeBoardGames(o.env, 1);
  std::vector<Row> rows;
  for (int depth : o.depths) {
    std::mt19937_64 rng(o.seed * 1000003 + std::uint64_t(depth));
    std::vector<std::vector<int>> positions;
    for (int i = 0; i < o.positions; ++i) {
      auto moves = env::randomPosition(*scratch, depth, rng);
      if (!moves) {
        std::cerr << "bench solver: random play did not reach " << depth << " moves with the game still on\n";
        return 1;
      }
      positions.push_back(std::move(*moves));
    }
    for (env::SolveMode mode : modes) {
      Row row;
      row.depth = depth;
      row.mode = mode == env::SolveMode::Weak ? "weak" : "strong";
      std::vector<double> times;
      for (const std::vector<int>& moves : positions) {
        scratch->reset(0);
        for (int a : moves) scratch->play(0, a);
        const env::Solution s = e->perfectPlayer(tableBytes)->solve(*scratch, 0, mode, {0, o.limitSeconds});
        ++row.positions;
        if (!s.solved) continue;
        ++row.solved;
        times.push_back(s.seconds);
        row.meanNodes += double(s.nodes);
      }
      if (!times.empty()) {
        std::sort(times.begin(), times.end());
        for (double t : times) row.mean += t;
        row.mean /= double(times.size());
        row.meanNodes /= double(times.size());
        row.median = times[times.size() / 2];
        row.max = times.back();
      }
      rows.push_back(row);
      if (!o.json) {
        if (rows.size() == 1)
          std::printf("%s solver: %d positions of random play per depth, %lld MiB table, at most %s per position\n"
                      "  depth  mode    solved  mean       median     max        nodes (mean)\n",
                      o.env.c_str(), o.positions, static_cast<long long>(o.tableMib), seconds(o.limitSeconds).c_str());
        std::printf("  %5d  %-6s  %3d/%-3d %-10s %-10s %-10s %.0f\n", row.depth, row.mode.c_str(), row.solved, row.positions,
                    seconds(row.mean).c_str(), seconds(row.median).c_str(), seconds(row.max).c_str(), row.meanNodes);
        std::fflush(stdout);
      }
    }
  }
  if (o.json) {
    std::printf("{\"env\": %s, \"positions_per_depth\": %d, \"table_mib\": %lld, \"limit_seconds\": %g, \"rows\": [", jsonString(o.env).c_str(),
                o.positions, static_cast<long long>(o.tableMib), o.limitSeconds);
    for (size_t i = 0; i < rows.size(); ++i) {
      const Row& r = rows[i];
      std::printf("%s{\"depth\": %d, \"mode\": \"%s\", \"positions\": %d, \"solved\": %d, \"mean_seconds\": %.6g, \"median_seconds\": %.6g, "
                  "\"max_seconds\": %.6g, \"mean_nodes\": %.6g}",
                  i ? ", " : "", r.depth, r.mode.c_str(), r.positions, r.solved, r.mean, r.median, r.max, r.meanNodes);
    }
    std::printf("]}\n");
  }
  return 0;
}

}  // namespace

}  // namespace cas::cli
