// `cuda-agent bench env`: environment steps per second alone, as a PPO rollout would drive them:
// N environments side by side, a random action for each, a step, a reset where the episode
// ended, and each observation written into the batch the policy would read. The environments
// are the CPU twins (core/env), spread over a thread pool; the device kernels are not written yet.
#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <vector>

#include "app/cli/commands.hpp"
#include "core/env/cartpole.hpp"
#include "core/env/minatar_breakout.hpp"
#include "core/env/minatar_freeway.hpp"
#include "core/exec/thread_pool.hpp"

namespace cas::cli {
namespace {

struct Totals {
  double reward = 0;
  std::int64_t episodes = 0;
};

// Steps every environment of `env` `steps` times; `Env` is CartPole or MinAtarBreakout.
template <typename Env>
std::vector<Totals> run(Env& env, int steps, int observationSize, exec::ThreadPool& pool, std::uint64_t seed) {
  const int envs = env.size();
  std::vector<float> observations(size_t(envs) * size_t(observationSize));
  std::vector<env::GameRandom> actions;
  for (int g = 0; g < envs; ++g) actions.push_back(env::GameRandom::forGame(seed + 1, g));
  std::vector<Totals> totals(static_cast<size_t>(envs));
  for (int s = 0; s < steps; ++s)
    pool.parallelFor(envs, 256, [&](std::int64_t begin, std::int64_t end) {
      for (auto g = int(begin); g < int(end); ++g) {
        const auto r = env.step(g, actions[size_t(g)].below(Env::kActions));
        totals[size_t(g)].reward += r.reward;
        bool ended;
        if constexpr (requires { r.terminated; }) ended = r.terminated || r.truncated;
        else ended = r.terminal;
        if (ended) {
          ++totals[size_t(g)].episodes;
          env.reset(g);
        }
        env.observe(g, observations.data() + size_t(g) * size_t(observationSize));
      }
    });
  return totals;
}

}  // namespace

int runBenchEnv(const EnvBenchOptions& o) {
  exec::ThreadPool pool(o.threads);
  using Clock = std::chrono::steady_clock;
  std::vector<Totals> totals;
  const auto start = Clock::now();
  if (o.env == "cartpole") {
    env::CartPole env(o.envs, o.seed);
    totals = run(env, o.steps, env::CartPole::kObservationSize, pool, o.seed);
  } else if (o.env == "minatar-freeway") {
    env::MinAtarFreeway env(o.envs, o.seed);
    totals = run(env, o.steps, env::MinAtarFreeway::kObservationSize, pool, o.seed);
  } else {
    env::MinAtarBreakout env(o.envs, o.seed);
    totals = run(env, o.steps, env::MinAtarBreakout::kObservationSize, pool, o.seed);
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  Totals all;
  for (const Totals& t : totals) {
    all.reward += t.reward;
    all.episodes += t.episodes;
  }
  const double stepsTaken = double(o.envs) * double(o.steps), rate = stepsTaken / seconds;
  if (o.json) {
    std::printf("{\"env\": \"%s\", \"device\": \"cpu\", \"threads\": %d, \"envs\": %d, \"steps\": %d, \"seconds\": %.6g, "
                "\"steps_per_second\": %.6g, \"episodes\": %lld, \"reward\": %.6g}\n",
                o.env.c_str(), pool.size(), o.envs, o.steps, seconds, rate, static_cast<long long>(all.episodes), all.reward);
    return 0;
  }
  std::printf("%s: %d environments x %d steps of random actions on %d CPU thread%s: %.3g s, %.3g M steps/s\n", o.env.c_str(), o.envs,
              o.steps, pool.size(), pool.size() == 1 ? "" : "s", seconds, rate / 1e6);
  std::printf("  %lld episodes ended (reset where they did), %.0f reward in all; each step's observations written as the policy's batch\n",
              static_cast<long long>(all.episodes), all.reward);
  return 0;
}

}  // namespace cas::cli
