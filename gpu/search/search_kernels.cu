// The device search's kernels: each runs one game's share of a search phase
// (search_steps.cuh) per thread, one thread per game, in blocks of one warp so that the games
// spread over every SM (the work is latency-bound: a thread walks its tree load by load).
//
//   kernel                  threads      computes
//   search_reset            per game     fresh positions and trees
//   search_play             per move     the move in the root position, subtree kept or dropped
//   search_encode_roots     per game     marks the call's games; observations of roots to evaluate
//   search_expand_roots     per game     root expansion, noise or Gumbel arms, simulations to run
//   search_select_masked    per game     k leaves under virtual loss, predicated descent
//   search_select_branchy   per game     the same, with the loops and branches as written
//   search_expand_backup    per game     expansion, virtual loss off, values up, Gumbel halving
//   search_expand_select    per game     the two above in one launch: step i's expansion, then
//                                        step i+1's selection (what the step graph replays)
//   search_finish_roots     per game     the root's clean priors back
//   search_root_stats       per game     RootOut: visits, Q, policy, PV, chosen and played move
//   search_record_play      per game     self-play: the root and its policy recorded, the move played
//   search_place_ended      one block    the ended games' first rows, in game order (a scan)
//   search_write_ended      block/game   an ended game's rows into the replay store's fresh
//                                        region, then a fresh game
//   search_gather_tree      per slot     one game's arrays, contiguous, for a snapshot
//   search_hashed_evaluate  per row      the hashed test evaluator
//
// Compiled with -fmad=false (gpu/CMakeLists.txt): the search's arithmetic must round as the
// CPU's does (core/search/search_math.hpp).
// Instrumented variants count SIMT efficiency at the descent's and the expansion's loop heads
// (the leader of the active lanes adds __popc(__activemask()) and one step; one atomic add per
// thread at the end) and record each block's %smid and %globaltimer span.
#include <cuda_runtime.h>

#include "gpu/cuda_check.hpp"
#include "gpu/search/search_launch.hpp"

namespace cas::gpu::search {
namespace {

__device__ inline std::uint64_t globalTimer() {
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__device__ inline std::uint32_t smId() {
  std::uint32_t id;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
  return id;
}

struct WarpProbe {
  unsigned long long lanes = 0, steps = 0;
  __device__ void sample() {
    const unsigned mask = __activemask();
    if ((threadIdx.x & 31u) == unsigned(__ffs(int(mask)) - 1)) {
      lanes += unsigned(__popc(int(mask)));
      steps += 1;
    }
  }
  __device__ void flush(KernelCounters* c) const {
    if (steps == 0) return;
    atomicAdd(&c->activeLanes, lanes);
    atomicAdd(&c->warpSteps, steps);
  }
};

// Thread 0's clock at the block's start and end, with the SM it ran on.
template <bool Instrument>
struct BlockClock {
  std::uint64_t start = 0;
  __device__ BlockClock() {
    if constexpr (Instrument) start = globalTimer();
  }
  __device__ void record(BlockRecord* blocks) const {
    if constexpr (Instrument) {
      __syncthreads();
      if (threadIdx.x == 0) blocks[blockIdx.x] = {smId(), 0, start, globalTimer()};
    }
  }
};

__device__ inline int thread() { return int(blockIdx.x * blockDim.x + threadIdx.x); }

template <class Game>
SearchContext<Game> contextOf(const DeviceSearchBuffers& b) {
  SearchContext<Game> c;
  c.trees = b.trees;
  c.roots = static_cast<typename Game::State*>(b.roots);
  c.pending = b.pending;
  c.obs = b.obs;
  c.logits = b.logits;
  c.values = b.values;
  c.params = b.params;
  c.stats = b.stats;
  c.games = b.games;
  c.k = b.k;
  return c;
}

template <class Game>
__global__ void resetKernel(SearchContext<Game> c, const std::int32_t* games, int count) {
  const int i = thread();
  if (i < count) resetGame(c, games ? games[i] : i);
}

template <class Game>
__global__ void playKernel(SearchContext<Game> c, const std::int32_t* games, const std::int32_t* actions, int count) {
  const int i = thread();
  if (i < count) playMove(c, games[i], actions[i]);
}

template <class Game>
__global__ void encodeRootsKernel(SearchContext<Game> c, const std::uint8_t* listed) {
  const int g = thread();
  if (g >= c.games) return;
  c.trees.gameSlots[g].listed = listed[g];
  encodeRoot(c, g);
}

template <class Game>
__global__ void expandRootsKernel(SearchContext<Game> c) {
  const int g = thread();
  if (g < c.games) expandRoot(c, g);
}

template <class Game, bool Masked, bool Instrument>
__global__ void selectKernel(SearchContext<Game> c, Instrumentation ins) {
  const BlockClock<Instrument> clock;
  const int g = thread();
  if (g < c.games) {
    if constexpr (Instrument) {
      WarpProbe probe;
      selectLeaves<Game, Masked>(c, g, probe);
      probe.flush(ins.counters);
    } else {
      NoProbe probe;
      selectLeaves<Game, Masked>(c, g, probe);
    }
  }
  clock.record(ins.blocks);
}

template <class Game, bool Instrument>
__global__ void expandKernel(SearchContext<Game> c, Instrumentation ins) {
  const BlockClock<Instrument> clock;
  const int g = thread();
  if (g < c.games) {
    if constexpr (Instrument) {
      WarpProbe probe;
      expandLeaves(c, g, probe);
      probe.flush(ins.counters);
    } else {
      NoProbe probe;
      expandLeaves(c, g, probe);
    }
  }
  clock.record(ins.blocks);
}

// A game's expansion of this step and its selection of the next, in the CPU's order: one
// launch (and one launch gap) less per step.
template <class Game, bool Masked, bool Instrument>
__global__ void expandSelectKernel(SearchContext<Game> c, Instrumentation expand, Instrumentation select) {
  const BlockClock<Instrument> clock;
  const int g = thread();
  if (g < c.games) {
    if constexpr (Instrument) {
      WarpProbe expandProbe, selectProbe;
      expandLeaves(c, g, expandProbe);
      selectLeaves<Game, Masked>(c, g, selectProbe);
      expandProbe.flush(expand.counters);
      selectProbe.flush(select.counters);
    } else {
      NoProbe probe;
      expandLeaves(c, g, probe);
      selectLeaves<Game, Masked>(c, g, probe);
    }
  }
  clock.record(select.blocks);
}

template <class Game>
__global__ void finishRootsKernel(SearchContext<Game> c) {
  const int g = thread();
  if (g < c.games) finishRoot(c, g);
}

template <class Game>
__global__ void rootStatisticsKernel(SearchContext<Game> c) {
  const int g = thread();
  if (g < c.games) rootStatistics(c, g);
}

__global__ void gatherTreeKernel(TreeFields f, int game, int games, int budget, unsigned char* out) {
  const int s = thread();
  if (s >= budget) return;
  const std::int64_t i = std::int64_t(s) * games + game;
  const std::int64_t n = budget;
  // A section of `budget` entries per field, in core/search/tree_fields.hpp's order (its
  // four-byte fields first, so that every section stays aligned whatever the budget).
  unsigned char* p = out;
#define CAS_TREE_GATHER(name, type, root) \
  reinterpret_cast<type*>(p)[s] = f.name[i];  \
  p += n * std::int64_t(sizeof(type));
  CAS_TREE_FIELDS(CAS_TREE_GATHER)
#undef CAS_TREE_GATHER
}

template <class Game>
__global__ void hashedKernel(const float* obs, float* logits, float* values, int rows) {
  const int r = thread();
  if (r < rows)
    cas::search::hashedEvaluation(obs + std::int64_t(r) * Game::kObsSize, Game::kObsSize, Game::kActions, logits + std::int64_t(r) * Game::kActions, values + r);
}

template <class Game>
__global__ void recordPlayKernel(SearchContext<Game> c, SelfPlayBuffers sp) {
  const int g = thread();
  if (g >= c.games) return;
  if (!c.trees.gameSlots[g].listed) {
    sp.moves[g] = {-1, 0};
    return;
  }
  constexpr int A = Game::kActions;
  const int t = Game::moveCount(c.roots[g]);
  const std::int64_t row = std::int64_t(g) * Game::kMaxMoves + t;
  static_cast<typename Game::State*>(sp.states)[row] = c.roots[g];
  const RootOut& r = c.stats[g];
  for (int a = 0; a < A; ++a) sp.policies[row * A + a] = r.policy[a];
  playMove(c, g, r.played);
  sp.moves[g] = {r.played, Game::terminal(c.roots[g]) ? t + 1 : 0};
}

// One block of kPlaceThreads: each thread sums a run of games, the block scans the sums.
constexpr int kPlaceThreads = 1024;
__global__ void placeEndedKernel(SelfPlayBuffers sp, int games) {
  __shared__ std::int64_t sums[kPlaceThreads];
  const int per = (games + kPlaceThreads - 1) / kPlaceThreads;
  const int begin = int(threadIdx.x) * per, end = min(games, begin + per);
  std::int64_t own = 0;
  for (int g = begin; g < end; ++g) own += sp.moves[g].endedLength;
  sums[threadIdx.x] = own;
  __syncthreads();
  for (int step = 1; step < kPlaceThreads; step *= 2) {  // inclusive scan
    const std::int64_t add = threadIdx.x >= unsigned(step) ? sums[threadIdx.x - step] : 0;
    __syncthreads();
    sums[threadIdx.x] += add;
    __syncthreads();
  }
  std::int64_t at = sums[threadIdx.x] - own;
  for (int g = begin; g < end; ++g) {
    sp.offsets[g] = at;
    at += sp.moves[g].endedLength;
  }
}

template <class Game>
__global__ void writeEndedKernel(SearchContext<Game> c, SelfPlayBuffers sp) {
  const int g = int(blockIdx.x);
  const int length = sp.moves[g].endedLength;
  if (length == 0) return;
  constexpr int A = Game::kActions, O = Game::kObsSize;
  const float v = Game::terminalValue(c.roots[g]);  // for the player to move at the end
  const auto* states = static_cast<const typename Game::State*>(sp.states) + std::int64_t(g) * Game::kMaxMoves;
  const float* policies = sp.policies + std::int64_t(g) * Game::kMaxMoves * A;
  for (int t = int(threadIdx.x); t < length; t += int(blockDim.x)) {
    const std::int64_t row = sp.fresh.base + sp.offsets[g] + t;
    if (row >= sp.fresh.capacity) continue;  // the host refuses the move (DeviceReplay::addedOnDevice)
    Game::encode(states[t], sp.fresh.rows.obs + row * O);
    for (int a = 0; a < A; ++a) sp.fresh.rows.policy[row * A + a] = policies[t * A + a];
    sp.fresh.rows.value[row] = (length - t) % 2 == 0 ? v : -v;  // the mover at t is the one at the end?
  }
  __syncthreads();
  if (threadIdx.x == 0) resetGame(c, g);
}

void checkLaunch(const char* kernel) {
  const cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) throw CudaError(std::string("launching ") + kernel + " failed: " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")");
}

cudaStream_t runtimeStream(CUstream s) { return reinterpret_cast<cudaStream_t>(s); }

// Also loads the kernel: one that cannot load fails here, not later inside a graph capture.
template <typename Kernel>
int registersOf(Kernel kernel) {
  cudaFuncAttributes a{};
  const cudaError_t e = cudaFuncGetAttributes(&a, kernel);
  if (e != cudaSuccess) {
    cudaGetLastError();
    throw CudaError(std::string("a search kernel did not load: ") + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")");
  }
  return a.numRegs;
}

// Active warps over the SM's maximum when the kernel runs alone in blocks of kThreadsPerBlock
// (cudaOccupancyMaxActiveBlocksPerMultiprocessor); -1 when the runtime cannot say, which only
// leaves the figure out of the reports.
template <typename Kernel>
double theoreticalOccupancyOf(Kernel kernel) {
  int device = 0, maxThreads = 0, blocks = 0;
  if (cudaGetDevice(&device) != cudaSuccess || cudaDeviceGetAttribute(&maxThreads, cudaDevAttrMaxThreadsPerMultiProcessor, device) != cudaSuccess ||
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, SearchKernels::kThreadsPerBlock, 0) != cudaSuccess || maxThreads <= 0) {
    cudaGetLastError();
    return -1;
  }
  return double(blocks) * SearchKernels::kThreadsPerBlock / double(maxThreads);
}

template <class Game>
class GameKernels final : public SearchKernels {
 public:
  GameKernels() {
    // Loads every kernel now (CUDA loads modules lazily), so none loads inside a graph capture.
    masked_ = {"search_select_masked", "selection, predicated", registersOf(selectKernel<Game, true, false>), kThreadsPerBlock,
               theoreticalOccupancyOf(selectKernel<Game, true, false>)};
    branchy_ = {"search_select_branchy", "selection, branching", registersOf(selectKernel<Game, false, false>), kThreadsPerBlock,
                theoreticalOccupancyOf(selectKernel<Game, false, false>)};
    expand_ = {"search_expand_backup", "expansion and backup", registersOf(expandKernel<Game, false>), kThreadsPerBlock,
               theoreticalOccupancyOf(expandKernel<Game, false>)};
    registersOf(selectKernel<Game, true, true>);
    registersOf(selectKernel<Game, false, true>);
    registersOf(expandKernel<Game, true>);
    registersOf(expandSelectKernel<Game, true, false>);
    registersOf(expandSelectKernel<Game, false, false>);
    registersOf(expandSelectKernel<Game, true, true>);
    registersOf(expandSelectKernel<Game, false, true>);
    registersOf(resetKernel<Game>);
    registersOf(playKernel<Game>);
    registersOf(encodeRootsKernel<Game>);
    registersOf(expandRootsKernel<Game>);
    registersOf(finishRootsKernel<Game>);
    registersOf(rootStatisticsKernel<Game>);
    registersOf(hashedKernel<Game>);
    registersOf(gatherTreeKernel);
    registersOf(recordPlayKernel<Game>);
    registersOf(placeEndedKernel);
    registersOf(writeEndedKernel<Game>);
  }

  int actions() const override { return Game::kActions; }
  int observationSize() const override { return Game::kObsSize; }
  std::size_t stateBytes() const override { return sizeof(typename Game::State); }

  void resetGames(const DeviceSearchBuffers& b, int count, CUstream s) const override {
    const int n = count < 0 ? b.games : count;
    resetKernel<Game><<<blocksFor(n), kThreadsPerBlock, 0, runtimeStream(s)>>>(contextOf<Game>(b), count < 0 ? nullptr : b.moveGames, n);
    checkLaunch("search_reset");
  }
  void playMoves(const DeviceSearchBuffers& b, int count, CUstream s) const override {
    playKernel<Game><<<blocksFor(count), kThreadsPerBlock, 0, runtimeStream(s)>>>(contextOf<Game>(b), b.moveGames, b.moveActions, count);
    checkLaunch("search_play");
  }
  void encodeRoots(const DeviceSearchBuffers& b, CUstream s) const override {
    encodeRootsKernel<Game><<<blocksFor(b.games), kThreadsPerBlock, 0, runtimeStream(s)>>>(contextOf<Game>(b), b.listed);
    checkLaunch("search_encode_roots");
  }
  void expandRoots(const DeviceSearchBuffers& b, CUstream s) const override {
    expandRootsKernel<Game><<<blocksFor(b.games), kThreadsPerBlock, 0, runtimeStream(s)>>>(contextOf<Game>(b));
    checkLaunch("search_expand_roots");
  }
  void selectLeaves(const DeviceSearchBuffers& b, bool masked, bool instrument, CUstream s) const override {
    const auto c = contextOf<Game>(b);
    const auto grid = blocksFor(b.games);
    auto stream = runtimeStream(s);
    if (masked && instrument) selectKernel<Game, true, true><<<grid, kThreadsPerBlock, 0, stream>>>(c, b.select);
    else if (masked) selectKernel<Game, true, false><<<grid, kThreadsPerBlock, 0, stream>>>(c, b.select);
    else if (instrument) selectKernel<Game, false, true><<<grid, kThreadsPerBlock, 0, stream>>>(c, b.select);
    else selectKernel<Game, false, false><<<grid, kThreadsPerBlock, 0, stream>>>(c, b.select);
    checkLaunch(masked ? "search_select_masked" : "search_select_branchy");
  }
  void expandLeaves(const DeviceSearchBuffers& b, bool instrument, CUstream s) const override {
    const auto c = contextOf<Game>(b);
    if (instrument) expandKernel<Game, true><<<blocksFor(b.games), kThreadsPerBlock, 0, runtimeStream(s)>>>(c, b.expand);
    else expandKernel<Game, false><<<blocksFor(b.games), kThreadsPerBlock, 0, runtimeStream(s)>>>(c, b.expand);
    checkLaunch("search_expand_backup");
  }
  void expandThenSelect(const DeviceSearchBuffers& b, bool masked, bool instrument, CUstream s) const override {
    const auto c = contextOf<Game>(b);
    const auto grid = blocksFor(b.games);
    auto stream = runtimeStream(s);
    if (masked && instrument) expandSelectKernel<Game, true, true><<<grid, kThreadsPerBlock, 0, stream>>>(c, b.expand, b.select);
    else if (masked) expandSelectKernel<Game, true, false><<<grid, kThreadsPerBlock, 0, stream>>>(c, b.expand, b.select);
    else if (instrument) expandSelectKernel<Game, false, true><<<grid, kThreadsPerBlock, 0, stream>>>(c, b.expand, b.select);
    else expandSelectKernel<Game, false, false><<<grid, kThreadsPerBlock, 0, stream>>>(c, b.expand, b.select);
    checkLaunch("search_expand_select");
  }
  void finishRoots(const DeviceSearchBuffers& b, CUstream s) const override {
    finishRootsKernel<Game><<<blocksFor(b.games), kThreadsPerBlock, 0, runtimeStream(s)>>>(contextOf<Game>(b));
    checkLaunch("search_finish_roots");
  }
  void rootStatistics(const DeviceSearchBuffers& b, CUstream s) const override {
    rootStatisticsKernel<Game><<<blocksFor(b.games), kThreadsPerBlock, 0, runtimeStream(s)>>>(contextOf<Game>(b));
    checkLaunch("search_root_stats");
  }
  int maxMoves() const override { return Game::kMaxMoves; }
  void recordAndPlay(const DeviceSearchBuffers& b, const SelfPlayBuffers& sp, CUstream s) const override {
    const auto c = contextOf<Game>(b);
    auto stream = runtimeStream(s);
    recordPlayKernel<Game><<<blocksFor(b.games), kThreadsPerBlock, 0, stream>>>(c, sp);
    checkLaunch("search_record_play");
    placeEndedKernel<<<1, kPlaceThreads, 0, stream>>>(sp, b.games);
    checkLaunch("search_place_ended");
    writeEndedKernel<Game><<<b.games, kThreadsPerBlock, 0, stream>>>(c, sp);
    checkLaunch("search_write_ended");
  }
  void gatherTree(const DeviceSearchBuffers& b, int game, void* out, CUstream s) const override {
    gatherTreeKernel<<<(b.trees.budget + 127) / 128, 128, 0, runtimeStream(s)>>>(b.trees.main, game, b.games, b.trees.budget, static_cast<unsigned char*>(out));
    checkLaunch("search_gather_tree");
  }
  void hashedEvaluate(const DeviceSearchBuffers& b, float* logits, float* values, CUstream s) const override {
    const int rows = b.games * b.k;
    hashedKernel<Game><<<(rows + 127) / 128, 128, 0, runtimeStream(s)>>>(b.obs, logits, values, rows);
    checkLaunch("search_hashed_evaluate");
  }

  SearchKernelInfo selectInfo(bool masked) const override { return masked ? masked_ : branchy_; }
  SearchKernelInfo expandInfo() const override { return expand_; }

 private:
  SearchKernelInfo masked_, branchy_, expand_;
};

}  // namespace

const SearchKernels* searchKernels(const std::string& environment) {
  if (environment == "tictactoe") {
    static const GameKernels<TicTacToe> kernels;
    return &kernels;
  }
  if (environment == "connect4") {
    static const GameKernels<Connect4> kernels;
    return &kernels;
  }
  return nullptr;
}

}  // namespace cas::gpu::search
