// The device environments: each kernel runs the CPU twin's CAS_HD rules (core/env) for one copy
// per thread, so a copy on the device steps exactly as the CPU twin's copy of the same index
// (tests/gpu/test_device_environments.cpp checks it, copy for copy and step for step).
//
//   kernel           threads     computes
//   env_init         per copy    seed the copy's generator, reset it
//   env_step         per copy    step with the given action; reset where the episode ended
//   env_observe      per copy    the copy's observation into its row of the batch
//   env_step_random  per copy    draw an action, step, count, reset, observe (bench env)
//   env_rollout_step per copy    PPO: sample the action from the policy's logits, step, count,
//                                keep a cut episode's last observation, reset
//   env_seed_actions per copy    the random actions' generators
// 128-thread blocks, one thread per copy. A copy's state is a few dozen bytes read and written
// once per step (Seaquest's 584: its entity lists have fixed sizes; a trading copy's 64 with the
// series' view, the series itself read by every copy); the observation rows (up to 1,000 floats
// per copy) dominate the traffic: each thread clears its copy's row in 16-byte
// stores and then sets its ones (observeRow).
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "core/env/cartpole.hpp"
#include "core/env/market_making.hpp"
#include "core/env/minatar_asterix.hpp"
#include "core/env/minatar_breakout.hpp"
#include "core/env/minatar_environments.hpp"
#include "core/env/minatar_freeway.hpp"
#include "core/env/minatar_seaquest.hpp"
#include "core/env/minatar_space_invaders.hpp"
#include "core/env/trading_rules.hpp"
#include "core/train/ppo_math.hpp"
#include "gpu/cuda_check.hpp"
#include "gpu/env/environment_launch.hpp"

namespace cas::gpu::env {
namespace {

using cas::env::GameRandom;

constexpr int kThreads = 128;

unsigned blocksFor(int count) { return unsigned((count + kThreads - 1) / kThreads); }
cudaStream_t stream(CUstream s) { return reinterpret_cast<cudaStream_t>(s); }

void checkLaunch(const char* kernel) {
  const cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) throw CudaError(std::string(kernel) + " did not launch: " + cudaGetErrorString(e));
}

// Whether the rules' copies read a price series (their State holds its view).
template <class Rules, class = void>
struct ReadsSeries : std::false_type {};
template <class Rules>
struct ReadsSeries<Rules, std::void_t<decltype(std::declval<typename Rules::State&>().series)>> : std::true_type {};

// `blank`: a value-initialised State, with the series' view where the rules read one.
template <class Rules>
__global__ void initKernel(typename Rules::State* states, int count, std::uint64_t seed, typename Rules::State blank) {
  const int g = blockIdx.x * blockDim.x + threadIdx.x;
  if (g >= count) return;
  typename Rules::State s = blank;
  s.random = GameRandom::forGame(seed, g);
  Rules::reset(s);
  states[g] = s;
}

template <class Rules>
__global__ void stepKernel(typename Rules::State* states, const std::int32_t* actions, float* rewards, std::uint8_t* terminated,
                           std::uint8_t* truncated, int count) {
  const int g = blockIdx.x * blockDim.x + threadIdx.x;
  if (g >= count) return;
  typename Rules::State s = states[g];
  const cas::env::StepResult r = Rules::step(s, actions[g]);
  if (r.terminated || r.truncated) Rules::reset(s);
  states[g] = s;
  rewards[g] = r.reward;
  terminated[g] = r.terminated;
  truncated[g] = r.truncated;
}

// Copy g's observation row. MinAtar's rows are mostly zeros: the thread clears the row in 16-byte
// stores, then sets the ones. The block once cleared its
// rows together (coalesced, then a barrier, then the marks), but on an H100 (CUDA 13.0, sm_90)
// Space Invaders' rows then kept a 1 at channel 2, row 6, column 1 that the copy's marks had not
// written, from step 133 of the GPU suite's actions, while a thread clearing its own row agreed
// with the CPU twin (bench/diagnostics/si_probe.cu); the cause was not found.
template <class Rules>
__device__ void observeRow(const typename Rules::State& s, int g, float* observations) {
  float* mine = observations + std::int64_t(g) * Rules::kObservationSize;
  if constexpr (Rules::kSparseObservation) {
    static_assert(Rules::kObservationSize % 4 == 0, "rows are cleared in float4s");
    float4* row = reinterpret_cast<float4*>(mine);
    for (int i = 0; i < Rules::kObservationSize / 4; ++i) row[i] = make_float4(0.f, 0.f, 0.f, 0.f);
    Rules::mark(s, mine);
  } else {
    Rules::observe(s, mine);
  }
}

template <class Rules>
__global__ void observeKernel(const typename Rules::State* states, float* observations, int count) {
  const int g = blockIdx.x * blockDim.x + threadIdx.x;
  if (g >= count) return;
  observeRow<Rules>(states[g], g, observations);
}

template <class Rules>
__global__ void stepRandomKernel(typename Rules::State* states, GameRandom* actionRandom, float* observations, RandomTotals totals,
                                 int count) {
  const int g = blockIdx.x * blockDim.x + threadIdx.x;
  if (g >= count) return;
  typename Rules::State s = states[g];
  GameRandom r = actionRandom[g];
  const cas::env::StepResult result = Rules::step(s, r.below(Rules::kActions));
  totals.reward[g] += result.reward;
  if (result.terminated || result.truncated) {
    totals.episodes[g] += 1;
    Rules::reset(s);
  }
  states[g] = s;
  actionRandom[g] = r;
  observeRow<Rules>(s, g, observations);
}

template <class Rules>
__global__ void rolloutStepKernel(typename Rules::State* states, GameRandom* actionRandom, RolloutStepArrays o, int count) {
  const int g = blockIdx.x * blockDim.x + threadIdx.x;
  if (g >= count) return;
  typename Rules::State s = states[g];
  GameRandom r = actionRandom[g];
  const float* logits = o.logits + std::int64_t(g) * Rules::kActions;
  const double normaliser = cas::train::ppo_math::logSumExp(logits, Rules::kActions);
  const int action = cas::train::ppo_math::sampleAction(logits, Rules::kActions, normaliser, r);
  o.actions[g] = float(action);
  o.logProbs[g] = float(double(logits[action]) - normaliser);
  o.valuesOut[g] = o.values[g];
  const cas::env::StepResult step = Rules::step(s, action);
  o.rewards[g] = step.reward;
  o.dones[g] = step.terminated || step.truncated ? 1.0f : 0.0f;
  o.episodeReturn[g] += step.reward;
  o.episodeLength[g] += 1;
  o.truncated[g] = step.truncated;
  if (step.truncated) Rules::observe(s, o.finalObservations + std::int64_t(g) * Rules::kObservationSize);
  if (step.terminated || step.truncated) {
    o.endedCount[g] += 1;
    o.endedReturn[g] += o.episodeReturn[g];
    o.endedLength[g] += o.episodeLength[g];
    o.episodeReturn[g] = 0;
    o.episodeLength[g] = 0;
    Rules::reset(s);
  }
  states[g] = s;
  actionRandom[g] = r;
}

__global__ void seedActionsKernel(GameRandom* actionRandom, int count, std::uint64_t seed) {
  const int g = blockIdx.x * blockDim.x + threadIdx.x;
  if (g < count) actionRandom[g] = GameRandom::forGame(seed, g);
}

template <class Rules>
struct Launches {
  using State = typename Rules::State;
  static void init(void* states, int count, std::uint64_t seed, const cas::env::TradingSeriesView* series, CUstream s) {
    State blank{};
    if constexpr (ReadsSeries<Rules>::value) {
      if (!series) throw std::invalid_argument("the environment trades a price series; none was given");
      blank.series = *series;
    }
    initKernel<Rules><<<blocksFor(count), kThreads, 0, stream(s)>>>(static_cast<State*>(states), count, seed, blank);
    checkLaunch("env_init");
  }
  static void step(void* states, const std::int32_t* actions, float* rewards, std::uint8_t* terminated, std::uint8_t* truncated, int count,
                   CUstream s) {
    stepKernel<Rules>
        <<<blocksFor(count), kThreads, 0, stream(s)>>>(static_cast<State*>(states), actions, rewards, terminated, truncated, count);
    checkLaunch("env_step");
  }
  static void observe(const void* states, float* observations, int count, CUstream s) {
    observeKernel<Rules><<<blocksFor(count), kThreads, 0, stream(s)>>>(static_cast<const State*>(states), observations, count);
    checkLaunch("env_observe");
  }
  static void stepRandomly(void* states, GameRandom* actionRandom, float* observations, RandomTotals totals, int count, CUstream s) {
    stepRandomKernel<Rules>
        <<<blocksFor(count), kThreads, 0, stream(s)>>>(static_cast<State*>(states), actionRandom, observations, totals, count);
    checkLaunch("env_step_random");
  }
  static void rolloutStep(void* states, GameRandom* actionRandom, RolloutStepArrays arrays, int count, CUstream s) {
    rolloutStepKernel<Rules><<<blocksFor(count), kThreads, 0, stream(s)>>>(static_cast<State*>(states), actionRandom, arrays, count);
    checkLaunch("env_rollout_step");
  }
  static EnvironmentKernels row(const char* name, bool canTruncate) {
    return {
        name,         sizeof(State), Rules::kObservationSize, Rules::kActions, canTruncate, ReadsSeries<Rules>::value, init, step, observe,
        stepRandomly, rolloutStep};
  }
};

template <class Rules>
using MinAtar = Launches<cas::env::MinAtarSingleAgentRules<Rules>>;

}  // namespace

const EnvironmentKernels* findEnvironmentKernels(std::string_view name) {
  static const EnvironmentKernels kRows[] = {
      Launches<cas::env::CartPoleRules>::row("cartpole", true),
      MinAtar<cas::env::AsterixRules>::row("minatar-asterix", false),
      MinAtar<cas::env::BreakoutRules>::row("minatar-breakout", false),
      MinAtar<cas::env::FreewayRules>::row("minatar-freeway", false),
      MinAtar<cas::env::SeaquestRules>::row("minatar-seaquest", false),
      MinAtar<cas::env::SpaceInvadersRules>::row("minatar-space-invaders", false),
      Launches<cas::env::TradingRules>::row("trading-stocks", true),
      Launches<cas::env::MarketMakingRules>::row("market-making", false),
  };
  for (const EnvironmentKernels& row : kRows)
    if (name == row.name) return &row;
  return nullptr;
}

void launchSeedActions(GameRandom* actionRandom, int count, std::uint64_t seed, CUstream s) {
  seedActionsKernel<<<blocksFor(count), kThreads, 0, stream(s)>>>(actionRandom, count, seed);
  checkLaunch("env_seed_actions");
}

}  // namespace cas::gpu::env
