#pragma once
// Data-parallel AlphaZero on CPU ranks: N AlphaZeroTrainers, one per thread, each with its own
// CPU backend, self-play games (seeded from its own stream), replay shard and minibatch, their
// gradients summed through a dist::ThreadedGroup and averaged before an optimizer step that is
// the same bits on every rank (checked every dist.checksum_every steps). To the engine it is one
// Trainer: an iteration runs every rank's iteration side by side and reports rank 0's figures
// with the games, speeds and loss of all ranks; the checkpoint is rank 0's alone (the weights
// and optimizer state every rank shares, rank 0's replay shard and draws), so it is an ordinary
// checkpoint that resumes with any number of ranks, or with none. When a rank fails (throws), the
// others stop at their next collective, at once, or within dist.timeout_seconds when a rank
// stopped answering; the iteration then throws one error naming the rank and its cause, and the
// engine keeps the last checkpoint, written before that iteration.
// Thread-safety: one thread drives it (the engine thread); it runs the ranks on threads of its own
// during the constructor and runIteration, and on the calling thread otherwise.
#include <memory>
#include <optional>
#include <vector>

#include "core/collective/threaded_communicator.hpp"
#include "core/train/alphazero.hpp"

namespace cas::train {

class DataParallelTrainer final : public Trainer {
 public:
  // Builds `options.ranks` ranks (at least 2) of an AlphaZero project, each on a CPU backend of its
  // own (rank 0 on `backend`, which must be the CPU's; on GPUs a rank is a process: process_group.hpp).
  // Throws std::runtime_error with the first rank's error when a rank cannot be built.
  DataParallelTrainer(const project::Project& project, std::shared_ptr<exec::Backend> backend, const ParallelOptions& options);
  ~DataParallelTrainer() override;

  int ranks() const { return int(ranks_.size()); }
  AlphaZeroTrainer& rank(int r) { return *ranks_.at(size_t(r)); }

  const project::Project& project() const override { return ranks_[0]->project(); }
  const params::ParameterSet& parameters() const override { return ranks_[0]->parameters(); }
  // Applied to every rank (they keep one configuration).
  std::optional<std::string> setParameter(const std::string& name, const params::ParamValue& value) override;
  // Every rank's iteration side by side. Throws std::runtime_error naming the rank that failed
  // first and why; the trainer cannot run another iteration after that.
  IterationReport runIteration(const std::function<bool()>& cancelled = {}) override;
  std::int64_t iteration() const override { return ranks_[0]->iteration(); }
  std::int64_t checkpointEvery() const override { return ranks_[0]->checkpointEvery(); }
  SearchingTrainer* searching() override { return ranks_[0]->searching(); }
  EpisodicTrainer* episodic() override { return ranks_[0]->episodic(); }
  exec::Executable& inferenceProgram() override { return ranks_[0]->inferenceProgram(); }
  std::int64_t inferenceBatch() const override { return ranks_[0]->inferenceBatch(); }

  std::string checkpoint() const override { return ranks_[0]->checkpoint(); }
  std::uint64_t checkpointSizeLimit() const override { return ranks_[0]->checkpointSizeLimit(); }
  // Every rank restores the same checkpoint (ranks other than 0 then draw from their own streams).
  bool restore(const std::string& bytes, std::string* error) override;

 private:
  // Runs `work(rank)` for every rank, rank 0 on the calling thread and the others on threads of
  // their own; a rank that throws fails the group (so the others stop at their next collective).
  // Throws the first failure, naming its rank, once every rank has returned.
  void onEveryRank(const std::function<void(int)>& work);

  std::unique_ptr<dist::ThreadedGroup> group_;
  std::vector<std::unique_ptr<AlphaZeroTrainer>> ranks_;
};

}  // namespace cas::train
