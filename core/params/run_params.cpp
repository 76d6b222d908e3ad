#include "core/params/run_params.hpp"

namespace cas::params {

SearchParams readSearchParams(const ParameterSet& set) {
  SearchParams p;
  p.simulations = set.getInt("search.simulations");
  p.cPuct = set.getFloat("search.c_puct");
  p.dirichletAlpha = set.getFloat("search.dirichlet_alpha");
  p.dirichletFraction = set.getFloat("search.dirichlet_fraction");
  p.leavesPerStep = set.getInt("search.leaves_per_step");
  p.virtualLoss = set.getFloat("search.virtual_loss");
  p.temperature = set.getFloat("search.temperature");
  p.temperatureMoves = set.getInt("search.temperature_moves");
  p.nodeBudget = set.getInt("search.node_budget");
  p.rootPolicy = set.getChoice("search.root_policy") == "gumbel" ? RootPolicy::Gumbel : RootPolicy::Puct;
  p.gumbelArms = set.getInt("search.gumbel_arms");
  p.subtreeReuse = set.getBool("search.subtree_reuse");
  p.device = set.getChoice("search.device");
  p.selection = set.getChoice("search.selection") == "branchy" ? SelectionKernel::Branchy : SelectionKernel::Masked;
  p.instrument = set.getBool("search.instrument");
  return p;
}

TrainParams readTrainParams(const ParameterSet& set) {
  TrainParams p;
  p.parallelGames = set.getInt("train.parallel_games");
  p.gamesPerIteration = set.getInt("train.games_per_iteration");
  p.batchSize = set.getInt("train.batch_size");
  p.stepsPerIteration = set.getInt("train.steps_per_iteration");
  p.overlap = set.getBool("train.overlap");
  p.optimizer = set.getChoice("train.optimizer");
  p.learningRate = set.getFloat("train.learning_rate");
  p.momentum = set.getFloat("train.momentum");
  p.weightDecay = set.getFloat("train.weight_decay");
  p.gradClip = set.getFloat("train.grad_clip");
  p.replayCapacity = set.getInt("train.replay_capacity");
  p.evalEvery = set.getInt("train.eval_every");
  p.evalGames = set.getInt("train.eval_games");
  p.checkpointEvery = set.getInt("train.checkpoint_every");
  return p;
}

PpoParams readPpoParams(const ParameterSet& set) {
  PpoParams p;
  p.envs = set.getInt("ppo.envs");
  p.rolloutSteps = set.getInt("ppo.rollout_steps");
  p.minibatches = set.getInt("ppo.minibatches");
  p.epochs = set.getInt("ppo.epochs");
  p.totalSteps = set.getInt("ppo.total_steps");
  p.learningRate = set.getFloat("ppo.learning_rate");
  p.annealLearningRate = set.getBool("ppo.anneal_lr");
  p.gamma = set.getFloat("ppo.gamma");
  p.gaeLambda = set.getFloat("ppo.gae_lambda");
  p.clip = set.getFloat("ppo.clip");
  p.valueCoef = set.getFloat("ppo.value_coef");
  p.entropyCoef = set.getFloat("ppo.entropy_coef");
  p.maxGradNorm = set.getFloat("ppo.max_grad_norm");
  p.deviceRollout = set.getBool("ppo.device_rollout");
  return p;
}

MuZeroParams readMuZeroParams(const ParameterSet& set) {
  MuZeroParams p;
  p.copies = set.getInt("muzero.copies");
  p.unrollSteps = set.getInt("muzero.unroll_steps");
  p.tdSteps = set.getInt("muzero.td_steps");
  p.discount = set.getFloat("muzero.discount");
  p.movesPerIteration = set.getInt("muzero.moves_per_iteration");
  p.updatesPerIteration = set.getInt("muzero.updates_per_iteration");
  p.temperature = set.getFloat("muzero.temperature");
  p.minMaxFloor = set.getFloat("muzero.min_max_floor");
  p.totalSteps = set.getInt("muzero.total_steps");
  return p;
}

RuntimeParams readRuntimeParams(const ParameterSet& set) {
  RuntimeParams p;
  p.device = set.getChoice("runtime.device");
  p.seed = set.getInt("runtime.seed");
  return p;
}

DistParams readDistParams(const ParameterSet& set) {
  DistParams p;
  p.bucketKib = set.getInt("dist.bucket_kib");
  p.checksumEvery = set.getInt("dist.checksum_every");
  p.timeoutSeconds = set.getFloat("dist.timeout_seconds");
  return p;
}

}  // namespace cas::params
