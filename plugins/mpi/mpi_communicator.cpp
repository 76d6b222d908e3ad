#include "plugins/mpi/mpi_communicator.hpp"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstring>

namespace cas::dist {
namespace {

constexpr int kNoticeTag = 7;
constexpr std::size_t kNoticeBytes = 1024;                 // under MPI's eager limit: sent at once
constexpr std::size_t kPieceBytes = std::size_t(1) << 30;  // MPI counts are ints

std::string seconds(double s) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", s);
  return text;
}

std::shared_ptr<std::vector<char>> bytesOf(const void* data, std::size_t bytes) {
  const char* from = static_cast<const char*>(data);
  return std::make_shared<std::vector<char>>(from, from + bytes);
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
  if (failed) {
    // The notices this rank sent are on their way; MPI moves them while it is called.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    int sent = noticeRequests_.empty();
    while (!sent && std::chrono::steady_clock::now() < deadline) MPI_Testall(int(noticeRequests_.size()), noticeRequests_.data(), &sent, MPI_STATUSES_IGNORE);
    // The collective thread may wait inside MPI for a peer that is gone: past a grace period it
    // is left behind (the process leaves through MPI_Abort), and so are the duplicates.
    std::unique_lock lock(queue_->mutex);
    if (!queue_->jobDone.wait_until(lock, deadline, [&] { return queue_->finished; })) {
      lock.unlock();
      collectives_.detach();
      return;
    }
    lock.unlock();
    collectives_.join();
    return;
  }
  collectives_.join();
  MPI_Comm_free(&data_);
  MPI_Comm_free(&notices_);
}

void MpiCommunicator::runCollectives(const std::shared_ptr<Queue>& queue) {
  for (;;) {
    std::shared_ptr<Job> job;
    {
      std::unique_lock lock(queue->mutex);
      queue->changed.wait(lock, [&] { return queue->stopping || !queue->jobs.empty(); });
      if (queue->cancelled && !queue->jobs.empty()) {  // a failure: what is queued is out of step with the other ranks
        for (const auto& dropped : queue->jobs) {
          dropped->dropped = true;
          dropped->done = true;
        }
        queue->jobs.clear();
        queue->jobDone.notify_all();
      }
      if (queue->jobs.empty()) {
        if (!queue->stopping) continue;
        queue->finished = true;
        queue->jobDone.notify_all();
        return;
      }
      job = queue->jobs.front();
      queue->jobs.pop_front();
    }
    job->run(*job->buffer);
    {
      std::lock_guard lock(queue->mutex);
      job->done = true;
    }
    queue->jobDone.notify_all();
  }
}

std::shared_ptr<MpiCommunicator::Job> MpiCommunicator::issue(Buffer buffer, std::function<void(std::vector<char>&)> run) {
  auto job = std::make_shared<Job>();
  job->buffer = std::move(buffer);
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

void MpiCommunicator::recordFailure(const std::string& failure) {
  if (failure_.empty()) failure_ = failure;
  {
    std::lock_guard lock(queue_->mutex);
    queue_->cancelled = true;
  }
  queue_->changed.notify_all();
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
      recordFailure("rank " + std::to_string(status.MPI_SOURCE) + " failed: " + reason);
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
      if (queue_->jobDone.wait_for(lock, std::chrono::milliseconds(1), [&] { return job.done.load(); }) && !job.dropped) return;
    }
    if (std::chrono::steady_clock::now() - start > timeout_) {
      std::lock_guard lock(failureMutex_);
      recordFailure("rank " + std::to_string(rank_) + ": the " + what + " did not complete within " + seconds(timeout_.count()) +
                    " s (dist.timeout_seconds): another rank stopped answering");
      throw CommunicatorError(failure_);
    }
  }
}

void MpiCommunicator::startAllReduceSum(int bucket, float* data, std::size_t count) {
  throwIfFailed();
  if (reductions_.count(bucket)) throw CommunicatorError("rank " + std::to_string(rank_) + " started bucket " + std::to_string(bucket) + " twice");
  const int n = mpiCount(count, "an all-reduce");
  Buffer& buffer = bucketBuffers_[bucket];
  if (!buffer || buffer.use_count() > 1) buffer = std::make_shared<std::vector<char>>();  // one left behind keeps its own
  const auto* bytes = reinterpret_cast<const char*>(data);
  buffer->assign(bytes, bytes + count * sizeof(float));
  auto job = issue(buffer, [comm = data_, root = rank_ == 0, n](std::vector<char>& buffer) {
    float* values = reinterpret_cast<float*>(buffer.data());
    MPI_Reduce(root ? MPI_IN_PLACE : values, root ? values : nullptr, n, MPI_FLOAT, MPI_SUM, 0, comm);
    MPI_Bcast(values, n, MPI_FLOAT, 0, comm);
  });
  reductions_[bucket] = {std::move(job), data};
}

void MpiCommunicator::waitAllReduce(int bucket) {
  const auto found = reductions_.find(bucket);
  if (found == reductions_.end()) throw CommunicatorError("rank " + std::to_string(rank_) + " waited for bucket " + std::to_string(bucket) + ", which it never started");
  const Reduction r = found->second;
  reductions_.erase(found);
  await(*r.job, "all-reduce");
  std::memcpy(r.data, r.job->buffer->data(), r.job->buffer->size());
}

void MpiCommunicator::broadcast(void* data, std::size_t bytes, int root) {
  throwIfFailed();
  auto job = issue(rank_ == root ? bytesOf(data, bytes) : std::make_shared<std::vector<char>>(bytes), [comm = data_, root](std::vector<char>& buffer) {
    for (std::size_t at = 0; at < buffer.size(); at += kPieceBytes)
      MPI_Bcast(buffer.data() + at, int(std::min(kPieceBytes, buffer.size() - at)), MPI_BYTE, root, comm);
  });
  await(*job, "broadcast");
  if (rank_ != root && bytes) std::memcpy(data, job->buffer->data(), bytes);
}

void MpiCommunicator::allGather(const void* send, void* receive, std::size_t bytesPerRank) {
  throwIfFailed();
  const int count = mpiCount(bytesPerRank, "an all-gather");
  // The buffer: this rank's bytes, then room for every rank's.
  Buffer buffer = bytesOf(send, bytesPerRank);
  buffer->resize(bytesPerRank * std::size_t(size_ + 1));
  auto job = issue(std::move(buffer), [comm = data_, count](std::vector<char>& b) {
    MPI_Allgather(b.data(), count, MPI_BYTE, b.data() + count, count, MPI_BYTE, comm);
  });
  await(*job, "all-gather");
  if (bytesPerRank) std::memcpy(receive, job->buffer->data() + bytesPerRank, bytesPerRank * std::size_t(size_));
}

void MpiCommunicator::barrier() {
  throwIfFailed();
  await(*issue(std::make_shared<std::vector<char>>(), [comm = data_](std::vector<char>&) { MPI_Barrier(comm); }), "barrier");
}

void MpiCommunicator::fail(const std::string& reason) {
  std::lock_guard lock(failureMutex_);
  if (!failure_.empty()) return;  // an earlier failure (a notice, a timeout) is the one to report
  const std::string own = reason.empty() ? std::string("it failed") : reason;
  recordFailure("rank " + std::to_string(rank_) + " failed: " + own);
  std::string* notice;
  {
    std::lock_guard queueLock(queue_->mutex);
    queue_->notice = own.substr(0, kNoticeBytes);
    notice = &queue_->notice;  // kept by the queue while MPI may still read it
  }
  for (int r = 0; r < size_; ++r) {
    if (r == rank_) continue;
    MPI_Request request = MPI_REQUEST_NULL;
    MPI_Isend(notice->data(), int(notice->size()), MPI_CHAR, r, kNoticeTag, notices_, &request);
    noticeRequests_.push_back(request);
  }
}

}  // namespace cas::dist
