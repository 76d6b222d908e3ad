#include "dist_mpi/mpi_communicator.hpp"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <thread>

namespace cas::dist {
namespace {

constexpr int kNoticeTag = 7;
constexpr std::size_t kPieceBytes = std::size_t(1) << 30;  // MPI counts are ints

std::string seconds(double s) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", s);
  return text;
}

}  // namespace

MpiCommunicator::MpiCommunicator(MPI_Comm world, double timeoutSeconds) : timeout_(timeoutSeconds) {
  MPI_Comm_dup(world, &data_);
  MPI_Comm_dup(world, &notices_);
  MPI_Comm_rank(data_, &rank_);
  MPI_Comm_size(data_, &size_);
}

MpiCommunicator::~MpiCommunicator() {
  // Notices still on their way are left to MPI; requests of collectives that never completed are
  // left too (the process leaves through MPI_Abort after a failure). After a clean run there are none.
  for (MPI_Request& r : noticeRequests_)
    if (r != MPI_REQUEST_NULL) MPI_Request_free(&r);
  std::lock_guard lock(failureMutex_);
  if (failure_.empty()) {
    MPI_Comm_free(&data_);
    MPI_Comm_free(&notices_);
  }
}

int MpiCommunicator::mpiCount(std::size_t count, const char* what) {
  if (count > std::size_t(INT_MAX)) throw CommunicatorError(std::string(what) + " of " + std::to_string(count) + " elements is more than MPI can send at once");
  return int(count);
}

void MpiCommunicator::throwIfFailed() {
  std::lock_guard lock(failureMutex_);
  if (failure_.empty()) {
    int arrived = 0;
    MPI_Status status;
    MPI_Iprobe(MPI_ANY_SOURCE, kNoticeTag, notices_, &arrived, &status);
    if (arrived) {
      int length = 0;
      MPI_Get_count(&status, MPI_CHAR, &length);
      std::string reason(std::size_t(std::max(length, 0)), '\0');
      MPI_Recv(reason.data(), length, MPI_CHAR, status.MPI_SOURCE, kNoticeTag, notices_, MPI_STATUS_IGNORE);
      failure_ = "rank " + std::to_string(status.MPI_SOURCE) + " failed: " + reason;
    }
  }
  if (!failure_.empty()) throw CommunicatorError(failure_);
}

void MpiCommunicator::await(MPI_Request& request, const char* what) {
  const auto start = std::chrono::steady_clock::now();
  for (int polls = 0;; ++polls) {
    throwIfFailed();
    int done = 0;
    MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (done) return;
    const auto waited = std::chrono::steady_clock::now() - start;
    if (waited > timeout_) {
      const std::string message = "rank " + std::to_string(rank_) + ": the " + what + " did not complete within " + seconds(timeout_.count()) +
                                  " s (dist.timeout_seconds): another rank stopped answering";
      std::lock_guard lock(failureMutex_);
      if (failure_.empty()) failure_ = message;
      throw CommunicatorError(failure_);
    }
    // Spin while a collective is likely to finish at once; then let the core go.
    if (waited > std::chrono::milliseconds(2)) std::this_thread::sleep_for(std::chrono::microseconds(100));
    else if (polls % 64 == 63) std::this_thread::yield();
  }
}

void MpiCommunicator::startAllReduceSum(int bucket, float* data, std::size_t count) {
  throwIfFailed();
  Reduction& r = reductions_[bucket];
  if (r.request != MPI_REQUEST_NULL || r.data)
    throw CommunicatorError("rank " + std::to_string(rank_) + " started bucket " + std::to_string(bucket) + " twice");
  r.data = data;
  r.count = mpiCount(count, "an all-reduce");
  MPI_Ireduce(rank_ == 0 ? MPI_IN_PLACE : data, data, r.count, MPI_FLOAT, MPI_SUM, 0, data_, &r.request);
}

void MpiCommunicator::waitAllReduce(int bucket) {
  const auto found = reductions_.find(bucket);
  if (found == reductions_.end()) throw CommunicatorError("rank " + std::to_string(rank_) + " waited for bucket " + std::to_string(bucket) + ", which it never started");
  Reduction r = found->second;
  reductions_.erase(found);
  await(r.request, "all-reduce");
  MPI_Request share = MPI_REQUEST_NULL;
  MPI_Ibcast(r.data, r.count, MPI_FLOAT, 0, data_, &share);
  await(share, "all-reduce");
}

void MpiCommunicator::broadcast(void* data, std::size_t bytes, int root) {
  throwIfFailed();
  for (std::size_t at = 0; at < bytes; at += kPieceBytes) {
    MPI_Request request = MPI_REQUEST_NULL;
    MPI_Ibcast(static_cast<char*>(data) + at, int(std::min(kPieceBytes, bytes - at)), MPI_BYTE, root, data_, &request);
    await(request, "broadcast");
  }
}

void MpiCommunicator::allGather(const void* send, void* receive, std::size_t bytesPerRank) {
  throwIfFailed();
  MPI_Request request = MPI_REQUEST_NULL;
  const int count = mpiCount(bytesPerRank, "an all-gather");
  MPI_Iallgather(send, count, MPI_BYTE, receive, count, MPI_BYTE, data_, &request);
  await(request, "all-gather");
}

void MpiCommunicator::barrier() {
  throwIfFailed();
  MPI_Request request = MPI_REQUEST_NULL;
  MPI_Ibarrier(data_, &request);
  await(request, "barrier");
}

void MpiCommunicator::fail(const std::string& reason) {
  std::lock_guard lock(failureMutex_);
  if (!ownReason_.empty()) return;
  ownReason_ = reason.empty() ? std::string("it failed") : reason;
  if (failure_.empty()) failure_ = "rank " + std::to_string(rank_) + " failed: " + ownReason_;
  for (int r = 0; r < size_; ++r) {
    if (r == rank_) continue;
    MPI_Request request = MPI_REQUEST_NULL;
    MPI_Isend(ownReason_.data(), int(std::min<std::size_t>(ownReason_.size(), 4096)), MPI_CHAR, r, kNoticeTag, notices_, &request);
    noticeRequests_.push_back(request);
  }
}

}  // namespace cas::dist
