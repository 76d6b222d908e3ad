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
  std::vector<std::int64_t> observationShape;
  std::int64_t actionCount;
};

const std::vector<BenchmarkNet>& benchmarkNets();
const BenchmarkNet* findBenchmarkNet(const std::string& name);

}  // namespace cas::train
