#include "core/train/ppo.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>

#include "core/env/environments.hpp"
#include "core/env/trading.hpp"
#include "core/ir/passes.hpp"
#include "core/train/checkpoint.hpp"
#include "core/train/host_rollout.hpp"
#include "core/train/ppo_math.hpp"
#include "core/train/training_step.hpp"

namespace cas::train {
namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

using ppo_math::logSumExp;
using ppo_math::greedyAction;
using ppo_math::sampleAction;

}  // namespace

double EpisodeEvaluation::mean() const { return returns.empty() ? 0 : std::accumulate(returns.begin(), returns.end(), 0.0) / double(returns.size()); }

double EpisodeEvaluation::median() const {
  if (returns.empty()) return 0;
  // A NaN has no place in an order (sorting with one is undefined): the median of returns with
  // one is no number, as their mean is not.
  if (std::any_of(returns.begin(), returns.end(), [](double r) { return std::isnan(r); })) return std::numeric_limits<double>::quiet_NaN();
  std::vector<double> sorted = returns;
  std::sort(sorted.begin(), sorted.end());
  const size_t n = sorted.size();
  return n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
}

double EpisodeEvaluation::standardDeviation() const {
  if (returns.empty()) return 0;
  const double m = mean();
  double squares = 0;
  for (double r : returns) squares += (r - m) * (r - m);
  return std::sqrt(squares / double(returns.size()));
}

std::optional<std::string> ppoConfigurationProblem(const project::Project& project) {
  const env::EnvironmentInfo* e = env::findEnvironment(project.environment);
  if (!e || !e->singleAgent) return "algorithm 'ppo' cannot step environment '" + project.environment + "'";
  if (e->needsSeries && !project.series) return "'" + project.environment + "' trades over a price series the project names (series = \"prices.csv\"); it names none";
  if (e->needsSeries)
    if (auto problem = env::splitProblem(project.series->size(), project.parameters.getFloat("trading.train_fraction"), env::stocksSetup()))
      return project.series->file + ": " + *problem;
  const params::PpoParams ppo = params::readPpoParams(project.parameters);
  const std::int64_t rollout = ppo.envs * ppo.rolloutSteps;
  if (rollout % ppo.minibatches != 0)
    return "ppo.minibatches = " + std::to_string(ppo.minibatches) + " does not divide a rollout of ppo.envs x ppo.rollout_steps = " +
           std::to_string(ppo.envs) + " x " + std::to_string(ppo.rolloutSteps) + " = " + std::to_string(rollout) + " samples; choose a divisor of it";
  if (const std::int64_t minibatch = rollout / ppo.minibatches; minibatch > pdl::kMaxCompiledBatch)
    return "a minibatch of ppo.envs x ppo.rollout_steps / ppo.minibatches = " + std::to_string(ppo.envs) + " x " + std::to_string(ppo.rolloutSteps) +
           " / " + std::to_string(ppo.minibatches) + " = " + std::to_string(minibatch) + " samples is more than the " +
           std::to_string(pdl::kMaxCompiledBatch) + " a compiled batch may hold; raise ppo.minibatches, or lower ppo.envs or ppo.rollout_steps";
  return std::nullopt;
}

PpoTrainer::PpoTrainer(const project::Project& project, std::shared_ptr<exec::Backend> backend)
    : project_(project), params_(project.parameters), ppo_(params::readPpoParams(params_)), train_(params::readTrainParams(params_)),
      backend_(std::move(backend)), rng_(std::uint64_t(params::readRuntimeParams(params_).seed) * 0x2545F4914F6CDD1Dull + 11) {
  if (auto problem = trainingProblem(project_)) throw std::runtime_error(*problem);  // before the rollout is allocated
  const env::EnvironmentInfo* e = env::findEnvironment(project_.environment);
  actions_ = e->actionCount;
  obsSize_ = std::accumulate(e->observationShape.begin(), e->observationShape.end(), 1, std::multiplies<>());

  auto compileAt = [&](std::int64_t batch, bool training) {
    pdl::CompileResult r = project::compilePolicy(project_, batch, nullptr, training);
    if (!r.policy) {
      std::string message = "the policy does not compile";
      if (!r.diagnostics.empty()) message += ": " + formatHeadline(r.diagnostics.items()[0]);
      throw std::runtime_error(message);
    }
    return std::move(*r.policy);
  };
  pdl::CompiledPolicy inference = compileAt(ppo_.envs, false);
  ir::runPasses(inference.graph, ir::defaultPipeline());
  inference_ = backend_->compile(inference.graph);
  const std::int64_t minibatch = rolloutSize() / ppo_.minibatches;
  updater_ = std::make_unique<Updater>(*backend_, compileAt(minibatch, true), LossKind::Ppo, optimizerConfig(),
                                       actions_, std::uint64_t(params::readRuntimeParams(params_).seed));

  syncInference();
  startEpisodes();
}

void PpoTrainer::syncInference() {
  for (const pdl::ParameterSummary& p : updater_->parameters()) inference_->copyInputFrom(p.name, updater_->executable(), p.name);
}

void PpoTrainer::startEpisodes() {
  const std::uint64_t environmentSeed = rng_(), actionSeed = rng_();
  std::vector<env::GameRandom> actionRandom;
  for (int e = 0; e < int(ppo_.envs); ++e) actionRandom.push_back(env::GameRandom::forGame(actionSeed, e));
  const RolloutSetup setup{project_.environment, ppo_.envs, ppo_.rolloutSteps, environmentSeed, std::move(actionRandom), inference_.get(),
                           &updater_->executable(), rolloutSize() / ppo_.minibatches, project::environmentData(project_)};
  rollout_.reset();
  rolloutOnDevice_ = false;
  if (ppo_.deviceRollout) {
    std::string reason = "the " + backend_->id() + " backend steps the environments' CPU twins and keeps the rollout in host memory";
    if (exec::DeviceServices* services = backend_->deviceServices()) rollout_ = services->createRollout(setup, &reason);
    rolloutOnDevice_ = rollout_ != nullptr;
    rolloutNote_ = rollout_ ? "the rollout runs on the device: the environments' device twins, the rollout and its minibatches stay there"
                            : "the rollout runs on the host (" + reason + ")";
  } else {
    rolloutNote_ = "the rollout runs on the host (ppo.device_rollout is off; set it to step the environments' device twins on the CUDA backend)";
  }
  if (!rollout_) rollout_ = std::make_unique<HostRollout>(setup);
}

OptimizerConfig ppoOptimizerConfig(const params::PpoParams& p, double learningRateFraction) {
  OptimizerConfig c;
  c.kind = "adam";
  c.epsilon = 1e-5f;  // CleanRL's ppo.py
  c.gradClip = float(p.maxGradNorm);
  c.learningRate = float(p.learningRate * learningRateFraction);
  return c;
}

OptimizerConfig PpoTrainer::optimizerConfig() const {
  // Annealed as CleanRL does: iteration i (from 0) of I steps with (1 - i / I) of the rate.
  const double iterations = std::ceil(double(ppo_.totalSteps) / double(rolloutSize()));
  const double fraction = ppo_.annealLearningRate ? std::max(0.0, 1.0 - double(iteration_) / iterations) : 1.0;
  return ppoOptimizerConfig(ppo_, fraction);
}

std::optional<std::string> PpoTrainer::setParameter(const std::string& name, const params::ParamValue& value) {
  const params::ParameterSpec* spec = params::ParameterRegistry::standard().find(name);
  if (!spec) return "unknown parameter '" + name + "'";
  if (auto problem = params::checkValue(*spec, value)) return problem;
  if (!spec->live) return name + " applies only when a run starts; restart the run to change it";
  if (auto problem = params_.set(name, value)) return problem;
  ppo_ = params::readPpoParams(params_);
  train_ = params::readTrainParams(params_);
  return std::nullopt;
}

void PpoTrainer::forward(const std::vector<float>& observations, std::vector<float>* logits, std::vector<float>* values) {
  inference_->setInput("obs", observations.data(), observations.size());
  inference_->run();
  if (logits) {
    logits->resize(size_t(ppo_.envs) * size_t(actions_));
    inference_->readOutput("logits", logits->data(), logits->size());
  }
  if (values) {
    values->resize(size_t(ppo_.envs));
    inference_->readOutput("value", values->data(), values->size());
  }
}

RolloutArrays PpoTrainer::lastRollout() const { return rollout_->read(); }

std::string PpoTrainer::lossNotFinite(double loss) const {
  const std::string became = "the loss became " + std::string(std::isnan(loss) ? "NaN" : "infinite") + " in iteration " + std::to_string(iteration_ + 1);
  // The rollout the update learned from was made before any update of this iteration: a value
  // that is not finite there came from the environment or from the policy's own computation.
  const RolloutArrays r = lastRollout();
  auto notFinite = [](const std::vector<float>& v) { return std::any_of(v.begin(), v.end(), [](float x) { return !std::isfinite(x); }); };
  const bool environment = notFinite(r.obs) || notFinite(r.rewards);
  const char* what = notFinite(r.obs)                               ? "the environment's observations in its rollout are"
                     : notFinite(r.rewards)                         ? "the environment's rewards in its rollout are"
                     : notFinite(r.values) || notFinite(r.lastValues) ? "the policy's value output in its rollout is"
                     : notFinite(r.logProbs)                        ? "the policy's action probabilities in its rollout are"
                                                                    : nullptr;
  if (what && environment)  // not the policy's doing: the environment (a trading project's price series) made them
    return became + ": " + what + " already not a finite number (NaN or infinite), before any update: the environment made them from its data " +
           "(a trading project's price series: check its prices); lowering ppo.learning_rate will not help" + checkpointKept(iteration_);
  if (what)
    return became + ": " + what + " already not a finite number (NaN or infinite), before any update, so the policy computes it from its input " +
           "(a log or square root of a negative number, a division by zero); lowering ppo.learning_rate will not help: check the policy" +
           checkpointKept(iteration_);
  return became + "; lower ppo.learning_rate or clip harder with a smaller ppo.max_grad_norm" + checkpointKept(iteration_);
}

void PpoTrainer::update(const std::function<bool()>& cancelled, IterationReport& report) {
  const std::int64_t total = rolloutSize(), minibatch = total / ppo_.minibatches;
  updater_->setConfig(optimizerConfig());
  exec::Executable& exe = updater_->executable();
  const float clip = float(ppo_.clip), valueCoef = float(ppo_.valueCoef), entropyCoef = float(ppo_.entropyCoef);
  exe.setInput(kPpoClip, &clip, 1);
  exe.setInput(kPpoValueCoef, &valueCoef, 1);
  exe.setInput(kPpoEntropyCoef, &entropyCoef, 1);
  updater_->resetLossSums();

  std::vector<std::int64_t> order(static_cast<size_t>(total));
  std::iota(order.begin(), order.end(), 0);
  std::int64_t steps = 0;
  bool stopped = false;  // a stop asked for mid-update: the steps taken so far stand
  for (std::int64_t epoch = 0; epoch < ppo_.epochs && !stopped; ++epoch) {
    for (std::int64_t k = total - 1; k > 0; --k)  // Fisher-Yates: the same order on every standard library
      std::swap(order[size_t(k)], order[size_t(rng_() % std::uint64_t(k + 1))]);
    for (std::int64_t start = 0; start < total; start += minibatch) {
      if (cancelled && cancelled()) {
        stopped = true;
        break;
      }
      rollout_->gather(&order[size_t(start)]);
      updater_->enqueueStep();
      ++steps;
    }
  }
  const LossSums sums = updater_->lossSums();
  if (!std::isfinite(sums.total)) throw std::runtime_error(lossNotFinite(sums.total));
  syncInference();
  report.trainingSteps = steps;
  report.batchSize = minibatch;
  if (steps == 0) return;
  const auto n = double(steps);
  report.loss = float(sums.total / n);
  report.policyLoss = float(sums.term("policy") / n);
  report.valueLoss = float(sums.term("value") / n);
  report.entropy = float(sums.term("entropy") / n);
  report.episodes->approxKl = float(sums.term("approx_kl") / n);
  report.episodes->clipFraction = float(sums.term("clip_fraction") / n);
  report.episodes->learningRate = optimizerConfig().learningRate;
}

IterationReport PpoTrainer::runIteration(const std::function<bool()>& cancelled) {
  const auto start = Clock::now();
  IterationReport report;
  report.episodes.emplace();
  const RolloutEpisodes ended = rollout_->collect(ppo_.gamma);
  report.episodes->rolloutSeconds = since(start);
  report.episodes->episodes = ended.episodes;
  episodesFinished_ += ended.episodes;
  if (ended.episodes > 0) {
    report.episodes->returnMean = ended.returnSum / double(ended.episodes);
    report.episodes->lengthMean = ended.lengthSum / double(ended.episodes);
  }
  rollout_->estimateAdvantages(ppo_.gamma, ppo_.gaeLambda);
  const auto trainStart = Clock::now();
  update(cancelled, report);
  report.trainSeconds = since(trainStart);
  ++iteration_;
  report.iteration = iteration_;
  report.gamesPlayed = episodesFinished_;
  report.episodes->environmentSteps = environmentSteps();
  report.wallSeconds = since(start);
  report.episodes->stepsPerSecond = double(rolloutSize()) / std::max(report.wallSeconds, 1e-9);
  return report;
}

EpisodeEvaluation PpoTrainer::evaluate(int episodes, bool stochastic, std::uint64_t seed) {
  if (episodes < 1) throw std::invalid_argument("evaluate needs at least one episode");
  const int n = int(ppo_.envs);
  const auto obs = size_t(obsSize_);
  auto envs = env::findEnvironment(project_.environment)->singleAgent(n, seed, project::environmentData(project_));
  std::vector<env::GameRandom> random;
  for (int e = 0; e < n; ++e) random.push_back(env::GameRandom::forGame(seed ^ 0xA5A5A5A5A5A5A5A5ull, e));
  // Environment e plays episodes slot[e] = e, e + n, e + 2n, ... until `episodes` have started,
  // so every episode is played to its end and short ones are not favoured.
  EpisodeEvaluation out;
  out.returns.assign(size_t(episodes), 0);
  std::vector<int> slot(static_cast<size_t>(n));
  for (int e = 0; e < n; ++e) slot[size_t(e)] = e < episodes ? e : -1;
  int started = std::min(n, episodes);
  std::vector<float> observations(size_t(n) * obs), logits;
  for (int e = 0; e < n; ++e) envs->observe(e, &observations[size_t(e) * obs]);
  while (std::any_of(slot.begin(), slot.end(), [](int s) { return s >= 0; })) {
    forward(observations, &logits, nullptr);
    for (int e = 0; e < n; ++e) {
      if (slot[size_t(e)] < 0) continue;
      const float* l = &logits[size_t(e) * size_t(actions_)];
      const int action = stochastic ? sampleAction(l, actions_, logSumExp(l, actions_), random[size_t(e)]) : greedyAction(l, actions_);
      const env::StepResult step = envs->step(e, action);
      out.returns[size_t(slot[size_t(e)])] += step.reward;
      if (step.terminated || step.truncated) {
        envs->reset(e);
        slot[size_t(e)] = started < episodes ? started++ : -1;
      }
      envs->observe(e, &observations[size_t(e) * obs]);
    }
  }
  return out;
}

RecordedEpisode PpoTrainer::recordEpisode(bool stochastic, std::uint64_t seed, int maxSteps) {
  const env::EnvironmentInfo& info = *env::findEnvironment(project_.environment);
  // The inference program runs ppo.envs observations at once; the episode is environment 0's.
  const int n = int(ppo_.envs);
  const auto obs = size_t(obsSize_);
  auto envs = info.singleAgent(n, seed, project::environmentData(project_));
  env::GameRandom random = env::GameRandom::forGame(seed ^ 0xA5A5A5A5A5A5A5A5ull, 0);
  RecordedEpisode out;
  out.environment = project_.environment;
  out.observationShape = info.observationShape;
  out.scalarNames = envs->scalarNames();
  std::vector<float> observations(size_t(n) * obs), logits, values;
  for (int e = 0; e < n; ++e) envs->observe(e, &observations[size_t(e) * obs]);
  for (int t = 0; t < maxSteps; ++t) {
    forward(observations, &logits, &values);
    EpisodeFrame frame;
    frame.observation.assign(observations.begin(), observations.begin() + std::ptrdiff_t(obs));
    frame.scalars = envs->scalars(0);
    const double normaliser = logSumExp(logits.data(), actions_);
    for (int a = 0; a < actions_; ++a) frame.probabilities.push_back(float(std::exp(double(logits[size_t(a)]) - normaliser)));
    frame.value = values[0];
    frame.action = stochastic ? sampleAction(logits.data(), actions_, normaliser, random) : greedyAction(logits.data(), actions_);
    const env::StepResult step = envs->step(0, frame.action);
    frame.reward = float(step.reward);
    out.episodeReturn += step.reward;
    out.frames.push_back(std::move(frame));
    envs->observe(0, observations.data());
    if (step.terminated || step.truncated) {
      out.ended = true;
      break;
    }
  }
  EpisodeFrame last;
  last.observation.assign(observations.begin(), observations.begin() + std::ptrdiff_t(obs));
  last.scalars = envs->scalars(0);
  out.frames.push_back(std::move(last));
  return out;
}

search::ReplaySetup PpoTrainer::emptyReplay() const { return {project_.environment, 0, 0, obsSize_, actions_}; }

std::string PpoTrainer::checkpoint() const {
  return writeCheckpoint({iteration_, episodesFinished_, updater_->steps(), rng_}, updater_->executable(), search::ReplayRing(0, obsSize_, actions_));
}

std::uint64_t PpoTrainer::checkpointSizeLimit() const { return train::checkpointSizeLimit(updater_->executable(), emptyReplay()); }

bool PpoTrainer::restore(const std::string& bytes, std::string* error) {
  exec::Executable& exe = updater_->executable();
  std::optional<Checkpoint> c = readCheckpoint(bytes, exe, emptyReplay(), error);
  if (!c) return false;
  for (const auto& [name, v] : c->tensors) exe.setInput(name, v.data(), v.size());
  iteration_ = c->counters.iteration;
  episodesFinished_ = c->counters.gamesPlayed;
  updater_->setSteps(c->counters.optimizerSteps);
  rng_ = c->counters.rng;
  syncInference();
  startEpisodes();
  return true;
}

}  // namespace cas::train
