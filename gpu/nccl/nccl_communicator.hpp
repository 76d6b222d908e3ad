#pragma once
// dist::Communicator (core/collective/communicator.hpp) over NCCL: one rank per GPU, the ranks in one
// process (threads, each with its own backend on its own device) or in several (cuda-agent train
// --gpus N spawns one per GPU and hands them the group's id). The interface takes host pointers,
// so every collective is staged through host memory: the floats are copied into a pinned buffer,
// up to the device on the communicator's own stream, reduced (or broadcast, gathered) there by
// NCCL, and copied back; an all-reduce's wait waits for that bucket's event. The buckets are not
// yet started from the backward pass's stream, overlapped with it on the device, or captured in
// the update graph: GradientExchange reads the gradient program's outputs to the host first.
//
// The sum is the same bits on every rank: NCCL's reduction order is fixed by the communicator
// (its ranks, devices and topology) and the element count, and every rank receives the one
// result. It is not the ThreadedGroup's order (rank 0 to N-1), so a CPU run and a GPU run with the
// same ranks do not sum alike; a one-rank sum is the rank's own floats.
//
// Faults: the communicator is non-blocking (ncclConfig_t::blocking = 0), so no call waits inside
// NCCL. Each wait polls the stream's event and ncclCommGetAsyncError with a deadline of the
// group's timeout (dist.timeout_seconds); on timeout, an NCCL error or after fail(), the
// communicator is aborted (ncclCommAbort) and this and every later call throws
// dist::CommunicatorError naming the rank and the reason. NCCL carries no message between ranks:
// a rank that fails stops answering, and the others end at their timeout with an error saying a
// rank stopped answering (cuda-agent's parent process names the rank that failed and why). Calls
// whose sizes differ between ranks are not detected by NCCL; GradientExchange derives every size
// from the layout the ranks share, and its weight checksums catch ranks that drift apart.
//
// NVLink multicast (NVLS) is switched off (NCCL_NVLS_ENABLE=0) before the communicator is made:
// the machines this runs on require it.
// Thread-safety: driven by its rank's thread; fail() may be called from any thread (it only
// records the failure, which the driving thread acts on at its next call or poll).
#include <cuda.h>
#include <nccl.h>

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "core/collective/communicator.hpp"
#include "gpu/device_runtime.hpp"

namespace cas::gpu {

// A new group's identity (ncclGetUniqueId) as bytes; throws CudaError when NCCL cannot make one.
std::string makeNcclGroupId();

class NcclCommunicator final : public dist::Communicator {
 public:
  // Joins rank `rank` of `size` to the group `id` names (makeNcclGroupId's bytes) on `runtime`'s
  // device, waiting at most `timeoutSeconds` for the others. Throws dist::CommunicatorError when
  // the group does not form in time or NCCL refuses, std::invalid_argument for a malformed id.
  NcclCommunicator(std::shared_ptr<DeviceRuntime> runtime, const std::string& id, int rank, int size, double timeoutSeconds);
  ~NcclCommunicator() override;
  NcclCommunicator(const NcclCommunicator&) = delete;
  NcclCommunicator& operator=(const NcclCommunicator&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void startAllReduceSum(int bucket, float* data, std::size_t count) override;
  void waitAllReduce(int bucket) override;
  void broadcast(void* data, std::size_t bytes, int root) override;
  void allGather(const void* send, void* receive, std::size_t bytesPerRank) override;
  void barrier() override;
  void fail(const std::string& reason) override;

 private:
  using Clock = std::chrono::steady_clock;
  // Pinned host memory and device memory of one size, and the event that marks its copy back.
  struct Staging {
    void* host = nullptr;
    CUdeviceptr device = 0;
    std::size_t bytes = 0;
    CUevent done = nullptr;
    float* target = nullptr;  // an all-reduce's caller's floats, filled by its wait
    std::size_t count = 0;
    bool pending = false;
  };
  // Grows `s` to at least `bytes` (nothing of it may be in flight).
  void reserve(Staging& s, std::size_t bytes);
  void release(Staging& s);
  // Copies `bytes` of `s` up, runs `collective` on the device copy, copies the result back into
  // `s.host` and records `s.done`.
  template <class Collective>
  void enqueue(Staging& s, std::size_t upBytes, std::size_t downBytes, const std::string& what, Collective collective);
  // Until `s.done` has happened (the copy back is in `s.host`), or throws.
  void await(Staging& s, const std::string& what);
  // A non-blocking NCCL call's result: returns once it has been accepted, or throws.
  void settle(ncclResult_t result, const std::string& what, Clock::time_point deadline);
  // The error of a wait for `what` that passed the deadline.
  std::string timedOut(const std::string& what) const;
  // Throws the recorded failure, aborting the communicator first, when there is one.
  void throwIfFailed();
  [[noreturn]] void abort(const std::string& message);
  std::string seconds() const;

  std::shared_ptr<DeviceRuntime> runtime_;
  int rank_ = 0, size_ = 1;
  double timeoutSeconds_ = 0;
  ncclComm_t comm_ = nullptr;
  CUstream stream_ = nullptr;
  std::map<int, Staging> buckets_;  // all-reduces by bucket index
  Staging scratch_;                 // broadcast, all-gather, barrier
  std::uint64_t calls_ = 0;         // collectives issued, for messages
  std::mutex mutex_;                // guards failure_
  std::optional<std::string> failure_;
};

}  // namespace cas::gpu
