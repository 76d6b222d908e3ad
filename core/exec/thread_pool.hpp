#pragma once
// A fixed pool of worker threads for data-parallel loops: parallelFor splits [0, n) into chunks
// that the workers and the calling thread take in turn, and returns when all are done.
// Thread-safety: parallelFor may be called from one thread at a time per pool (the engine
// thread); nested calls from inside a chunk run serially.
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace cas::exec {

class ThreadPool {
 public:
  // 0: one per hardware thread. Throws std::runtime_error ("cannot start thread 412 of 1024
  // (Resource temporarily unavailable); use fewer threads") when the system cannot start them all.
  explicit ThreadPool(int threads = 0);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return int(workers_.size()) + 1; }

  // Calls body(begin, end) over [0, n) in chunks of at least `grain` items. What a chunk throws
  // (std::bad_alloc under a memory limit) is rethrown here, on the calling thread, once every
  // chunk has ended: a worker never lets it end the process.
  void parallelFor(std::int64_t n, std::int64_t grain, const std::function<void(std::int64_t, std::int64_t)>& body);

 private:
  void work();
  void stopWorkers();
  bool runChunk();

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  const std::function<void(std::int64_t, std::int64_t)>* body_ = nullptr;
  std::int64_t n_ = 0, chunk_ = 0, next_ = 0, pending_ = 0;
  std::uint64_t generation_ = 0;
  std::exception_ptr failure_;  // the first exception a chunk of this call threw
  bool stopping_ = false;
};

}  // namespace cas::exec
