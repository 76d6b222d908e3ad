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
  std::vector<std::int64_t> observationShape;
  std::int64_t actionCount;
};

const std::vector<BenchmarkNet>& benchmarkNets();
const BenchmarkNet* findBenchmarkNet(const std::string& name);

}  // namespace cas::train
