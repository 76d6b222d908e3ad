#pragma once
// The watchdog of the corpus replays (replay_corpus.cpp, project_replay.cpp): ends the process,
// naming the input, when one input runs past the limit (a hang would otherwise block the test).
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>

namespace fuzz_replay {

using Clock = std::chrono::steady_clock;

class Watchdog {
 public:
  explicit Watchdog(std::chrono::seconds limit) : limit_(limit), thread_([this] { watch(); }) {}
  ~Watchdog() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  void start(const std::string& file) {
    std::lock_guard<std::mutex> lock(mu_);
    file_ = file;
    deadline_ = Clock::now() + limit_;
    active_ = true;
    cv_.notify_all();
  }
  void finish() {
    std::lock_guard<std::mutex> lock(mu_);
    active_ = false;
  }

 private:
  void watch() {
    std::unique_lock<std::mutex> lock(mu_);
    while (!stop_) {
      if (!active_) {
        cv_.wait(lock);
        continue;
      }
      const Clock::time_point deadline = deadline_;
      if (cv_.wait_until(lock, deadline) == std::cv_status::timeout && active_ && !stop_ && deadline_ == deadline) {
        std::fprintf(stderr, "FAIL %s: still running after %lld s (the limit per input)\n", file_.c_str(),
                     static_cast<long long>(limit_.count()));
        std::fflush(stderr);
        std::_Exit(1);
      }
    }
  }

  std::chrono::seconds limit_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false, active_ = false;
  std::string file_;
  Clock::time_point deadline_;
  std::thread thread_;
};

}  // namespace fuzz_replay
