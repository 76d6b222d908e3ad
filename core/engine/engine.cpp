#include "core/engine/engine.hpp"

#include <chrono>
#include <cstdio>
#include <iomanip>
#include <sstream>
#include <utility>

#include "core/train/checkpoint_header.hpp"

namespace cas::engine {

Engine::Engine(std::unique_ptr<train::Trainer> trainer, RunFolder run, EngineEvents events, EngineLimits limits)
    : trainer_(std::move(trainer)), run_(std::move(run)), events_(std::move(events)), limits_(limits) {}

Engine::~Engine() {
  stop();
  if (thread_.joinable()) thread_.join();
}

void Engine::start() {
  std::lock_guard lock(mutex_);
  if (!thread_.joinable()) thread_ = std::thread([this] { loop(); });
}

void Engine::pause() {
  std::lock_guard lock(mutex_);
  paused_ = true;
}

void Engine::resume() {
  {
    std::lock_guard lock(mutex_);
    paused_ = false;
  }
  wake_.notify_all();
}

void Engine::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
}

void Engine::step() {
  {
    std::lock_guard lock(mutex_);
    requests_.push_back({kStep, 0, 0});
  }
  wake_.notify_all();
}

void Engine::requestSnapshot(int game, int maxNodes, int deviceNodes) {
  {
    std::lock_guard lock(mutex_);
    requests_.push_back({std::max(0, game), maxNodes, std::max(0, deviceNodes)});
  }
  wake_.notify_all();
}

// Steps and snapshots in the order they were asked for, at a safe point of the engine thread.
void Engine::serveRequests() {
  std::deque<Request> requests;
  {
    std::lock_guard lock(mutex_);
    requests.swap(requests_);
  }
  for (const Request& r : requests) {
    if (r.game == kStep) {
      if (train::SearchingTrainer* searching = trainer_->searching()) searching->stepSimulation();
      ++stepped_;
      if (events_.simulationStepped) events_.simulationStepped(stepped_);
    } else {
      deliverSnapshot(r);
    }
  }
}

void Engine::deliverSnapshot(const Request& request) {
  if (!events_.treeSnapshot) return;
  train::TreeSnapshot snapshot = train::treeSnapshot(*trainer_, request.game, request.maxNodes);
  if (request.deviceNodes > 0) {
    // A view's extra: when the device cannot lay the tree out, the view draws the host snapshot
    // and says why; the run goes on.
    try {
      if (auto sunburst = trainer_->searching() ? trainer_->searching()->deviceSunburst() : nullptr) {
        snapshot.deviceCounts = sunburst->layOut(snapshot.game, request.deviceNodes);
        snapshot.deviceSunburst = std::move(sunburst);
      }
    } catch (const std::exception& e) {
      snapshot.deviceProblem = e.what();
    }
  }
  events_.treeSnapshot(snapshot);
}

// Between self-play moves every tree is settled, so snapshots asked for before any pending step
// are served there: a view follows the tree during an iteration. Steps wait for the pause.
void Engine::serveSnapshotRequests() {
  std::deque<Request> snapshots;
  {
    std::lock_guard lock(mutex_);
    while (!requests_.empty() && requests_.front().game != kStep) {
      snapshots.push_back(requests_.front());
      requests_.pop_front();
    }
  }
  for (const Request& r : snapshots) deliverSnapshot(r);
}

void Engine::wait() {
  std::unique_lock lock(mutex_);
  wake_.wait(lock, [&] { return done_ || !thread_.joinable(); });
}

std::optional<std::string> Engine::requestParameter(const std::string& name, const std::string& text) {
  const params::ParameterSpec* spec = params::ParameterRegistry::standard().find(name);
  if (!spec) return "unknown parameter '" + name + "' (`cuda-agent params` lists them)";
  std::string error;
  auto value = params::parseValue(*spec, text, &error);
  if (!value) return error;
  if (!spec->live) return name + " applies only when a run starts; it cannot change during a run";
  {
    std::lock_guard lock(mutex_);
    pending_.emplace_back(name, *value);
  }
  return std::nullopt;
}

void Engine::applyPending() {
  std::deque<std::pair<std::string, params::ParamValue>> changes;
  {
    std::lock_guard lock(mutex_);
    changes.swap(pending_);
  }
  for (const auto& [name, value] : changes) {
    ParameterChange c{name, params::formatValue(trainer_->parameters().get(name)), params::formatValue(value), trainer_->iteration() + 1};
    if (auto problem = trainer_->setParameter(name, value)) {
      if (events_.message) events_.message("refused " + name + ": " + *problem);
      continue;
    }
    std::string error;
    if (!run_.appendChange(c.iteration, c.name, c.from, c.to, &error) && events_.message) events_.message(error);
    if (events_.parameterApplied) events_.parameterApplied(c);
  }
}

bool Engine::checkpoint(std::string* error) {
  if (trainer_->iteration() == checkpointed_) return true;
  if (!run_.writeCheckpoint(trainer_->iteration(), trainer_->checkpoint(), error)) return false;
  checkpointed_ = trainer_->iteration();
  return true;
}

// "time": seconds since 1970 need 10 digits before the point, not the 6 significant digits of
// the other figures.
static void writeTime(std::ostringstream& s, double finishedAt) {
  if (finishedAt > 0) s << ", \"time\": " << std::fixed << std::setprecision(3) << finishedAt << std::defaultfloat << std::setprecision(6);
}

// A single-agent iteration (PPO, MuZero): the episodes, the update's losses, the throughput.
static std::string episodeMetricsJson(const train::IterationReport& r, const train::EpisodeReport& e) {
  std::ostringstream s;
  s.precision(6);
  s << "{\"iteration\": " << r.iteration << ", \"env_steps\": " << e.environmentSteps << ", \"episodes\": " << r.gamesPlayed
    << ", \"episodes_in_iteration\": " << e.episodes;
  // An iteration in which no episode ended has no return to record (not a return of 0).
  if (e.episodes > 0) s << ", \"episode_return_mean\": " << e.returnMean << ", \"episode_length_mean\": " << e.lengthMean;
  if (r.trainingSteps > 0 && e.rewardLoss)  // MuZero's update
    s << ", \"loss\": " << r.loss << ", \"loss_policy\": " << r.policyLoss << ", \"loss_value\": " << r.valueLoss << ", \"loss_reward\": " << *e.rewardLoss
      << ", \"loss_l2\": " << r.l2 << ", \"learning_rate\": " << e.learningRate;
  else if (r.trainingSteps > 0)
    s << ", \"loss\": " << r.loss << ", \"loss_policy\": " << r.policyLoss << ", \"loss_value\": " << r.valueLoss
      << ", \"policy_entropy\": " << r.entropy << ", \"approx_kl\": " << e.approxKl << ", \"clip_fraction\": " << e.clipFraction
      << ", \"learning_rate\": " << e.learningRate;
  if (r.positions > 0) s << ", \"positions\": " << r.positions;  // MuZero's replay
  s << ", \"training_steps\": " << r.trainingSteps << ", \"env_steps_per_second\": " << e.stepsPerSecond << ", \"seconds_rollout\": " << e.rolloutSeconds
    << ", \"seconds_train\": " << r.trainSeconds << ", \"seconds_wall\": " << r.wallSeconds;
  writeTime(s, r.finishedAt);
  s << "}";
  return s.str();
}

static std::string metricsJson(const train::IterationReport& r) {
  if (r.episodes) return episodeMetricsJson(r, *r.episodes);
  std::ostringstream s;
  s.precision(6);
  s << "{\"iteration\": " << r.iteration << ", \"games\": " << r.gamesPlayed << ", \"positions\": " << r.positions;
  // Before the first training step there is no loss to record (not a loss of 0).
  if (r.trainingSteps > 0)
    s << ", \"loss\": " << r.loss << ", \"loss_policy\": " << r.policyLoss << ", \"loss_value\": " << r.valueLoss << ", \"loss_l2\": " << r.l2
      << ", \"policy_entropy\": " << r.entropy;
  s << ", \"training_steps\": " << r.trainingSteps << ", \"simulations_per_second\": " << r.simulationsPerSecond
    << ", \"games_per_second\": " << r.gamesPerSecond << ", \"seconds_inference\": " << r.inferenceSeconds
    << ", \"seconds_search\": " << r.searchSeconds << ", \"seconds_data\": " << r.dataSeconds << ", \"seconds_train\": " << r.trainSeconds
    << ", \"seconds_self_play\": " << r.selfPlaySeconds << ", \"seconds_wall\": " << r.wallSeconds;
  writeTime(s, r.finishedAt);
  s << ", \"overlap\": " << (r.overlapped ? "true" : "false") << ", \"self_play_weights_step\": " << r.selfPlayWeightsStep
    << ", \"host_waits_per_move\": " << r.hostWaitsPerMove << ", \"recycled_nodes\": " << r.recycledNodes;
  for (const auto& e : r.evaluations) {
    std::string key = e.opponent;
    for (char& c : key)
      if (c == ':') c = '_';
    s << ", \"win_rate_" << key << "\": " << e.winRate() << ", \"draw_rate_" << key << "\": " << (e.games ? double(e.draws) / e.games : 0)
      << ", \"loss_rate_" << key << "\": " << (e.games ? double(e.losses) / e.games : 0);
  }
  s << "}";
  return s.str();
}

void Engine::loop() {
  const auto start = std::chrono::steady_clock::now();
  const std::int64_t first = trainer_->iteration();
  try {
    for (;;) {
      for (;;) {
        {
          std::unique_lock lock(mutex_);
          wake_.wait(lock, [&] { return !paused_ || stopping_ || !requests_.empty(); });
          if (stopping_ || !paused_) break;
        }
        serveRequests();  // paused: serve steps and snapshots, then wait again
      }
      {
        std::lock_guard lock(mutex_);
        if (stopping_) break;
      }
      serveRequests();
      applyPending();
      const double minutes = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / 60;
      if ((limits_.iterations > 0 && trainer_->iteration() - first >= limits_.iterations) || (limits_.minutes > 0 && minutes >= limits_.minutes) ||
          trainer_->reachedEnd())
        break;
      if (trainer_->iteration() >= train::kMaxCheckpointIteration) {  // no checkpoint could name the next
        if (events_.message)
          events_.message("the run stops at iteration " + std::to_string(trainer_->iteration()) + ", the most iterations a run can have");
        break;
      }
      train::IterationReport report = trainer_->runIteration([this] {
        serveSnapshotRequests();
        std::lock_guard lock(mutex_);
        return stopping_;
      });
      report.finishedAt = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
      std::string error;
      if (!run_.appendMetrics(metricsJson(report), &error)) throw std::runtime_error(error);
      if (report.iteration % trainer_->checkpointEvery() == 0 && !checkpoint(&error))
        throw std::runtime_error("the checkpoint could not be written: " + error);
      if (events_.iterationFinished) events_.iterationFinished(report);
    }
    std::string error;
    if (!checkpoint(&error)) throw std::runtime_error("the final checkpoint could not be written: " + error);
  } catch (const std::bad_alloc&) {
    if (events_.failed)
      events_.failed("out of memory in iteration " + std::to_string(trainer_->iteration() + 1) +
                     " (self-play, training or evaluation); what takes the memory is sized by train.replay_capacity, train.parallel_games, "
                     "search.node_budget, train.eval_games and train.batch_size: lower them in the project and train it again (with "
                     "--restart --use-project, or into a new --out folder); the checkpoints already written are kept");
  } catch (const std::exception& e) {
    if (events_.failed) events_.failed(e.what());
  }
  if (events_.finished) events_.finished();
  {
    std::lock_guard lock(mutex_);
    done_ = true;
  }
  wake_.notify_all();
}

}  // namespace cas::engine
