#pragma once
// The networks of TARGETS.md, as PDL, for `cuda-agent bench` (the MLPs and the CNN are the
// golden cases of the same names in tests/golden; the Transformers are the shapes of
// ../shared/anchors/bench_transformer.py, whose PyTorch side is bench/torch_transformer.py).
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
  // Transformers read token ids: observations are whole numbers in [0, tokenVocabulary); 0
  // means real-valued observations.
  std::int64_t tokenVocabulary = 0;
};

const std::vector<BenchmarkNet>& benchmarkNets();
const BenchmarkNet* findBenchmarkNet(const std::string& name);

// A learned model for `bench search --model learned` (core/pdl/learned_model.hpp), over any
// single-agent environment's observation and actions; bench/mctx_baseline.py --recurrent builds
// the same shapes in JAX for mctx.
struct BenchmarkLearnedModel {
  std::string name;
  std::string source;  // PDL: represent, dynamics, predict
};

const std::vector<BenchmarkLearnedModel>& benchmarkLearnedModels();
const BenchmarkLearnedModel* findBenchmarkLearnedModel(const std::string& name);

}  // namespace cas::train
