#pragma once
// The collectives data-parallel training needs, behind one interface: the ranks of a group (one
// per GPU, or one per CPU thread) sum gradient buckets, broadcast weights, gather checksums and
// meet at barriers. ThreadedGroup (threaded_communicator.hpp) implements it for ranks that are
// threads of one process, the CPU backend's data-parallel path; the CUDA backend's NCCL
// communicator (gpu/nccl/nccl_communicator.hpp, reached through DeviceServices::createCommunicator)
// implements it for one rank per GPU, staging these host buffers through device memory. The
// all-reduce is split into a start per bucket and a wait so that a bucket can be on its way while
// the next one is filled.
//
// Rules every implementation keeps:
// - Every rank calls the same collectives in the same order with the same sizes. ThreadedGroup
//   stops a rank that breaks the order with CommunicatorError; NCCL cannot see it (the ranks then
//   time out or sum the wrong floats), so callers derive every size from what the ranks share.
// - A rank that fails (fail(), or it stops calling in) ends the others: their pending and later
//   calls throw CommunicatorError naming the rank and its reason, at once when it said so through
//   fail(), and after the group's timeout when it just stopped answering. No rank hangs.
// - The sum is the same bits on every rank (it is computed once and shared: in rank order by
//   ThreadedGroup, in NCCL's fixed order by the NCCL communicator), so an optimizer step taken
//   from it is identical everywhere.
// Thread-safety: a Communicator is one rank's, driven by one thread (that rank's); fail() may be
// called from any thread.
#include <cstddef>
#include <stdexcept>
#include <string>

namespace cas::dist {

// A collective that could not complete: another rank failed, a rank stopped answering within the
// timeout, or the ranks disagreed about the call. The message says which rank and why.
struct CommunicatorError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;

  // Starts summing `count` floats at `data` over every rank, in place: when waitAllReduce(bucket)
  // returns, `data` holds the sum on every rank. `data` must stay valid until then. `bucket`
  // names the reduction for its wait; at most one reduction per bucket index is in flight.
  virtual void startAllReduceSum(int bucket, float* data, std::size_t count) = 0;
  virtual void waitAllReduce(int bucket) = 0;
  // A reduction started and waited for at once (bucket index -1 is reserved for it).
  void allReduceSum(float* data, std::size_t count) {
    startAllReduceSum(-1, data, count);
    waitAllReduce(-1);
  }

  // Copies `bytes` bytes at `root`'s `data` into every other rank's `data`.
  virtual void broadcast(void* data, std::size_t bytes, int root) = 0;
  // Every rank's `bytesPerRank` bytes at `send`, in rank order, into each rank's `receive`
  // (size() * bytesPerRank bytes).
  virtual void allGather(const void* send, void* receive, std::size_t bytesPerRank) = 0;
  // Returns when every rank has called it.
  virtual void barrier() = 0;

  // Declares this rank failed (its error in `reason`): every other rank's pending and later calls
  // throw CommunicatorError with "rank N failed: reason". The first failure is the one reported.
  virtual void fail(const std::string& reason) = 0;
};

}  // namespace cas::dist
