// DeviceLearnedSearch: the host side of the device search over a learned model
// (gpu_learned_search.hpp says what runs where; learned_steps.cuh draws the device memory).
//
//   pinned staging:  LearnedParams | listed [games, padded to 4 bytes] | observations [games, O]
//   device:          tree fields [budget * games] x tree_fields.hpp, work, free lists, GameSlot
//                    and LearnedSlot [games], reward, latent, pending [games * k], parameters,
//                    game list, LearnedRootOut [games], one snapshot's gathered tree
//                    model rows: the programs' buffers (network) or the search's own (hashed)
//
// Thread-safety: one thread drives a search.
#include "gpu/search/gpu_learned_search.hpp"

#include <algorithm>
#include <cstring>
#include <map>
#include <stdexcept>

#include "core/ir/graph.hpp"
#include "gpu/cuda_check.hpp"
#include "gpu/cuda_program.hpp"
#include "gpu/pinned_buffer.hpp"
#include "gpu/search/learned_launch.hpp"

namespace cas::gpu {
namespace {

using namespace cas::gpu::search;
using cas::search::LearnedSearchConfig;
using cas::search::LearnedSearchMetrics;
using cas::search::LearnedSearchSetup;
using cas::search::RootStats;

template <typename T>
T* devicePointer(CUdeviceptr p) {
  return reinterpret_cast<T*>(p);
}

// The learned model's three programs (network), or none (the hashed model).
struct LearnedPrograms {
  DeviceProgram* represent = nullptr;
  DeviceProgram* recurrent = nullptr;
  DeviceProgram* predict = nullptr;
  bool network() const { return represent != nullptr; }
};

// Where the model's rows live (learned_steps.cuh: model rows).
struct ModelRows {
  CUdeviceptr observations = 0, rootStates = 0, predictStates = 0, rootLogits = 0, rootValues = 0;
  CUdeviceptr stateRows = 0, actionRows = 0, nextStates = 0, rewards = 0, logits = 0, values = 0;
};

class DeviceLearnedSearch final : public cas::search::LearnedSearch {
 public:
  DeviceLearnedSearch(const LearnedSearchSetup& setup, std::shared_ptr<DeviceRuntime> runtime, LearnedPrograms programs)
      : setup_(setup),
        config_(setup.config),
        rt_(std::move(runtime)),
        programs_(programs),
        staging_(rt_->context, stagingBytes(setup)),
        statsHost_(rt_->context, std::size_t(setup.games) * sizeof(LearnedRootOut)) {
    blocks_ = std::max(1, (config_.nodeBudget - 1) / setup.actions);
    budget_ = 1 + blocks_ * setup.actions;
    maxLeaves_ = std::max(1, config_.leavesPerStep);
    ContextScope scope(rt_->context);
    try {
      allocate();
      CAS_CU(cuEventCreate(&staged_, CU_EVENT_DISABLE_TIMING));
      CAS_CU(cuStreamSynchronize(rt_->compute));
    } catch (...) {
      release();
      throw;
    }
  }

  ~DeviceLearnedSearch() override {
    cuCtxPushCurrent(rt_->context);
    cuStreamSynchronize(rt_->compute);
    release();
    CUcontext c;
    cuCtxPopCurrent(&c);
  }

  std::string device() const override { return "cuda"; }
  int games() const override { return setup_.games; }
  const LearnedSearchConfig& config() const override { return config_; }

  void setConfig(const LearnedSearchConfig& c) override {
    if (c.leavesPerStep > maxLeaves_)
      throw std::invalid_argument("search.leaves_per_step = " + std::to_string(c.leavesPerStep) +
                                  " needs a new search: this device search holds " + std::to_string(maxLeaves_) +
                                  " leaves per game in its model rows");
    const int budget = config_.nodeBudget;
    config_ = c;
    config_.nodeBudget = budget;
  }

  void search(const std::vector<int>& games, const float* observations, int simulations) override {
    if (simulations < 0) simulations = config_.simulations;
    if (games.empty()) return;
    checkDistinct(games);
    ContextScope scope(rt_->context);
    stage(games, observations, simulations);
    if (programs_.network())
      for (DeviceProgram* p : {programs_.represent, programs_.recurrent, programs_.predict}) p->flushInputs();
    const int k = std::max(1, config_.leavesPerStep);
    const int steps = (simulations + k - 1) / k;
    const Graphs& graphs = graphsFor(k);
    CAS_CU(cuGraphLaunch(graphs.root, rt_->compute));
    for (int i = 0; i < steps; ++i) CAS_CU(cuGraphLaunch(graphs.step, rt_->compute));
    launchFinishRoots(context(k), rt_->compute);
    countSearch(games.size(), simulations, steps);
  }

  std::vector<RootStats> rootStats(const std::vector<int>& games) const override {
    std::vector<RootStats> out;
    if (games.empty()) return out;
    for (int g : games) checkGame(g);
    ContextScope scope(rt_->context);
    launchRootStatistics(context(maxLeaves_), rt_->compute);
    readStats(games);
    CAS_CU(cuStreamSynchronize(rt_->compute));
    const LearnedRootOut* host = statsHost_.as<LearnedRootOut>();
    out.reserve(games.size());
    for (int g : games) out.push_back(statsOf(host[g]));
    return out;
  }

  cas::search::Tree treeSnapshot(int game) const override;
  std::optional<cas::search::LearnedSearchBreakdown> profileDecision(const std::vector<int>& games, const float* observations,
                                                                     int simulations) override;

  LearnedSearchMetrics metrics() const override {
    ContextScope scope(rt_->context);
    std::vector<GameSlot> slots(std::size_t(setup_.games));
    CAS_CU(cuMemcpyDtoHAsync(slots.data(), gameSlots_, slots.size() * sizeof(GameSlot), rt_->compute));
    CAS_CU(cuStreamSynchronize(rt_->compute));
    LearnedSearchMetrics m = metrics_;
    for (const GameSlot& s : slots) {
      m.evaluations += s.evaluations;
      m.recycledNodes += s.recycled;
    }
    return m;
  }

 private:
  static constexpr std::size_t kFields = std::size_t(cas::search::TreeField::virtualLoss) + 1;
  struct Graphs {
    CUgraphExec root = nullptr, step = nullptr;
  };

  static std::size_t listedBytes(int games) { return (std::size_t(games) + 3) / 4 * 4; }
  static std::size_t stagingBytes(const LearnedSearchSetup& s) {
    return sizeof(LearnedParams) + listedBytes(s.games) + std::size_t(s.games) * std::size_t(s.observationSize) * sizeof(float);
  }
  std::uint8_t* listedHost() const { return staging_.as<std::uint8_t>() + sizeof(LearnedParams); }
  float* observationsHost() const { return reinterpret_cast<float*>(listedHost() + listedBytes(setup_.games)); }

  void checkGame(int g) const {
    if (g < 0 || g >= setup_.games)
      throw std::out_of_range("game " + std::to_string(g) + " is not in this search (0-" + std::to_string(setup_.games - 1) + ")");
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

  LearnedParams paramsFor(int simulations) const {
    return {config_.cPuct, config_.dirichletAlpha, config_.dirichletFraction, config_.discount, config_.minMaxFloor,
            simulations,   config_.gumbel ? 1 : 0, config_.gumbelArms,        stepBase_,        setup_.seed};
  }

  // The call's parameters, game list and observations (game g's at row g) down to the device,
  // once the previous call's upload has left the staging area.
  void stage(const std::vector<int>& games, const float* observations, int simulations) {
    CAS_CU(cuEventSynchronize(staged_));
    *staging_.as<LearnedParams>() = paramsFor(simulations);
    std::uint8_t* listed = listedHost();
    std::memset(listed, 0, std::size_t(setup_.games));
    const auto o = std::size_t(setup_.observationSize);
    for (std::size_t i = 0; i < games.size(); ++i) {
      listed[games[i]] = 1;
      std::copy_n(observations + i * o, o, observationsHost() + std::size_t(games[i]) * o);
    }
    CAS_CU(cuMemcpyHtoDAsync(params_, staging_.as<LearnedParams>(), sizeof(LearnedParams), rt_->compute));
    CAS_CU(cuMemcpyHtoDAsync(listed_, listed, std::size_t(setup_.games), rt_->compute));
    CAS_CU(cuMemcpyHtoDAsync(rows_.observations, observationsHost(), std::size_t(setup_.games) * o * sizeof(float), rt_->compute));
    CAS_CU(cuEventRecord(staged_, rt_->compute));
  }

  // The listed games' LearnedRootOut records (the range from the lowest to the highest) into the
  // pinned host copy, queued on the compute stream.
  void readStats(const std::vector<int>& games) const {
    const auto [lo, hi] = std::minmax_element(games.begin(), games.end());
    LearnedRootOut* host = statsHost_.as<LearnedRootOut>();
    CAS_CU(cuMemcpyDtoHAsync(host + *lo, stats_ + std::uint64_t(*lo) * sizeof(LearnedRootOut),
                             std::size_t(*hi - *lo + 1) * sizeof(LearnedRootOut), rt_->compute));
  }

  // A search() call's counts, and the CPU clock: one tick for the roots, then one per step.
  void countSearch(std::size_t games, int simulations, int steps) {
    stepBase_ += 1 + std::uint32_t(std::max(1, steps));
    metrics_.simulations += std::int64_t(games) * simulations;
    metrics_.recurrentCalls += steps;
    metrics_.modelCalls += 2 + steps;
  }

  RootStats statsOf(const LearnedRootOut& r) const {
    const int a = setup_.actions;
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
    return s;
  }

  LearnedContext context(int k) const;
  CUdeviceptr take(std::uint64_t bytes, const std::string& what);
  void allocate();
  void allocateModelRows();
  void release();
  template <typename Record>
  CUgraphExec capture(Record&& record);
  const Graphs& graphsFor(int k);
  void launchRootModel(const LearnedContext& c, CUstream s);
  void launchRecurrentModel(const LearnedContext& c, CUstream s);

  LearnedSearchSetup setup_;
  LearnedSearchConfig config_;
  std::shared_ptr<DeviceRuntime> rt_;
  LearnedPrograms programs_;
  int blocks_ = 0, budget_ = 0, maxLeaves_ = 1;
  std::uint32_t stepBase_ = 0;
  CUdeviceptr field_[kFields] = {};  // by TreeField
  CUdeviceptr work_ = 0, freeBlocks_ = 0, gameSlots_ = 0, learnedSlots_ = 0, reward_ = 0, latent_ = 0, pending_ = 0;
  CUdeviceptr params_ = 0, listed_ = 0, stats_ = 0, snapshot_ = 0;
  ModelRows rows_;
  std::vector<CUdeviceptr> owned_;
  PinnedBuffer staging_, statsHost_;
  CUevent staged_ = nullptr;
  LearnedSearchMetrics metrics_;
  std::map<int, Graphs> graphs_;
};

LearnedContext DeviceLearnedSearch::context(int k) const {
  LearnedContext c{};
#define CAS_TREE_POINT(name, type, root) c.trees.main.name = devicePointer<type>(field_[std::size_t(cas::search::TreeField::name)]);
  CAS_TREE_FIELDS(CAS_TREE_POINT)
#undef CAS_TREE_POINT
  c.trees.work = devicePointer<std::int32_t>(work_);
  c.trees.freeBlocks = devicePointer<std::int32_t>(freeBlocks_);
  c.trees.gameSlots = devicePointer<GameSlot>(gameSlots_);
  c.trees.budget = budget_;
  c.trees.blocks = blocks_;
  c.trees.actions = setup_.actions;
  c.trees.games = setup_.games;
  c.learnedSlots = devicePointer<LearnedSlot>(learnedSlots_);
  c.reward = devicePointer<float>(reward_);
  c.latent = devicePointer<float>(latent_);
  c.pending = devicePointer<LearnedPending>(pending_);
  c.rootStates = devicePointer<const float>(rows_.rootStates);
  c.rootLogits = devicePointer<const float>(rows_.rootLogits);
  c.rootValues = devicePointer<const float>(rows_.rootValues);
  c.stateRows = devicePointer<float>(rows_.stateRows);
  c.actionRows = devicePointer<float>(rows_.actionRows);
  c.nextStates = devicePointer<const float>(rows_.nextStates);
  c.rewards = devicePointer<const float>(rows_.rewards);
  c.logits = devicePointer<const float>(rows_.logits);
  c.values = devicePointer<const float>(rows_.values);
  c.params = devicePointer<const LearnedParams>(params_);
  c.stats = devicePointer<LearnedRootOut>(stats_);
  c.games = setup_.games;
  c.k = k;
  c.stateSize = setup_.stateSize;
  c.actions = setup_.actions;
  return c;
}

CUdeviceptr DeviceLearnedSearch::take(std::uint64_t bytes, const std::string& what) {
  const CUdeviceptr p = rt_->pool.allocate(std::max<std::uint64_t>(bytes, 4), "the device learned-model search's " + what);
  owned_.push_back(p);
  return p;
}

void DeviceLearnedSearch::allocate() {
  const auto games = std::uint64_t(setup_.games), nodes = games * std::uint64_t(budget_);
#define CAS_TREE_TAKE(name, type, root) field_[std::size_t(cas::search::TreeField::name)] = take(nodes * sizeof(type), "tree field " #name);
  CAS_TREE_FIELDS(CAS_TREE_TAKE)
#undef CAS_TREE_TAKE
  CAS_CU(cuMemsetD32Async(field_[std::size_t(cas::search::TreeField::firstChild)], 0xFFFFFFFFu, nodes, rt_->compute));  // unexpanded
  work_ = take(nodes * 4, "work stacks");
  freeBlocks_ = take(games * std::uint64_t(blocks_) * 4, "free lists");
  gameSlots_ = take(games * sizeof(GameSlot), "game slots");
  learnedSlots_ = take(games * sizeof(LearnedSlot), "learned slots");
  CAS_CU(cuMemsetD8Async(learnedSlots_, 0, games * sizeof(LearnedSlot), rt_->compute));
  reward_ = take(nodes * 4, "rewards");
  latent_ = take(nodes * std::uint64_t(setup_.stateSize) * 4, "latent states");
  pending_ = take(games * std::uint64_t(maxLeaves_) * sizeof(LearnedPending), "pending selections");
  params_ = take(sizeof(LearnedParams), "parameters");
  listed_ = take(games, "game list");
  stats_ = take(games * sizeof(LearnedRootOut), "root statistics");
  snapshot_ = take(std::uint64_t(budget_) * cas::search::kTreeNodeBytes, "snapshot copy");
  // A fresh tree per game (core's Tree: one root slot in use), from the staging area.
  std::vector<GameSlot> slots(std::size_t(games), GameSlot{});
  for (GameSlot& s : slots) s.nextBlock = s.inUse = 1;
  CAS_CU(cuMemcpyHtoD(gameSlots_, slots.data(), slots.size() * sizeof(GameSlot)));
  allocateModelRows();
}

// The network's rows are its programs' buffers; the hashed model's are the search's own.
void DeviceLearnedSearch::allocateModelRows() {
  const auto games = std::uint64_t(setup_.games), rows = games * std::uint64_t(maxLeaves_);
  const auto o = std::uint64_t(setup_.observationSize), s = std::uint64_t(setup_.stateSize), a = std::uint64_t(setup_.actions);
  if (programs_.network()) {
    const LearnedPrograms& p = programs_;
    rows_ = {p.represent->inputAddress("obs"),     p.represent->outputAddress("state"), p.predict->inputAddress("state"),
             p.predict->outputAddress("logits"),   p.predict->outputAddress("value"),   p.recurrent->inputAddress("state"),
             p.recurrent->inputAddress("action"),  p.recurrent->outputAddress("state"), p.recurrent->outputAddress("reward"),
             p.recurrent->outputAddress("logits"), p.recurrent->outputAddress("value")};
    p.represent->markWrittenOnDevice("obs");
    p.predict->markWrittenOnDevice("state");
    p.recurrent->markWrittenOnDevice("state");
    p.recurrent->markWrittenOnDevice("action");
    return;
  }
  auto zeroed = [&](std::uint64_t floats, const char* what) {
    const CUdeviceptr p = take(floats * 4, what);
    CAS_CU(cuMemsetD32Async(p, 0, floats, rt_->compute));
    return p;
  };
  rows_.observations = zeroed(games * o, "observations");
  rows_.rootStates = zeroed(games * s, "root states");
  rows_.rootLogits = zeroed(games * a, "root logits");
  rows_.rootValues = zeroed(games, "root values");
  rows_.stateRows = zeroed(rows * s, "recurrent state rows");
  rows_.actionRows = zeroed(rows * a, "recurrent action rows");
  rows_.nextStates = zeroed(rows * s, "next states");
  rows_.rewards = zeroed(rows, "rewards");
  rows_.logits = zeroed(rows * a, "logits");
  rows_.values = zeroed(rows, "values");
}

void DeviceLearnedSearch::release() {
  for (auto& [k, g] : graphs_)
    for (CUgraphExec exec : {g.root, g.step})
      if (exec) cuGraphExecDestroy(exec);
  graphs_.clear();
  if (staged_) cuEventDestroy(staged_);
  staged_ = nullptr;
  for (CUdeviceptr p : owned_) rt_->pool.release(p);
  owned_.clear();
}

template <typename Record>
CUgraphExec DeviceLearnedSearch::capture(Record&& record) {
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

// Represent, then predict on its states (or the hashed model's root rows).
void DeviceLearnedSearch::launchRootModel(const LearnedContext& c, CUstream s) {
  if (programs_.network()) {
    programs_.represent->recordOnCompute();
    CAS_CU(cuMemcpyDtoDAsync(rows_.predictStates, rows_.rootStates,
                             std::size_t(setup_.games) * std::size_t(setup_.stateSize) * sizeof(float), s));
    programs_.predict->recordOnCompute();
  } else {
    launchHashedRoots(c, devicePointer<const float>(rows_.observations), setup_.observationSize, devicePointer<float>(rows_.rootStates),
                      devicePointer<float>(rows_.rootLogits), devicePointer<float>(rows_.rootValues), s);
  }
}

// Dynamics and predict over a step's rows.
void DeviceLearnedSearch::launchRecurrentModel(const LearnedContext& c, CUstream s) {
  if (programs_.network())
    programs_.recurrent->recordOnCompute();
  else
    launchHashedRecurrent(c, devicePointer<float>(rows_.nextStates), devicePointer<float>(rows_.rewards),
                          devicePointer<float>(rows_.logits), devicePointer<float>(rows_.values), s);
}

// The root graph (represent -> predict -> expand roots and select -> the roots' states into the
// pool, the selected rows' states out) and the step graph (recurrent -> the new leaves' states
// into the pool -> expand, back up and select -> the rows' states out) of k leaves per step.
const DeviceLearnedSearch::Graphs& DeviceLearnedSearch::graphsFor(int k) {
  Graphs& g = graphs_[k];
  if (g.root) return g;
  const LearnedContext c = context(k);
  CUstream s = rt_->compute;
  g.root = capture([&] {
    launchRootModel(c, s);
    launchExpandRoots(c, devicePointer<const std::uint8_t>(listed_), s);
  });
  g.step = capture([&] {
    launchRecurrentModel(c, s);
    launchExpandSelect(c, s);
  });
  return g;
}

// Events for one profiled decision, destroyed whatever happens.
struct DecisionEvents {
  std::vector<CUevent> events;
  explicit DecisionEvents(std::size_t count) : events(count, nullptr) {
    for (CUevent& e : events) CAS_CU(cuEventCreate(&e, CU_EVENT_DEFAULT));
  }
  ~DecisionEvents() {
    for (CUevent e : events)
      if (e) cuEventDestroy(e);
  }
  double us(std::size_t from) const {  // between event `from` and the next
    float ms = 0;
    CAS_CU(cuEventElapsedTime(&ms, events[from], events[from + 1]));
    return double(ms) * 1000.0;
  }
};

// search() and rootStats() for the listed games, launched phase by phase with an event after each:
//   0 stage (weights, parameters, observations) 1 root model 2 root kernels 3 recurrent 4 step
//   kernels 5 ... recurrent, last step's kernels with finish and statistics, readback.
std::optional<cas::search::LearnedSearchBreakdown> DeviceLearnedSearch::profileDecision(const std::vector<int>& games,
                                                                                        const float* observations, int simulations) {
  if (simulations < 0) simulations = config_.simulations;
  if (games.empty()) return cas::search::LearnedSearchBreakdown{};
  checkDistinct(games);
  ContextScope scope(rt_->context);
  const int k = std::max(1, config_.leavesPerStep), steps = (simulations + k - 1) / k;
  const LearnedContext c = context(k);
  CUstream s = rt_->compute;
  DecisionEvents e(std::size_t(5 + 2 * steps));
  CAS_CU(cuStreamSynchronize(s));
  std::size_t next = 0;
  auto mark = [&] { CAS_CU(cuEventRecord(e.events[next++], s)); };
  mark();
  if (programs_.network())
    for (DeviceProgram* p : {programs_.represent, programs_.recurrent, programs_.predict}) p->flushInputs();
  stage(games, observations, simulations);
  mark();
  launchRootModel(c, s);
  mark();
  launchExpandRoots(c, devicePointer<const std::uint8_t>(listed_), s);
  for (int i = 0; i < steps; ++i) {
    mark();
    launchRecurrentModel(c, s);
    mark();
    launchExpandSelect(c, s);
  }
  launchFinishRoots(c, s);
  launchRootStatistics(context(maxLeaves_), s);
  mark();
  readStats(games);
  mark();
  CAS_CU(cuStreamSynchronize(s));
  cas::search::LearnedSearchBreakdown b;
  b.steps = steps;
  b.stageUs = e.us(0);
  b.rootModelUs = e.us(1);
  // The roots' kernels, then the last step's search kernels with finish and statistics (with no
  // steps, the roots' interval holds those already).
  b.searchUs = e.us(2) + (steps > 0 ? e.us(next - 3) : 0.0);
  for (int i = 0; i < steps; ++i) {
    b.recurrentUs += e.us(3 + 2 * std::size_t(i));
    if (i + 1 < steps) b.searchUs += e.us(4 + 2 * std::size_t(i));
  }
  b.readbackUs = e.us(next - 2);
  countSearch(games.size(), simulations, steps);
  return b;
}

cas::search::Tree DeviceLearnedSearch::treeSnapshot(int game) const {
  checkGame(game);
  cas::search::Tree t(setup_.actions, config_.nodeBudget);
  GameSlot slot{};
  std::vector<std::int32_t> freeBlocks(static_cast<std::size_t>(blocks_));
  ContextScope scope(rt_->context);
  launchGatherTree(context(maxLeaves_), game, devicePointer<void>(snapshot_), rt_->compute);
  CAS_CU(cuMemcpyDtoHAsync(&slot, gameSlots_ + std::uint64_t(game) * sizeof(GameSlot), sizeof slot, rt_->compute));
  CAS_CU(cuMemcpyDtoHAsync(freeBlocks.data(), freeBlocks_ + std::uint64_t(game) * std::uint64_t(blocks_) * 4, freeBlocks.size() * 4,
                           rt_->compute));
  CAS_CU(cuStreamSynchronize(rt_->compute));
  // Slots from the next never-used block on hold nothing the tree reaches: only the prefix crosses.
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

// Empty when `program` has the named inputs and outputs with the given values per row and a
// batch of at least `rows`; else what is wrong.
std::string rowsProblem(const DeviceProgram& program, const char* title, const std::vector<std::pair<std::string, int>>& inputs,
                        const std::vector<std::pair<std::string, int>>& outputs, std::int64_t rows) {
  const ir::Graph& g = program.graph();
  std::string problem;
  auto check = [&](const std::string& name, int width, bool input) {
    const ir::NodeId id = input ? g.findInput(name) : g.output(name);
    if (!problem.empty()) return;
    if (id == ir::kNoNode) {
      problem = std::string("the ") + title + " program has no " + (input ? "input" : "output") + " '" + name + "'";
      return;
    }
    const ir::Shape& shape = g.node(id).shape;
    if (shape.empty() || ir::numel(shape) != shape[0] * width)
      problem = std::string("the ") + title + " program's '" + name + "' has shape " + ir::shapeText(shape, ", ") +
                "; the search expects " + std::to_string(width) + " values per row";
    else if (shape[0] < rows)
      problem = std::string("the ") + title + " program's batch (" + std::to_string(shape[0]) + ") is smaller than the " +
                std::to_string(rows) + " rows the search needs (games x leaves per step for recurrent, games for represent and predict)";
  };
  for (const auto& [name, width] : inputs) check(name, width, true);
  for (const auto& [name, width] : outputs) check(name, width, false);
  return problem;
}

// The setup's programs as this runtime's DevicePrograms with rows enough, or what is wrong.
std::string networkProblem(const LearnedSearchSetup& s, const std::shared_ptr<DeviceRuntime>& runtime, LearnedPrograms& p) {
  const cas::search::LearnedModelEvaluator& e = s.evaluator;
  p = {dynamic_cast<DeviceProgram*>(e.represent), dynamic_cast<DeviceProgram*>(e.recurrent), dynamic_cast<DeviceProgram*>(e.predict)};
  if (!p.represent || !p.recurrent || !p.predict) return "the learned model's programs were not all compiled by the CUDA backend";
  for (DeviceProgram* program : {p.represent, p.recurrent, p.predict})
    if (program->runtime() != runtime) return "the learned model's programs were compiled for another device";
  const int o = s.observationSize, st = s.stateSize, a = s.actions;
  const std::int64_t rows = std::int64_t(s.games) * std::max(1, s.config.leavesPerStep);
  std::string problem = rowsProblem(*p.represent, "represent", {{"obs", o}}, {{"state", st}}, s.games);
  if (problem.empty()) problem = rowsProblem(*p.predict, "predict", {{"state", st}}, {{"logits", a}, {"value", 1}}, s.games);
  if (problem.empty())
    problem = rowsProblem(*p.recurrent, "recurrent", {{"state", st}, {"action", a}},
                          {{"state", st}, {"reward", 1}, {"logits", a}, {"value", 1}}, rows);
  return problem;
}

}  // namespace

std::unique_ptr<cas::search::LearnedSearch> makeDeviceLearnedSearch(const LearnedSearchSetup& setup, std::shared_ptr<DeviceRuntime> runtime,
                                                                    std::string* reason) {
  auto refuse = [&](const std::string& why) -> std::unique_ptr<cas::search::LearnedSearch> {
    if (reason) *reason = why;
    return nullptr;
  };
  if (setup.games < 1) return refuse("a search needs at least one game");
  if (setup.actions < 1 || setup.actions > kMaxLearnedActions)
    return refuse("the device search over a learned model holds between 1 and " + std::to_string(kMaxLearnedActions) + " actions");
  if (setup.stateSize < 1 || setup.observationSize < 1) return refuse("the learned model's state or observation is empty");
  LearnedPrograms programs;
  if (setup.evaluator.kind == cas::search::LearnedModelEvaluator::Kind::Network) {
    const std::string problem = networkProblem(setup, runtime, programs);
    if (!problem.empty()) return refuse(problem);
  }
  try {
    ContextScope scope(runtime->context);  // the kernels' module loads into the runtime's context
    loadLearnedKernels();
    return std::make_unique<DeviceLearnedSearch>(setup, std::move(runtime), programs);
  } catch (const DeviceOutOfMemory& e) {
    // Not a reason to fall back to the CPU without a word: the run was sized for this device.
    throw DeviceOutOfMemory(std::string(e.what()) + "; reduce search.node_budget or the number of games");
  } catch (const std::exception& e) {
    return refuse(std::string("the device search over a learned model could not be set up: ") + e.what());
  }
}

}  // namespace cas::gpu
