#pragma once
// The networks of TARGETS.md, as PDL, for `cuda-agent bench` (the same programs as the golden
// cases of the same names in tests/golden).
#include <cstdint>
#include <string>
#include <vector>

namespace cas::train {

struct BenchmarkNet {
  std::string name;
  std::string source;  // PDL
  // The same network with its hidden layers in @precision('bf16') (tensor-core products, fp32
  // master weights and accumulation) and its output layer (logits and value) in fp32.
  std::string mixedSource;
  // The same trunk with AlphaZero's two heads (`logits` and a tanh `value`: the final layer's
  // action_dim + 1 outputs as two layers), for searches (`cuda-agent bench search`).
  std::string alphaZeroSource;
  std::vector<std::int64_t> observationShape;
  std::int64_t actionCount;
};

const std::vector<BenchmarkNet>& benchmarkNets();
const BenchmarkNet* findBenchmarkNet(const std::string& name);

}  // namespace cas::train
