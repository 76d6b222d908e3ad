#pragma once
// Data-parallel AlphaZero with one process per rank (cuda-agent train --gpus N: a process per
// GPU, each an AlphaZeroTrainer on its own device whose gradients meet through the backend's
// communicator). Rank 0 is the run: the engine drives its trainer, wrapped in a LeadingRank, and
// it alone writes the run folder, metrics and checkpoints (ordinary ones, which resume with any
// number of ranks, or with none). The other ranks write nothing; each runs followLeadingRank,
// which does what rank 0's messages say. Before each of its iterations rank 0 broadcasts:
//   restore  the checkpoint bytes rank 0 restored (a resumed run): every rank restores them;
//   set      a live parameter change rank 0 accepted ("name" and its value as text);
//   iterate  run one iteration (every rank calls the same collectives in it);
//   stop     the run ended (the engine stopped after its last iteration): return.
// So the ranks agree each iteration whether to go on, and hold one configuration. A stop asked
// of rank 0 during an iteration shortens its own self-play only; the others finish theirs (their
// cancelled callback may shorten it too) and the iteration's training steps are taken together.
// A failure on any rank ends the others at their next collective, within dist.timeout_seconds.
// Thread-safety: a LeadingRank is driven by one thread (the engine thread); followLeadingRank
// runs on the calling thread. The communicator's fail() may be called from any thread.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/collective/communicator.hpp"
#include "core/train/alphazero.hpp"

namespace cas::train {

class LeadingRank final : public Trainer {
 public:
  // `trainer` is rank 0 of the group `communicator` joins (DataParallelRank{&communicator}).
  LeadingRank(std::unique_ptr<AlphaZeroTrainer> trainer, dist::Communicator& communicator);

  AlphaZeroTrainer& rank() { return *trainer_; }

  const project::Project& project() const override { return trainer_->project(); }
  const params::ParameterSet& parameters() const override { return trainer_->parameters(); }
  // Applied here, then sent to the other ranks with the next iteration.
  std::optional<std::string> setParameter(const std::string& name, const params::ParamValue& value) override;
  // Sends what is queued and "iterate", then runs rank 0's iteration.
  IterationReport runIteration(const std::function<bool()>& cancelled = {}) override;
  std::int64_t iteration() const override { return trainer_->iteration(); }
  std::int64_t checkpointEvery() const override { return trainer_->checkpointEvery(); }
  SearchingTrainer* searching() override { return trainer_.get(); }
  exec::Executable& inferenceProgram() override { return trainer_->inferenceProgram(); }
  std::int64_t inferenceBatch() const override { return trainer_->inferenceBatch(); }
  std::string checkpoint() const override { return trainer_->checkpoint(); }
  std::uint64_t checkpointSizeLimit() const override { return trainer_->checkpointSizeLimit(); }
  // Restores rank 0; the other ranks restore the same bytes with the next iteration.
  bool restore(const std::string& bytes, std::string* error) override;

  // Tells the other ranks the run has ended (after the engine's last iteration), unless an
  // iteration failed, when they stop at their next collective instead. Call it once, at the end.
  void stopRanks();
  void endRun() override { stopRanks(); }

 private:
  struct Message {
    std::int64_t kind;
    std::string payload;
  };
  void send(Message message);

  std::unique_ptr<AlphaZeroTrainer> trainer_;
  dist::Communicator& communicator_;
  std::vector<Message> queued_;
  bool failed_ = false;  // an iteration threw: the group's collectives are out of step
};

// Rank `communicator.rank()` (> 0) of a group led by a LeadingRank: runs `trainer`'s iterations
// as rank 0's messages say, with `cancelled` polled at their safe points (it shortens this
// rank's self-play; rank 0 decides whether another iteration follows). Returns when rank 0 says
// stop; throws the rank's error (a dist::CommunicatorError when another rank failed), after
// calling the communicator's fail() so that the others stop too.
void followLeadingRank(AlphaZeroTrainer& trainer, dist::Communicator& communicator, const std::function<bool()>& cancelled = {});

// `bytes` as lowercase hex, and back (nullopt for text that is not an even number of hex digits):
// how cuda-agent passes a communicator's group id to the processes it spawns.
std::string toHex(const std::string& bytes);
std::optional<std::string> fromHex(std::string_view hex);

}  // namespace cas::train
