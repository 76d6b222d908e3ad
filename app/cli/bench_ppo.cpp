// `cuda-agent bench ppo`: the whole PPO loop's throughput, environment steps per second with the
// policy's rollout and the updates included, as PureJaxRL-style baselines report it: a project's
// PPO trainer (core/train/ppo.hpp) on the chosen backend, its parameters overridden with --set
// (ppo.envs for the batch of environments), one iteration to warm up (compilation, graph
// capture), then --iterations iterations timed by the wall clock.
#include <chrono>
#include <cstdio>
#include <iostream>

#include "app/cli/commands.hpp"
#include "app/cli/report_text.hpp"
#include "core/project/project.hpp"
#include "core/support/printable.hpp"
#include "core/train/ppo.hpp"

namespace cas::cli {

int runBenchPpo(const PpoBenchOptions& o) {
  BenchProject opened = openBenchProject(o.project, o.sets, o.device, "ppo", "bench ppo needs a project whose algorithm is ppo");
  if (opened.status != 0) return opened.status;
  const project::Project& project = *opened.project;
  const std::shared_ptr<exec::Backend>& backend = opened.backend;
  std::unique_ptr<train::PpoTrainer> trainer;
  try {
    trainer = std::make_unique<train::PpoTrainer>(project, backend);
  } catch (const std::exception& e) {
    std::cerr << "error: " << printable(e.what()) << "\n";
    return 1;
  }
  const params::PpoParams& ppo = trainer->ppoParams();
  if (!o.json) std::printf("rollout: %s\n", trainer->rolloutNote().c_str());
  trainer->runIteration();  // compiles, captures, fills the caches
  double rolloutSeconds = 0, returnSum = 0;
  std::int64_t episodes = 0;
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  for (int i = 0; i < o.iterations; ++i) {
    const train::IterationReport report = trainer->runIteration();
    if (report.episodes) {
      rolloutSeconds += report.episodes->rolloutSeconds;
      returnSum += report.episodes->returnMean * double(report.episodes->episodes);
      episodes += report.episodes->episodes;
    }
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  const double steps = double(o.iterations) * double(ppo.envs) * double(ppo.rolloutSteps), rate = steps / seconds;
  // No mean of no episodes: "0 episodes ended, mean return 0" read as a measured return of 0.
  char meanReturn[32] = "null";
  if (episodes) std::snprintf(meanReturn, sizeof meanReturn, "%.6g", returnSum / double(episodes));
  if (o.json) {
    std::printf("{\"project\": %s, \"policy\": %s, \"env\": %s, \"device\": \"%s\", \"envs\": %lld, \"rollout_steps\": %lld, \"iterations\": %d, "
                "\"rollout_on_device\": %s, \"seconds\": %.6g, \"env_steps_per_second\": %.6g, \"rollout_seconds\": %.6g, \"update_seconds\": %.6g, \"episodes\": %lld, "
                "\"mean_return\": %s}\n",
                jsonString(project.name).c_str(), jsonString(project.policyFile.filename().string()).c_str(),
                jsonString(project.environment).c_str(), backend->id().c_str(), static_cast<long long>(ppo.envs),
                static_cast<long long>(ppo.rolloutSteps), o.iterations, trainer->rolloutOnDevice() ? "true" : "false", seconds, rate, rolloutSeconds, seconds - rolloutSeconds,
                static_cast<long long>(episodes), meanReturn);  // null when no episode ended
    return 0;
  }
  std::printf("%s (%s) on %s: %d iterations of %lld environments x %lld steps in %.3g s: %.3g M environment steps/s\n", project.name.c_str(),
              project.environment.c_str(), backend->statusText().c_str(), o.iterations, static_cast<long long>(ppo.envs),
              static_cast<long long>(ppo.rolloutSteps), seconds, rate / 1e6);
  if (episodes)
    std::printf("  rollouts %.3g s, updates %.3g s; %lld episodes ended, mean return %.3g\n", rolloutSeconds, seconds - rolloutSeconds,
                static_cast<long long>(episodes), returnSum / double(episodes));
  else
    std::printf("  rollouts %.3g s, updates %.3g s; no episode ended (no mean return: raise --iterations or ppo.rollout_steps)\n", rolloutSeconds,
                seconds - rolloutSeconds);
  return 0;
}

}  // namespace cas::cli
