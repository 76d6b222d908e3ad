#include "core/train/muzero_learner.hpp"

#include <algorithm>
#include <chrono>
#include <functional>
#include <numeric>
#include <stdexcept>

#include "core/env/single_agent.hpp"
#include "core/ir/passes.hpp"
#include "core/search/replay_draw.hpp"
#include "core/support/diagnostic.hpp"

namespace cas::train {
namespace {

// The replay's draws are keyed apart from self-play's action draws (which use the seed as it is).
constexpr std::uint64_t kSampleStream = 0x5A4D504C45ull;

pdl::CompiledLearnedModel compileModel(const std::string& source, const env::EnvironmentInfo& environment, const MuZeroOptions& options,
                                       std::int64_t batch, std::int64_t unrollSteps) {
  pdl::LearnedModelOptions o;
  o.fileName = options.fileName;
  o.seed = options.modelSeed;
  o.observationShape.assign(environment.observationShape.begin(), environment.observationShape.end());
  o.actionCount = environment.actionCount;
  o.batch = batch;
  o.training = unrollSteps > 0;
  o.unrollSteps = unrollSteps;
  o.scaledHeads = unrollSteps == 0;  // the search's programs answer in the environment's units
  pdl::LearnedModelResult r = pdl::compileLearnedModel(source, o);
  if (!r.model) {
    std::string text;
    for (const Diagnostic& d : r.diagnostics.items()) text += (text.empty() ? "" : "\n") + formatHeadline(d);
    throw std::invalid_argument(text.empty() ? "the learned model does not compile" : text);
  }
  return std::move(*r.model);
}

std::unique_ptr<exec::Executable> compileProgram(exec::Backend& backend, const pdl::CompiledPolicy& program) {
  ir::Graph g = program.graph;
  ir::runPasses(g, ir::defaultPipeline());
  return backend.compile(g);
}

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

}  // namespace

MuZeroLearner::MuZeroLearner(exec::Backend& backend, const std::string& source, const env::EnvironmentInfo& environment,
                             MuZeroOptions options)
    : options_(std::move(options)), environment_(environment) {
  if (!environment.singleAgent || environment.needsSeries)
    throw std::invalid_argument("MuZero plays a single-agent environment with its own CPU twin; '" + environment.name + "' is not one");
  const int leaves = std::max(1, options_.search.leavesPerStep);
  searchModel_ = compileModel(source, environment, options_, std::int64_t(options_.copies) * leaves, 0);
  trainingModel_ = compileModel(source, environment, options_, options_.batch, options_.unrollSteps);
  represent_ = compileProgram(backend, searchModel_->represent);
  recurrent_ = compileProgram(backend, searchModel_->recurrent);
  predict_ = compileProgram(backend, searchModel_->predict);
  updater_ = std::make_unique<Updater>(backend, *trainingModel_->unrolled, LossKind::MuZero, options_.optimizer, environment.actionCount,
                                       options_.seed);
  copyParameters();

  search::LearnedSearchSetup setup;
  setup.games = options_.copies;
  setup.observationSize =
      int(std::accumulate(environment.observationShape.begin(), environment.observationShape.end(), 1, std::multiplies<>()));
  setup.stateSize = int(ir::numel(searchModel_->stateShape));
  setup.actions = environment.actionCount;
  setup.config = options_.search;
  setup.seed = options_.seed;
  setup.evaluator = {search::LearnedModelEvaluator::Kind::Network, represent_.get(), recurrent_.get(), predict_.get()};
  search_ = search::makeLearnedSearch(backend, setup, options_.searchDevice, &searchNote_);

  MuZeroTargetSetup targets;
  targets.observationSize = setup.observationSize;
  targets.actions = setup.actions;
  targets.unrollSteps = options_.unrollSteps;
  targets.tdSteps = options_.tdSteps;
  targets.discount = options_.search.discount;
  targets.capacity = options_.capacity;
  replay_ = std::make_unique<EpisodeReplay>(targets);
  startEpisodes(options_.seed);
}

void MuZeroLearner::startEpisodes(std::uint64_t seed) {
  selfPlay_.reset();
  envs_ = environment_.singleAgent(options_.copies, seed, {});
  selfPlay_ = std::make_unique<MuZeroSelfPlay>(*envs_, *search_, *replay_, options_.temperature, seed);
}

void MuZeroLearner::setLiveOptions(const MuZeroOptions& o) {
  search::LearnedSearchConfig config = o.search;
  config.nodeBudget = options_.search.nodeBudget;
  config.discount = options_.search.discount;
  config.leavesPerStep = options_.search.leavesPerStep;  // the programs' batch holds copies x leaves rows
  options_.search = config;
  search_->setConfig(config);
  options_.selfPlayMoves = o.selfPlayMoves;
  options_.updates = o.updates;
  options_.temperature = o.temperature;
  options_.optimizer = o.optimizer;
  updater_->setConfig(o.optimizer);
  selfPlay_->setTemperature(o.temperature);
}

std::vector<search::RootStats> MuZeroLearner::plan(const float* observations, int n) {
  if (n < 1 || n > options_.copies)
    throw std::invalid_argument("MuZero plans 1 to " + std::to_string(options_.copies) + " positions at once, not " + std::to_string(n));
  search::LearnedSearchConfig quiet = options_.search;
  quiet.dirichletFraction = 0;  // evaluation plays its best: no root noise
  search_->setConfig(quiet);
  std::vector<int> games(static_cast<size_t>(n));
  std::iota(games.begin(), games.end(), 0);
  search_->search(games, observations);
  std::vector<search::RootStats> roots = search_->rootStats(games);
  search_->setConfig(options_.search);
  return roots;
}

MuZeroLearner::~MuZeroLearner() = default;

// Every parameter of the search's three programs from the updater, by name.
void MuZeroLearner::copyParameters() {
  for (exec::Executable* program : {represent_.get(), recurrent_.get(), predict_.get()})
    for (const ir::Node& n : program->graph().nodes)
      if (n.op == ir::Op::Input && n.attrs.role == ir::InputRole::Parameter) {
        const std::vector<float> v = updater_->parameter(n.attrs.name);
        program->setInput(n.attrs.name, v.data(), v.size());
      }
}

std::vector<float> MuZeroLearner::searchParameter(const std::string& program, const std::string& name) const {
  const exec::Executable* exe = program == "represent"   ? represent_.get()
                                : program == "recurrent" ? recurrent_.get()
                                : program == "predict"   ? predict_.get()
                                                         : nullptr;
  if (!exe) throw std::invalid_argument("the search has no program '" + program + "'; its programs: represent, recurrent, predict");
  for (const ir::Node& n : exe->graph().nodes)
    if (n.op == ir::Op::Input && n.attrs.role == ir::InputRole::Parameter && n.attrs.name == name) {
      std::vector<float> v(size_t(ir::numel(n.shape)));
      exe->readInput(name, v.data(), v.size());
      return v;
    }
  return {};
}

MuZeroIterationStats MuZeroLearner::iteration(const std::function<bool()>& cancelled) {
  MuZeroIterationStats stats;
  stats.iteration = ++iterations_;
  auto stop = [&] { return stats.stopped = stats.stopped || (cancelled && cancelled()); };
  const auto selfPlayStart = Clock::now();
  for (int move = 0; move < options_.selfPlayMoves && !stop(); ++move) selfPlay_->step();
  stats.selfPlaySeconds = since(selfPlayStart);
  const auto trainStart = Clock::now();
  updater_->resetLossSums();
  if (replay_->positions() > 0) {
    for (int u = 0; u < options_.updates && !stop(); ++u) {
      const std::uint64_t draw = search::replayDraw(options_.seed ^ kSampleStream, std::uint64_t(updater_->steps()));
      replay_->sample(options_.batch, draw).setInputs(updater_->executable());
      updater_->step();
      stats.updates += 1;
    }
    copyParameters();
  }
  stats.trainSeconds = since(trainStart);
  stats.loss = updater_->lossSums();
  stats.selfPlay = selfPlay_->stats();
  stats.replayPositions = replay_->positions();
  return stats;
}

}  // namespace cas::train
