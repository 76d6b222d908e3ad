#include "core/train/alphazero.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <sstream>

#include "core/exec/initialise.hpp"
#include "core/ir/passes.hpp"
#include "core/support/binary_io.hpp"
#include "core/train/baselines.hpp"
#include "core/train/memory_estimate.hpp"

namespace cas::train {
namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

constexpr std::uint32_t kCheckpointMagic = 0x4B435A41;  // "AZCK"
constexpr std::uint32_t kCheckpointVersion = 1;

std::vector<float> readOutput(const exec::Executable& exe, const std::string& name) {
  const ir::Graph& g = exe.graph();
  std::vector<float> v(size_t(ir::numel(g.node(g.output(name)).shape)));
  exe.readOutput(name, v.data(), v.size());
  return v;
}

// Adds the finished games [0, count) of a round whose first game is number `first` to `result`
// (even-numbered games: the agent moved first).
void tally(EvaluationResult& result, const env::BoardGames& pos, int first, int count) {
  for (int g = 0; g < count; ++g) {
    const int agentSide = (first + g) % 2;
    const float v = pos.terminalValue(g);  // for the player to move at the end
    const float forAgent = pos.toMove(g) == agentSide ? v : -v;
    const bool movedFirst = agentSide == 0;
    if (forAgent > 0) { ++result.wins; ++(movedFirst ? result.winsFirst : result.winsSecond); }
    else if (forAgent < 0) { ++result.losses; ++(movedFirst ? result.lossesFirst : result.lossesSecond); }
    else { ++result.draws; ++(movedFirst ? result.drawsFirst : result.drawsSecond); }
  }
}

}  // namespace

AlphaZeroTrainer::AlphaZeroTrainer(const project::Project& project, std::shared_ptr<exec::Backend> backend)
    : project_(project), params_(project.parameters), backend_(std::move(backend)),
      rng_(std::uint64_t(project.parameters.getInt("runtime.seed")) * 0x2545F4914F6CDD1Dull + 7) {
  const std::int64_t evalGames = params_.getInt("train.eval_games");
  if (auto tooLarge = refuseIfTooLarge(estimateTrainerMemory(project_, evalGames), availableMemory())) throw std::runtime_error(*tooLarge);
  try {
    buildNetworks();
  } catch (const std::bad_alloc&) {  // the estimate missed: still an error that says what
    throw std::runtime_error(std::string("out of memory while allocating ") + allocating_ + "; reduce the parameters that size it");
  }
}

search::SearchConfig AlphaZeroTrainer::searchConfig(bool selfPlay) const {
  search::SearchConfig c;
  c.simulations = int(params_.getInt("search.simulations"));
  c.cPuct = float(params_.getFloat("search.c_puct"));
  c.dirichletAlpha = float(params_.getFloat("search.dirichlet_alpha"));
  c.dirichletFraction = selfPlay ? float(params_.getFloat("search.dirichlet_fraction")) : 0.0f;
  c.leavesPerStep = int(params_.getInt("search.leaves_per_step"));
  c.virtualLoss = float(params_.getFloat("search.virtual_loss"));
  c.gumbel = params_.getChoice("search.root_policy") == "gumbel";
  c.gumbelArms = int(params_.getInt("search.gumbel_arms"));
  c.nodeBudget = int(params_.getInt("search.node_budget"));
  c.subtreeReuse = params_.getBool("search.subtree_reuse");
  c.temperature = selfPlay ? float(params_.getFloat("search.temperature")) : 0.0f;
  c.temperatureMoves = int(params_.getInt("search.temperature_moves"));
  c.selection = params_.getChoice("search.selection") == "branchy" ? search::SelectionKernel::Branchy : search::SelectionKernel::Masked;
  c.instrument = params_.getBool("search.instrument");
  return c;
}

OptimizerConfig AlphaZeroTrainer::optimizerConfig() const {
  OptimizerConfig c;
  c.kind = params_.getChoice("train.optimizer");
  c.learningRate = float(params_.getFloat("train.learning_rate"));
  c.momentum = float(params_.getFloat("train.momentum"));
  c.gradClip = float(params_.getFloat("train.grad_clip"));
  c.weightDecay = float(params_.getFloat("train.weight_decay"));
  return c;
}

void AlphaZeroTrainer::buildNetworks() {
  const env::EnvironmentInfo* e = env::findEnvironment(project_.environment);
  actions_ = e->actionCount;
  obsSize_ = std::accumulate(e->observationShape.begin(), e->observationShape.end(), 1, std::multiplies<>());
  const auto parallel = params_.getInt("train.parallel_games");
  inferenceBatch_ = std::max<std::int64_t>(1, parallel * params_.getInt("search.leaves_per_step"));

  auto compileAt = [&](std::int64_t batch, bool training) {
    std::string source;
    pdl::CompileResult r = project::compilePolicy(project_, batch, &source, training);
    if (!r.policy) {
      std::string message = "the policy does not compile";
      if (!r.diagnostics.empty()) message += ": " + formatHeadline(r.diagnostics.items()[0]);
      throw std::runtime_error(message);
    }
    return std::move(*r.policy);
  };
  allocating_ = "the self-play network (train.parallel_games × search.leaves_per_step)";
  pdl::CompiledPolicy inference = compileAt(inferenceBatch_, false);
  ir::Graph g = inference.graph;
  ir::runPasses(g, ir::defaultPipeline());
  inference_ = backend_->compile(g);
  allocating_ = "the training network (train.batch_size)";
  trainPolicy_ = compileAt(params_.getInt("train.batch_size"), true);
  updater_ = std::make_unique<Updater>(*backend_, trainPolicy_, LossKind::AlphaZero, optimizerConfig(), actions_,
                                       std::uint64_t(params_.getInt("runtime.seed")));
  syncInference();

  const auto seed = std::uint64_t(params_.getInt("runtime.seed"));
  allocating_ = "the search trees (train.parallel_games × search.node_budget)";
  selfPlay_ = makeSearch(int(parallel), searchConfig(true), seed, &searchNote_);
  analysis_ = makeSearch(1, searchConfig(false), seed + 1, nullptr);
  records_.assign(size_t(parallel), {});
  const auto capacity = size_t(params_.getInt("train.replay_capacity"));
  allocating_ = "the replay buffer (train.replay_capacity)";
  bufferObs_.assign(capacity * size_t(obsSize_), 0);
  bufferPolicy_.assign(capacity * size_t(actions_), 0);
  bufferValue_.assign(capacity, 0);
}

std::unique_ptr<search::SelfPlaySearch> AlphaZeroTrainer::makeSearch(int games, const search::SearchConfig& config, std::uint64_t seed, std::string* note) {
  search::SearchSetup setup;
  setup.environment = project_.environment;
  setup.games = games;
  setup.config = config;
  setup.seed = seed;
  setup.evaluator.network = inference_.get();
  return search::makeSearch(*backend_, setup, params_.getChoice("search.device"), note);
}

void AlphaZeroTrainer::syncInference() {
  for (const pdl::ParameterSummary& p : updater_->parameters()) {
    auto v = updater_->parameter(p.name);
    inference_->setInput(p.name, v.data(), v.size());
  }
}

std::optional<std::string> AlphaZeroTrainer::setParameter(const std::string& name, const engine::ParamValue& value) {
  const engine::ParameterSpec* spec = engine::ParameterRegistry::standard().find(name);
  if (!spec) return "unknown parameter '" + name + "'";
  if (auto problem = engine::checkValue(*spec, value)) return problem;
  if (!spec->live) return name + " applies only when a run starts; restart the run to change it";
  const engine::ParamValue before = params_.get(name);
  if (auto problem = params_.set(name, value)) return problem;
  for (auto* s : {selfPlay_.get(), analysis_.get()})
    if (auto problem = s->setConfig(searchConfig(s == selfPlay_.get()))) {
      params_.set(name, before);
      selfPlay_->setConfig(searchConfig(true));
      analysis_->setConfig(searchConfig(false));
      return problem;
    }
  updater_->setConfig(optimizerConfig());
  return std::nullopt;
}

IterationReport AlphaZeroTrainer::runIteration(const std::function<bool()>& cancelled) {
  IterationReport report;
  const auto start = Clock::now();
  const search::SearchMetrics before = selfPlay_->metrics();
  const env::BoardGames& pos = selfPlay_->positions();
  const int parallel = pos.size();
  const auto target = params_.getInt("train.games_per_iteration");
  std::vector<int> active(static_cast<size_t>(parallel));
  std::iota(active.begin(), active.end(), 0);
  std::int64_t finished = 0;
  const auto capacity = std::int64_t(bufferValue_.size());
  std::vector<int> moves(active.size()), over;

  while (finished < target && !(cancelled && cancelled())) {
    selfPlay_->search(active);
    const auto dataStart = Clock::now();
    const std::vector<search::RootStats> stats = selfPlay_->rootStats(active);
    for (size_t i = 0; i < active.size(); ++i) {
      const int g = active[i];
      Record rec;
      rec.obs.resize(size_t(obsSize_));
      pos.observe(g, rec.obs.data());
      rec.policy = stats[i].policy;
      rec.player = pos.toMove(g);
      rec.action = moves[i] = stats[i].played;
      records_[size_t(g)].push_back(std::move(rec));
    }
    selfPlay_->play(active, moves);
    over.clear();
    for (int g : active) {
      if (!pos.terminal(g)) continue;
      const float v = pos.terminalValue(g);
      const int last = pos.toMove(g);
      for (const Record& r : records_[size_t(g)]) {
        const std::int64_t slot = bufferNext_;
        std::copy(r.obs.begin(), r.obs.end(), bufferObs_.begin() + slot * obsSize_);
        std::copy(r.policy.begin(), r.policy.end(), bufferPolicy_.begin() + slot * actions_);
        bufferValue_[size_t(slot)] = r.player == last ? v : -v;
        bufferNext_ = (bufferNext_ + 1) % capacity;
        bufferSize_ = std::min(capacity, bufferSize_ + 1);
      }
      records_[size_t(g)].clear();
      over.push_back(g);
      ++finished;
      ++gamesPlayed_;
    }
    selfPlay_->resetGames(over);
    report.dataSeconds += since(dataStart);
  }
  const double selfPlaySeconds = since(start);
  const search::SearchMetrics after = selfPlay_->metrics();
  report.inferenceSeconds = after.inferenceSeconds - before.inferenceSeconds;
  report.searchSeconds = after.searchSeconds - before.searchSeconds;
  report.simulationsPerSecond = double(after.simulations - before.simulations) / std::max(selfPlaySeconds, 1e-9);
  report.gamesPerSecond = double(finished) / std::max(selfPlaySeconds, 1e-9);
  report.recycledNodes = after.recycledNodes;

  const auto trainStart = Clock::now();
  trainSteps(report);
  report.trainSeconds = since(trainStart);
  ++iteration_;
  report.iteration = iteration_;
  report.gamesPlayed = gamesPlayed_;
  report.positions = bufferSize_;

  const auto every = params_.getInt("train.eval_every"), evalGames = params_.getInt("train.eval_games");
  if (evalGames > 0 && iteration_ % every == 0) {
    report.evaluations.push_back(evaluate("random", int(evalGames), std::uint64_t(iteration_)));
    report.evaluations.push_back(evaluate(env::findEnvironment(project_.environment)->evaluationOpponent, int(evalGames), std::uint64_t(iteration_)));
  }
  return report;
}

void AlphaZeroTrainer::trainSteps(IterationReport& report) {
  const auto batch = params_.getInt("train.batch_size");
  report.batchSize = batch;
  if (bufferSize_ < batch) return;
  const auto steps = params_.getInt("train.steps_per_iteration");
  report.trainingSteps = steps;
  const env::BoardGames& pos = selfPlay_->positions();
  const int symmetries = pos.symmetryCount();
  std::vector<float> obs(static_cast<size_t>(batch * obsSize_)), policy(static_cast<size_t>(batch * actions_)), value(static_cast<size_t>(batch));
  std::uniform_int_distribution<std::int64_t> pick(0, bufferSize_ - 1);
  std::uniform_int_distribution<int> symmetry(0, symmetries - 1);
  exec::Executable& exe = updater_->executable();
  double loss = 0, pl = 0, vl = 0, l2 = 0, ent = 0;
  for (std::int64_t s = 0; s < steps; ++s) {
    for (std::int64_t i = 0; i < batch; ++i) {
      const std::int64_t j = pick(rng_);
      float* o = obs.data() + i * obsSize_;
      float* p = policy.data() + i * actions_;
      std::copy(bufferObs_.begin() + j * obsSize_, bufferObs_.begin() + (j + 1) * obsSize_, o);
      std::copy(bufferPolicy_.begin() + j * actions_, bufferPolicy_.begin() + (j + 1) * actions_, p);
      pos.applySymmetry(symmetry(rng_), o, p);
      value[size_t(i)] = bufferValue_[size_t(j)];
    }
    exe.setInput("obs", obs.data(), obs.size());
    exe.setInput("policy_targets", policy.data(), policy.size());
    exe.setInput("value_targets", value.data(), value.size());
    const float stepLoss = updater_->step();
    if (!std::isfinite(stepLoss))
      throw std::runtime_error("the loss became " + std::string(std::isnan(stepLoss) ? "NaN" : "infinite") + " in iteration " +
                               std::to_string(iteration_ + 1) + "; lower train.learning_rate or clip harder with a smaller train.grad_clip (the last checkpoint is kept)");
    loss += stepLoss;
    pl += readOutput(exe, "loss/policy")[0];
    vl += readOutput(exe, "loss/value")[0];
    ent += readOutput(exe, "loss/entropy")[0];
    if (exe.graph().output("loss/l2") != ir::kNoNode) l2 += readOutput(exe, "loss/l2")[0];
  }
  const auto n = double(std::max<std::int64_t>(1, steps));
  report.loss = float(loss / n);
  report.policyLoss = float(pl / n);
  report.valueLoss = float(vl / n);
  report.l2 = float(l2 / n);
  report.entropy = float(ent / n);
  syncInference();
}

void AlphaZeroTrainer::stepSimulation() {
  std::vector<int> active;
  for (int g = 0; g < selfPlay_->positions().size(); ++g)
    if (!selfPlay_->positions().terminal(g)) active.push_back(g);
  selfPlay_->search(active, 1);
}

TreeSnapshot AlphaZeroTrainer::snapshot(int game, int maxNodes) const {
  TreeSnapshot snap;
  const int games = selfPlay_->positions().size();
  snap.game = std::clamp(game, 0, games - 1);
  snap.iteration = iteration_;
  snap.environment = project_.environment;
  snap.board = selfPlay_->positions().render(snap.game);
  for (const Record& r : records_[size_t(snap.game)]) snap.rootMoves.push_back(r.action);
  const search::Tree t = selfPlay_->treeSnapshot(snap.game);
  snap.treeNodes = t.nodesInUse();
  snap.treeCapacity = t.budget();
  snap.recycledNodes = t.recycledNodes();
  snap.cPuct = selfPlay_->config().cPuct;
  std::vector<std::pair<std::int32_t, std::int32_t>> queue = {{0, -1}};  // (tree slot, parent index)
  std::vector<int> depth = {0};
  for (size_t q = 0; q < queue.size() && int(snap.nodes.size()) < maxNodes; ++q) {
    const auto [slot, parentIndex] = queue[q];
    const auto s = size_t(slot);
    snap.nodes.push_back({parentIndex, t.action[s], t.visits[s], t.virtualLoss[s], depth[q],
                          t.visits[s] > 0 ? t.valueSum[s] / float(t.visits[s]) : 0.0f, t.prior[s]});
    if (!t.expanded(slot)) continue;
    for (int k = 0; k < t.childCount[s]; ++k) {
      queue.push_back({t.child(slot, k), std::int32_t(snap.nodes.size() - 1)});
      depth.push_back(depth[q] + 1);
    }
  }
  return snap;
}

EvaluationResult AlphaZeroTrainer::evaluate(const std::string& opponentSpec, int games, std::uint64_t seed) {
  if (auto tooLarge = refuseIfTooLarge(estimateEvaluationMemory(project_, games), availableMemory())) throw std::invalid_argument(*tooLarge);
  EvaluationResult result;
  std::string error;
  auto opponent = makeOpponent(opponentSpec, project_.environment, seed * 7919 + 13, &error);
  if (!opponent) throw std::invalid_argument(error);
  result.opponent = opponent->name();  // as it plays: "mcts:0200" plays and is labelled mcts:200
  // The agent plays rounds of at most train.parallel_games games, the batch its network holds.
  const int round = int(std::min<std::int64_t>(games, params_.getInt("train.parallel_games")));
  auto agent = makeSearch(round, searchConfig(false), seed, nullptr);
  const env::BoardGames& pos = agent->positions();
  for (int first = 0; first < games; first += round) {
    const int count = std::min(round, games - first);
    std::vector<int> all(static_cast<size_t>(count));
    std::iota(all.begin(), all.end(), 0);
    agent->resetGames(all);
    for (int done = 0; done < count;) {
      std::vector<int> agentToMove, opponentGames, opponentMoves;
      for (int g = 0; g < count; ++g) {
        if (pos.terminal(g)) continue;
        const int agentSide = (first + g) % 2;  // even games: the agent moves first
        if (pos.toMove(g) == agentSide) agentToMove.push_back(g);
        else {
          opponentGames.push_back(g);
          opponentMoves.push_back(opponent->choose(pos, g));
        }
      }
      if (!opponentGames.empty()) agent->play(opponentGames, opponentMoves);
      if (!agentToMove.empty()) {
        agent->search(agentToMove);
        std::vector<int> chosen;
        for (const search::RootStats& r : agent->rootStats(agentToMove)) chosen.push_back(r.chosen);
        agent->play(agentToMove, chosen);
      }
      done = 0;
      for (int g = 0; g < count; ++g) done += pos.terminal(g);
    }
    tally(result, pos, first, count);
  }
  result.games = games;
  return result;
}

search::RootStats AlphaZeroTrainer::analyse(const std::string& moves, int simulations, std::string* error) {
  if (!analysis_->setPosition(0, moves, error)) return {};
  if (analysis_->positions().terminal(0)) {
    if (error) *error = "the game is over in this position";
    return {};
  }
  search::SearchConfig c = searchConfig(false);
  if (simulations > 0) c.simulations = simulations;
  analysis_->setConfig(c);
  analysis_->search({0});
  analysis_->setConfig(searchConfig(false));
  return analysis_->rootStats(0);
}

std::string AlphaZeroTrainer::checkpoint() const {
  Writer w;
  w.pod(kCheckpointMagic);
  w.pod(kCheckpointVersion);
  w.pod(iteration_);
  w.pod(gamesPlayed_);
  w.pod(updater_->steps());
  std::ostringstream rng;
  rng << rng_;
  w.string(rng.str());
  const exec::Executable& exe = updater_->executable();
  std::vector<const ir::Node*> tensors;
  for (const ir::Node& n : exe.graph().nodes)
    if (n.op == ir::Op::Input && n.attrs.role != ir::InputRole::Data && !n.shape.empty()) tensors.push_back(&n);
  w.pod(std::uint32_t(tensors.size()));
  for (const ir::Node* n : tensors) {
    std::vector<float> v(size_t(ir::numel(n->shape)));
    exe.readInput(n->attrs.name, v.data(), v.size());
    w.string(n->attrs.name);
    w.floats(v);
  }
  w.pod(bufferSize_);
  w.pod(bufferNext_);
  w.floats(bufferObs_);
  w.floats(bufferPolicy_);
  w.floats(bufferValue_);
  return w.bytes();
}

std::uint64_t AlphaZeroTrainer::checkpointSizeLimit() const {
  constexpr std::uint64_t kMaxRngState = 1 << 16, kMaxTensorName = 4096;  // restore()'s limits
  std::uint64_t bytes = 4 + 4 + 3 * 8 + 4 + kMaxRngState + 4 + 2 * 8;
  for (const ir::Node& n : updater_->executable().graph().nodes)
    if (n.op == ir::Op::Input && n.attrs.role != ir::InputRole::Data && !n.shape.empty())
      bytes += 4 + kMaxTensorName + 8 + std::uint64_t(ir::numel(n.shape)) * sizeof(float);
  return bytes + 3 * 8 + (bufferObs_.size() + bufferPolicy_.size() + bufferValue_.size()) * sizeof(float);
}

bool AlphaZeroTrainer::restore(const std::string& bytes, std::string* error) {
  auto fail = [&](const std::string& why) {
    if (error) *error = why;
    return false;
  };
  Reader r(bytes);
  if (r.pod<std::uint32_t>() != kCheckpointMagic || !r.ok()) return fail("not a checkpoint of this program");
  if (r.pod<std::uint32_t>() != kCheckpointVersion) return fail("a checkpoint of another format version");
  const auto iteration = r.pod<std::int64_t>(), games = r.pod<std::int64_t>(), steps = r.pod<std::int64_t>();
  const std::string rngState = r.string();
  exec::Executable& exe = updater_->executable();
  const auto count = r.pod<std::uint32_t>();
  if (!r.ok() || count > 100000) return fail("the checkpoint is truncated");
  std::vector<std::pair<std::string, std::vector<float>>> tensors;
  for (std::uint32_t i = 0; i < count && r.ok(); ++i) {
    const std::string name = r.string(4096);
    const ir::NodeId id = exe.graph().findInput(name);
    if (!r.ok()) break;
    if (id == ir::kNoNode) return fail("the checkpoint holds '" + name + "', which this project's network does not have");
    tensors.emplace_back(name, r.floats(std::uint64_t(ir::numel(exe.graph().node(id).shape))));
    if (!r.ok()) return fail("'" + name + "' in the checkpoint does not match this project's network");
  }
  const auto size = r.pod<std::int64_t>(), next = r.pod<std::int64_t>();
  auto obs = r.floats(bufferObs_.size());
  auto policy = r.floats(bufferPolicy_.size());
  auto value = r.floats(bufferValue_.size());
  if (!r.ok() || !r.atEnd()) return fail("the checkpoint is truncated or does not match this project's replay capacity");
  if (size < 0 || size > std::int64_t(bufferValue_.size()) || next < 0 || next >= std::int64_t(std::max<size_t>(1, bufferValue_.size())))
    return fail("the checkpoint's replay buffer is inconsistent");
  // Everything checked: apply.
  for (const auto& [name, v] : tensors) exe.setInput(name, v.data(), v.size());
  iteration_ = iteration;
  gamesPlayed_ = games;
  updater_->setSteps(steps);
  std::istringstream rs(rngState);
  rs >> rng_;
  bufferSize_ = size;
  bufferNext_ = next;
  bufferObs_ = std::move(obs);
  bufferPolicy_ = std::move(policy);
  bufferValue_ = std::move(value);
  syncInference();
  std::vector<int> all(static_cast<size_t>(selfPlay_->games()));
  std::iota(all.begin(), all.end(), 0);
  selfPlay_->resetGames(all);
  for (auto& r : records_) r.clear();
  return true;
}

}  // namespace cas::train
