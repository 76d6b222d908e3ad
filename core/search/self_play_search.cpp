#include "core/search/self_play_search.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>

#include "core/exec/backend.hpp"
#include "core/search/mcts.hpp"
#include "core/search/search_math.hpp"

namespace cas::search {

bool SelfPlaySearch::setPosition(int game, const std::string& moves, std::string* error) {
  // Parse on a scratch board first, so a bad move leaves the game as it was.
  auto board = env::makeBoardGames(positions().info().name, 1);
  if (!board->playMoves(0, moves, error)) return false;
  std::vector<int> actions;
  for (char c : moves)
    if (c >= '1' && c <= '9') actions.push_back(c - '1');
  resetGame(game);
  for (int a : actions) play(game, a);
  return true;
}

Evaluator makeCpuEvaluator(const LeafEvaluator& e, const env::EnvironmentInfo& environment) {
  const int actions = environment.actionCount;
  const int obsSize = std::accumulate(environment.observationShape.begin(), environment.observationShape.end(), 1, std::multiplies<>());
  switch (e.kind) {
    case LeafEvaluator::Kind::Uniform:
      return [actions](const float*, int n, float* logits, float* values) {
        std::fill(logits, logits + std::size_t(n) * std::size_t(actions), 0.0f);
        std::fill(values, values + n, 0.0f);
      };
    case LeafEvaluator::Kind::Hashed:
      return [actions, obsSize](const float* obs, int n, float* logits, float* values) {
        for (int i = 0; i < n; ++i)
          hashedEvaluation(obs + std::size_t(i) * std::size_t(obsSize), obsSize, actions, logits + std::size_t(i) * std::size_t(actions), values + i);
      };
    case LeafEvaluator::Kind::Network: break;
  }
  exec::Executable* network = e.network;
  if (!network) throw std::invalid_argument("a network leaf evaluator needs a compiled network");
  const ir::Graph& g = network->graph();
  const ir::NodeId obsNode = g.findInput("obs");
  if (obsNode == ir::kNoNode || g.output("logits") == ir::kNoNode || g.output("value") == ir::kNoNode)
    throw std::invalid_argument("the network for the search needs an input 'obs' and outputs 'logits' and 'value'");
  const std::int64_t batch = g.node(obsNode).shape.at(0);
  // The network runs on full batches: each chunk of up to `batch` positions is zero-padded.
  struct Buffers {
    std::vector<float> obs, logits, values;
  };
  auto buffers = std::make_shared<Buffers>();
  buffers->obs.assign(std::size_t(batch) * std::size_t(obsSize), 0.0f);
  buffers->logits.resize(std::size_t(batch) * std::size_t(actions));
  buffers->values.resize(std::size_t(batch));
  return [network, batch, actions, obsSize, buffers](const float* obs, int n, float* logits, float* values) {
    for (int done = 0; done < n;) {
      const int chunk = std::min<int>(n - done, int(batch));
      std::fill(buffers->obs.begin(), buffers->obs.end(), 0.0f);
      std::copy(obs + std::size_t(done) * std::size_t(obsSize), obs + std::size_t(done + chunk) * std::size_t(obsSize), buffers->obs.begin());
      network->setInput("obs", buffers->obs.data(), buffers->obs.size());
      network->run();
      network->readOutput("logits", buffers->logits.data(), buffers->logits.size());
      network->readOutput("value", buffers->values.data(), buffers->values.size());
      std::copy(buffers->logits.begin(), buffers->logits.begin() + std::ptrdiff_t(chunk) * actions, logits + std::size_t(done) * std::size_t(actions));
      std::copy(buffers->values.begin(), buffers->values.begin() + chunk, values + done);
      done += chunk;
    }
  };
}

}  // namespace cas::search

namespace cas::search {

SearchConfig configFor(const params::SearchParams& p, SearchUse use) {
  const bool selfPlay = use == SearchUse::SelfPlay;
  SearchConfig c;
  c.simulations = int(p.simulations);
  c.cPuct = float(p.cPuct);
  c.dirichletAlpha = float(p.dirichletAlpha);
  c.dirichletFraction = selfPlay ? float(p.dirichletFraction) : 0.0f;
  c.leavesPerStep = int(p.leavesPerStep);
  c.virtualLoss = float(p.virtualLoss);
  c.gumbel = p.rootPolicy == params::RootPolicy::Gumbel;
  c.gumbelArms = int(p.gumbelArms);
  c.nodeBudget = int(p.nodeBudget);
  c.subtreeReuse = p.subtreeReuse;
  c.temperature = selfPlay ? float(p.temperature) : 0.0f;
  c.temperatureMoves = int(p.temperatureMoves);
  c.selection = p.selection;
  c.instrument = p.instrument;
  return c;
}

std::unique_ptr<SelfPlaySearch> makeSearch(exec::Backend& backend, const SearchSetup& setup, const std::string& device, std::string* note) {
  if (device != "cpu" && device != "gpu" && device != "auto")
    throw std::invalid_argument("unknown search device '" + device + "'; expected cpu, gpu or auto");
  std::string why = "the " + backend.id() + " backend has no search of its own";
  exec::DeviceServices* services = backend.deviceServices();
  if (device != "cpu" && services) {
    if (auto search = services->createSearch(setup, &why)) {
      if (note) *note = "the search runs on the device (" + backend.statusText() + ")";
      return search;
    }
  }
  if (device == "gpu") throw std::runtime_error("search.device = gpu, but " + why);
  const env::EnvironmentInfo* info = env::findEnvironment(setup.environment);
  if (!info) throw std::invalid_argument("unknown environment '" + setup.environment + "'");
  if (note) *note = device == "cpu" ? "the search runs on the CPU (as asked)" : "the search runs on the CPU: " + why;
  return std::make_unique<BatchedSearch>(setup.environment, setup.games, setup.config, makeCpuEvaluator(setup.evaluator, *info), setup.seed);
}

}  // namespace cas::search
