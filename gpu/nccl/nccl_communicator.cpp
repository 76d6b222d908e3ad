#include "gpu/nccl/nccl_communicator.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <thread>

#include "gpu/cuda_check.hpp"

namespace cas::gpu {
namespace {

// Broadcasts of more bytes than this go in pieces, so the staging buffers stay this size.
constexpr std::size_t kBroadcastPiece = std::size_t(64) << 20;

std::string ncclText(ncclResult_t r) { return ncclGetErrorString(r); }

// Between two polls of a wait that began at `start`: short at first (a bucket's all-reduce takes
// microseconds), then a millisecond, so a rank waiting for a slower one spends no core on it.
void pauseSince(std::chrono::steady_clock::time_point start) {
  const bool brief = std::chrono::steady_clock::now() - start < std::chrono::milliseconds(20);
  std::this_thread::sleep_for(brief ? std::chrono::microseconds(50) : std::chrono::microseconds(1000));
}

// The machines this runs on need NVLink multicast off, whatever the environment says. Set once,
// before the process's first NCCL call: setenv must not race NCCL's own threads reading it.
void switchOffNvls() {
  static std::once_flag once;
  std::call_once(once, [] { ::setenv("NCCL_NVLS_ENABLE", "0", 1); });
}

}  // namespace

std::string makeNcclGroupId() {
  switchOffNvls();
  ncclUniqueId id;
  const ncclResult_t r = ncclGetUniqueId(&id);
  if (r != ncclSuccess) throw CudaError("NCCL could not make a group id (ncclGetUniqueId): " + ncclText(r));
  return std::string(id.internal, sizeof id.internal);
}

NcclCommunicator::NcclCommunicator(std::shared_ptr<DeviceRuntime> runtime, const std::string& id, int rank, int size, double timeoutSeconds)
    : runtime_(std::move(runtime)), rank_(rank), size_(size), timeoutSeconds_(timeoutSeconds) {
  if (id.size() != NCCL_UNIQUE_ID_BYTES)
    throw std::invalid_argument("an NCCL group id is " + std::to_string(NCCL_UNIQUE_ID_BYTES) + " bytes, not " + std::to_string(id.size()) +
                                "; pass the id makeCommunicatorId made, unchanged");
  if (size < 1 || rank < 0 || rank >= size)
    throw std::invalid_argument("rank " + std::to_string(rank) + " is not in a group of " + std::to_string(size));
  switchOffNvls();
  ContextScope scope(runtime_->context);
  CAS_CU(cuStreamCreate(&stream_, CU_STREAM_NON_BLOCKING));
  ncclUniqueId unique;
  std::memcpy(unique.internal, id.data(), sizeof unique.internal);
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;  // every wait is ours, with a deadline
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeoutSeconds_));
  const ncclResult_t r = ncclCommInitRankConfig(&comm_, size_, unique, rank_, &config);
  if (r != ncclSuccess && r != ncclInProgress) {
    comm_ = nullptr;  // nothing to abort
    cuStreamDestroy(stream_);
    throw dist::CommunicatorError("rank " + std::to_string(rank_) + " could not join the NCCL group of " + std::to_string(size_) + ": " + ncclText(r));
  }
  try {
    settle(r, "the group of " + std::to_string(size_) + " to form", deadline);
  } catch (...) {
    cuStreamDestroy(stream_);
    throw;
  }
}

NcclCommunicator::~NcclCommunicator() {
  try {
    ContextScope scope(runtime_->context);
    if (comm_) {
      bool failed;
      {
        std::lock_guard lock(mutex_);
        failed = failure_.has_value();
      }
      bool finished = false;
      if (!failed) {
        // A clean end: NCCL flushes its work (the collectives are all waited for by now) within
        // the timeout; a rank that stopped answering by then makes it an abort.
        ncclResult_t r = ncclCommFinalize(comm_);
        const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeoutSeconds_));
        const auto start = Clock::now();
        while (r == ncclInProgress && Clock::now() < deadline) {
          pauseSince(start);
          ncclCommGetAsyncError(comm_, &r);
        }
        finished = r == ncclSuccess;
      }
      if (finished) ncclCommDestroy(comm_);
      else ncclCommAbort(comm_);
      comm_ = nullptr;
    }
    for (auto& [bucket, s] : buckets_) release(s);
    release(scratch_);
    if (stream_) cuStreamDestroy(stream_);
  } catch (...) {  // a destructor must not throw; what is left goes with the process
  }
}

std::string NcclCommunicator::seconds() const {
  char b[32];
  std::snprintf(b, sizeof b, "%g s", timeoutSeconds_);
  return b;
}

void NcclCommunicator::fail(const std::string& reason) {
  std::lock_guard lock(mutex_);
  if (!failure_) failure_ = "rank " + std::to_string(rank_) + " failed: " + reason;
}

void NcclCommunicator::throwIfFailed() {
  std::optional<std::string> failure;
  {
    std::lock_guard lock(mutex_);
    failure = failure_;
  }
  if (failure) abort(*failure);
}

void NcclCommunicator::abort(const std::string& message) {
  {
    std::lock_guard lock(mutex_);
    if (!failure_) failure_ = message;
  }
  if (comm_) {
    ncclCommAbort(comm_);  // stops this rank's kernels and proxy threads; the others time out
    comm_ = nullptr;
  }
  std::lock_guard lock(mutex_);
  throw dist::CommunicatorError(*failure_);
}

std::string NcclCommunicator::timedOut(const std::string& what) const {
  return "rank " + std::to_string(rank_) + " waited " + seconds() + " for " + what + (calls_ ? " (collective #" + std::to_string(calls_) + ")" : "") +
         ": another rank failed or stopped answering (raise dist.timeout_seconds if it was only slow)";
}

void NcclCommunicator::settle(ncclResult_t result, const std::string& what, Clock::time_point deadline) {
  const auto start = Clock::now();
  while (result == ncclInProgress) {
    throwIfFailed();
    if (Clock::now() > deadline) abort(timedOut(what));
    pauseSince(start);
    if (ncclCommGetAsyncError(comm_, &result) != ncclSuccess) break;
  }
  if (result == ncclSuccess) return;
  const char* last = comm_ ? ncclGetLastError(comm_) : nullptr;
  abort("rank " + std::to_string(rank_) + ": " + what + " failed in NCCL: " + ncclText(result) + (last && *last ? std::string(" (") + last + ")" : "") +
        (result == ncclRemoteError ? "; another rank failed or ended" : ""));
}

void NcclCommunicator::reserve(Staging& s, std::size_t bytes) {
  if (s.bytes >= bytes) return;
  release(s);
  CAS_CU(cuMemHostAlloc(&s.host, bytes, 0));
  CAS_CU(cuMemAlloc(&s.device, bytes));
  CAS_CU(cuEventCreate(&s.done, CU_EVENT_DISABLE_TIMING));
  s.bytes = bytes;
}

void NcclCommunicator::release(Staging& s) {
  if (s.done) cuEventDestroy(s.done);
  if (s.device) cuMemFree(s.device);
  if (s.host) cuMemFreeHost(s.host);
  s = Staging{};
}

template <class Collective>
void NcclCommunicator::enqueue(Staging& s, std::size_t upBytes, std::size_t downBytes, const std::string& what, Collective collective) {
  ++calls_;
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeoutSeconds_));
  if (upBytes) CAS_CU(cuMemcpyHtoDAsync(s.device, s.host, upBytes, stream_));
  settle(collective(), what, deadline);
  if (downBytes) CAS_CU(cuMemcpyDtoHAsync(s.host, s.device, downBytes, stream_));
  CAS_CU(cuEventRecord(s.done, stream_));
}

void NcclCommunicator::await(Staging& s, const std::string& what) {
  const auto start = Clock::now();
  const auto deadline = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeoutSeconds_));
  for (;;) {
    const CUresult done = cuEventQuery(s.done);
    if (done == CUDA_SUCCESS) return;
    if (done != CUDA_ERROR_NOT_READY) abort("rank " + std::to_string(rank_) + ": " + what + " failed on the device: " + driverErrorText(done));
    throwIfFailed();
    ncclResult_t async = ncclSuccess;
    ncclCommGetAsyncError(comm_, &async);
    if (async != ncclSuccess && async != ncclInProgress) settle(async, what, deadline);
    if (Clock::now() > deadline) abort(timedOut(what));
    pauseSince(start);
  }
}

void NcclCommunicator::startAllReduceSum(int bucket, float* data, std::size_t count) {
  throwIfFailed();
  Staging& s = buckets_[bucket];
  if (s.pending) throw std::logic_error("bucket " + std::to_string(bucket) + " is started again before its all-reduce was waited for");
  ContextScope scope(runtime_->context);
  const std::size_t bytes = count * sizeof(float);
  reserve(s, std::max(bytes, sizeof(float)));  // never empty: the event comes with the memory
  std::memcpy(s.host, data, bytes);
  s.target = data;
  s.count = count;
  s.pending = true;
  enqueue(s, bytes, bytes, "an all-reduce", [&] {
    return ncclAllReduce(reinterpret_cast<void*>(s.device), reinterpret_cast<void*>(s.device), count, ncclFloat, ncclSum, comm_,
                         reinterpret_cast<cudaStream_t>(stream_));
  });
}

void NcclCommunicator::waitAllReduce(int bucket) {
  auto it = buckets_.find(bucket);
  if (it == buckets_.end() || !it->second.pending) throw std::logic_error("bucket " + std::to_string(bucket) + " has no all-reduce in flight");
  Staging& s = it->second;
  s.pending = false;
  await(s, "an all-reduce");
  std::memcpy(s.target, s.host, s.count * sizeof(float));
}

void NcclCommunicator::broadcast(void* data, std::size_t bytes, int root) {
  if (root < 0 || root >= size_) throw std::invalid_argument("broadcast from rank " + std::to_string(root) + ", which is not in the group");
  throwIfFailed();
  ContextScope scope(runtime_->context);
  auto* at = static_cast<unsigned char*>(data);
  for (std::size_t done = 0; done < bytes;) {
    const std::size_t piece = std::min(bytes - done, kBroadcastPiece);
    reserve(scratch_, piece);
    if (rank_ == root) std::memcpy(scratch_.host, at + done, piece);
    enqueue(scratch_, rank_ == root ? piece : 0, rank_ == root ? 0 : piece, "a broadcast", [&] {
      return ncclBroadcast(reinterpret_cast<void*>(scratch_.device), reinterpret_cast<void*>(scratch_.device), piece, ncclUint8, root, comm_,
                           reinterpret_cast<cudaStream_t>(stream_));
    });
    await(scratch_, "a broadcast");
    if (rank_ != root) std::memcpy(at + done, scratch_.host, piece);
    done += piece;
  }
}

void NcclCommunicator::allGather(const void* send, void* receive, std::size_t bytesPerRank) {
  throwIfFailed();
  ContextScope scope(runtime_->context);
  const std::size_t all = bytesPerRank * std::size_t(size_);
  reserve(scratch_, std::max<std::size_t>(all, 1));
  // This rank's piece goes up into its own slot; NCCL fills the others in place.
  std::memcpy(static_cast<unsigned char*>(scratch_.host) + bytesPerRank * std::size_t(rank_), send, bytesPerRank);
  const CUdeviceptr mine = scratch_.device + bytesPerRank * std::size_t(rank_);
  ++calls_;
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeoutSeconds_));
  CAS_CU(cuMemcpyHtoDAsync(mine, static_cast<unsigned char*>(scratch_.host) + bytesPerRank * std::size_t(rank_), bytesPerRank, stream_));
  settle(ncclAllGather(reinterpret_cast<void*>(mine), reinterpret_cast<void*>(scratch_.device), bytesPerRank, ncclUint8, comm_,
                       reinterpret_cast<cudaStream_t>(stream_)),
         "an all-gather", deadline);
  CAS_CU(cuMemcpyDtoHAsync(scratch_.host, scratch_.device, all, stream_));
  CAS_CU(cuEventRecord(scratch_.done, stream_));
  await(scratch_, "an all-gather");
  std::memcpy(receive, scratch_.host, all);
}

void NcclCommunicator::barrier() {
  throwIfFailed();
  ContextScope scope(runtime_->context);
  reserve(scratch_, sizeof(float));
  *static_cast<float*>(scratch_.host) = 0.0f;
  // A one-float all-reduce: it completes on a rank only once every rank has joined it.
  enqueue(scratch_, sizeof(float), 0, "a barrier", [&] {
    return ncclAllReduce(reinterpret_cast<void*>(scratch_.device), reinterpret_cast<void*>(scratch_.device), 1, ncclFloat, ncclSum, comm_,
                         reinterpret_cast<cudaStream_t>(stream_));
  });
  await(scratch_, "a barrier");
}

}  // namespace cas::gpu
