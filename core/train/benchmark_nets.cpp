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

}  // namespace

const std::vector<BenchmarkNet>& benchmarkNets() {
  static const std::vector<BenchmarkNet> nets = {
      make("cartpole_mlp64", replaceAll(kMlpTrunk, "UNITS", "64"), {4}, 2),
      make("connect4_mlp256", replaceAll(kMlpTrunk, "UNITS", "256"), {2, 6, 7}, 7),
      make("atari_nature_cnn", kCnnTrunk, {4, 84, 84}, 6),
  };
  return nets;
}

const BenchmarkNet* findBenchmarkNet(const std::string& name) {
  for (const BenchmarkNet& n : benchmarkNets())
    if (n.name == name) return &n;
  return nullptr;
}

}  // namespace cas::train
