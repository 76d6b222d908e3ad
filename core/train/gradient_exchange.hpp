#pragma once
// One rank's share of data-parallel training's collectives, on a dist::Communicator: the
// gradients averaged over the ranks in buckets between the gradient and optimizer programs
// (update.hpp), the check that every rank holds the same weights and optimizer state, the few
// counters the ranks agree on (whether every replay shard can fill a batch, games played, the
// loss), and the fault injection that makes a chosen rank fail at a chosen step.
//
// Buckets: the parameters in reverse order (the order a backward pass produces their gradients),
// whole parameters grouped until a bucket holds about dist.bucket_kib KiB. The gradient program
// runs handing its outputs over as they become final (Executable::runHandingOver): a bucket's
// all-reduce starts as soon as its last gradient is copied in, while the rest of the backward
// pass runs, buckets strictly in index order (so every rank starts them alike; a bucket whose
// gradients come early waits for the ones before it). On the CPU backend an output is final
// right after its node; on a GPU the program runs whole and hands its outputs over after (the
// default), and the NCCL communicator stages each bucket back to its device: there the buckets
// are neither started from the backward pass's stream nor captured in the update graph.
// Thread-safety: driven by the rank's thread, like the Updater that uses it.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/collective/communicator.hpp"
#include "core/exec/backend.hpp"
#include "core/params/run_params.hpp"
#include "core/pdl/compiler.hpp"
#include "core/train/update.hpp"

namespace cas::train {

// Makes rank `rank` throw just before it computes optimizer step `step` (counted over the whole
// run, from 1): a real failure on the data-parallel path, for testing that the other ranks stop
// with a clear error. `cuda-agent train` reads it from CAS_DIST_FAIL=RANK:STEP.
struct FaultInjection {
  int rank = 0;
  std::int64_t step = 0;
  // "RANK:STEP"; nullopt with `error` when it is not two non-negative integers (STEP from 1).
  static std::optional<FaultInjection> parse(std::string_view text, std::string* error);
};

class GradientExchange {
 public:
  GradientExchange(dist::Communicator& communicator, const params::DistParams& params, std::optional<FaultInjection> fault = {});

  dist::Communicator& communicator() { return communicator_; }
  int rank() const { return communicator_.rank(); }
  int ranks() const { return communicator_.size(); }
  void setChecksumEvery(std::int64_t steps) { checksumEvery_ = steps; }

  // The buckets for these parameters (the Updater calls it once its programs exist).
  void setLayout(const std::vector<pdl::ParameterSummary>& parameters);
  // Parameter indices (into setLayout's list) of each bucket, in the order they are reduced.
  const std::vector<std::vector<std::size_t>>& buckets() const { return buckets_; }

  // Runs the gradient program, its "grad/<param>" outputs summed over the ranks bucket by bucket
  // as they come, then averaged into the optimizer program's "grad/<param>" inputs.
  void runAndAverageGradients(exec::Executable& gradients, exec::Executable& optimizer);
  // Of the last runAndAverageGradients' buckets, how many started their all-reduce before the
  // gradient program had handed over its last gradient (overlapped with the backward pass).
  std::size_t bucketsStartedEarly() const { return startedEarly_; }
  // After optimizer step `step`: every dist.checksum_every steps, compares the checksums of every
  // rank's stored tensors (parameters and optimizer state); throws std::runtime_error on every
  // rank, naming the ranks that differ, when they are not all equal.
  void checkEqualState(const exec::Executable& state, std::int64_t step);
  // Rank 0's stored tensors of `updater` into every other rank's (a run's start).
  void broadcastState(Updater& updater);
  // Throws the injected fault when it names this rank and `step`.
  void failIfInjected(std::int64_t step) const;

  bool everyRank(bool condition);              // true when it holds on every rank
  std::int64_t sum(std::int64_t value);        // the sum over the ranks
  void averageLossSums(LossSums& sums);        // each figure averaged over the ranks, in double precision

 private:
  dist::Communicator& communicator_;
  std::int64_t bucketBytes_, checksumEvery_;
  std::optional<FaultInjection> fault_;
  std::vector<pdl::ParameterSummary> parameters_;
  std::vector<std::vector<std::size_t>> buckets_;
  std::vector<std::vector<float>> bucketData_;  // one buffer per bucket, reused every step
  std::vector<std::string> gradientNames_;      // "grad/<param>", by parameter index
  std::vector<std::pair<std::size_t, std::size_t>> placeInBucket_;  // by parameter index: bucket, offset in floats
  std::size_t startedEarly_ = 0;
};

// FNV-1a over the bytes of every stored tensor (non-data input) of `program`, in graph order.
std::uint64_t storedStateChecksum(const exec::Executable& program);

}  // namespace cas::train
