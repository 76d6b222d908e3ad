#include "core/collective/threaded_communicator.hpp"

#include <cstring>

namespace cas::dist {
namespace {

const char* kindName(int kind) {
  static const char* const names[] = {"an all-reduce", "a broadcast", "an all-gather", "a barrier"};
  return names[kind];
}

std::string seconds(std::chrono::duration<double> d) {
  std::string s = std::to_string(d.count());
  s.erase(s.find_last_not_of('0') + 1);
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s + " s";
}

}  // namespace

ThreadedGroup::ThreadedGroup(int ranks, std::chrono::duration<double> timeout) : timeout_(timeout) {
  if (ranks < 1) throw std::invalid_argument("a group needs at least one rank");
  for (int r = 0; r < ranks; ++r) communicators_.push_back(std::unique_ptr<ThreadedCommunicator>(new ThreadedCommunicator(*this, r)));
}

std::optional<std::string> ThreadedGroup::failure() const {
  std::lock_guard lock(mutex_);
  return failure_;
}

void ThreadedGroup::failLocked(std::string message) {
  if (failure_) return;  // the first failure is the cause; later ones follow from it
  failure_ = std::move(message);
  changed_.notify_all();
}

void ThreadedGroup::throwFailure() const { throw CommunicatorError(*failure_); }

void ThreadedGroup::arrive(std::uint64_t sequence, int rank, Kind kind, std::size_t count, int root, const void* send, void* receive) {
  std::unique_lock lock(mutex_);
  if (failure_) throwFailure();
  auto [it, created] = calls_.try_emplace(sequence);
  Call& call = it->second;
  if (created) {
    call.kind = kind;
    call.count = count;
    call.root = root;
    call.send.assign(size_t(size()), nullptr);
    call.receive.assign(size_t(size()), nullptr);
    call.present.assign(size_t(size()), false);
  } else if (call.kind != kind || call.count != count || call.root != root) {
    // Continuing would read past a buffer or mix unrelated data: a programming error, stopped here.
    failLocked("the ranks disagree about collective #" + std::to_string(sequence) + ": rank " + std::to_string(rank) + " calls " +
               kindName(int(kind)) + " of " + std::to_string(count) + " elements where another rank called " + kindName(int(call.kind)) +
               " of " + std::to_string(call.count));
    throwFailure();
  }
  call.send[size_t(rank)] = send;
  call.receive[size_t(rank)] = receive;
  call.present[size_t(rank)] = true;
  if (++call.arrived == size()) {
    perform(call);
    call.done = true;
    changed_.notify_all();
  }
}

void ThreadedGroup::perform(Call& call) {
  const size_t ranks = size_t(size());
  switch (call.kind) {
    case Kind::AllReduceSum: {
      // Summed once, in rank order, into a scratch copy: every rank then receives the same bits.
      std::vector<float> sum(call.count, 0.0f);
      for (size_t r = 0; r < ranks; ++r) {
        const auto* part = static_cast<const float*>(call.send[r]);
        for (size_t i = 0; i < call.count; ++i) sum[i] += part[i];
      }
      for (size_t r = 0; r < ranks; ++r) std::memcpy(call.receive[r], sum.data(), call.count * sizeof(float));
      break;
    }
    case Kind::Broadcast:
      for (size_t r = 0; r < ranks; ++r)
        if (int(r) != call.root) std::memcpy(call.receive[r], call.send[size_t(call.root)], call.count);
      break;
    case Kind::AllGather:
      for (size_t to = 0; to < ranks; ++to)
        for (size_t from = 0; from < ranks; ++from)
          std::memcpy(static_cast<char*>(call.receive[to]) + from * call.count, call.send[from], call.count);
      break;
    case Kind::Barrier: break;
  }
}

void ThreadedGroup::wait(std::uint64_t sequence, int rank, const char* what) {
  std::unique_lock lock(mutex_);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(timeout_);
  for (;;) {
    if (failure_) throwFailure();
    Call& call = calls_.at(sequence);
    if (call.done) {
      if (++call.released == size()) calls_.erase(sequence);
      return;
    }
    if (changed_.wait_until(lock, deadline) == std::cv_status::timeout && !failure_ && !calls_.at(sequence).done) {
      std::string missing;
      int absent = 0;
      for (size_t r = 0; r < call.present.size(); ++r)
        if (!call.present[r]) missing += (absent++ ? ", " : "") + std::to_string(r);
      failLocked("rank " + std::to_string(rank) + " waited " + seconds(timeout_) + " for " + what + " (collective #" + std::to_string(sequence) +
                 ") that " + (absent == 1 ? "rank " : "ranks ") + missing + " never joined: " + (absent == 1 ? "it" : "they") +
                 " stopped answering (raise dist.timeout_seconds if it was only slow)");
      throwFailure();
    }
  }
}

int ThreadedCommunicator::size() const { return group_.size(); }

void ThreadedCommunicator::startAllReduceSum(int bucket, float* data, std::size_t count) {
  if (pendingBuckets_.contains(bucket))
    throw std::logic_error("bucket " + std::to_string(bucket) + " is started again before its all-reduce was waited for");
  const std::uint64_t sequence = nextCall_++;
  group_.arrive(sequence, rank_, ThreadedGroup::Kind::AllReduceSum, count, 0, data, data);
  pendingBuckets_[bucket] = sequence;
}

void ThreadedCommunicator::waitAllReduce(int bucket) {
  const auto it = pendingBuckets_.find(bucket);
  if (it == pendingBuckets_.end()) throw std::logic_error("bucket " + std::to_string(bucket) + " has no all-reduce in flight");
  const std::uint64_t sequence = it->second;
  pendingBuckets_.erase(it);
  group_.wait(sequence, rank_, "an all-reduce");
}

void ThreadedCommunicator::broadcast(void* data, std::size_t bytes, int root) {
  if (root < 0 || root >= size()) throw std::invalid_argument("broadcast from rank " + std::to_string(root) + ", which is not in the group");
  const std::uint64_t sequence = nextCall_++;
  group_.arrive(sequence, rank_, ThreadedGroup::Kind::Broadcast, bytes, root, data, data);
  group_.wait(sequence, rank_, "a broadcast");
}

void ThreadedCommunicator::allGather(const void* send, void* receive, std::size_t bytesPerRank) {
  const std::uint64_t sequence = nextCall_++;
  group_.arrive(sequence, rank_, ThreadedGroup::Kind::AllGather, bytesPerRank, 0, send, receive);
  group_.wait(sequence, rank_, "an all-gather");
}

void ThreadedCommunicator::barrier() {
  const std::uint64_t sequence = nextCall_++;
  group_.arrive(sequence, rank_, ThreadedGroup::Kind::Barrier, 0, 0, nullptr, nullptr);
  group_.wait(sequence, rank_, "a barrier");
}

void ThreadedCommunicator::fail(const std::string& reason) {
  std::lock_guard lock(group_.mutex_);
  group_.failLocked("rank " + std::to_string(rank_) + " failed: " + reason);
}

}  // namespace cas::dist
