#include "dist_mpi/mpi_communicator.hpp"

#include <algorithm>
#include <climits>
#include <cstdio>

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
  collectives_ = std::thread([queue = queue_] { runCollectives(queue); });
}

MpiCommunicator::~MpiCommunicator() {
  bool failed;
  {
    std::lock_guard lock(failureMutex_);
    failed = !failure_.empty();
  }
  {
    std::lock_guard lock(queue_->mutex);
    queue_->stopping = true;
  }
  queue_->changed.notify_all();
  // After a failure the collective thread may wait inside MPI for a peer that is gone: past a
  // grace period it is left behind (the process leaves through MPI_Abort), and so are the
  // duplicated communicators.
  if (failed) {
    std::unique_lock lock(queue_->mutex);
    if (!queue_->jobDone.wait_for(lock, std::chrono::seconds(2), [&] { return queue_->finished; })) {
      lock.unlock();
      collectives_.detach();
      return;
    }
  }
  collectives_.join();
  if (failed) return;
  for (MPI_Request& r : noticeRequests_)
    if (r != MPI_REQUEST_NULL) MPI_Request_free(&r);
  MPI_Comm_free(&data_);
  MPI_Comm_free(&notices_);
}

void MpiCommunicator::runCollectives(const std::shared_ptr<Queue>& queue) {
  for (;;) {
    std::shared_ptr<Job> job;
    {
      std::unique_lock lock(queue->mutex);
      queue->changed.wait(lock, [&] { return queue->stopping || !queue->jobs.empty(); });
      if (queue->jobs.empty()) {  // stopping, with nothing left to issue
        queue->finished = true;
        queue->jobDone.notify_all();
        return;
      }
      job = queue->jobs.front();
      queue->jobs.pop_front();
    }
    job->run();
    {
      std::lock_guard lock(queue->mutex);
      job->done = true;
    }
    queue->jobDone.notify_all();
  }
}

std::shared_ptr<MpiCommunicator::Job> MpiCommunicator::issue(std::function<void()> run) {
  auto job = std::make_shared<Job>();
  job->run = std::move(run);
  {
    std::lock_guard lock(queue_->mutex);
    queue_->jobs.push_back(job);
  }
  queue_->changed.notify_one();
  return job;
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

void MpiCommunicator::await(const Job& job, const char* what) {
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    throwIfFailed();
    {
      // Woken at once when the job is done; otherwise every millisecond, to look for notices.
      std::unique_lock lock(queue_->mutex);
      if (queue_->jobDone.wait_for(lock, std::chrono::milliseconds(1), [&] { return job.done.load(); })) return;
    }
    if (std::chrono::steady_clock::now() - start > timeout_) {
      const std::string message = "rank " + std::to_string(rank_) + ": the " + what + " did not complete within " + seconds(timeout_.count()) +
                                  " s (dist.timeout_seconds): another rank stopped answering";
      std::lock_guard lock(failureMutex_);
      if (failure_.empty()) failure_ = message;
      throw CommunicatorError(failure_);
    }
  }
}

void MpiCommunicator::startAllReduceSum(int bucket, float* data, std::size_t count) {
  throwIfFailed();
  if (reductions_.count(bucket)) throw CommunicatorError("rank " + std::to_string(rank_) + " started bucket " + std::to_string(bucket) + " twice");
  const int n = mpiCount(count, "an all-reduce");
  reductions_[bucket] = issue([comm = data_, root = rank_ == 0, data, n] {
    MPI_Reduce(root ? MPI_IN_PLACE : data, data, n, MPI_FLOAT, MPI_SUM, 0, comm);
    MPI_Bcast(data, n, MPI_FLOAT, 0, comm);
  });
}

void MpiCommunicator::waitAllReduce(int bucket) {
  const auto found = reductions_.find(bucket);
  if (found == reductions_.end()) throw CommunicatorError("rank " + std::to_string(rank_) + " waited for bucket " + std::to_string(bucket) + ", which it never started");
  const std::shared_ptr<Job> job = found->second;
  reductions_.erase(found);
  await(*job, "all-reduce");
}

void MpiCommunicator::broadcast(void* data, std::size_t bytes, int root) {
  throwIfFailed();
  await(*issue([comm = data_, data, bytes, root] {
          for (std::size_t at = 0; at < bytes; at += kPieceBytes)
            MPI_Bcast(static_cast<char*>(data) + at, int(std::min(kPieceBytes, bytes - at)), MPI_BYTE, root, comm);
        }),
        "broadcast");
}

void MpiCommunicator::allGather(const void* send, void* receive, std::size_t bytesPerRank) {
  throwIfFailed();
  const int count = mpiCount(bytesPerRank, "an all-gather");
  await(*issue([comm = data_, send, receive, count] { MPI_Allgather(send, count, MPI_BYTE, receive, count, MPI_BYTE, comm); }), "all-gather");
}

void MpiCommunicator::barrier() {
  throwIfFailed();
  await(*issue([comm = data_] { MPI_Barrier(comm); }), "barrier");
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
