#include "core/train/data_parallel.hpp"

#include <atomic>
#include <chrono>
#include <exception>
#include <new>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>

namespace cas::train {

DataParallelTrainer::DataParallelTrainer(const project::Project& project, std::shared_ptr<exec::Backend> backend, const ParallelOptions& options) {
  if (options.ranks < 2) throw std::invalid_argument("data-parallel training needs at least 2 ranks");
  if (project.algorithm != "alphazero")
    throw std::runtime_error("data-parallel training (--ranks) is built for AlphaZero; a " + project.algorithm + " run trains on one rank");
  if (backend->id() != "cpu")
    throw std::runtime_error("--ranks runs its ranks on CPU threads, on the CPU backend: add --device cpu, or train on GPUs with --gpus N "
                             "(one process per GPU)");
  if (options.fault && options.fault->rank >= options.ranks)
    throw std::runtime_error("CAS_DIST_FAIL names rank " + std::to_string(options.fault->rank) + ", but the run has ranks 0 to " +
                             std::to_string(options.ranks - 1));
  // Every rank allocates a whole trainer (its replay shard is sized as a whole run's buffer, its
  // own trees and networks): the ranks together are estimated before any of them allocates.
  if (auto problem = trainingProblem(project, options.ranks)) throw std::runtime_error(*problem);
  const params::DistParams dist = params::readDistParams(project.parameters);
  group_ = std::make_unique<dist::ThreadedGroup>(options.ranks, std::chrono::duration<double>(dist.timeoutSeconds));
  ranks_.resize(size_t(options.ranks));
  onEveryRank([&](int r) {
    // Each rank its own backend: a backend is driven by one thread at a time.
    try {
      std::shared_ptr<exec::Backend> own = r == 0 ? backend : exec::makeCpuBackend();
      ranks_[size_t(r)] =
          std::make_unique<AlphaZeroTrainer>(project, std::move(own), DataParallelRank{&group_->communicator(r), options.fault});
    } catch (const std::exception& e) {
      // Rank 0 built the same trainer: a later rank that cannot found too little left by those before it.
      if (r == 0) throw;
      throw std::runtime_error(std::string(e.what()) + "; or give fewer --ranks: each of the " + std::to_string(options.ranks) +
                               " ranks builds a whole trainer in this process, and those before rank " + std::to_string(r) +
                               " left too little");
    }
  });
}

DataParallelTrainer::~DataParallelTrainer() = default;

void DataParallelTrainer::onEveryRank(const std::function<void(int)>& work) {
  if (auto failure = group_->failure()) throw std::runtime_error("data-parallel training stopped earlier: " + *failure);
  // Only a run that has trained (or was resumed) has a checkpoint to go on from: a failure while
  // the ranks are built, or in a new run's first iteration, advises no --resume.
  const bool trained = !ranks_.empty() && ranks_[0] && ranks_[0]->iteration() > 0;
  std::vector<std::exception_ptr> errors(ranks_.size());
  auto run = [&](int r) {
    try {
      work(r);
    } catch (const std::exception& e) {
      errors[size_t(r)] = std::current_exception();
      group_->communicator(r).fail(e.what());  // the others stop at their next collective
    } catch (...) {
      errors[size_t(r)] = std::current_exception();
      group_->communicator(r).fail("an unknown error");
    }
  };
  std::vector<std::thread> threads;
  try {
    for (int r = 1; r < int(ranks_.size()); ++r) threads.emplace_back(run, r);
  } catch (const std::exception& e) {  // out of threads or memory: the ranks started stop at their next collective
    const std::string why = dynamic_cast<const std::bad_alloc*>(&e) ? "out of memory" : e.what();
    group_->communicator(int(threads.size()) + 1)
        .fail("its thread could not be started (" + why + "); give fewer --ranks, each of which is a thread");
  }
  if (threads.size() + 1 == ranks_.size()) run(0);
  for (std::thread& t : threads) t.join();
  if (auto failure = group_->failure())
    throw std::runtime_error("data-parallel training stopped, every rank with it: " + *failure +
                             (trained ? " (the run's newest checkpoint is kept; --resume continues from it)" : ""));
}

std::optional<std::string> DataParallelTrainer::setParameter(const std::string& name, const params::ParamValue& value) {
  // Checked and applied on rank 0 first; the others hold the same configuration and accept it too.
  if (auto problem = ranks_[0]->setParameter(name, value)) return problem;
  for (size_t r = 1; r < ranks_.size(); ++r)
    if (auto problem = ranks_[r]->setParameter(name, value)) throw std::logic_error("rank " + std::to_string(r) + " refused a change rank 0 took: " + *problem);
  return std::nullopt;
}

IterationReport DataParallelTrainer::runIteration(const std::function<bool()>& cancelled) {
  std::vector<IterationReport> reports(ranks_.size());
  // Rank 0 asks the engine; the others follow what it heard (a stop shortens self-play only: every
  // rank still takes the iteration's training steps, so they stay in step).
  std::atomic<bool> stopping{false};
  onEveryRank([&](int r) {
    if (r == 0)
      reports[0] = ranks_[0]->runIteration([&] {
        const bool stop = cancelled && cancelled();
        if (stop) stopping = true;
        return stop;
      });
    else
      reports[size_t(r)] = ranks_[size_t(r)]->runIteration([&] { return stopping.load(); });
  });
  // Rank 0's figures: its games played and loss are already the run's (the ranks summed and
  // averaged them), its positions are its own shard's; the speeds are all the ranks' together.
  IterationReport report = reports[0];
  for (size_t r = 1; r < reports.size(); ++r) {
    report.simulationsPerSecond += reports[r].simulationsPerSecond;
    report.gamesPerSecond += reports[r].gamesPerSecond;
  }
  return report;
}

bool DataParallelTrainer::restore(const std::string& bytes, std::string* error) {
  // Every rank reads the same bytes; a checkpoint one rank refuses, all refuse, so the first answer is all.
  for (auto& rank : ranks_)
    if (!rank->restore(bytes, error)) return false;
  return true;
}

}  // namespace cas::train
