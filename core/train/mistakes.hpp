#pragma once
// The mistake rate of a trained agent, judged by the game's perfect player: the share of the
// agent's moves that change the solver's verdict for the worse (a win into a draw or a loss, a
// draw into a loss), over positions drawn half from the agent's own games (each from a short
// random opening, so that its deterministic search plays different games) and half from
// random play stopped at several depths. A position the solver cannot finish within the limit
// is skipped and counted, never guessed. The agent chooses its moves first, on the calling thread;
// then solvers judge them side by side, each taking runs of consecutive positions (which share
// much of their trees) with its own table. A solved verdict is exact, so only which positions
// stay unsolved can depend on the number of threads.
// Thread-safety: runs on the thread that drives `agent` (and `progress` is called there).
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/train/alphazero.hpp"

namespace cas::train {

struct MistakeOptions {
  int positions = 100;
  std::uint64_t seed = 1;
  double solverSeconds = 5;                         // for judging one position (both solves)
  std::size_t tableBytes = std::size_t(64) << 20;  // each solver's transposition table
  int threads = 0;  // solvers judging side by side, each with its own table; 0: one per core
};

// Counts over a group of positions: a source, or a range of moves played.
struct MistakeCounts {
  std::string label;
  int positions = 0;  // drawn
  int judged = 0;     // solved, so the agent's move was judged
  int mistakes = 0;   // judged moves that made the verdict worse
  int unsolved = 0;   // skipped: the solver ran past the limit
  double rate() const { return judged ? double(mistakes) / judged : 0; }
};

struct MistakeReport {
  MistakeCounts total;
  std::vector<MistakeCounts> sources;  // "own games", "random play"
  std::vector<MistakeCounts> depths;   // by moves played before the agent's move
  double solverSeconds = 0;            // the limit per position
  double seconds = 0;                  // the whole measurement
};

// The random-play depths: the positions after this many random moves, in turn.
inline constexpr int kRandomPlayDepths[] = {4, 8, 12, 16, 20, 24, 28, 32};

// Throws std::invalid_argument when the agent's game has no perfect player or an option is out
// of range. `progress` hears (positions done, positions in all) after each position.
MistakeReport measureMistakes(AlphaZeroTrainer& agent, const MistakeOptions& options,
                              const std::function<void(int, int)>& progress = {});

}  // namespace cas::train
