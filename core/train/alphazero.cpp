#include "core/train/alphazero.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include "core/env/board_position.hpp"
#include "core/env/games.hpp"
#include "core/ir/passes.hpp"
#include "core/train/baselines.hpp"
#include "core/train/checkpoint.hpp"
#include "core/train/evaluation.hpp"
#include "core/train/memory_estimate.hpp"
#include "core/train/replay_buffer.hpp"
#include "core/train/training_step.hpp"

namespace cas::train {
namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// An agent's search following a match's games, choosing its most visited move.
class AgentOpponent final : public Opponent {
 public:
  AgentOpponent(std::unique_ptr<search::SelfPlaySearch> search, std::string name) : search_(std::move(search)), name_(std::move(name)) {}
  std::string name() const override { return name_; }
  int choose(const env::BoardGames& positions, int game) override { return chooseAll(positions, {game}).front(); }
  std::vector<int> chooseAll(const env::BoardGames&, const std::vector<int>& games) override {
    search_->search(games);
    std::vector<int> moves;
    for (const search::RootStats& r : search_->rootStats(games)) moves.push_back(r.chosen);
    return moves;
  }
  void started(int game) override { search_->resetGame(game); }
  void moved(int game, int action) override { search_->play(game, action); }

 private:
  std::unique_ptr<search::SelfPlaySearch> search_;
  std::string name_;
};

}  // namespace

std::uint64_t rankSeed(std::uint64_t seed, int rank) {
  if (rank == 0) return seed;
  // splitmix64 of (seed, rank): streams that share nothing with rank 0's or each other's.
  std::uint64_t z = seed + std::uint64_t(rank) * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

AlphaZeroTrainer::AlphaZeroTrainer(const project::Project& project, std::shared_ptr<exec::Backend> backend, DataParallelRank rank)
    : project_(project), params_(project.parameters), search_(params::readSearchParams(params_)), train_(params::readTrainParams(params_)),
      runtime_(params::readRuntimeParams(params_)), backend_(std::move(backend)),
      exchange_(rank.communicator ? std::make_unique<GradientExchange>(*rank.communicator, params::readDistParams(params_), rank.fault) : nullptr),
      rng_(rankSeed(std::uint64_t(runtime_.seed), rank.communicator ? rank.communicator->rank() : 0) * 0x2545F4914F6CDD1Dull + 7) {
  if (auto problem = trainingProblem(project_)) throw std::runtime_error(*problem);
  try {
    buildNetworks();
  } catch (const std::bad_alloc&) {  // the estimate missed: still an error that says what
    throw std::runtime_error(std::string("out of memory while allocating ") + allocating_ + "; reduce the parameters that size it");
  }
}

std::optional<std::string> AlphaZeroTrainer::outputsNotFiniteAtStart() {
  const std::unique_ptr<env::BoardGames> game = env::makeBoardGames(project_.environment, 1);
  std::vector<float> obs(static_cast<size_t>(obsSize_)), logits, values;
  game->reset(0);
  game->observe(0, obs.data());
  networkOutputs(obs.data(), 1, &logits, &values);
  auto finite = [](const std::vector<float>& v) { return std::all_of(v.begin(), v.end(), [](float x) { return std::isfinite(x); }); };
  const char* output = !finite(values) ? "value output is" : !finite(logits) ? "logits are" : nullptr;
  if (!output) return std::nullopt;
  return std::string("the policy's ") + output + " not a finite number (NaN or infinite) on the game's first position, before any " +
         "training, so the policy computes it from its input (a log or square root of a negative number, a division by zero); check the " +
         "policy (`cuda-agent check` shows where)";
}

void AlphaZeroTrainer::buildNetworks() {
  const env::EnvironmentInfo* e = env::findEnvironment(project_.environment);
  actions_ = e->actionCount;
  obsSize_ = std::accumulate(e->observationShape.begin(), e->observationShape.end(), 1, std::multiplies<>());
  inferenceBatch_ = std::max<std::int64_t>(1, train_.parallelGames * search_.leavesPerStep);

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
  trainPolicy_ = compileAt(train_.batchSize, true);
  const auto seed = std::uint64_t(runtime_.seed);
  updater_ = std::make_unique<Updater>(*backend_, trainPolicy_, LossKind::AlphaZero, optimizerConfig(train_), actions_, seed, exchange_.get());
  if (exchange_) exchange_->broadcastState(*updater_);  // the same seed gives the same weights; this makes sure of it
  syncInference();
  const std::uint64_t streams = rankSeed(seed, rank());  // self-play's own games on every rank

  allocating_ = "the search trees (train.parallel_games × search.node_budget)";
  const int maxMoves = e->board->rows * e->board->columns;  // a stone per move
  selfPlay_ = std::make_unique<SelfPlay>(makeSearch(int(train_.parallelGames), SearchUse::SelfPlay, streams, &searchNote_), obsSize_, maxMoves);
  analysis_ = makeSearch(1, SearchUse::Evaluation, streams + 1, nullptr);
  allocating_ = "the replay buffer (train.replay_capacity, and train.games_per_iteration + train.parallel_games games of fresh positions)";
  storeNote_ = "the " + backend_->id() + " backend keeps its replay buffer in host memory";
  if (exec::DeviceServices* services = backend_->deviceServices()) store_ = services->createReplayStore(replaySetup(project_), &storeNote_);
  if (!store_) store_ = std::make_unique<ReplayBuffer>(replaySetup(project_));
}

std::unique_ptr<search::SelfPlaySearch> AlphaZeroTrainer::makeSearch(int games, SearchUse use, std::uint64_t seed, std::string* note) {
  search::SearchSetup setup;
  setup.environment = project_.environment;
  setup.games = games;
  setup.config = search::configFor(search_, use);
  setup.seed = seed;
  setup.evaluator.network = inference_.get();
  return search::makeSearch(*backend_, setup, search_.device, note);
}

void AlphaZeroTrainer::syncInference() {
  for (const pdl::ParameterSummary& p : updater_->parameters()) inference_->copyInputFrom(p.name, updater_->stateProgram(), p.name);
}

std::optional<std::string> AlphaZeroTrainer::setParameter(const std::string& name, const params::ParamValue& value) {
  const params::ParameterSpec* spec = params::ParameterRegistry::standard().find(name);
  if (!spec) return "unknown parameter '" + name + "'";
  if (auto problem = params::checkValue(*spec, value)) return problem;
  if (!spec->live) return name + " applies only when a run starts; restart the run to change it";
  const params::ParamValue before = params_.get(name);
  if (auto problem = params_.set(name, value)) return problem;
  search_ = params::readSearchParams(params_);
  train_ = params::readTrainParams(params_);
  search::SelfPlaySearch& selfPlay = selfPlay_->search();
  for (auto* s : {&selfPlay, analysis_.get()})
    if (auto problem = s->setConfig(search::configFor(search_, s == &selfPlay ? SearchUse::SelfPlay : SearchUse::Evaluation))) {
      params_.set(name, before);
      search_ = params::readSearchParams(params_);
      train_ = params::readTrainParams(params_);
      selfPlay.setConfig(search::configFor(search_, SearchUse::SelfPlay));
      analysis_->setConfig(search::configFor(search_, SearchUse::Evaluation));
      return problem;
    }
  updater_->setConfig(optimizerConfig(train_));
  if (exchange_) exchange_->setChecksumEvery(params::readDistParams(params_).checksumEvery);
  return std::nullopt;
}

IterationReport AlphaZeroTrainer::runIteration(const std::function<bool()>& cancelled) {
  const auto start = Clock::now();
  IterationReport report;
  report.overlapped = train_.overlap;
  report.selfPlayWeightsStep = updater_->steps();
  const double dataBefore = store_->dataSeconds();
  std::optional<TrainingPhase> training;
  if (train_.overlap) training.emplace(*updater_, *store_, train_.stepsPerIteration, train_.batchSize, rng_);
  const std::int64_t games = selfPlay_->play(train_.gamesPerIteration, *store_, cancelled, report, training ? &*training : nullptr);
  double hostData = 0;  // the commit and the weights' copy, timed on the host
  auto commit = [&] {
    const auto t = Clock::now();
    store_->commit();
    hostData += since(t);
  };
  if (!train_.overlap) {
    commit();
    training.emplace(*updater_, *store_, train_.stepsPerIteration, train_.batchSize, rng_);
  }
  try {
    training->finish(iteration_, report);
  } catch (const LossNotFinite& e) {
    throw std::runtime_error(lossNotFinite(e.loss));
  }
  // After the training steps, whose collectives every rank calls in the same order whichever
  // moves they were queued between: the games of every rank.
  gamesPlayed_ += exchange_ ? exchange_->sum(games) : games;
  if (train_.overlap) commit();
  const auto copyStart = Clock::now();
  if (report.trainingSteps > 0) syncInference();
  hostData += since(copyStart);
  // A device store times its own copies there (recording, committing, drawing batches).
  if (store_->device() == "cpu") report.dataSeconds += hostData;
  else report.dataSeconds = store_->dataSeconds() - dataBefore + since(copyStart);
  ++iteration_;
  report.iteration = iteration_;
  report.gamesPlayed = gamesPlayed_;
  report.positions = store_->size();

  if (rank() == 0 && train_.evalGames > 0 && iteration_ % train_.evalEvery == 0) {  // the ranks share one network: rank 0 evaluates it
    const int games = int(train_.evalGames);
    // A stop asked for during the evaluation ends it at the next move (the games finished count):
    // an evaluation of 100,000 games would otherwise hold the run past Ctrl-C for minutes.
    for (const std::string& opponent : {std::string("random"), env::findEnvironment(project_.environment)->evaluationOpponent})
      if (EvaluationResult r = evaluate(opponent, games, std::uint64_t(iteration_), cancelled); r.games > 0) report.evaluations.push_back(std::move(r));
  }
  report.wallSeconds = since(start);
  return report;
}

void AlphaZeroTrainer::networkOutputs(const float* obs, std::int64_t count, std::vector<float>* logits, std::vector<float>* values) {
  const std::int64_t n = std::min(count, inferenceBatch_);
  std::vector<float> batch(size_t(inferenceBatch_ * obsSize_), 0.0f);
  std::copy(obs, obs + n * obsSize_, batch.begin());
  inference_->setInput("obs", batch.data(), batch.size());
  inference_->run();
  logits->resize(size_t(inferenceBatch_ * actions_));
  values->resize(size_t(inferenceBatch_));
  inference_->readOutput("logits", logits->data(), logits->size());
  inference_->readOutput("value", values->data(), values->size());
  logits->resize(size_t(n * actions_));
  values->resize(size_t(n));
}

std::string AlphaZeroTrainer::lossNotFinite(double loss) {
  const std::string became = "the loss became " + std::string(std::isnan(loss) ? "NaN" : "infinite") + " in iteration " + std::to_string(iteration_ + 1);
  // The steps drew from the ring, whose positions are finite (self-play makes them so, and a
  // checkpoint's are checked when it is restored); the inference network still has the weights
  // from before this iteration's steps.
  const search::ReplayRing ring = store_->ring();
  auto finite = [](const float* v, std::int64_t n) { return std::all_of(v, v + n, [](float x) { return std::isfinite(x); }); };
  std::vector<float> logits, values;
  if (ring.size > 0) networkOutputs(ring.obs.data(), ring.size, &logits, &values);
  const char* output = !finite(values.data(), std::int64_t(values.size())) ? "value output on the replay buffer's positions is already not a finite number"
                       : !finite(logits.data(), std::int64_t(logits.size())) ? "logits on the replay buffer's positions are already not finite numbers"
                                                                            : nullptr;
  if (output && iteration_ == 0)
    return became + ": the policy's " + output + " (NaN or infinite), before any update, so the policy computes it from its input (a log or " +
           "square root of a negative number, a division by zero); lowering train.learning_rate will not help: check the policy" +
           checkpointKept(iteration_);
  if (output)  // the weights earlier updates made: the policy's computation, or updates that took them there
    return became + ": the policy's " + output + " (NaN or infinite) with the weights of the iteration before, before this iteration's " +
           "update: either the policy computes it from its input for such weights (a log or square root of a negative number, a division " +
           "by zero) or earlier updates took the weights there; check the policy, or lower train.learning_rate" + checkpointKept(iteration_);
  return became + "; lower train.learning_rate or clip harder with a smaller train.grad_clip" + checkpointKept(iteration_);
}

TreeSnapshot AlphaZeroTrainer::snapshot(int game, int maxNodes) const {
  TreeSnapshot snap = selfPlay_->snapshot(game, maxNodes);
  snap.iteration = iteration_;
  snap.environment = project_.environment;
  return snap;
}

std::shared_ptr<search::DeviceSunburst> AlphaZeroTrainer::deviceSunburst() {
  if (!sunburstAsked_) {
    sunburstAsked_ = true;
    sunburst_ = selfPlay_->search().deviceSunburst();
  }
  return sunburst_;
}

EvaluationResult AlphaZeroTrainer::evaluate(const std::string& opponentSpec, int games, std::uint64_t seed, const std::function<bool()>& cancelled) {
  if (auto tooLarge = refuseIfTooLarge(estimateEvaluationMemory(project_, games), availableMemory())) throw std::invalid_argument(*tooLarge);
  std::string error;
  auto opponent = makeOpponent(opponentSpec, project_.environment, seed * 7919 + 13, &error);
  if (!opponent) throw std::invalid_argument(error);
  return playAgainst(*opponent, games, seed, cancelled);
}

EvaluationResult AlphaZeroTrainer::evaluate(Opponent& opponent, int games, std::uint64_t seed) {
  if (auto tooLarge = refuseIfTooLarge(estimateEvaluationMemory(project_, games), availableMemory())) throw std::invalid_argument(*tooLarge);
  return playAgainst(opponent, games, seed);
}

EvaluationResult AlphaZeroTrainer::playAgainst(Opponent& opponent, int games, std::uint64_t seed, const std::function<bool()>& cancelled) {
  auto agent = makeSearch(evaluationRound(games), SearchUse::Evaluation, seed, nullptr);
  return playMatch(*agent, opponent, games, cancelled);
}

std::unique_ptr<Opponent> AlphaZeroTrainer::asOpponent(int games, std::uint64_t seed, std::string name) {
  return std::make_unique<AgentOpponent>(makeSearch(games, SearchUse::Evaluation, seed, nullptr), std::move(name));
}

search::RootStats AlphaZeroTrainer::analyse(const std::string& moves, int simulations, std::string* error) {
  if (!analysis_->setPosition(0, moves, error)) return {};
  if (analysis_->positions().terminal(0)) {
    if (error) *error = "the game is over in this position";
    return {};
  }
  search::SearchConfig c = search::configFor(search_, SearchUse::Evaluation);
  if (simulations > 0) c.simulations = simulations;
  analysis_->setConfig(c);
  analysis_->search({0});
  analysis_->setConfig(search::configFor(search_, SearchUse::Evaluation));
  search::RootStats stats = analysis_->rootStats(0);
  // The network's own logits at the root: the search gives a move whose logit is NaN no weight,
  // which its prior alone would not tell (analysisJson prints such a prior as null).
  std::vector<float> obs(static_cast<size_t>(obsSize_)), values;
  analysis_->positions().observe(0, obs.data());
  networkOutputs(obs.data(), 1, &stats.logits, &values);
  return stats;
}

bool AlphaZeroTrainer::startAnalysis(const std::vector<int>& moves, std::string* error) {
  if (!analysis_->setPosition(0, env::moveNotation(moves), error)) return false;
  if (analysis_->positions().terminal(0)) {
    if (error) *error = "the game is over in this position";
    return false;
  }
  analysisMoves_ = moves;
  analysis_->search({0}, 0);  // expands and evaluates the root
  return true;
}

void AlphaZeroTrainer::stepAnalysis() { analysis_->search({0}, 1); }

TreeSnapshot AlphaZeroTrainer::analysisSnapshot(int maxNodes) const {
  TreeSnapshot snap = snapshotTree(*analysis_, 0, maxNodes);
  snap.rootMoves = analysisMoves_;
  snap.iteration = iteration_;
  snap.environment = project_.environment;
  return snap;
}

std::string AlphaZeroTrainer::checkpoint() const {
  return writeCheckpoint({iteration_, gamesPlayed_, updater_->steps(), rng_}, updater_->stateProgram(), store_->ring());
}

std::uint64_t AlphaZeroTrainer::checkpointSizeLimit() const { return train::checkpointSizeLimit(updater_->stateProgram(), store_->setup()); }

bool AlphaZeroTrainer::restore(const std::string& bytes, std::string* error) {
  std::optional<Checkpoint> c = readCheckpoint(bytes, updater_->stateProgram(), store_->setup(), error);
  if (!c) return false;
  // Everything checked: apply.
  for (const auto& [name, v] : c->tensors) updater_->setParameter(name, v);
  iteration_ = c->counters.iteration;
  gamesPlayed_ = c->counters.gamesPlayed;
  updater_->setSteps(c->counters.optimizerSteps);
  rng_ = c->counters.rng;
  // Every rank restores rank 0's checkpoint; the others draw from streams of their own.
  if (rank() > 0) rng_.seed(rankSeed(rng_(), rank()));
  store_->load(std::move(c->ring));
  syncInference();
  selfPlay_->restart();
  return true;
}

}  // namespace cas::train
