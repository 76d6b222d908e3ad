#pragma once
// What the trainers report: an iteration's figures, an evaluation's results, a view of one
// self-play tree and a single-agent policy's episodes. Plain values, copied across threads by the engine's callbacks.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/search/device_sunburst.hpp"

namespace cas::train {

struct EvaluationResult {
  std::string opponent;
  int games = 0;
  int wins = 0, draws = 0, losses = 0;                // totals, for the agent
  int winsFirst = 0, drawsFirst = 0, lossesFirst = 0;  // the agent moving first
  int winsSecond = 0, drawsSecond = 0, lossesSecond = 0;
  double winRate() const { return games ? double(wins) / games : 0; }
};

// A single-agent algorithm's iteration (PPO, MuZero): its rollout's (or self-play's) episodes and
// its update's figures.
struct EpisodeReport {
  std::int64_t environmentSteps = 0;  // in the whole run
  // Episodes that ended during this iteration's rollout (0: none did, and the means mean
  // nothing), and their mean return (the sum of rewards) and length (steps).
  std::int64_t episodes = 0;
  double returnMean = 0, lengthMean = 0;
  double stepsPerSecond = 0;  // environment steps per second of wall time, rollout and update together
  double rolloutSeconds = 0;  // the rollout's wall time (policy, sampling, environments)
  double learningRate = 0;    // the step size this iteration's update used (after annealing)
  float approxKl = 0, clipFraction = 0;  // means over the update's minibatches (PPO's)
  // MuZero's updates: the mean reward loss (then approxKl and clipFraction are not measured).
  std::optional<float> rewardLoss;
};

struct IterationReport {
  std::int64_t iteration = 0;
  std::int64_t gamesPlayed = 0;  // in the whole run
  std::int64_t positions = 0;    // in the replay buffer
  // Training steps taken: 0 while the replay buffer holds fewer positions than one batch
  // (batchSize), and then the loss terms below mean nothing and are not reported.
  std::int64_t trainingSteps = 0, batchSize = 0;
  float loss = 0, policyLoss = 0, valueLoss = 0, l2 = 0, entropy = 0;
  double simulationsPerSecond = 0, gamesPerSecond = 0;
  // Stage times, each measured where the stage ran (CUDA events on a GPU): the network's
  // evaluations and the tree work inside self-play's searches, the samples' moves (recording,
  // committing and drawing them, the new weights' copy) and the training steps. With overlap the
  // stages run side by side, so they add up to more than the iteration's wall time.
  double inferenceSeconds = 0, searchSeconds = 0, trainSeconds = 0, dataSeconds = 0;
  double selfPlaySeconds = 0, wallSeconds = 0;  // wall clock: self-play's moves; the whole iteration
  double finishedAt = 0;  // when the iteration ended, seconds since 1970 UTC (set by the engine; 0: not known)
  bool overlapped = false;                      // train.overlap was on for this iteration
  // The optimizer step whose weights self-play played with (new weights reach self-play when an
  // iteration ends, so this is the step count at the iteration's start).
  std::int64_t selfPlayWeightsStep = 0;
  // Times per self-play move the host waited for a result (search::SearchMetrics::hostWaits):
  // about 1 with the device search (the moves coming back), one per simulation step and more
  // with the CPU search.
  double hostWaitsPerMove = 0;
  std::int64_t recycledNodes = 0;
  std::vector<EvaluationResult> evaluations;  // when this iteration evaluated
  std::optional<EpisodeReport> episodes;      // set by single-agent algorithms (PPO)
};

// The top of one game's search tree, breadth first (node 0 is the root), for views.
struct TreeSnapshot {
  struct Node {
    std::int32_t parent;  // index in nodes; -1 for the root
    int action, visits, virtualLoss, depth;
    float q, prior;  // q from the point of view of the player who moved into the node
  };
  int game = 0;
  std::int64_t iteration = 0;
  std::string environment;     // the project's environment id ("tictactoe", ...)
  std::string board;           // the root position, as text
  std::vector<int> rootMoves;  // the moves from the game's start to the root position
  std::vector<Node> nodes;
  int treeNodes = 0;           // nodes in the whole tree
  int treeCapacity = 0;        // the tree's node budget
  std::int64_t recycledNodes = 0;  // nodes this tree has recycled so far
  float cPuct = 0;             // the exploration constant the search uses now
  // Asked for with a device node budget (Engine::requestSnapshot): the same tree laid out as the
  // sunburst on the device that holds it, up to that many nodes, ready to be written into GL
  // buffers (DeviceSunburst::writeGlBuffers with deviceCounts.generation); null when the search
  // keeps its trees in host memory, with the reason in deviceProblem when laying it out failed.
  std::shared_ptr<search::DeviceSunburst> deviceSunburst;
  search::DeviceSunburst::Counts deviceCounts;
  std::string deviceProblem;
};

// The returns of `episodes` whole episodes of a policy (EpisodicTrainer::evaluate).
struct EpisodeEvaluation {
  std::vector<double> returns;  // in the order the episodes started
  double mean() const;
  double median() const;
  double standardDeviation() const;  // population (divided by the count), as numpy.std
};

// A trading run judged on its series' held-out part (the bars after trading.train_fraction):
// its greedy policy trades the part once, start to end, beside buying at the first step and
// holding to the end, both under the environment's rules and fees (trading.hpp). Profits are
// gym-anytrading's total profit: 1 is the money a trade started with, 1.05 five percent more.
struct HeldOutResult {
  std::string file;  // the series' file
  int seriesBars = 0, firstBar = 0;  // the part is bars [firstBar, seriesBars)
  int steps = 0, trades = 0, longSteps = 0;  // the policy's steps, its trades, the steps it ended long
  double policyProfit = 1, policyReward = 0;  // total profit and summed reward (price points)
  double buyAndHoldProfit = 1;
  double firstClose = 0, lastClose = 0;  // the prices the buy and hold trades at
};

// A market-making run judged against Avellaneda and Stoikov's closed-form quotes
// (env/market_making.hpp): the same episodes (the same seeds, so the same mid-price paths) played
// by the greedy policy, by the closed form, and by the closed form rounded to the action grid
// (the best the policy's actions can come to it). Wealth is cash plus inventory at the last mid
// price; utility -exp(-gamma wealth); the certainty equivalent the wealth whose utility is the
// mean utility, -ln(-mean utility) / gamma.
struct QuotingResult {
  double meanUtility = 0, certaintyEquivalent = 0, meanWealth = 0, wealthStd = 0, meanAbsInventory = 0;
};
struct OptimumComparison {
  int episodes = 0;
  std::uint64_t seed = 0;
  QuotingResult policy, optimum, optimumOnGrid;
};

// One episode of a policy, frame by frame: what the studio's Episode view replays. Frame t holds
// the observation the policy saw, its action probabilities and value there, the action taken and
// the reward it brought; the last frame is the final observation (action -1, no reward). The
// scalars are the environment's at that observation (SingleAgentEnvironments::scalars, named by
// the episode's scalarNames; none for most environments).
struct EpisodeFrame {
  std::vector<float> observation, probabilities, scalars;
  float value = 0;
  int action = -1;
  float reward = 0;
};
struct RecordedEpisode {
  std::string environment;
  std::vector<int> observationShape;
  std::vector<std::string> scalarNames;
  std::vector<EpisodeFrame> frames;
  double episodeReturn = 0;
  bool ended = false;  // false: cut at the step limit before the environment ended it
};

}  // namespace cas::train
