#pragma once
// dist::Communicator over MPI, for ranks that are processes mpirun started on a backend without a
// communicator of its own (the CPU backend). Part of the MPI plugin (libcas_mpi.so).
//
// How each collective maps onto MPI: a thread of the communicator's own issues them, in the
// order they were asked for, as MPI's blocking collectives on a duplicate of MPI_COMM_WORLD (Open
// MPI's blocking collectives pipeline large messages; its non-blocking ones took twice as long
// here, and move only while they are polled). So a started bucket travels while its caller goes
// on, and every wait is a wait for that thread, polled with the timeout:
//   all-reduce   MPI_Reduce to rank 0, then MPI_Bcast from rank 0: the sum is computed once and
//                shared, so it is the same bits on every rank (an MPI_Allreduce may add in a
//                different order on different ranks)
//   broadcast    MPI_Bcast of bytes, in pieces of at most 1 GiB
//   all-gather   MPI_Allgather of bytes
//   barrier      MPI_Barrier
// Each job works on a buffer it shares ownership of (the caller's values copied in when it is
// queued, the result copied out by the wait; a bucket's buffer is reused by its next all-reduce),
// so a job that is still inside MPI after its caller gave up touches no memory of the caller's.
//
// Failures: a wait throws CommunicatorError when a failure notice arrives or the timeout passes;
// from then on every call throws, the collective thread drops the jobs it has not begun, and one
// already inside MPI may stay there for good (its peer is gone). The destructor then gives it two
// seconds and leaves it behind: the process should leave through MpiWorld::abort (MPI_Finalize
// would pull MPI from under it). fail() sends this rank's reason (at most 1 KiB: MPI sends it at
// once) to every other rank on a second duplicate of the world, with a tag of its own, unless
// this rank already knows of an earlier failure (another's notice, a timeout), so that a notice
// always names the rank whose failure came first; the waits look for notices (MPI_Iprobe) while
// they poll. A rank that stops without a word is ended by mpirun (a process that exits without
// MPI_Finalize ends the job), or, when it hangs, the others' waits time out.
//
// Thread-safety: one thread drives the collectives; fail() may be called from any thread.
#include <mpi.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/collective/communicator.hpp"

namespace cas::dist {

class MpiCommunicator final : public Communicator {
 public:
  // Every rank of `world` calls it (it duplicates `world` twice, a collective).
  MpiCommunicator(MPI_Comm world, double timeoutSeconds);
  ~MpiCommunicator() override;
  MpiCommunicator(const MpiCommunicator&) = delete;
  MpiCommunicator& operator=(const MpiCommunicator&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void startAllReduceSum(int bucket, float* data, std::size_t count) override;
  void waitAllReduce(int bucket) override;
  void broadcast(void* data, std::size_t bytes, int root) override;
  void allGather(const void* send, void* receive, std::size_t bytesPerRank) override;
  void barrier() override;
  void fail(const std::string& reason) override;

 private:
  // One collective for the collective thread: `run` calls MPI on `buffer`; `done` is set after
  // it returns (or when the job is dropped after a failure, with `dropped`).
  using Buffer = std::shared_ptr<std::vector<char>>;
  struct Job {
    std::function<void(std::vector<char>&)> run;
    Buffer buffer;
    std::atomic<bool> done{false};
    bool dropped = false;
  };
  // What the collective thread shares with the communicator; the thread holds it too, so that a
  // thread left behind inside MPI after a failure outlives the communicator safely. The notice
  // this rank sent lives here for the same reason.
  struct Queue {
    std::mutex mutex;
    std::condition_variable changed;  // a job queued, or the thread told to stop
    std::condition_variable jobDone;
    std::deque<std::shared_ptr<Job>> jobs;
    bool stopping = false;
    bool cancelled = false;  // a failure: queued jobs are dropped
    bool finished = false;   // the thread has returned
    std::string notice;      // this rank's reason, as sent
  };
  static void runCollectives(const std::shared_ptr<Queue>& queue);  // the collective thread

  // Queues `run` with `buffer` for the collective thread; returns its job, to wait for.
  std::shared_ptr<Job> issue(Buffer buffer, std::function<void(std::vector<char>&)> run);
  // Waits until `job` is done; throws CommunicatorError on a failure notice, an earlier failure
  // or the timeout. `what` names the collective for the timeout's message.
  void await(const Job& job, const char* what);
  // Throws when this rank failed or another rank's notice has arrived.
  void throwIfFailed();
  // Records the first failure (under failureMutex_) and drops the queued jobs.
  void recordFailure(const std::string& failure);
  // `count` as MPI's int, or CommunicatorError naming `what`.
  static int mpiCount(std::size_t count, const char* what);

  MPI_Comm data_ = MPI_COMM_NULL;     // the collectives
  MPI_Comm notices_ = MPI_COMM_NULL;  // failure notices
  int rank_ = 0, size_ = 1;
  std::chrono::duration<double> timeout_;
  struct Reduction {
    std::shared_ptr<Job> job;
    float* data = nullptr;  // where the sum goes
  };
  std::map<int, Reduction> reductions_;  // by bucket, those in flight
  // By bucket, its job's buffer, kept for the next step's (a fresh one would be faulted in page by
  // page every step); a job left inside MPI after a failure keeps its own.
  std::map<int, Buffer> bucketBuffers_;

  std::shared_ptr<Queue> queue_ = std::make_shared<Queue>();
  std::thread collectives_;

  std::mutex failureMutex_;
  std::string failure_;  // the first failure, as thrown; empty while none
  std::vector<MPI_Request> noticeRequests_;
};

}  // namespace cas::dist
