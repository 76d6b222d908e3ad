// Diagnostic (run on the GPU machine): MinAtar Space Invaders' state after init and after 1 to 3 steps
// with the same actions, device kernel vs host, copy by copy; prints the first copy that differs.
// On 2026-12-05 it showed every unsticky action turning to fire on the device (682 of 1000 copies
// differing after one step): ptxas's VIMNMX predicate, see SpaceInvadersRules::minatarAction.
// With that fixed it should print 0 copies differing at every step count.
//   nvcc -std=c++17 -arch=sm_90 -O2 -fmad=false -prec-div=true -prec-sqrt=true --expt-relaxed-constexpr -I. \
//        -o /tmp/si_probe bench/diagnostics/si_probe.cu
#include <cstdio>
#include <cstring>
#include <vector>
#include <cuda_runtime.h>
#include "core/env/minatar_environments.hpp"
#include "core/env/minatar_space_invaders.hpp"
using namespace cas::env;
using R = MinAtarSingleAgentRules<SpaceInvadersRules>;
using S = R::State;
__global__ void probe(S* out, int count, std::uint64_t seed, const int* actions, int steps, unsigned long long* size) {
  const int g = blockIdx.x * blockDim.x + threadIdx.x;
  if (g == 0) *size = sizeof(S);
  if (g >= count) return;
  S s{};
  s.random = GameRandom::forGame(seed, g);
  R::reset(s);
  for (int k = 0; k < steps; ++k) {
    const auto r = R::step(s, actions[k * count + g]);
    if (r.terminated) R::reset(s);
  }
  out[g] = s;
}
void dump(const char* who, const S& s) {
  printf("%s: cannon %d dir %d moveInt %d moveTimer %d alienShot %d shotTimer %d ramp %d term %d sticky %d bullets",
         who, s.game.cannon, s.game.direction, s.game.moveInterval, s.game.moveTimer, s.game.alienShotTimer, s.game.shotTimer, s.game.rampIndex, int(s.game.terminal), s.sticky.last);
  for (int r = 0; r < 10; ++r) printf(" %x", s.game.bullets.row[r]);
  printf("\n");
}
int main() {
  const int count = 1000, maxSteps = 3; const std::uint64_t seed = 7;
  GameRandom draws = GameRandom::forGame(99, 0);
  std::vector<int> actions(count * maxSteps);
  for (int k = 0; k < maxSteps; ++k) for (int g = 0; g < count; ++g) actions[k * count + g] = draws.below(4);
  S* dOut; int* dActions; unsigned long long* dSize;
  cudaMalloc(&dOut, sizeof(S) * count); cudaMalloc(&dActions, sizeof(int) * actions.size()); cudaMalloc(&dSize, 8);
  cudaMemcpy(dActions, actions.data(), sizeof(int) * actions.size(), cudaMemcpyHostToDevice);
  for (int steps = 0; steps <= maxSteps; ++steps) {
    probe<<<(count + 127) / 128, 128>>>(dOut, count, seed, dActions, steps, dSize);
    std::vector<S> dev(count); unsigned long long dsize = 0;
    cudaMemcpy(dev.data(), dOut, sizeof(S) * count, cudaMemcpyDeviceToHost);
    cudaMemcpy(&dsize, dSize, 8, cudaMemcpyDeviceToHost);
    printf("steps %d: %s; sizeof(State) host %zu device %llu\n", steps, cudaGetErrorString(cudaGetLastError()), sizeof(S), dsize);
    int differing = 0, first = -1;
    for (int g = 0; g < count; ++g) {
      S h{}; h.random = GameRandom::forGame(seed, g); R::reset(h);
      for (int k = 0; k < steps; ++k) { const auto r = R::step(h, actions[k * count + g]); if (r.terminated) R::reset(h); }
      if (std::memcmp(&h.game, &dev[g].game, sizeof(h.game)) != 0 || h.sticky.last != dev[g].sticky.last) { if (first < 0) first = g; ++differing; }
    }
    printf("  copies differing: %d (first %d)\n", differing, first);
    if (first >= 0) {
      S h{}; h.random = GameRandom::forGame(seed, first); R::reset(h);
      for (int k = 0; k < steps; ++k) { const auto r = R::step(h, actions[k * count + first]); if (r.terminated) R::reset(h); }
      printf("  actions of copy %d:", first); for (int k = 0; k < steps; ++k) printf(" %d", actions[k * count + first]); printf("\n");
      dump("  host  ", h); dump("  device", dev[first]);
    }
  }
}
