// Diagnostic (run on the GPU machine): MinAtar Space Invaders stepped on the device and on the host
// with the same actions as tests/gpu/test_device_environments.cpp (1000 copies, seed 7, actions from
// GameRandom(99, 0)), step by step: after each step it compares every copy's state, and the
// observation written by observeMinatar (a whole row per thread) and by clearing first and then
// marking the ones (as the environment kernels' sparse path does). Prints the first steps and
// copies where the state or an observation differs, with both states and the differing entries.
// History: on 2026-12-05 (morning) it showed every unsticky action turning to fire on the device
// (682 of 1000 copies differing after one step): ptxas's VIMNMX predicate, see
// SpaceInvadersRules::minatarAction. After that fix the GPU suite still differed at step 150,
// copy 111 (channel 2, row 6, column 1 set on the device alone).
//   nvcc -std=c++17 -arch=sm_90 -O2 -fmad=false -prec-div=true -prec-sqrt=true --expt-relaxed-constexpr -I. \
//        -o /tmp/si_probe bench/diagnostics/si_probe.cu && /tmp/si_probe [STEPS]
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "core/env/minatar_environments.hpp"
#include "core/env/minatar_space_invaders.hpp"
using namespace cas::env;
using R = MinAtarSingleAgentRules<SpaceInvadersRules>;
using S = R::State;
constexpr int kObs = SpaceInvadersRules::kObservationSize;

__global__ void init(S* states, int count, std::uint64_t seed) {
  const int g = blockIdx.x * blockDim.x + threadIdx.x;
  if (g >= count) return;
  S s{};
  s.random = GameRandom::forGame(seed, g);
  R::reset(s);
  states[g] = s;
}
__global__ void step(S* states, int count, const int* actions) {
  const int g = blockIdx.x * blockDim.x + threadIdx.x;
  if (g >= count) return;
  S s = states[g];
  const auto r = R::step(s, actions[g]);
  if (r.terminated || r.truncated) R::reset(s);
  states[g] = s;
}
__global__ void observeWhole(const S* states, int count, float* out) {
  const int g = blockIdx.x * blockDim.x + threadIdx.x;
  if (g >= count) return;
  const S s = states[g];
  observeMinatar<R>(s, out + std::int64_t(g) * kObs);
}
__global__ void observeMarked(const S* states, int count, float* out) {
  const int g = blockIdx.x * blockDim.x + threadIdx.x;
  if (g >= count) return;
  const S s = states[g];
  float* mine = out + std::int64_t(g) * kObs;
  for (int i = 0; i < kObs; ++i) mine[i] = 0.f;
  R::mark(s, mine);
}

// As the environment kernels' observeRows did before 376f474: the block clears its rows in float4s, then marks.
__global__ void observeBlock(const S* states, int count, float* observations) {
  const int g = blockIdx.x * blockDim.x + threadIdx.x;
  const bool active = g < count;
  const S s = active ? states[g] : S{};
  const long long first = (long long)blockIdx.x * blockDim.x;
  float* mine = observations + (first + threadIdx.x) * kObs;
  const int copies = min(int(blockDim.x), count - int(first));
  float4* rows = reinterpret_cast<float4*>(observations + first * kObs);
  const int quads = copies * (kObs / 4);
  for (int i = threadIdx.x; i < quads; i += blockDim.x) rows[i] = make_float4(0.f, 0.f, 0.f, 0.f);
  __syncthreads();
  if (active) R::mark(s, mine);
}

// Each thread clears its own row in float4s, then marks it.
__global__ void observeOwnRow(const S* states, int count, float* observations) {
  const int g = blockIdx.x * blockDim.x + threadIdx.x;
  if (g >= count) return;
  const S s = states[g];
  float* mine = observations + (long long)g * kObs;
  float4* row = reinterpret_cast<float4*>(mine);
  for (int i = 0; i < kObs / 4; ++i) row[i] = make_float4(0.f, 0.f, 0.f, 0.f);
  R::mark(s, mine);
}

void dump(const char* who, const S& s) {
  printf("    %s: cannon %d dir %d moveInterval %d moveTimer %d alienShot %d shotTimer %d ramp %d terminal %d sticky %d\n", who, s.game.cannon,
         s.game.direction, s.game.moveInterval, s.game.moveTimer, s.game.alienShotTimer, s.game.shotTimer, s.game.rampIndex, int(s.game.terminal),
         s.sticky.last);
  printf("      aliens");
  for (int r = 0; r < 10; ++r) printf(" %03x", s.game.aliens.row[r]);
  printf("\n      bullets");
  for (int r = 0; r < 10; ++r) printf(" %03x", s.game.bullets.row[r]);
  printf("\n      alien bullets");
  for (int r = 0; r < 10; ++r) printf(" %03x", s.game.alienBullets.row[r]);
  printf("\n");
}
bool sameState(const S& a, const S& b) {
  const auto& x = a.game;
  const auto& y = b.game;
  return std::memcmp(&x.aliens, &y.aliens, sizeof x.aliens) == 0 && std::memcmp(&x.bullets, &y.bullets, sizeof x.bullets) == 0 &&
         std::memcmp(&x.alienBullets, &y.alienBullets, sizeof x.alienBullets) == 0 && x.cannon == y.cannon && x.direction == y.direction &&
         x.moveInterval == y.moveInterval && x.moveTimer == y.moveTimer && x.alienShotTimer == y.alienShotTimer && x.shotTimer == y.shotTimer &&
         x.rampIndex == y.rampIndex && x.terminal == y.terminal && a.sticky.last == b.sticky.last;
}

int main(int argc, char** argv) {
  const int count = 1000, steps = argc > 1 ? std::atoi(argv[1]) : 400;
  const std::uint64_t seed = 7;
  S* dStates;
  int* dActions;
  float *dWhole, *dMarked, *dBlock, *dOwn;
  cudaMalloc(&dStates, sizeof(S) * count);
  cudaMalloc(&dActions, sizeof(int) * count);
  cudaMalloc(&dWhole, sizeof(float) * count * kObs);
  cudaMalloc(&dMarked, sizeof(float) * count * kObs);
  cudaMalloc(&dBlock, sizeof(float) * count * kObs);
  cudaMalloc(&dOwn, sizeof(float) * count * kObs);
  const int blocks = (count + 127) / 128;
  init<<<blocks, 128>>>(dStates, count, seed);
  std::vector<S> host(count), dev(count);
  for (int g = 0; g < count; ++g) {
    host[g] = S{};
    host[g].random = GameRandom::forGame(seed, g);
    R::reset(host[g]);
  }
  GameRandom draws = GameRandom::forGame(99, 0);
  std::vector<int> actions(count);
  std::vector<float> whole(std::size_t(count) * kObs), marked(whole.size()), block(whole.size()), own(whole.size()), expected(kObs);
  int stateReports = 0, observationReports = 0;
  std::map<std::string, int> reports;  // per observation path
  for (int k = 1; k <= steps; ++k) {
    for (int& a : actions) a = draws.below(4);
    cudaMemcpy(dActions, actions.data(), sizeof(int) * count, cudaMemcpyHostToDevice);
    step<<<blocks, 128>>>(dStates, count, dActions);
    observeWhole<<<blocks, 128>>>(dStates, count, dWhole);
    observeMarked<<<blocks, 128>>>(dStates, count, dMarked);
    observeBlock<<<blocks, 128>>>(dStates, count, dBlock);
    observeOwnRow<<<blocks, 128>>>(dStates, count, dOwn);
    cudaMemcpy(dev.data(), dStates, sizeof(S) * count, cudaMemcpyDeviceToHost);
    cudaMemcpy(whole.data(), dWhole, sizeof(float) * whole.size(), cudaMemcpyDeviceToHost);
    cudaMemcpy(marked.data(), dMarked, sizeof(float) * marked.size(), cudaMemcpyDeviceToHost);
    cudaMemcpy(block.data(), dBlock, sizeof(float) * block.size(), cudaMemcpyDeviceToHost);
    cudaMemcpy(own.data(), dOwn, sizeof(float) * own.size(), cudaMemcpyDeviceToHost);
    if (cudaGetLastError() != cudaSuccess) {
      printf("step %d: %s\n", k, cudaGetErrorString(cudaGetLastError()));
      return 1;
    }
    const std::vector<S> before = host;
    for (int g = 0; g < count; ++g) {
      const auto r = R::step(host[g], actions[g]);
      if (r.terminated || r.truncated) R::reset(host[g]);
    }
    for (int g = 0; g < count; ++g) {
      if (!sameState(host[g], dev[g]) && stateReports < 3) {
        ++stateReports;
        printf("step %d, copy %d: the states differ (action %d)\n", k, g, actions[g]);
        dump("before", before[g]);
        dump("host  ", host[g]);
        dump("device", dev[g]);
      }
      observeMinatar<R>(dev[g], expected.data());  // the host's observation of the device's state
      for (const auto& [name, got] : {std::pair{"whole", &whole}, std::pair{"marked", &marked}, std::pair{"block-cleared", &block}, std::pair{"own-row float4", &own}}) {
        const float* row = got->data() + std::size_t(g) * kObs;
        for (int i = 0; i < kObs && reports[name] < 3; ++i)
          if (row[i] != expected[i]) {
            ++observationReports;
            ++reports[name];
            printf("step %d, copy %d: the %s observation differs at entry %d (channel %d, row %d, column %d): device %g, host %g\n", k, g, name, i,
                   i / 100, i / 10 % 10, i % 10, row[i], expected[i]);
            dump("device state", dev[g]);
          }
      }
    }
  }
  printf("%d steps of %d copies: %s\n", steps, count, stateReports + observationReports == 0 ? "the states and observations agree" : "differences above");
}
