#include "core/exec/thread_pool.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>
#include <system_error>
#include <utility>

namespace cas::exec {

namespace {
thread_local bool tInsideChunk = false;
}

ThreadPool::ThreadPool(int threads) {
  if (threads <= 0) threads = int(std::max(1u, std::thread::hardware_concurrency()));
  try {
    for (int i = 1; i < threads; ++i) workers_.emplace_back([this] { work(); });
  } catch (const std::system_error& e) {
    // Out of threads or memory for their stacks: the workers started are stopped and joined (a
    // joinable std::thread destroyed would end the process), and the caller hears why.
    const std::string why = std::strerror(e.code().value());
    const size_t started = workers_.size();
    stopWorkers();
    throw std::runtime_error("cannot start thread " + std::to_string(started + 2) + " of " + std::to_string(threads) + " (" + why +
                             "); use fewer threads");
  }
}

void ThreadPool::stopWorkers() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (std::thread& t : workers_) t.join();
  workers_.clear();
}

ThreadPool::~ThreadPool() { stopWorkers(); }

bool ThreadPool::runChunk() {
  std::int64_t begin;
  const std::function<void(std::int64_t, std::int64_t)>* body;
  {
    std::lock_guard lock(mutex_);
    if (!body_ || next_ >= n_) return false;
    begin = next_;
    next_ = std::min(n_, next_ + chunk_);
    body = body_;
  }
  tInsideChunk = true;
  std::exception_ptr failure;
  try {
    (*body)(begin, std::min(n_, begin + chunk_));
  } catch (...) {  // handed to the calling thread: thrown in a worker it would end the process
    failure = std::current_exception();
  }
  tInsideChunk = false;
  std::lock_guard lock(mutex_);
  if (failure && !failure_) failure_ = failure;
  if (--pending_ == 0) done_.notify_all();
  return true;
}

void ThreadPool::work() {
  std::uint64_t seen = 0;
  for (;;) {
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || (generation_ != seen && body_ && next_ < n_); });
      if (stopping_) return;
      seen = generation_;
    }
    while (runChunk()) {
    }
  }
}

void ThreadPool::parallelFor(std::int64_t n, std::int64_t grain, const std::function<void(std::int64_t, std::int64_t)>& body) {
  if (n <= 0) return;
  grain = std::max<std::int64_t>(1, grain);
  if (workers_.empty() || tInsideChunk || n <= grain) {
    body(0, n);
    return;
  }
  const std::int64_t chunks = std::min<std::int64_t>((n + grain - 1) / grain, std::int64_t(size()) * 4);
  {
    std::lock_guard lock(mutex_);
    body_ = &body;
    n_ = n;
    chunk_ = (n + chunks - 1) / chunks;
    next_ = 0;
    pending_ = (n + chunk_ - 1) / chunk_;
    ++generation_;
  }
  wake_.notify_all();
  while (runChunk()) {
  }
  std::unique_lock lock(mutex_);
  done_.wait(lock, [&] { return pending_ == 0; });
  body_ = nullptr;
  if (std::exception_ptr failure = std::exchange(failure_, nullptr)) {
    lock.unlock();
    std::rethrow_exception(failure);
  }
}

}  // namespace cas::exec
