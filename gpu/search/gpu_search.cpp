#include "gpu/search/gpu_search.hpp"

#include <algorithm>
#include <cstring>
#include <map>
#include <numeric>
#include <tuple>

#include "core/ir/graph.hpp"
#include "gpu/cuda_check.hpp"
#include "gpu/cuda_program.hpp"
#include "gpu/pinned_buffer.hpp"
#include "gpu/search/device_replay.hpp"
#include "gpu/search/device_sunburst.hpp"
#include "gpu/search/search_launch.hpp"

namespace cas::gpu {
namespace {

using namespace cas::gpu::search;
using cas::search::LeafEvaluator;
using cas::search::RootStats;
using cas::search::SearchConfig;
using cas::search::SearchMetrics;
using cas::search::SelectionKernel;

template <typename T>
T* devicePointer(CUdeviceptr p) {
  return reinterpret_cast<T*>(p);
}

class DeviceSearch final : public cas::search::SelfPlaySearch {
 public:
  DeviceSearch(const cas::search::SearchSetup& setup, const SearchKernels& kernels, std::shared_ptr<DeviceRuntime> runtime, DeviceProgram* network)
      : setup_(setup), config_(setup.config), kernels_(kernels), rt_(std::move(runtime)), network_(network),
        mirror_(env::makeBoardGames(setup.environment, setup.games)),
        staging_(rt_->context, stagingBytes(setup.games)),
        statsHost_(rt_->context, std::size_t(setup.games) * sizeof(RootOut)) {
    const int games = setup.games, a = kernels.actions();
    blocks_ = std::max(1, (config_.nodeBudget - 1) / a);
    budget_ = 1 + blocks_ * a;
    maxLeaves_ = std::max(1, config_.leavesPerStep);
    for (int g = 0; g < games; ++g) mirror_->reset(g);
    ContextScope scope(rt_->context);
    try {
      allocate();
      CAS_CU(cuEventCreate(&staged_, CU_EVENT_DISABLE_TIMING));
      for (CUevent* e : {&searchStart_, &searchEnd_, &networkStart_, &networkEnd_}) CAS_CU(cuEventCreate(e, CU_EVENT_DEFAULT));
      kernels_.resetGames(buffers(), -1, rt_->compute);
      CAS_CU(cuStreamSynchronize(rt_->compute));
    } catch (...) {
      release();
      throw;
    }
  }

  ~DeviceSearch() override {
    cuCtxPushCurrent(rt_->context);
    cuStreamSynchronize(rt_->compute);
    release();
    CUcontext c;
    cuCtxPopCurrent(&c);
  }

  std::string device() const override { return "cuda"; }
  int games() const override { return setup_.games; }
  const env::BoardGames& positions() const override { return *mirror_; }
  const SearchConfig& config() const override { return config_; }

  std::optional<std::string> setConfig(const SearchConfig& c) override {
    if (c.leavesPerStep > maxLeaves_)
      return "search.leaves_per_step = " + std::to_string(c.leavesPerStep) + " needs a restart: this run's device search holds " +
             std::to_string(maxLeaves_) + " leaves per game in its network batch";
    const int budget = config_.nodeBudget;
    config_ = c;
    config_.nodeBudget = budget;
    return std::nullopt;
  }

  void search(const std::vector<int>& games, int simulations) override {
    if (simulations < 0) simulations = config_.simulations;
    lastSearched_ = games;
    if (games.empty()) return;
    ContextScope scope(rt_->context);
    foldTimings();
    waitForStaging();
    DeviceSearchParams& p = *staging_.as<DeviceSearchParams>();
    p = paramsFor(simulations);
    std::uint8_t* listed = listedHost();
    std::memset(listed, 0, std::size_t(setup_.games));
    int live = 0;
    for (int g : games) {
      checkGame(g);
      listed[g] = 1;
      live += !mirror_->terminal(g);
    }
    metrics_.simulations += std::int64_t(live) * simulations;
    CAS_CU(cuMemcpyHtoDAsync(params_, &p, sizeof p, rt_->compute));
    CAS_CU(cuMemcpyHtoDAsync(listed_, listed, std::size_t(setup_.games), rt_->compute));
    CAS_CU(cuEventRecord(staged_, rt_->compute));
    stagingPending_ = true;
    if (network_) network_->flushInputs();
    const int k = std::max(1, config_.leavesPerStep);
    const int steps = (simulations + k - 1) / k;
    CAS_CU(cuEventRecord(searchStart_, rt_->compute));
    const Graphs& graphs = graphsFor(k, config_.selection == SelectionKernel::Masked, config_.instrument);
    CAS_CU(cuGraphLaunch(graphs.root, rt_->compute));
    for (int i = 0; i < steps; ++i) CAS_CU(cuGraphLaunch(graphs.step, rt_->compute));
    kernels_.finishRoots(buffers(k), rt_->compute);
    CAS_CU(cuEventRecord(searchEnd_, rt_->compute));
    pendingSteps_ = steps;
  }

  std::vector<RootStats> rootStats(const std::vector<int>& games) const override {
    std::vector<RootStats> out;
    if (games.empty()) return out;
    for (int g : games) checkGame(g);
    const auto [lo, hi] = std::minmax_element(games.begin(), games.end());
    ContextScope scope(rt_->context);
    kernels_.rootStatistics(buffers(), rt_->compute);
    RootOut* host = statsHost_.as<RootOut>();
    CAS_CU(cuMemcpyDtoHAsync(host + *lo, stats_ + std::uint64_t(*lo) * sizeof(RootOut), std::size_t(*hi - *lo + 1) * sizeof(RootOut), rt_->compute));
    waitForCompute();
    const int a = kernels_.actions();
    out.reserve(games.size());
    for (int g : games) {
      const RootOut& r = host[g];
      RootStats s;
      s.visits.assign(r.visits, r.visits + a);
      s.q.assign(r.q, r.q + a);
      s.prior.assign(r.prior, r.prior + a);
      s.policy.assign(r.policy, r.policy + a);
      s.pv.assign(r.pv, r.pv + r.pvLength);
      s.chosen = r.chosen;
      s.played = r.played;
      s.value = r.value;
      s.treeNodes = r.treeNodes;
      out.push_back(std::move(s));
    }
    return out;
  }

  void play(const std::vector<int>& games, const std::vector<int>& actions) override {
    if (games.size() != actions.size()) throw std::invalid_argument("play: one action per game");
    checkDistinct(games);
    for (size_t i = 0; i < games.size(); ++i) {
      if (!mirror_->legal(games[i], actions[i]))
        throw std::invalid_argument("move " + std::to_string(actions[i] + 1) + " is not legal in game " + std::to_string(games[i]));
    }
    sendMoves(games, &actions);
    for (size_t i = 0; i < games.size(); ++i) mirror_->play(games[i], actions[i]);
  }

  void resetGames(const std::vector<int>& games) override {
    checkDistinct(games);
    sendMoves(games, nullptr);
    for (int g : games) mirror_->reset(g);
  }

  // Three kernels on the compute stream, then one copy back of the moves: the positions stay.
  bool recordAndPlay(const std::vector<int>& games, cas::search::ReplayStore& store, std::vector<int>* played, std::vector<int>* ended) override {
    auto* replay = dynamic_cast<DeviceReplay*>(&store);
    if (!replay || replay->runtime() != rt_) return false;
    if (games != lastSearched_) throw std::invalid_argument("recordAndPlay needs the games of the last search, in the same order");
    ContextScope scope(rt_->context);
    if (!records_) {
      const auto games64 = std::uint64_t(setup_.games), moves = std::uint64_t(kernels_.maxMoves());
      const char* what = "self-play records (reduce train.parallel_games)";
      records_ = take(games64 * moves * kernels_.stateBytes(), what);
      recordPolicies_ = take(games64 * moves * std::uint64_t(kernels_.actions()) * 4, what);
      moveOut_ = take(games64 * sizeof(MoveOut), what);
      offsets_ = take(games64 * 8, what);
      moveOutHost_ = std::make_unique<PinnedBuffer>(rt_->context, std::size_t(games64) * sizeof(MoveOut));
    }
    const SelfPlayBuffers sp{devicePointer<void>(records_), devicePointer<float>(recordPolicies_), devicePointer<MoveOut>(moveOut_),
                             devicePointer<std::int64_t>(offsets_), replay->freshRegion()};
    replay->timer().begin(rt_->compute);
    kernels_.rootStatistics(buffers(), rt_->compute);
    kernels_.recordAndPlay(buffers(), sp, rt_->compute);
    replay->timer().end(rt_->compute);
    MoveOut* out = moveOutHost_->as<MoveOut>();
    CAS_CU(cuMemcpyDtoHAsync(out, moveOut_, std::size_t(setup_.games) * sizeof(MoveOut), rt_->compute));
    waitForCompute();
    std::int64_t rows = 0;
    for (int g : games) {  // the host copy follows along, and checks the device's rules agree
      const MoveOut m = out[g];
      if (m.played < 0 || !mirror_->legal(g, m.played)) throw std::logic_error("the device search played an illegal move in game " + std::to_string(g));
      mirror_->play(g, m.played);
      played->push_back(m.played);
      if ((m.endedLength > 0) != mirror_->terminal(g) || (m.endedLength > 0 && m.endedLength != mirror_->moveCount(g)))
        throw std::logic_error("the device and host rules disagree about the end of game " + std::to_string(g));
      if (m.endedLength == 0) continue;
      rows += m.endedLength;
      ended->push_back(g);
      mirror_->reset(g);
    }
    replay->addedOnDevice(rows);
    return true;
  }

  std::unique_ptr<cas::search::DeviceSunburst> deviceSunburst() override {
    return search::makeDeviceSunburst(rt_, budget_, [this](int game) {
      checkGame(game);
      kernels_.gatherTree(buffers(), game, devicePointer<void>(snapshot_), rt_->compute);
      return snapshot_;
    });
  }

  cas::search::Tree treeSnapshot(int game) const override {
    checkGame(game);
    cas::search::Tree t(kernels_.actions(), config_.nodeBudget);
    GameSlot slot{};
    std::vector<std::int32_t> freeBlocks(static_cast<std::size_t>(blocks_));
    ContextScope scope(rt_->context);
    kernels_.gatherTree(buffers(), game, devicePointer<void>(snapshot_), rt_->compute);
    CAS_CU(cuMemcpyDtoHAsync(&slot, slots_ + std::uint64_t(game) * sizeof(GameSlot), sizeof slot, rt_->compute));
    CAS_CU(cuMemcpyDtoHAsync(freeBlocks.data(), freeBlocks_ + std::uint64_t(game) * std::uint64_t(blocks_) * 4, freeBlocks.size() * 4, rt_->compute));
    CAS_CU(cuStreamSynchronize(rt_->compute));
    // Slots from the next never-used block on hold nothing the tree reaches: only the prefix
    // before it crosses to the host (a few thousand nodes of a budget of millions, early on).
    const auto used = std::size_t(std::clamp(slot.nextBlock, 1, budget_));
    CUdeviceptr from = snapshot_;
    auto copy = [&](auto& vec) {
      using T = typename std::decay_t<decltype(vec)>::value_type;
      CAS_CU(cuMemcpyDtoHAsync(vec.data(), from, used * sizeof(T), rt_->compute));
      from += std::uint64_t(budget_) * sizeof(T);
    };
#define CAS_TREE_COPY_OUT(name, type, root) copy(t.name);
    CAS_TREE_FIELDS(CAS_TREE_COPY_OUT)
#undef CAS_TREE_COPY_OUT
    CAS_CU(cuStreamSynchronize(rt_->compute));
    freeBlocks.resize(std::size_t(std::clamp(slot.freeCount, 0, blocks_)));
    t.adopt({slot.nextBlock, slot.inUse, slot.recycled, std::move(freeBlocks)});
    return t;
  }

  SearchMetrics metrics() const override {
    ContextScope scope(rt_->context);
    foldTimings();
    std::vector<GameSlot> slots(std::size_t(setup_.games));
    CAS_CU(cuMemcpyDtoHAsync(slots.data(), slots_, slots.size() * sizeof(GameSlot), rt_->compute));
    CAS_CU(cuStreamSynchronize(rt_->compute));
    SearchMetrics m = metrics_;
    for (const GameSlot& s : slots) {
      m.evaluations += s.evaluations;
      m.recycledNodes += s.recycled;
    }
    return m;
  }

  std::vector<exec::KernelReport> profileKernels(int steps) override;

  std::vector<exec::RuntimeStat> runtimeStats() const override {
    const double treeBytes = double(setup_.games) * double(budget_) * double(bytesPerNode());
    return {{QT_TRANSLATE_NOOP("cas::RuntimeStats", "search"),
             QT_TRANSLATE_NOOP("cas::RuntimeStats", "device trees: %1 games x %2 nodes (%3 with the rerooting copy), up to %4 leaves per game per step"),
             {std::to_string(setup_.games), std::to_string(budget_), formatBytes(std::uint64_t(treeBytes)), std::to_string(maxLeaves_)}},
            {QT_TRANSLATE_NOOP("cas::RuntimeStats", "search evaluator"), evaluatorName(), {}},
            {QT_TRANSLATE_NOOP("cas::RuntimeStats", "search graphs"),
             QT_TRANSLATE_NOOP("cas::RuntimeStats", "%1 captured (a root and a step graph per k, selection kernel and instrumentation)"),
             {std::to_string(2 * graphs_.size())}},
            rt_->pool.describe(),
            {QT_TRANSLATE_NOOP("cas::RuntimeStats", "pool device allocations"), "%1", {std::to_string(rt_->pool.stats().deviceAllocations)}}};
  }

 private:
  static constexpr std::size_t kFields = std::size_t(cas::search::TreeField::virtualLoss) + 1;
  static std::size_t bytesPerNode() { return 2 * cas::search::kTreeNodeBytes + 4; }  // with the spare copy and work

  std::string evaluatorName() const {
    switch (setup_.evaluator.kind) {
      case LeafEvaluator::Kind::Network: return QT_TRANSLATE_NOOP("cas::RuntimeStats", "the compiled network (its input and output buffers are the search's rows)");
      case LeafEvaluator::Kind::Hashed: return QT_TRANSLATE_NOOP("cas::RuntimeStats", "hashed (test evaluator, search_math.hpp)");
      case LeafEvaluator::Kind::Uniform: return QT_TRANSLATE_NOOP("cas::RuntimeStats", "uniform priors, value 0 (no network)");
    }
    return {};
  }

  void checkGame(int g) const {
    if (g < 0 || g >= setup_.games) throw std::out_of_range("game " + std::to_string(g) + " is not in this search (0-" + std::to_string(setup_.games - 1) + ")");
  }

  // One thread per listed game changes its tree: a game listed twice would race.
  void checkDistinct(const std::vector<int>& games) const {
    std::vector<bool> seen(std::size_t(setup_.games), false);
    for (int g : games) {
      checkGame(g);
      if (seen[std::size_t(g)]) throw std::invalid_argument("game " + std::to_string(g) + " is listed twice");
      seen[std::size_t(g)] = true;
    }
  }

  DeviceSearchParams paramsFor(int simulations) const {
    DeviceSearchParams p{};
    p.cPuct = config_.cPuct;
    p.dirichletAlpha = config_.dirichletAlpha;
    p.dirichletFraction = config_.dirichletFraction;
    p.virtualLoss = config_.virtualLoss;
    p.temperature = config_.temperature;
    p.simulations = config_.simulations;
    p.callSimulations = simulations;
    p.gumbel = config_.gumbel;
    p.gumbelArms = config_.gumbelArms;
    p.subtreeReuse = config_.subtreeReuse;
    p.temperatureMoves = config_.temperatureMoves;
    p.seed = setup_.seed;
    return p;
  }

  // The pinned staging area: params | listed [games, padded to 4 bytes] | move games [games] |
  // move actions [games].
  static std::size_t listedBytes(int games) { return (std::size_t(games) + 3) / 4 * 4; }
  static std::size_t stagingBytes(int games) { return sizeof(DeviceSearchParams) + listedBytes(games) + 2 * std::size_t(games) * sizeof(std::int32_t); }
  std::uint8_t* listedHost() const { return staging_.as<std::uint8_t>() + sizeof(DeviceSearchParams); }
  std::int32_t* moveGamesHost() const { return reinterpret_cast<std::int32_t*>(listedHost() + listedBytes(setup_.games)); }
  std::int32_t* moveActionsHost() const { return moveGamesHost() + setup_.games; }

  // The host's waits for the device, counted when the work had not finished (SearchMetrics).
  void waitForEvent(CUevent e) const {
    const CUresult ready = cuEventQuery(e);
    if (ready == CUDA_SUCCESS) return;
    if (ready != CUDA_ERROR_NOT_READY) CAS_CU(ready);
    ++metrics_.hostWaits;
    CAS_CU(cuEventSynchronize(e));
  }
  void waitForCompute() const {
    const CUresult ready = cuStreamQuery(rt_->compute);
    if (ready == CUDA_SUCCESS) return;
    if (ready != CUDA_ERROR_NOT_READY) CAS_CU(ready);
    ++metrics_.hostWaits;
    CAS_CU(cuStreamSynchronize(rt_->compute));
  }

  void waitForStaging() const {
    if (stagingPending_) waitForEvent(staged_);
    stagingPending_ = false;
  }

  // Uploads the moves (or games to reset) with the current parameters (playMove reads
  // subtree_reuse), then launches the kernel.
  void sendMoves(const std::vector<int>& games, const std::vector<int>* actions) {
    if (games.empty()) return;
    ContextScope scope(rt_->context);
    waitForStaging();
    DeviceSearchParams& p = *staging_.as<DeviceSearchParams>();
    p = paramsFor(config_.simulations);
    CAS_CU(cuMemcpyHtoDAsync(params_, &p, sizeof p, rt_->compute));
    std::copy(games.begin(), games.end(), moveGamesHost());
    CAS_CU(cuMemcpyHtoDAsync(moveGames_, moveGamesHost(), games.size() * 4, rt_->compute));
    if (actions) {
      std::copy(actions->begin(), actions->end(), moveActionsHost());
      CAS_CU(cuMemcpyHtoDAsync(moveActions_, moveActionsHost(), games.size() * 4, rt_->compute));
    }
    CAS_CU(cuEventRecord(staged_, rt_->compute));
    stagingPending_ = true;
    if (actions) kernels_.playMoves(buffers(), int(games.size()), rt_->compute);
    else kernels_.resetGames(buffers(), int(games.size()), rt_->compute);
  }

  // Adds the last search's time (and its network's share, from the last step's events) to the
  // metrics once it has finished.
  void foldTimings() const {
    if (pendingSteps_ < 0) return;
    waitForEvent(searchEnd_);
    float total = 0, network = 0;
    CAS_CU(cuEventElapsedTime(&total, searchStart_, searchEnd_));
    if (pendingSteps_ == 0 || cuEventElapsedTime(&network, networkStart_, networkEnd_) != CUDA_SUCCESS) network = 0;
    const double inference = std::min(double(total), double(network) * (pendingSteps_ + 1)) / 1000.0;
    metrics_.inferenceSeconds += inference;
    metrics_.searchSeconds += double(total) / 1000.0 - inference;
    pendingSteps_ = -1;
  }

  DeviceSearchBuffers buffers(int k = -1) const {
    DeviceSearchBuffers b{};
    b.trees.main = fields(field_);
    b.trees.spare = fields(spare_);
    b.trees.work = devicePointer<std::int32_t>(work_);
    b.trees.freeBlocks = devicePointer<std::int32_t>(freeBlocks_);
    b.trees.gameSlots = devicePointer<GameSlot>(slots_);
    b.trees.budget = budget_;
    b.trees.blocks = blocks_;
    b.trees.actions = kernels_.actions();
    b.trees.games = setup_.games;
    b.roots = devicePointer<void>(roots_);
    b.pending = devicePointer<Pending>(pending_);
    b.obs = devicePointer<float>(obs_);
    b.logits = devicePointer<const float>(logits_);
    b.values = devicePointer<const float>(values_);
    b.params = devicePointer<const DeviceSearchParams>(params_);
    b.stats = devicePointer<RootOut>(stats_);
    b.listed = devicePointer<const std::uint8_t>(listed_);
    b.moveGames = devicePointer<const std::int32_t>(moveGames_);
    b.moveActions = devicePointer<const std::int32_t>(moveActions_);
    b.select = {devicePointer<KernelCounters>(counters_), devicePointer<BlockRecord>(blockRecords_)};
    b.expand = {devicePointer<KernelCounters>(counters_) + 1, devicePointer<BlockRecord>(blockRecords_) + SearchKernels::blocksFor(setup_.games)};
    b.games = setup_.games;
    b.k = k > 0 ? k : std::max(1, config_.leavesPerStep);
    return b;
  }

  // The arrays of one copy of the trees, a pointer per field in tree_fields.hpp's order.
  static TreeFields fields(const CUdeviceptr (&f)[kFields]) {
    TreeFields t;
#define CAS_TREE_POINT(name, type, root) t.name = devicePointer<type>(f[std::size_t(cas::search::TreeField::name)]);
    CAS_TREE_FIELDS(CAS_TREE_POINT)
#undef CAS_TREE_POINT
    return t;
  }

  CUdeviceptr take(std::uint64_t bytes, const std::string& what) {
    const CUdeviceptr p = rt_->pool.allocate(std::max<std::uint64_t>(bytes, 4), "the device search's " + what);
    owned_.push_back(p);
    return p;
  }

  void allocate() {
    const auto games = std::uint64_t(setup_.games), nodes = games * std::uint64_t(budget_);
    const auto rows = games * std::uint64_t(maxLeaves_);
#define CAS_TREE_TAKE(name, type, root)                                                                          \
  field_[std::size_t(cas::search::TreeField::name)] = take(nodes * sizeof(type), "tree field " #name);          \
  spare_[std::size_t(cas::search::TreeField::name)] = take(nodes * sizeof(type), "rerooting copy of " #name);
    CAS_TREE_FIELDS(CAS_TREE_TAKE)
#undef CAS_TREE_TAKE
    work_ = take(nodes * 4, "work stacks");
    snapshot_ = take(std::uint64_t(budget_) * cas::search::kTreeNodeBytes, "snapshot copy");
    freeBlocks_ = take(games * std::uint64_t(blocks_) * 4, "free lists");
    slots_ = take(games * sizeof(GameSlot), "game slots");
    CAS_CU(cuMemsetD8Async(slots_, 0, games * sizeof(GameSlot), rt_->compute));
    roots_ = take(games * kernels_.stateBytes(), "root positions");
    pending_ = take(rows * sizeof(Pending), "pending leaves");
    stats_ = take(games * sizeof(RootOut), "root statistics");
    params_ = take(sizeof(DeviceSearchParams), "parameters");
    listed_ = take(games, "game list");
    moveGames_ = take(games * 4, "move list");
    moveActions_ = take(games * 4, "move list");
    counters_ = take(2 * sizeof(KernelCounters), "instrumentation counters");
    blockRecords_ = take(2 * std::uint64_t(SearchKernels::blocksFor(setup_.games)) * sizeof(BlockRecord), "SM timeline");
    CAS_CU(cuMemsetD8Async(counters_, 0, 2 * sizeof(KernelCounters), rt_->compute));
    const std::uint64_t actions = std::uint64_t(kernels_.actions()), obsSize = std::uint64_t(kernels_.observationSize());
    if (network_) {
      obs_ = network_->inputAddress("obs");
      logits_ = network_->outputAddress("logits");
      values_ = network_->outputAddress("value");
    } else {
      obs_ = take(rows * obsSize * 4, "observations");
      CAS_CU(cuMemsetD32Async(obs_, 0, rows * obsSize, rt_->compute));
      logits_ = take(rows * actions * 4, "logits");
      values_ = take(rows * 4, "values");
      CAS_CU(cuMemsetD32Async(logits_, 0, rows * actions, rt_->compute));
      CAS_CU(cuMemsetD32Async(values_, 0, rows, rt_->compute));
    }
  }

  void release() {
    for (auto& [key, g] : graphs_)
      for (CUgraphExec exec : {g.root, g.step})
        if (exec) cuGraphExecDestroy(exec);
    graphs_.clear();
    for (CUevent e : {staged_, searchStart_, searchEnd_, networkStart_, networkEnd_})
      if (e) cuEventDestroy(e);
    for (CUdeviceptr p : owned_) rt_->pool.release(p);
    owned_.clear();
  }

  // The evaluator's work on the compute stream (inside a capture, or launched by itself).
  void evaluate(const DeviceSearchBuffers& b) const {
    switch (setup_.evaluator.kind) {
      case LeafEvaluator::Kind::Network: network_->recordOnCompute(); break;
      case LeafEvaluator::Kind::Hashed: kernels_.hashedEvaluate(b, devicePointer<float>(logits_), devicePointer<float>(values_), rt_->compute); break;
      case LeafEvaluator::Kind::Uniform: break;
    }
  }

  template <typename Record>
  CUgraphExec capture(Record&& record) {
    CUstream s = rt_->compute;
    CAS_CU(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
    try {
      record();
    } catch (...) {
      CUgraph broken = nullptr;
      cuStreamEndCapture(s, &broken);
      if (broken) cuGraphDestroy(broken);
      throw;
    }
    CUgraph graph = nullptr;
    CAS_CU(cuStreamEndCapture(s, &graph));
    CUgraphExec exec = nullptr;
    const CUresult r = cuGraphInstantiate(&exec, graph, 0);
    cuGraphDestroy(graph);
    CAS_CU(r);
    return exec;
  }

  // The graphs of one (k, selection kernel, instrumentation). The root graph ends with the first
  // step's selection; each step graph replay evaluates a step's leaves, expands them and selects
  // the next step's (after the last step that selection finds nothing to do).
  struct Graphs {
    CUgraphExec root = nullptr, step = nullptr;
  };
  const Graphs& graphsFor(int k, bool masked, bool instrument) {
    Graphs& g = graphs_[{k, int(masked) + 2 * int(instrument)}];
    if (g.root) return g;
    const DeviceSearchBuffers b = buffers(k);
    g.root = capture([&] {
      kernels_.encodeRoots(b, rt_->compute);
      evaluate(b);
      kernels_.expandRoots(b, rt_->compute);
      kernels_.selectLeaves(b, masked, instrument, rt_->compute);
    });
    g.step = capture([&] {
      // External records: event nodes in the graph, read after replays for the network's time.
      CAS_CU(cuEventRecordWithFlags(networkStart_, rt_->compute, CU_EVENT_RECORD_EXTERNAL));
      evaluate(b);
      CAS_CU(cuEventRecordWithFlags(networkEnd_, rt_->compute, CU_EVENT_RECORD_EXTERNAL));
      kernels_.expandThenSelect(b, masked, instrument, rt_->compute);
    });
    return g;
  }

  cas::search::SearchSetup setup_;
  SearchConfig config_;
  const SearchKernels& kernels_;
  std::shared_ptr<DeviceRuntime> rt_;
  DeviceProgram* network_;
  std::unique_ptr<env::BoardGames> mirror_;
  int blocks_ = 0, budget_ = 0, maxLeaves_ = 1;
  CUdeviceptr field_[kFields] = {}, spare_[kFields] = {};  // by TreeField
  CUdeviceptr work_ = 0, snapshot_ = 0, freeBlocks_ = 0, slots_ = 0, roots_ = 0, pending_ = 0, stats_ = 0, params_ = 0, listed_ = 0;
  CUdeviceptr moveGames_ = 0, moveActions_ = 0, counters_ = 0, blockRecords_ = 0, obs_ = 0, logits_ = 0, values_ = 0;
  // Self-play's records (SelfPlayBuffers), made on the first recordAndPlay.
  CUdeviceptr records_ = 0, recordPolicies_ = 0, moveOut_ = 0, offsets_ = 0;
  std::unique_ptr<PinnedBuffer> moveOutHost_;
  std::vector<int> lastSearched_;
  std::vector<CUdeviceptr> owned_;
  PinnedBuffer staging_, statsHost_;
  CUevent staged_ = nullptr, searchStart_ = nullptr, searchEnd_ = nullptr, networkStart_ = nullptr, networkEnd_ = nullptr;
  mutable bool stagingPending_ = false;
  mutable int pendingSteps_ = -1;
  mutable SearchMetrics metrics_;
  std::map<std::pair<int, int>, Graphs> graphs_;
};

// A search of `steps` steps in every game, kernel by kernel between events, instrumented.
std::vector<exec::KernelReport> DeviceSearch::profileKernels(int steps) {
  steps = std::max(1, steps);
  const int k = std::max(1, config_.leavesPerStep);
  ContextScope scope(rt_->context);
  foldTimings();
  waitForStaging();
  DeviceSearchParams& p = *staging_.as<DeviceSearchParams>();
  p = paramsFor(steps * k);
  std::memset(listedHost(), 1, std::size_t(setup_.games));
  CAS_CU(cuMemcpyHtoDAsync(params_, &p, sizeof p, rt_->compute));
  CAS_CU(cuMemcpyHtoDAsync(listed_, listedHost(), std::size_t(setup_.games), rt_->compute));
  CAS_CU(cuEventRecord(staged_, rt_->compute));
  stagingPending_ = true;
  CAS_CU(cuMemsetD8Async(counters_, 0, 2 * sizeof(KernelCounters), rt_->compute));
  if (network_) network_->flushInputs();
  const DeviceSearchBuffers b = buffers(k);
  std::vector<CUevent> events(std::size_t(7 + 4 * steps));
  for (CUevent& e : events) CAS_CU(cuEventCreate(&e, CU_EVENT_DEFAULT));
  size_t next = 0;
  auto mark = [&] { CAS_CU(cuEventRecord(events[next++], rt_->compute)); };
  mark();
  kernels_.encodeRoots(b, rt_->compute);
  mark();
  evaluate(b);
  mark();
  kernels_.expandRoots(b, rt_->compute);
  mark();
  for (int i = 0; i < steps; ++i) {
    kernels_.selectLeaves(b, config_.selection == SelectionKernel::Masked, true, rt_->compute);
    mark();
    evaluate(b);
    mark();
    kernels_.expandLeaves(b, true, rt_->compute);
    mark();
    if (i + 1 < steps) mark();
  }
  kernels_.finishRoots(b, rt_->compute);
  mark();
  kernels_.rootStatistics(b, rt_->compute);
  mark();
  CAS_CU(cuStreamSynchronize(rt_->compute));
  auto elapsedUs = [&](size_t from, size_t to) {
    float ms = 0;
    CAS_CU(cuEventElapsedTime(&ms, events[from], events[to]));
    return double(ms) * 1000.0;
  };
  double select = 0, network = 0, expand = 0;
  for (int i = 0; i < steps; ++i) {
    const size_t base = 3 + size_t(i) * 4;  // the step's start event
    select += elapsedUs(base, base + 1);
    network += elapsedUs(base + 1, base + 2);
    expand += elapsedUs(base + 2, base + 3);
  }
  const size_t last = next - 1;
  const double encodeUs = elapsedUs(0, 1), rootNetworkUs = elapsedUs(1, 2), expandRootsUs = elapsedUs(2, 3);
  const double finishUs = elapsedUs(last - 2, last - 1), statsUs = elapsedUs(last - 1, last);
  for (CUevent e : events) cuEventDestroy(e);
  metrics_.simulations += std::int64_t(steps) * k * setup_.games;

  KernelCounters counters[2];
  const int blocks = SearchKernels::blocksFor(setup_.games);
  std::vector<BlockRecord> records(2 * std::size_t(blocks));
  CAS_CU(cuMemcpyDtoHAsync(counters, counters_, sizeof counters, rt_->compute));
  CAS_CU(cuMemcpyDtoHAsync(records.data(), blockRecords_, records.size() * sizeof(BlockRecord), rt_->compute));
  CAS_CU(cuStreamSynchronize(rt_->compute));

  const std::string launch = "grid " + std::to_string(blocks) + " x block " + std::to_string(SearchKernels::kThreadsPerBlock);
  auto kernel = [&](const std::string& name, const std::string& label, double us) {
    exec::KernelReport r;
    r.name = name;
    r.kind = "search";
    r.label = label;
    r.source = "gpu/search/search_kernels.cu";
    r.launch = launch;
    r.timeUs = us;
    return r;
  };
  auto instrumented = [&](exec::KernelReport r, const SearchKernelInfo& info, const KernelCounters& c, const BlockRecord* blocksOf) {
    r.registers = info.registers;
    r.theoreticalOccupancy = info.theoreticalOccupancy;
    if (c.warpSteps > 0) r.simtEfficiency = double(c.activeLanes) / (32.0 * double(c.warpSteps));
    std::uint64_t origin = blocksOf[0].start;
    for (int i = 0; i < blocks; ++i) origin = std::min(origin, blocksOf[i].start);
    for (int i = 0; i < blocks; ++i)
      r.timeline.push_back({int(blocksOf[i].sm), double(blocksOf[i].start - origin) / 1000.0, double(blocksOf[i].end - origin) / 1000.0});
    return r;
  };
  const SearchKernelInfo selectInfo = kernels_.selectInfo(config_.selection == SelectionKernel::Masked);
  exec::KernelReport evaluator = kernel(network_ ? "network" : "search_hashed_evaluate", evaluatorName(), network / steps);
  evaluator.kind = network_ ? "program" : "search";
  if (network_) evaluator.source = "the compiled inference program (cuda-agent kernels shows its kernels)";
  exec::KernelReport rootEvaluator = evaluator;
  rootEvaluator.timeUs = rootNetworkUs;
  rootEvaluator.label += ", for the roots";
  return {kernel("search_encode_roots", "roots to evaluate, once per search", encodeUs),
          rootEvaluator,
          kernel("search_expand_roots", "root expansion and noise, once per search", expandRootsUs),
          instrumented(kernel(selectInfo.name, selectInfo.label + ", per step", select / steps), selectInfo, counters[0], records.data()),
          evaluator,
          instrumented(kernel("search_expand_backup", kernels_.expandInfo().label + ", per step", expand / steps), kernels_.expandInfo(), counters[1],
                       records.data() + blocks),
          kernel("search_finish_roots", "clean root priors, once per search", finishUs),
          kernel("search_root_stats", "root statistics, once per move", statsUs)};
}

}  // namespace

std::unique_ptr<cas::search::SelfPlaySearch> makeDeviceSearch(const cas::search::SearchSetup& setup, std::shared_ptr<DeviceRuntime> runtime, std::string* reason) {
  auto refuse = [&](const std::string& why) -> std::unique_ptr<cas::search::SelfPlaySearch> {
    *reason = why;
    return nullptr;
  };
  const SearchKernels* kernels = nullptr;
  try {
    ContextScope scope(runtime->context);  // the kernels' module loads into the runtime's context
    kernels = searchKernels(setup.environment);
  } catch (const std::exception& e) {
    return refuse(std::string("the device search's kernels did not load: ") + e.what());
  }
  if (!kernels) return refuse("the CUDA backend has no device rules for '" + setup.environment + "'");
  if (setup.games < 1) return refuse("a search needs at least one game");
  DeviceProgram* network = nullptr;
  const std::int64_t rows = std::int64_t(setup.games) * std::max(1, setup.config.leavesPerStep);
  if (setup.evaluator.kind == LeafEvaluator::Kind::Network) {
    network = dynamic_cast<DeviceProgram*>(setup.evaluator.network);
    if (!network) return refuse("the network was not compiled by the CUDA backend");
    if (network->runtime() != runtime) return refuse("the network was compiled for another device");
    const ir::Graph& g = network->graph();
    const ir::NodeId obs = g.findInput("obs"), logits = g.output("logits"), value = g.output("value");
    if (obs == ir::kNoNode || logits == ir::kNoNode || value == ir::kNoNode)
      return refuse("the network needs an input 'obs' and outputs 'logits' and 'value'");
    const std::int64_t batch = g.node(obs).shape.at(0);
    if (batch < rows)
      return refuse("the network's batch (" + std::to_string(batch) + ") is smaller than games x leaves per step (" + std::to_string(rows) + ")");
    if (ir::numel(g.node(obs).shape) != batch * kernels->observationSize() || ir::numel(g.node(logits).shape) != batch * kernels->actions() ||
        ir::numel(g.node(value).shape) != batch)
      return refuse("the network's input or output shapes do not fit '" + setup.environment + "'");
  }
  try {
    ContextScope scope(runtime->context);
    return std::make_unique<DeviceSearch>(setup, *kernels, std::move(runtime), network);
  } catch (const DeviceOutOfMemory& e) {
    // Not a reason to fall back to the CPU without a word: the run was sized for this device.
    throw DeviceOutOfMemory(std::string(e.what()) + "; reduce search.node_budget or train.parallel_games");
  } catch (const std::exception& e) {
    return refuse(std::string("the device search could not be set up: ") + e.what());
  }
}

}  // namespace cas::gpu
