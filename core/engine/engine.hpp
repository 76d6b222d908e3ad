#pragma once
// The engine: owns a trainer (any algorithm, train/trainer.hpp) on its own thread and runs
// iterations until stopped, or until the trainer reaches the end its algorithm sets. Other threads
// talk to it through a command queue (start, pause, resume, stop, set parameter) and hear from
// it through callbacks, which run on the engine thread (a UI forwards them as queued signals).
// A parameter change is validated when it is requested (an invalid value is refused at once),
// applied at the next safe point (between iterations), and logged in the run's changes.jsonl with
// the iteration at which it applied. Errors on the engine thread stop the run and are reported
// through `failed`; they never escape the thread.
// Thread-safety: every public method may be called from any thread.
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "core/engine/run_folder.hpp"
#include "core/train/trainer.hpp"

namespace cas::engine {

struct ParameterChange {
  std::string name, from, to;
  std::int64_t iteration = 0;  // the first iteration that ran with the new value
};

struct EngineEvents {
  std::function<void(const train::IterationReport&)> iterationFinished;
  std::function<void(const ParameterChange&)> parameterApplied;
  std::function<void(const std::string&)> message;  // progress and notices
  std::function<void(const std::string&)> failed;   // the run stopped on an error
  std::function<void()> finished;                   // the run stopped (after failed, if it failed)
  std::function<void(std::int64_t)> simulationStepped;  // after step(): simulations done by stepping
  std::function<void(const train::TreeSnapshot&)> treeSnapshot;
};

struct EngineLimits {
  std::int64_t iterations = 0;  // 0: no limit
  double minutes = 0;           // 0: no limit
};

class Engine {
 public:
  Engine(std::unique_ptr<train::Trainer> trainer, RunFolder run, EngineEvents events, EngineLimits limits);
  ~Engine();  // stops and joins

  void start();
  void pause();
  void resume();
  void stop();  // finishes the current iteration, checkpoints, and ends
  void step();  // while paused: one more simulation in every self-play game
  // The top `maxNodes` nodes of one self-play game's tree, delivered through treeSnapshot at the
  // next safe point (between self-play moves while running). With `deviceNodes` > 0 and a search
  // whose trees live on a device, the snapshot also carries the tree's top `deviceNodes` nodes
  // laid out there as the tree view's sunburst (TreeSnapshot::deviceSunburst).
  void requestSnapshot(int game, int maxNodes = 4096, int deviceNodes = 0);
  void wait();  // until the run has ended

  // Validates now; returns an error sentence (naming the parameter and its range) when refused.
  std::optional<std::string> requestParameter(const std::string& name, const std::string& text);

 private:
  void loop();
  bool checkpoint(std::string* error);
  void applyPending();

  std::unique_ptr<train::Trainer> trainer_;
  RunFolder run_;
  EngineEvents events_;
  EngineLimits limits_;
  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool paused_ = false, stopping_ = false, done_ = false;
  // The iteration whose checkpoint this engine last wrote (-1: none): the final checkpoint is not
  // written again when the last iteration was just checkpointed (a second write could only fail).
  std::int64_t checkpointed_ = -1;
  std::deque<std::pair<std::string, params::ParamValue>> pending_;
  // step() and requestSnapshot() calls in the order they came; game kStep for a step.
  static constexpr int kStep = -1;
  struct Request {
    int game = kStep, maxNodes = 0, deviceNodes = 0;
  };
  std::deque<Request> requests_;
  std::int64_t stepped_ = 0;
  void serveRequests();
  void serveSnapshotRequests();
  void deliverSnapshot(const Request& request);
};

}  // namespace cas::engine
