#include "core/train/muzero_learner.hpp"

#include <algorithm>
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

pdl::CompiledLearnedModel compileModel(const std::string& source, const env::EnvironmentInfo& environment, std::int64_t batch,
                                       std::int64_t unrollSteps) {
  pdl::LearnedModelOptions o;
  o.fileName = "model.pdl";
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

std::unique_ptr<env::SingleAgentEnvironments> environmentCopies(const env::EnvironmentInfo& environment, const MuZeroOptions& o) {
  if (!environment.singleAgent || environment.needsSeries)
    throw std::invalid_argument("MuZero plays a single-agent environment with its own CPU twin; '" + environment.name + "' is not one");
  return environment.singleAgent(o.copies, o.seed, {});
}

}  // namespace

MuZeroLearner::MuZeroLearner(exec::Backend& backend, const std::string& source, const env::EnvironmentInfo& environment,
                             MuZeroOptions options)
    : options_(std::move(options)) {
  const int leaves = std::max(1, options_.search.leavesPerStep);
  searchModel_ = compileModel(source, environment, std::int64_t(options_.copies) * leaves, 0);
  trainingModel_ = compileModel(source, environment, options_.batch, options_.unrollSteps);
  represent_ = compileProgram(backend, searchModel_->represent);
  recurrent_ = compileProgram(backend, searchModel_->recurrent);
  predict_ = compileProgram(backend, searchModel_->predict);
  updater_ = std::make_unique<Updater>(backend, *trainingModel_->unrolled, LossKind::MuZero, options_.optimizer, environment.actionCount,
                                       options_.seed);
  copyParameters();

  envs_ = environmentCopies(environment, options_);
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
  selfPlay_ = std::make_unique<MuZeroSelfPlay>(*envs_, *search_, *replay_, options_.temperature, options_.seed);
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

MuZeroIterationStats MuZeroLearner::iteration() {
  MuZeroIterationStats stats;
  stats.iteration = ++iterations_;
  for (int move = 0; move < options_.selfPlayMoves; ++move) selfPlay_->step();
  updater_->resetLossSums();
  if (replay_->positions() > 0) {
    for (int u = 0; u < options_.updates; ++u) {
      const std::uint64_t draw = search::replayDraw(options_.seed ^ kSampleStream, std::uint64_t(updater_->steps()));
      replay_->sample(options_.batch, draw).setInputs(updater_->executable());
      updater_->step();
      stats.updates += 1;
    }
    copyParameters();
  }
  stats.loss = updater_->lossSums();
  stats.selfPlay = selfPlay_->stats();
  stats.replayPositions = replay_->positions();
  return stats;
}

}  // namespace cas::train
