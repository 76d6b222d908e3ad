#include "core/train/muzero_trainer.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <numeric>
#include <stdexcept>

#include "core/env/environments.hpp"
#include "core/env/game_random.hpp"
#include "core/support/atomic_file.hpp"
#include "core/train/checkpoint.hpp"
#include "core/train/checkpoint_header.hpp"
#include "core/train/training_step.hpp"

namespace cas::train {
namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

std::string policySource(const project::Project& project) {
  std::string error;
  std::optional<std::string> text = readFile(project.policyFile, kPolicyFileLimit, &error);
  if (!text) throw std::runtime_error(error);  // it names the file
  return std::move(*text);
}

search::LearnedSearchConfig learnedSearchConfig(const params::ParameterSet& set, const params::MuZeroParams& muzero) {
  search::LearnedSearchConfig c;
  static_cast<search::SearchConfig&>(c) = search::configFor(params::readSearchParams(set), search::SearchUse::SelfPlay);
  c.discount = float(muzero.discount);
  c.minMaxFloor = float(muzero.minMaxFloor);
  return c;
}

// The training figures of an iteration's updates, as the engine reports them.
void reportLoss(const MuZeroIterationStats& stats, IterationReport& report) {
  report.trainingSteps = stats.updates;
  if (stats.updates == 0) return;
  const auto n = double(stats.updates);
  report.loss = float(stats.loss.total / n);
  report.policyLoss = float(stats.loss.term("policy") / n);
  report.valueLoss = float(stats.loss.term("value") / n);
  report.l2 = float(stats.loss.term("l2") / n);
  report.episodes->rewardLoss = float(stats.loss.term("reward") / n);
}

}  // namespace

std::optional<std::string> muZeroConfigurationProblem(const project::Project& project) {
  const env::EnvironmentInfo* e = env::findEnvironment(project.environment);
  if (!e || !e->singleAgent || e->needsSeries)
    return "algorithm 'muzero' plays a single-agent environment without a price series; it cannot play '" + project.environment + "'";
  const params::MuZeroParams mz = params::readMuZeroParams(project.parameters);
  const params::SearchParams search = params::readSearchParams(project.parameters);
  const std::int64_t rows = mz.copies * search.leavesPerStep;
  if (rows > pdl::kMaxCompiledBatch)
    return "muzero.copies x search.leaves_per_step = " + std::to_string(mz.copies) + " x " + std::to_string(search.leavesPerStep) + " = " +
           std::to_string(rows) + " rows is more than the " + std::to_string(pdl::kMaxCompiledBatch) +
           " a compiled batch may hold; lower muzero.copies or search.leaves_per_step";
  return std::nullopt;
}

MuZeroTrainer::MuZeroTrainer(const project::Project& project, std::shared_ptr<exec::Backend> backend)
    : project_(project), params_(project.parameters), muzero_(params::readMuZeroParams(params_)), train_(params::readTrainParams(params_)),
      backend_(std::move(backend)), rng_(std::uint64_t(params::readRuntimeParams(params_).seed) * 0x2545F4914F6CDD1Dull + 29) {
  if (auto problem = trainingProblem(project_)) throw std::runtime_error(*problem);  // before anything is allocated
  const env::EnvironmentInfo& e = *env::findEnvironment(project_.environment);
  actions_ = e.actionCount;
  observationSize_ = std::accumulate(e.observationShape.begin(), e.observationShape.end(), 1, std::multiplies<>());
  try {
    learner_ = std::make_unique<MuZeroLearner>(*backend_, policySource(project_), e, options());
  } catch (const std::invalid_argument& bad) {  // the model's diagnostics, one per line
    std::string first = bad.what();
    first = first.substr(0, first.find('\n'));
    throw std::runtime_error("the learned model does not compile: " + first);
  }
  rolloutNote_ = "self-play steps the environments' CPU twins on the host; " + learner_->searchNote();
}

MuZeroTrainer::~MuZeroTrainer() = default;

MuZeroOptions MuZeroTrainer::options() const {
  const params::SearchParams search = params::readSearchParams(params_);
  const params::RuntimeParams runtime = params::readRuntimeParams(params_);
  MuZeroOptions o;
  o.copies = int(muzero_.copies);
  o.search = learnedSearchConfig(params_, muzero_);
  o.unrollSteps = int(muzero_.unrollSteps);
  o.tdSteps = int(muzero_.tdSteps);
  o.batch = train_.batchSize;
  o.capacity = train_.replayCapacity;
  o.selfPlayMoves = int(muzero_.movesPerIteration);
  o.updates = int(muzero_.updatesPerIteration);
  o.temperature = float(muzero_.temperature);
  o.optimizer = optimizerConfig(train_);
  o.seed = std::uint64_t(runtime.seed);
  o.modelSeed = std::uint64_t(runtime.seed);
  o.fileName = project_.policyFile.string();
  o.searchDevice = search.device;
  return o;
}

std::int64_t MuZeroTrainer::inferenceBatch() const { return muzero_.copies * std::max<std::int64_t>(1, learner_->options().search.leavesPerStep); }

std::optional<std::string> MuZeroTrainer::setParameter(const std::string& name, const params::ParamValue& value) {
  const params::ParameterSpec* spec = params::ParameterRegistry::standard().find(name);
  if (!spec) return "unknown parameter '" + name + "'";
  if (auto problem = params::checkValue(*spec, value)) return problem;
  if (!spec->live) return name + " applies only when a run starts; restart the run to change it";
  if (auto problem = params_.set(name, value)) return problem;
  muzero_ = params::readMuZeroParams(params_);
  train_ = params::readTrainParams(params_);
  learner_->setLiveOptions(options());
  return std::nullopt;
}

IterationReport MuZeroTrainer::runIteration(const std::function<bool()>& cancelled) {
  const auto start = Clock::now();
  const MuZeroIterationStats stats = learner_->iteration(cancelled);
  if (!std::isfinite(stats.loss.total))
    throw std::runtime_error("the loss became " + std::string(std::isnan(stats.loss.total) ? "NaN" : "infinite") + " in iteration " +
                             std::to_string(stats.iteration) + "; lower train.learning_rate or clip harder with a smaller train.grad_clip" +
                             checkpointKept(stats.iteration - 1));
  IterationReport report;
  report.episodes.emplace();
  EpisodeReport& e = *report.episodes;
  const MuZeroSelfPlayStats& now = stats.selfPlay;
  environmentSteps_ += now.moves - counted_.moves;
  episodesFinished_ += now.episodes - counted_.episodes;
  e.episodes = now.episodes - counted_.episodes;
  if (e.episodes > 0) {
    e.returnMean = (now.returnSum - counted_.returnSum) / double(e.episodes);
    e.lengthMean = double(now.lengthSum - counted_.lengthSum) / double(e.episodes);
  }
  e.environmentSteps = environmentSteps_;
  e.rolloutSeconds = stats.selfPlaySeconds;
  e.learningRate = learner_->options().optimizer.learningRate;
  const std::int64_t moves = now.moves - counted_.moves;
  counted_ = now;
  reportLoss(stats, report);
  report.iteration = stats.iteration;
  report.gamesPlayed = episodesFinished_;
  report.positions = stats.replayPositions;
  report.batchSize = train_.batchSize;
  report.selfPlaySeconds = stats.selfPlaySeconds;
  report.trainSeconds = stats.trainSeconds;
  report.wallSeconds = since(start);
  e.stepsPerSecond = double(moves) / std::max(report.wallSeconds, 1e-9);
  report.simulationsPerSecond = double(moves) * double(learner_->options().search.simulations) / std::max(stats.selfPlaySeconds, 1e-9);
  return report;
}

int MuZeroTrainer::chooseAction(const search::RootStats& root, bool stochastic, env::GameRandom& random) {
  if (!stochastic) return root.chosen;
  double u = random.uniform();
  for (size_t a = 0; a < root.policy.size(); ++a)
    if ((u -= double(root.policy[a])) < 0) return int(a);
  return root.chosen;  // rounding left u at the top
}

EpisodeEvaluation MuZeroTrainer::evaluate(int episodes, bool stochastic, std::uint64_t seed) {
  if (episodes < 1) throw std::invalid_argument("evaluate needs at least one episode");
  const int n = std::min(int(muzero_.copies), episodes);
  const auto obs = size_t(observationSize_);
  auto envs = env::findEnvironment(project_.environment)->singleAgent(n, seed, {});
  std::vector<env::GameRandom> random;
  for (int c = 0; c < n; ++c) random.push_back(env::GameRandom::forGame(seed ^ 0xA5A5A5A5A5A5A5A5ull, c));
  // Copy c plays episodes c, c + n, c + 2n, ... until `episodes` have started (as PPO's does).
  EpisodeEvaluation out;
  out.returns.assign(size_t(episodes), 0);
  std::vector<int> slot(static_cast<size_t>(n));
  std::iota(slot.begin(), slot.end(), 0);
  int started = n;
  std::vector<float> observations(size_t(n) * obs);
  for (int c = 0; c < n; ++c) envs->observe(c, &observations[size_t(c) * obs]);
  while (std::any_of(slot.begin(), slot.end(), [](int s) { return s >= 0; })) {
    const std::vector<search::RootStats> roots = learner_->plan(observations.data(), n);
    for (int c = 0; c < n; ++c) {
      if (slot[size_t(c)] < 0) continue;
      const env::StepResult step = envs->step(c, chooseAction(roots[size_t(c)], stochastic, random[size_t(c)]));
      out.returns[size_t(slot[size_t(c)])] += step.reward;
      if (step.terminated || step.truncated) {
        envs->reset(c);
        slot[size_t(c)] = started < episodes ? started++ : -1;
      }
      envs->observe(c, &observations[size_t(c) * obs]);
    }
  }
  return out;
}

RecordedEpisode MuZeroTrainer::recordEpisode(bool stochastic, std::uint64_t seed, int maxSteps) {
  const env::EnvironmentInfo& info = *env::findEnvironment(project_.environment);
  auto envs = info.singleAgent(1, seed, {});
  env::GameRandom random = env::GameRandom::forGame(seed ^ 0xA5A5A5A5A5A5A5A5ull, 0);
  RecordedEpisode out;
  out.environment = project_.environment;
  out.observationShape = info.observationShape;
  out.scalarNames = envs->scalarNames();
  std::vector<float> observation(static_cast<size_t>(observationSize_));
  envs->observe(0, observation.data());
  for (int t = 0; t < maxSteps; ++t) {
    const search::RootStats root = learner_->plan(observation.data(), 1).front();
    EpisodeFrame frame;
    frame.observation = observation;
    frame.scalars = envs->scalars(0);
    frame.probabilities = root.policy;
    frame.value = root.value;
    frame.action = chooseAction(root, stochastic, random);
    const env::StepResult step = envs->step(0, frame.action);
    frame.reward = float(step.reward);
    out.episodeReturn += step.reward;
    out.frames.push_back(std::move(frame));
    envs->observe(0, observation.data());
    if (step.terminated || step.truncated) {
      out.ended = true;
      break;
    }
  }
  EpisodeFrame last;
  last.observation = observation;
  last.scalars = envs->scalars(0);
  out.frames.push_back(std::move(last));
  return out;
}

search::ReplaySetup MuZeroTrainer::emptyRing() const { return {project_.environment, 0, 0, observationSize_, actions_}; }

std::uint64_t MuZeroTrainer::sectionLimit() const { return 8 + EpisodeReplay::sectionSizeLimit(learner_->replay().setup()); }

std::string MuZeroTrainer::checkpoint() const {
  Writer section;
  section.pod(environmentSteps_);
  learner_->replay().write(section);
  const Updater& updater = learner_->updater();
  return writeCheckpoint({learner_->iterations(), episodesFinished_, updater.steps(), rng_}, updater.stateProgram(),
                         search::ReplayRing(0, observationSize_, actions_), section.bytes());
}

std::uint64_t MuZeroTrainer::checkpointSizeLimit() const {
  return train::checkpointSizeLimit(learner_->updater().stateProgram(), emptyRing(), sectionLimit());
}

bool MuZeroTrainer::restore(const std::string& bytes, std::string* error) {
  Updater& updater = learner_->updater();
  std::optional<Checkpoint> c = readCheckpoint(bytes, updater.stateProgram(), emptyRing(), error, sectionLimit());
  if (!c) return false;
  Reader section(c->section);
  const auto steps = section.pod<std::int64_t>();
  if (!section.ok()) {
    if (error) *error = "the checkpoint holds no MuZero replay (a checkpoint of another algorithm, or one altered after it was written)";
    return false;
  }
  if (steps < 0 || steps > kMaxCheckpointCount) {  // the bound games and optimizer steps have (checkpoint_header.hpp)
    if (error) *error = "its environment steps are " + std::to_string(steps) + ", outside 0 to 2^56; it was altered after it was written";
    return false;
  }
  EpisodeReplay replay(learner_->replay().setup());
  if (!replay.read(section, error)) return false;
  if (!section.atEnd()) {
    if (error) *error = "the checkpoint's replay section has bytes after its end; it was altered after it was written";
    return false;
  }
  learner_->replay() = std::move(replay);
  for (const auto& [name, v] : c->tensors) updater.setParameter(name, v);
  updater.setSteps(c->counters.optimizerSteps);
  learner_->setIterations(c->counters.iteration);
  learner_->parametersChanged();
  episodesFinished_ = c->counters.gamesPlayed;
  environmentSteps_ = steps;
  rng_ = c->counters.rng;
  learner_->startEpisodes(rng_());
  counted_ = MuZeroSelfPlayStats{};
  return true;
}

}  // namespace cas::train
