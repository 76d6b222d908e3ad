#include "core/train/benchmark_nets.hpp"

namespace cas::train {
namespace {

const char* kMlpTrunk =
    "    h = tanh(dense(obs, units=UNITS))\n"
    "    h = tanh(dense(h, units=UNITS))\n";

const char* kCnnTrunk =
    "    x = relu(conv2d(obs, filters=32, kernel=8, stride=4, padding='valid'))\n"
    "    x = relu(conv2d(x, filters=64, kernel=4, stride=2, padding='valid'))\n"
    "    x = relu(conv2d(x, filters=64, kernel=3, stride=1, padding='valid'))\n"
    "    h = relu(dense(x, units=512))\n";

std::string replaceAll(std::string s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) s.replace(at, from.size(), to);
  return s;
}

BenchmarkNet make(const std::string& name, const std::string& trunk, std::vector<std::int64_t> obs, std::int64_t actions) {
  const std::string head = "    return dense(h, units=action_dim + 1)\n";
  BenchmarkNet n;
  n.name = name;
  n.source = "@parallel(axis='batch')\ndef policy(obs):\n" + trunk + head;
  n.mixedSource = "@precision('bf16')\ndef trunk(obs):\n" + trunk + "    return h\n\n" +
                  "@parallel(axis='batch')\ndef policy(obs):\n    h = trunk(obs)\n" + head;
  n.alphaZeroSource = "@parallel(axis='batch')\ndef policy(obs):\n" + trunk +
                      "    logits = dense(h, units=action_dim)\n    value = tanh(dense(h, units=1))\n    return logits, value\n";
  n.observationShape = std::move(obs);
  n.actionCount = actions;
  return n;
}

// A pre-LN Transformer over token ids: embedding, LAYERS blocks of attention and a GELU
// feed-forward layer, a final layer_norm, mean pooling over the tokens, then the head(s). q, k
// and v are three `linear` layers (PDL cannot split one fused projection). Neither this network
// nor bench/torch_baseline.py's twin has a position table, so the two compute the same thing.
const char* kTransformerBlock =
    "def block(x):\n"
    "    h = layer_norm(x)\n"
    "    a = attention(linear(h, units=WIDTH), linear(h, units=WIDTH), linear(h, units=WIDTH), heads=HEADS)\n"
    "    x = x + linear(a, units=WIDTH)\n"
    "    return x + linear(gelu(linear(layer_norm(x), units=FFN)), units=WIDTH)\n\n";

const char* kTransformerTrunk =
    "    x = embedding(obs, vocab=VOCAB, dim=WIDTH)\n"
    "    for i in range(LAYERS):\n"
    "        x = block(x)\n"
    "    h = mean(layer_norm(x), axis=0)\n";

BenchmarkNet makeTransformer(const std::string& name, std::int64_t tokens, std::int64_t vocab, int layers, int width, int heads, int ffn,
                             std::int64_t actions) {
  auto fill = [&](std::string s) {
    for (auto [key, value] : {std::pair<const char*, std::int64_t>{"WIDTH", width}, {"HEADS", heads}, {"FFN", ffn}, {"VOCAB", vocab}, {"LAYERS", layers}})
      s = replaceAll(s, key, std::to_string(value));
    return s;
  };
  const std::string block = fill(kTransformerBlock), trunk = fill(kTransformerTrunk);
  const std::string head = "    return dense(h, units=action_dim + 1)\n";
  BenchmarkNet n;
  n.name = name;
  n.source = block + "@parallel(axis='batch')\ndef policy(obs):\n" + trunk + head;
  n.mixedSource = block + "@precision('bf16')\ndef trunk(obs):\n" + trunk + "    return h\n\n" +
                  "@parallel(axis='batch')\ndef policy(obs):\n    h = trunk(obs)\n" + head;
  n.alphaZeroSource = block + "@parallel(axis='batch')\ndef policy(obs):\n" + trunk +
                      "    logits = dense(h, units=action_dim)\n    value = tanh(dense(h, units=1))\n    return logits, value\n";
  n.observationShape = {tokens};
  n.actionCount = actions;
  n.tokenVocabulary = vocab;
  return n;
}

}  // namespace

const std::vector<BenchmarkNet>& benchmarkNets() {
  static const std::vector<BenchmarkNet> nets = {
      make("cartpole_mlp64", replaceAll(kMlpTrunk, "UNITS", "64"), {4}, 2),
      make("connect4_mlp256", replaceAll(kMlpTrunk, "UNITS", "256"), {2, 6, 7}, 7),
      make("atari_nature_cnn", kCnnTrunk, {4, 84, 84}, 6),
      // The reward model: 6 layers, d 512, 8 heads, FFN 2048, 512 tokens of 1024 kinds.
      makeTransformer("reward_model_6l", 512, 1024, 6, 512, 8, 2048, 1),
      // Connect Four's 42 cells as tokens of 3 kinds: 4 layers, d 128, 4 heads, FFN 512.
      makeTransformer("connect4_transformer", 42, 3, 4, 128, 4, 512, 7),
  };
  return nets;
}

const BenchmarkNet* findBenchmarkNet(const std::string& name) {
  for (const BenchmarkNet& n : benchmarkNets())
    if (n.name == name) return &n;
  return nullptr;
}

// muzero_mlp256: represent one dense layer of 256 (relu) over the flattened observation; dynamics
// two of 256 over [state, one-hot action], the second the next state, and a linear reward;
// predict two of 256, then the logits and a linear value. muzero_mlp256_tf32: the same with every
// function's products at TF32 (the heads stay fp32), the precision JAX gives fp32 products by
// default, so mctx's default is timed against it.
std::string muZeroMlp256(const std::string& decorator) {
  return decorator +
         "def represent(obs):\n"
         "    return relu(dense(flatten(obs), units=256))\n"
         "\n" +
         decorator +
         "def dynamics(state, action):\n"
         "    h = relu(dense(concat(state, action), units=256))\n"
         "    h = relu(dense(h, units=256))\n"
         "    return h, dense(h, units=1)\n"
         "\n" +
         decorator +
         "def predict(state):\n"
         "    h = relu(dense(state, units=256))\n"
         "    h = relu(dense(h, units=256))\n"
         "    return dense(h, units=action_dim), dense(h, units=1)\n";
}

const std::vector<BenchmarkLearnedModel>& benchmarkLearnedModels() {
  static const std::vector<BenchmarkLearnedModel> models = {
      {"muzero_mlp256", muZeroMlp256("")},
      {"muzero_mlp256_tf32", muZeroMlp256("@precision('tf32')\n")},
  };
  return models;
}

const BenchmarkLearnedModel* findBenchmarkLearnedModel(const std::string& name) {
  for (const BenchmarkLearnedModel& m : benchmarkLearnedModels())
    if (m.name == name) return &m;
  return nullptr;
}

}  // namespace cas::train
