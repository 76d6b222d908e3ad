#pragma once
// The in-process implementation of Communicator (communicator.hpp): the ranks are threads of one
// process sharing a ThreadedGroup. A collective is matched across ranks by its position in each
// rank's sequence of calls; the rank that arrives last performs it (the sum in rank order 0..N-1,
// so every rank receives the same bits) and wakes the others. A rank waits at most the group's
// timeout for the others; then, or as soon as a rank calls fail(), the group is failed and every
// pending and later call throws CommunicatorError with the first failure's message.
// Thread-safety: the group is shared by the ranks' threads (its state is behind one mutex); each
// ThreadedCommunicator is driven by its rank's thread, and fail() may be called from any thread.
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/collective/communicator.hpp"

namespace cas::dist {

class ThreadedGroup;

class ThreadedCommunicator final : public Communicator {
 public:
  int rank() const override { return rank_; }
  int size() const override;
  void startAllReduceSum(int bucket, float* data, std::size_t count) override;
  void waitAllReduce(int bucket) override;
  void broadcast(void* data, std::size_t bytes, int root) override;
  void allGather(const void* send, void* receive, std::size_t bytesPerRank) override;
  void barrier() override;
  void fail(const std::string& reason) override;

 private:
  friend class ThreadedGroup;
  ThreadedCommunicator(ThreadedGroup& group, int rank) : group_(group), rank_(rank) {}
  ThreadedGroup& group_;
  int rank_;
  std::uint64_t nextCall_ = 0;                  // this rank's position in the sequence of collectives
  std::map<int, std::uint64_t> pendingBuckets_;  // bucket index -> the call waiting to be waited for
};

class ThreadedGroup {
 public:
  // `ranks` communicators (at least 1); a rank waits at most `timeout` for the others.
  ThreadedGroup(int ranks, std::chrono::duration<double> timeout);
  ThreadedGroup(const ThreadedGroup&) = delete;
  ThreadedGroup& operator=(const ThreadedGroup&) = delete;

  int size() const { return int(communicators_.size()); }
  ThreadedCommunicator& communicator(int rank) { return *communicators_.at(size_t(rank)); }
  // The first failure's message ("rank 1 failed: ..."), once the group has failed.
  std::optional<std::string> failure() const;

 private:
  friend class ThreadedCommunicator;
  enum class Kind { AllReduceSum, Broadcast, AllGather, Barrier };
  // One collective as the ranks arrive at it.
  struct Call {
    Kind kind;
    std::size_t count;  // floats (all-reduce) or bytes (broadcast, per rank for all-gather)
    int root;
    std::vector<const void*> send;
    std::vector<void*> receive;
    std::vector<bool> present;  // per rank: arrived
    int arrived = 0, released = 0;
    bool done = false;
  };
  // Joins call `sequence` of rank `rank` (a disagreement with the ranks already there fails the
  // group); the last rank to arrive performs it.
  void arrive(std::uint64_t sequence, int rank, Kind kind, std::size_t count, int root, const void* send, void* receive);
  // Until call `sequence` is done (then it is released for this rank) or the group fails.
  void wait(std::uint64_t sequence, int rank, const char* what);
  void perform(Call& call);
  void failLocked(std::string message);  // mutex_ held
  [[noreturn]] void throwFailure() const;  // mutex_ held

  std::vector<std::unique_ptr<ThreadedCommunicator>> communicators_;
  std::chrono::duration<double> timeout_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::map<std::uint64_t, Call> calls_;
  std::optional<std::string> failure_;
};

}  // namespace cas::dist
