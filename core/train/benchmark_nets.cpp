#include "core/train/benchmark_nets.hpp"

namespace cas::train {

const std::vector<BenchmarkNet>& benchmarkNets() {
  static const std::vector<BenchmarkNet> nets = {
      {"cartpole_mlp64",
       "@parallel(axis='batch')\n"
       "def policy(obs):\n"
       "    h = tanh(dense(obs, units=64))\n"
       "    h = tanh(dense(h, units=64))\n"
       "    return dense(h, units=action_dim + 1)\n",
       {4}, 2},
      {"connect4_mlp256",
       "@parallel(axis='batch')\n"
       "def policy(obs):\n"
       "    h = tanh(dense(obs, units=256))\n"
       "    h = tanh(dense(h, units=256))\n"
       "    return dense(h, units=action_dim + 1)\n",
       {2, 6, 7}, 7},
      {"atari_nature_cnn",
       "@parallel(axis='batch')\n"
       "def policy(obs):\n"
       "    x = relu(conv2d(obs, filters=32, kernel=8, stride=4, padding='valid'))\n"
       "    x = relu(conv2d(x, filters=64, kernel=4, stride=2, padding='valid'))\n"
       "    x = relu(conv2d(x, filters=64, kernel=3, stride=1, padding='valid'))\n"
       "    h = relu(dense(x, units=512))\n"
       "    return dense(h, units=action_dim + 1)\n",
       {4, 84, 84}, 6},
  };
  return nets;
}

const BenchmarkNet* findBenchmarkNet(const std::string& name) {
  for (const BenchmarkNet& n : benchmarkNets())
    if (n.name == name) return &n;
  return nullptr;
}

}  // namespace cas::train
