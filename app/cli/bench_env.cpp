// `cuda-agent bench env`: environment steps per second alone, as a PPO rollout would drive them:
// N environments side by side, a random action for each, a step, a reset where the episode
// ended, and each observation written into the batch the policy would read. --device cpu steps
// the CPU twins (core/env) over a thread pool; --device cuda the CUDA backend's device twins
// (gpu/env, through exec::DeviceServices::createEnvironments). Both seed copy g's environment and its
// action generator alike, so both play the same episodes: the totals printed agree (CartPole's
// within a last-place difference of the device's cos and sin). A trading environment steps over
// the training part of the series --series names (--train-fraction, as trading.train_fraction).
#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "app/cli/commands.hpp"
#include "core/env/environments.hpp"
#include "core/env/game_random.hpp"
#include "core/env/price_series.hpp"
#include "core/env/single_agent.hpp"
#include "core/env/trading.hpp"
#include "core/env/vector_environments.hpp"
#include "core/exec/backend.hpp"
#include "core/exec/thread_pool.hpp"

namespace cas::cli {
namespace {

struct Totals {
  double reward = 0;
  std::int64_t episodes = 0;
};

int observationSize(const env::EnvironmentInfo& info) {
  int n = 1;
  for (int d : info.observationShape) n *= d;
  return n;
}

// Steps every CPU twin `steps` times; returns the totals and the seconds the stepping took.
env::VectorEnvironments::RandomRun runOnCpu(const env::EnvironmentInfo& info, const EnvBenchOptions& o, const env::EnvironmentData& data,
                                             exec::ThreadPool& pool) {
  auto environments = info.singleAgent(o.envs, o.seed, data);
  const int obs = observationSize(info);
  std::vector<float> observations(size_t(o.envs) * size_t(obs));
  std::vector<env::GameRandom> actions;
  for (int g = 0; g < o.envs; ++g) actions.push_back(env::GameRandom::forGame(o.seed + 1, g));
  std::vector<Totals> totals(static_cast<size_t>(o.envs));
  const auto start = std::chrono::steady_clock::now();
  for (int s = 0; s < o.steps; ++s)
    pool.parallelFor(o.envs, 256, [&](std::int64_t begin, std::int64_t end) {
      for (auto g = int(begin); g < int(end); ++g) {
        const env::StepResult r = environments->step(g, actions[size_t(g)].below(info.actionCount));
        totals[size_t(g)].reward += r.reward;
        if (r.terminated || r.truncated) {
          ++totals[size_t(g)].episodes;
          environments->reset(g);
        }
        environments->observe(g, observations.data() + size_t(g) * size_t(obs));
      }
    });
  env::VectorEnvironments::RandomRun run;
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (const Totals& t : totals) {
    run.reward += t.reward;
    run.episodes += t.episodes;
  }
  return run;
}

// A trading environment's series from --series (read whole, refused at its file:line); what is
// wrong, if anything.
std::optional<std::string> readData(const env::EnvironmentInfo& info, const EnvBenchOptions& o, env::EnvironmentData& data) {
  if (!info.needsSeries) {
    if (!o.series.empty()) return "'" + o.env + "' steps over no price series; leave out --series";
    return std::nullopt;
  }
  if (o.series.empty()) return "'" + o.env + "' steps over a price series; name its CSV file with --series (docs/trading.md)";
  try {
    data.series = std::make_shared<const env::PriceSeries>(env::readPriceSeries(o.series, env::splitNeed(o.trainFraction, env::stocksSetup())));
  } catch (const env::PriceSeriesError& e) {
    return e.what();
  }
  data.trainFraction = o.trainFraction;
  return std::nullopt;
}

}  // namespace

int runBenchEnv(const EnvBenchOptions& o) {
  const env::EnvironmentInfo* info = env::findEnvironment(o.env);
  if (!info || !info->singleAgent) {
    std::cerr << "error: '" << o.env << "' is not a single-agent environment with a CPU twin\n";
    return 2;
  }
  env::EnvironmentData data;
  if (auto error = readData(*info, o, data)) {
    std::cerr << "error: " << *error << "\n";
    return 2;
  }
  env::VectorEnvironments::RandomRun run;
  std::string where;
  int threads = 0;
  if (o.device == "cuda") {
    std::string error;
    const auto backend = exec::BackendRegistry::instance().select("cuda", &error);
    if (!backend) {
      std::cerr << "error: " << error << "\n";
      return 2;
    }
    exec::DeviceServices* services = backend->deviceServices();
    error = "it has no device services";
    auto environments = services ? services->createEnvironments(o.env, o.envs, o.seed, data, &error) : nullptr;
    if (!environments) {
      std::cerr << "error: the CUDA backend cannot step " << o.env << ": " << error << "\n";
      return 2;
    }
    run = environments->stepRandomly(o.steps, o.seed + 1);
    where = backend->statusText();
  } else {
    exec::ThreadPool pool(o.threads);
    threads = pool.size();
    try {
      run = runOnCpu(*info, o, data, pool);
    } catch (const std::invalid_argument& e) {  // a series too short for an episode
      std::cerr << "error: " << e.what() << "\n";
      return 2;
    }
    where = std::to_string(threads) + " CPU thread" + (threads == 1 ? "" : "s");
  }
  const double rate = double(o.envs) * double(o.steps) / run.seconds;
  if (o.json) {
    std::printf("{\"env\": \"%s\", \"device\": \"%s\", \"threads\": %d, \"envs\": %d, \"steps\": %d, \"seconds\": %.6g, "
                "\"steps_per_second\": %.6g, \"episodes\": %lld, \"reward\": %.6g}\n",
                o.env.c_str(), o.device.c_str(), threads, o.envs, o.steps, run.seconds, rate, static_cast<long long>(run.episodes), run.reward);
    return 0;
  }
  std::printf("%s: %d environments x %d steps of random actions on %s: %.3g s, %.3g M steps/s\n", o.env.c_str(), o.envs, o.steps, where.c_str(),
              run.seconds, rate / 1e6);
  std::printf("  %lld episodes ended (reset where they did), %.0f reward in all; each step's observations written as the policy's batch\n",
              static_cast<long long>(run.episodes), run.reward);
  return 0;
}

}  // namespace cas::cli
