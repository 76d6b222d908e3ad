#pragma once
// dist::Communicator over MPI, for ranks that are processes mpirun started on a backend without a
// communicator of its own (the CPU backend). Part of the MPI plugin (libcas_mpi.so).
//
// How each collective maps onto MPI (every one non-blocking, on a duplicate of MPI_COMM_WORLD):
//   all-reduce   MPI_Ireduce to rank 0, then, at its wait, MPI_Ibcast from rank 0: the sum is
//                computed once and shared, so it is the same bits on every rank (an
//                MPI_Allreduce may add in a different order on different ranks)
//   broadcast    MPI_Ibcast of bytes, in pieces of at most 1 GiB
//   all-gather   MPI_Iallgather of bytes
//   barrier      MPI_Ibarrier
// Every wait polls its request (MPI_Test, which also drives MPI's progress) until it completes,
// until a failure notice arrives, or until the timeout passes.
//
// Failure notices: fail() sends its reason to every other rank on a second duplicate of the
// world, with a tag of its own; the waits look for such a message (MPI_Iprobe) while they poll,
// and throw CommunicatorError "rank R failed: reason" when one comes. A rank that stops without
// a word is ended by mpirun (a process that exits without MPI_Finalize ends the job), or, when it
// hangs, the others' waits time out. After any failure the collectives are out of step: every
// later call throws, and the process should leave through MpiWorld::abort.
//
// Thread-safety: one thread drives the collectives; fail() may be called from any thread.
#include <mpi.h>

#include <chrono>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "core/dist/communicator.hpp"

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
  struct Reduction {
    float* data = nullptr;
    int count = 0;
    MPI_Request request = MPI_REQUEST_NULL;
  };

  // Polls `request` until it completes; throws CommunicatorError on a failure notice, an earlier
  // failure or the timeout. `what` names the collective for the timeout's message.
  void await(MPI_Request& request, const char* what);
  // Throws when this rank failed or another rank's notice has arrived.
  void throwIfFailed();
  // `count` as MPI's int, or CommunicatorError naming `what`.
  static int mpiCount(std::size_t count, const char* what);

  MPI_Comm data_ = MPI_COMM_NULL;     // the collectives
  MPI_Comm notices_ = MPI_COMM_NULL;  // failure notices
  int rank_ = 0, size_ = 1;
  std::chrono::duration<double> timeout_;
  std::map<int, Reduction> reductions_;  // by bucket, those in flight

  std::mutex failureMutex_;
  std::string failure_;                     // the first failure, as thrown; empty while none
  std::string ownReason_;                   // what this rank's notices say (alive while they are sent)
  std::vector<MPI_Request> noticeRequests_;
};

}  // namespace cas::dist
