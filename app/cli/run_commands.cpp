// `cuda-agent train`, `eval`, `analyze` and `play`: runs of any algorithm on the engine, and what
// a trained run can do (AlphaZero's: games, analysis, play; PPO's: episodes).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <functional>
#include <iostream>
#include <sstream>
#include <string_view>
#include <thread>
#include <vector>

#include <sys/stat.h>

#include "app/cli/commands.hpp"
#include "app/cli/gpu_ranks.hpp"
#include "app/cli/mpi_ranks.hpp"
#include "app/cli/report_text.hpp"
#include "core/engine/engine.hpp"
#include "core/engine/trained_run.hpp"
#include "core/params/run_params.hpp"
#include "core/support/atomic_file.hpp"
#include "core/support/printable.hpp"
#include "core/train/baselines.hpp"
#include "core/train/mistakes.hpp"
#include "core/train/ppo.hpp"
#include "core/train/process_group.hpp"
#include "core/train/report_json.hpp"

namespace cas::cli {
namespace {

std::atomic<bool> gInterrupted{false};
extern "C" void onSignal(int) { gInterrupted = true; }

}  // namespace

void answerIgnoredInterrupts() {
  struct sigaction current {};
  if (::sigaction(SIGINT, nullptr, &current) == 0 && current.sa_handler == SIG_IGN) std::signal(SIGINT, onSignal);
}

namespace {

std::string percent(double x) {
  char b[16];
  std::snprintf(b, sizeof b, "%.0f%%", 100 * x);
  return b;
}

std::string duration(double seconds) {
  char b[32];
  if (seconds >= 3600) std::snprintf(b, sizeof b, "%dh%02dm", int(seconds / 3600), int(seconds / 60) % 60);
  else if (seconds >= 60) std::snprintf(b, sizeof b, "%dm%02ds", int(seconds / 60), int(seconds) % 60);
  else std::snprintf(b, sizeof b, "%ds", int(seconds));
  return b;
}

void report(const Diagnostic& d) { std::cerr << formatDiagnostic(d) << "\n"; }

// The seconds until training stops: the soonest of its limits (--iterations, of which `done`
// have run; --minutes, of which `elapsed` seconds have passed; `toEnd`, a PPO run's
// ppo.total_steps), -1 when it has none.
double secondsLeft(const TrainOptions& o, double elapsed, double perIteration, std::int64_t done, double toEnd = -1) {
  double eta = toEnd;
  auto sooner = [&eta](double seconds) { eta = eta < 0 ? seconds : std::min(eta, seconds); };
  if (o.iterations > 0) sooner(perIteration * double(o.iterations - done));
  if (o.minutes > 0) sooner(std::max(0.0, o.minutes * 60 - elapsed));
  return eta;
}

// On the CUDA backend, where AlphaZero's search can run on either side, which side it does.
void printSearchNote(train::Trainer& trainer, const exec::Backend& backend) {
  if (train::SearchingTrainer* searching = trainer.searching(); searching && backend.id() == "cuda")
    std::cerr << "search: " << searching->searchNote() << "\n";
}

constexpr size_t kMaxPathBytes = 4096;  // Linux's PATH_MAX

// A trainer for an existing run, restored from its newest valid checkpoint (core/engine/trained_run),
// with what happened on the way reported on stderr. `open` is engine::openTrainedRun (AlphaZero
// runs) or engine::openAnyRun (any algorithm's).
template <class T>
std::unique_ptr<T> openRun(engine::OpenedRun<T> (*open)(const std::filesystem::path&, std::shared_ptr<exec::Backend>, const engine::OpenRunOptions&),
                           const std::string& dir, const std::string& device, const engine::OpenRunOptions& options,
                           std::optional<engine::RunFolder>* folder) {
  if (dir.size() > kMaxPathBytes) {  // no such folder can exist; quoted whole it would make a message of any size
    std::cerr << "error: the run folder " << quoteValue(dir) << " is longer than the " << kMaxPathBytes << " bytes a path may have\n";
    return nullptr;
  }
  std::string error;
  auto backend = exec::BackendRegistry::instance().select(device, &error);
  if (!backend) {
    std::cerr << "error: " << printable(error) << "\n";
    return nullptr;
  }
  engine::OpenedRun<T> run = open(dir, backend, options);
  for (const std::string& s : run.skipped) std::cerr << "warning: skipping checkpoint " << printable(s) << "\n";
  for (const Diagnostic& d : run.notices) report(d);
  if (!run.trainer) {
    report(run.error);
    return nullptr;
  }
  if (!run.checkpoint.empty())
    std::cerr << (options.use == engine::RunUse::Read ? "using " : "resumed from ") << printable(run.checkpoint.string()) << " (iteration "
              << run.trainer->iteration() << ")\n";
  printSearchNote(*run.trainer, *backend);
  if (folder) *folder = std::move(run.folder);
  return std::move(run.trainer);
}

std::unique_ptr<train::AlphaZeroTrainer> openAlphaZeroRun(const std::string& dir, const std::string& device, const engine::OpenRunOptions& options) {
  return openRun(&engine::openTrainedRun, dir, device, options, nullptr);
}

// A PPO iteration's line: "iter 12 | steps 6144 | return 87.3 (len 87.3, 5 episodes) | loss 0.412
// (policy -0.012 value 21.3 entropy 0.61) | kl 0.004 clip 3% | 5210 steps/s".
std::string episodeLine(const train::IterationReport& r, const train::EpisodeReport& e) {
  char b[320];
  std::string returns = "return -- (no episode ended)";
  if (e.episodes > 0) {
    std::snprintf(b, sizeof b, "return %.1f (len %.1f, %lld episode%s)", e.returnMean, e.lengthMean, static_cast<long long>(e.episodes),
                  e.episodes == 1 ? "" : "s");
    returns = b;
  }
  if (e.rewardLoss) {  // MuZero: its update's three terms and the replay, where PPO has kl and clip
    std::snprintf(b, sizeof b, "iter %lld | steps %lld | %s | loss %.3f (policy %.3f value %.3f reward %.3f) | replay %lld | %.0f steps/s",
                  static_cast<long long>(r.iteration), static_cast<long long>(e.environmentSteps), returns.c_str(), r.loss, r.policyLoss,
                  r.valueLoss, *e.rewardLoss, static_cast<long long>(r.positions), e.stepsPerSecond);
    return b;
  }
  std::snprintf(b, sizeof b, "iter %lld | steps %lld | %s | loss %.3f (policy %.3f value %.3f entropy %.3f) | kl %.4f clip %s | %.0f steps/s",
                static_cast<long long>(r.iteration), static_cast<long long>(e.environmentSteps), returns.c_str(), r.loss, r.policyLoss, r.valueLoss,
                r.entropy, e.approxKl, percent(e.clipFraction).c_str(), e.stepsPerSecond);
  return b;
}

// "loss 0.412 (policy 0.321 value 0.091)", or why there is none yet.
std::string lossText(const train::IterationReport& r) {
  char b[96];
  if (r.trainingSteps > 0)
    std::snprintf(b, sizeof b, "loss %.3f (policy %.3f value %.3f)", r.loss, r.policyLoss, r.valueLoss);
  else if (r.positions < r.batchSize)
    std::snprintf(b, sizeof b, "no training step yet (%lld of %lld positions)", static_cast<long long>(r.positions),
                  static_cast<long long>(r.batchSize));
  else  // train.overlap: this iteration's steps could draw only from the positions of earlier ones
    std::snprintf(b, sizeof b, "no training step yet (%lld positions, for the next iteration)", static_cast<long long>(r.positions));
  return b;
}

void printRoot(const env::BoardGames& board, const search::RootStats& r) {
  std::printf("  move  visits      q  prior\n");
  for (int a = 0; a < board.actionCount(); ++a)
    if (r.visits[size_t(a)] > 0 || r.prior[size_t(a)] > 0)
      std::printf("  %4s  %6d  %+.3f  %.3f\n", board.actionName(a).c_str(), r.visits[size_t(a)], r.q[size_t(a)], r.prior[size_t(a)]);
  std::printf("  chosen %s, value %+.3f, principal variation:", board.actionName(r.chosen).c_str(), r.value);
  for (int a : r.pv) std::printf(" %s", board.actionName(a).c_str());
  std::printf("\n");
}

// The most of a line of stdin that `play` keeps: a move is a digit or q.
constexpr std::uint64_t kMaxInputLine = 256;

// A line of `in` without its line break (and a CRLF's \r), of which at most kMaxInputLine bytes
// are kept: the rest of a longer line is read past, not stored, and `length` says how long the
// line was. false at the end of the input.
bool readBoundedLine(std::istream& in, std::string* line, std::uint64_t* length) {
  line->clear();
  *length = 0;
  std::streambuf* buffer = in.rdbuf();
  int c = EOF;
  while ((c = buffer->sbumpc()) != EOF && c != '\n') {
    if (line->size() < kMaxInputLine) line->push_back(char(c));
    ++*length;
  }
  if (!line->empty() && line->back() == '\r') {
    line->pop_back();
    --*length;
  }
  return c != EOF || *length > 0;
}

// How eval, analyze and play open a run: reading, from the run's copies unless --use-project.
engine::OpenRunOptions readRun(bool useProject) {
  engine::OpenRunOptions options;
  options.useProjectFiles = useProject;
  return options;
}

// The folders a new run's default name made (runs/ and runs/NAME-STAMP), removed again (each
// only when still empty) unless the run is made in them.
struct ClaimedFolders {
  std::vector<std::filesystem::path> folders;  // deepest first
  bool keep = false;
  ~ClaimedFolders() {
    std::error_code ignored;
    if (!keep)
      for (const std::filesystem::path& f : folders) std::filesystem::remove(f, ignored);
  }
};

// The folder of a new run: --out, or runs/NAME-STAMP once the project's name is known to be a
// plain name (a name of "../../x" would put it elsewhere). The default is claimed by making it
// (mkdir succeeds for one process only): a run started in the same second takes NAME-STAMP-2,
// -3, ..., instead of being refused at the folder of the first. Empty, with the reason printed,
// when there is none.
std::string newRunFolder(const TrainOptions& o, const project::Project& project, ClaimedFolders* claimed) {
  if (!o.out.empty()) return o.out;
  if (auto problem = project::folderNameProblem(project.name)) {
    std::cerr << "error: the project's name " << quoteValue(project.name) << " cannot name a run folder: " << *problem
              << "; rename the project in its project.toml, or give the run a folder with --out\n";
    return {};
  }
  char stamp[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", std::localtime(&now));
  const std::string base = "runs/" + project.name + "-" + stamp;
  claimed->folders = missingFolders("runs");
  std::error_code ec;
  std::filesystem::create_directories("runs", ec);
  for (int n = 1; n <= 1000; ++n) {
    const std::string name = n == 1 ? base : base + "-" + std::to_string(n);
    if (::mkdir(name.c_str(), 0777) == 0) {
      claimed->folders.insert(claimed->folders.begin(), name);
      return name;
    }
    if (errno != EEXIST) break;
  }
  return base;  // RunFolder::create says what is wrong with it
}

// The backend a run of `project` trains on: --device when it names one (cpu or cuda), else the
// project's runtime.device (project.toml or --set), which was ignored: runtime.device = "cuda"
// trained on the CPU without a word where CUDA was unavailable. Null with the reason printed.
std::shared_ptr<exec::Backend> trainingBackend(const std::string& device, const project::Project& project) {
  const std::string configured = params::readRuntimeParams(project.parameters).device;
  const bool fromProject = device == "auto" && configured != "auto";
  std::string error;
  auto backend = exec::BackendRegistry::instance().select(fromProject ? configured : device, &error);
  if (!backend && fromProject)
    std::cerr << "error: runtime.device = " << quoteValue(configured) << " (in " << printable(project.projectFile.string()) << " or --set): " << printable(error)
              << "; set runtime.device = \"auto\" to train on the CPU where CUDA is unavailable, or give --device cpu (nothing was changed)\n";
  else if (!backend)
    std::cerr << "error: " << printable(error) << "\n";
  return backend;
}

// The device a resumed or restarted run trains on: --device when it names a backend, else the
// runtime.device its config.toml records (a run made with runtime.device = "cuda" once resumed on
// the CPU without a word where CUDA was unavailable). Empty, with the reason printed, when the
// recorded device is unavailable; "auto" when the run cannot be read (opening it says why).
std::string resumedRunDevice(const std::string& device, const std::string& dir) {
  if (device != "auto" || dir.size() > kMaxPathBytes) return device;
  project::Project project;
  Diagnostic error;
  std::vector<Diagnostic> notices;
  if (!engine::RunFolder::open(dir, engine::RunAccess::Read, false, &project, &error, &notices)) return device;
  const std::string recorded = params::readRuntimeParams(project.parameters).device;
  std::string why;
  if (recorded == "auto" || exec::BackendRegistry::instance().select(recorded, &why)) return recorded;
  std::cerr << "error: " << printable(dir) << " trains with runtime.device = " << quoteValue(recorded) << " (its config.toml): " << printable(why)
            << "; give --device cpu to train it on the CPU (nothing was changed)\n";
  return "";
}

// A new run of the project o.project: its folder made and a trainer built for it. The status to
// exit with when that fails (the reason printed; the folder removed again), else 0.
int startNewRun(const TrainOptions& o, const train::ParallelOptions& parallel, std::unique_ptr<train::Trainer>* trainer,
                std::optional<engine::RunFolder>* run) {
  project::LoadOptions loadOptions;
  loadOptions.allowOutsidePaths = o.allowOutsideProject;
  project::LoadResult loaded = project::loadProject(o.project, loadOptions);
  for (const Diagnostic& d : loaded.diagnostics.items()) std::cerr << formatDiagnostic(d, loaded.source) << "\n";
  if (!loaded.project) return 1;
  for (const std::string& assignment : o.sets)
    if (auto problem = loaded.project->parameters.assign(assignment)) {
      std::cerr << "error: --set " << quoteValue(assignment) << ": " << printable(*problem) << "\n";
      return 2;
    }
  auto backend = trainingBackend(o.device, *loaded.project);  // before the run's folder is made: a refusal leaves nothing
  if (!backend) return 1;
  ClaimedFolders claimed;
  const std::string out = newRunFolder(o, *loaded.project, &claimed);
  if (out.empty()) return 1;
  const std::string projectPolicy = loaded.project->policyFile.string();  // before create() names the run's copy
  Diagnostic refused;
  std::vector<Diagnostic> notices;
  *run = engine::RunFolder::create(out, *loaded.project, &refused, &notices);  // the project then names the run's copies
  for (const Diagnostic& d : notices) report(d);
  if (!*run) {
    report(refused);
    return 1;
  }
  try {
    *trainer = train::makeTrainer(*loaded.project, backend, parallel);
  } catch (const std::exception& e) {  // the policy does not compile, or the configuration cannot fit
    // The run's copy is removed with the folder: the message names the project's file instead,
    // which holds the same text.
    std::string message = e.what();
    const std::string copy = loaded.project->policyFile.string();
    for (size_t at = message.find(copy); at != std::string::npos; at = message.find(copy, at + projectPolicy.size()))
      message.replace(at, copy.size(), projectPolicy);
    std::cerr << "error: " << printable(message) << "\n";
    (*run)->removeUnstarted();
    return 1;
  }
  if (gInterrupted) {  // before the first iteration began: a folder with no checkpoint is no run to resume, so none is left
    (*run)->removeUnstarted();
    std::cerr << "interrupted before the run began: " << printable(out) << " was removed again (nothing was trained)\n";
    return 130;
  }
  printSearchNote(**trainer, *backend);
  claimed.keep = true;
  return 0;
}

}  // namespace

int runTrain(const TrainOptions& o) {
  if (dist::mpiWorldSizeFromEnvironment()) return trainUnderMpi(o);
  std::string memberProblem;
  const std::optional<GroupMember> member = groupMemberFromEnvironment(o, &memberProblem);
  if (!memberProblem.empty()) {
    std::cerr << "error: " << memberProblem << "\n";
    return 2;
  }
  if (o.gpus > 0 && !member) return launchGpuRanks(o);
  if (member && member->rank > 0) return followAsRank(o, *member);
  return trainAsMember(o, member);
}

int trainAsMember(const TrainOptions& o, const std::optional<GroupMember>& member) {
  // A plain run, or rank 0 of a group: the run itself, which leads the other ranks.
  train::ParallelOptions parallel;
  parallel.ranks = o.ranks;
  std::unique_ptr<dist::Communicator> communicator;
  std::optional<GroupWatcher> watcher;
  std::string summedBy;  // how a group's gradients meet, for its line below
  if (member) {
    if (!member->mpi) watchForAbandonment();  // mpirun ends its ranks itself
    const std::optional<project::Project> project = loadRunProject(o);
    if (!project) return 2;
    auto backend = trainingBackend(o.device, *project);  // the one the trainer gets below
    if (!backend) return 1;
    communicator = joinGroup(*backend, *member, params::readDistParams(project->parameters).timeoutSeconds);
    if (!communicator) return 1;
    if (!member->mpi) watcher.emplace(*communicator);
    summedBy = backend->deviceServices() ? "by NCCL" : "through MPI";
    parallel.communicator = communicator.get();
  }
  if (const char* fault = std::getenv("CAS_DIST_FAIL"); fault && *fault) {
    std::string problem;
    parallel.fault = train::FaultInjection::parse(fault, &problem);
    if (!parallel.fault) {
      std::cerr << "error: CAS_DIST_FAIL: " << printable(problem) << "; unset it to train without an injected failure\n";
      return 2;
    }
    if (o.ranks < 2 && !member) {
      std::cerr << "error: CAS_DIST_FAIL makes a data-parallel rank fail, but this run has one rank: add --ranks N or --gpus N, or unset it\n";
      return 2;
    }
    if (member && parallel.fault->rank >= member->size) {
      std::cerr << "error: CAS_DIST_FAIL names rank " << parallel.fault->rank << ", but the run has ranks 0 to " << member->size - 1 << "\n";
      return 2;
    }
  }
  std::signal(SIGINT, onSignal);  // from before the run's folder is made: a Ctrl-C then is answered too (startNewRun)
  std::signal(SIGTERM, onSignal);
  std::unique_ptr<train::Trainer> trainer;
  std::optional<engine::RunFolder> run;
  if (!o.resume.empty() || !o.restart.empty()) {
    if (!o.sets.empty()) {
      std::cerr << "error: a resumed or restarted run keeps its configuration; --set cannot be combined with --resume or --restart\n";
      return 2;
    }
    engine::OpenRunOptions options;
    options.use = o.resume.empty() ? engine::RunUse::Restart : engine::RunUse::Resume;
    options.useProjectFiles = o.useProject;
    options.parallel = parallel;
    const std::string& dir = o.resume.empty() ? o.restart : o.resume;
    const std::string device = resumedRunDevice(o.device, dir);
    if (device.empty()) return 1;
    trainer = openRun(&engine::openAnyRun, dir, device, options, &run);
    if (!trainer) return 1;
    if (trainer->reachedEnd()) {  // a run at its algorithm's total_steps: said, rather than ending without a word
      const std::string dir = printable(run->path().string()), key = trainer->project().algorithm + ".total_steps";
      std::cerr << "note: " << dir << " has reached the end of the training its configuration sets (" << key << " = " << trainer->parameters().getInt(key)
                << " environment steps): there is nothing to train; raise " << key << " in " << dir << "/config.toml to train it further\n";
      return 0;
    }
  } else if (const int status = startNewRun(o, parallel, &trainer, &run)) {
    return status;
  }
  if (train::EpisodicTrainer* episodic = trainer->episodic()) std::cerr << "rollout: " << episodic->rolloutNote() << "\n";
  std::cerr << "run folder: " << printable(run->path().string()) << "\n";
  if (o.ranks > 1) std::cerr << "data-parallel: " << o.ranks << " CPU ranks on threads (rank 0 writes the checkpoints and metrics)\n";
  if (member && member->mpi)
    std::cerr << "data-parallel: " << member->size << (member->size == 1 ? " process" : " processes") << " started by mpirun ("
              << printable(member->mpi->library()) << "), gradients summed " << summedBy
              << " (rank 0 writes the checkpoints and metrics)\n";
  else if (member)
    std::cerr << "data-parallel: " << (member->size == 1 ? std::string("1 GPU, one process") : std::to_string(member->size) + " GPUs, one process each")
              << " (rank 0 writes the checkpoints and metrics)\n";
  train::Trainer* trained = trainer.get();  // the engine's from here on

  std::atomic<bool> finished{false}, failed{false}, stopped{false};
  const auto start = std::chrono::steady_clock::now();
  const std::int64_t firstIteration = trainer->iteration();
  // What a PPO run's ETA is counted in: environment steps, a rollout per iteration.
  std::int64_t totalSteps = 0, stepsPerIteration = 0;
  if (train::EpisodicTrainer* episodic = trainer->episodic()) {
    totalSteps = episodic->totalSteps();
    stepsPerIteration = episodic->stepsPerIteration();
  }
  engine::EngineEvents events;
  events.iterationFinished = [&](const train::IterationReport& r) {
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double perIteration = elapsed / double(std::max<std::int64_t>(1, r.iteration - firstIteration));
    const std::int64_t done = r.iteration - firstIteration;
    if (r.episodes) {  // a single-agent run ends at its ppo.total_steps unless stopped sooner
      const double toEnd =
          perIteration * double(std::max<std::int64_t>(0, totalSteps - r.episodes->environmentSteps)) / double(std::max<std::int64_t>(1, stepsPerIteration));
      std::printf("%s | ETA %s\n", episodeLine(r, *r.episodes).c_str(), duration(secondsLeft(o, elapsed, perIteration, done, toEnd)).c_str());
      std::fflush(stdout);
      return;
    }
    const double eta = secondsLeft(o, elapsed, perIteration, done);
    std::string wins;
    for (const auto& e : r.evaluations)
      wins += " | " + e.opponent + " W" + percent(e.winRate()) + " D" + percent(e.games ? double(e.draws) / e.games : 0) + " L" +
              percent(e.games ? double(e.losses) / e.games : 0);
    std::printf("iter %lld | games %lld | %s | %.0f sims/s %.1f games/s%s | ETA %s\n", static_cast<long long>(r.iteration),
                static_cast<long long>(r.gamesPlayed), lossText(r).c_str(), r.simulationsPerSecond, r.gamesPerSecond, wins.c_str(),
                eta < 0 ? "-" : duration(eta).c_str());
    std::fflush(stdout);
  };
  events.parameterApplied = [](const engine::ParameterChange& c) {
    std::printf("set %s = %s (was %s) from iteration %lld\n", c.name.c_str(), c.to.c_str(), c.from.c_str(), static_cast<long long>(c.iteration));
  };
  events.message = [](const std::string& m) { std::cerr << printable(m) << "\n"; };
  events.failed = [&](const std::string& m) {
    std::cerr << "error: the run stopped: " << printable(m) << "\n";
    failed = true;
  };
  events.finished = [&] { finished = true; };
  engine::Engine engine(std::move(trainer), std::move(*run), events, {o.iterations, o.minutes});
  engine.start();
  while (!finished) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (gInterrupted.exchange(false)) {
      std::cerr << "stopping after this iteration (the run will be checkpointed)...\n";
      engine.stop();
      stopped = true;
    }
  }
  engine.wait();
  try {
    trained->endRun();  // after the last iteration (a leading rank tells the others; nothing when one failed)
  } catch (const std::exception& e) {
    std::cerr << "error: the other ranks could not be told to stop: " << printable(e.what()) << "\n";
    failed = true;
  }
  return failed ? 1 : stopped && !member ? 130 : 0;  // stopped (Ctrl-C, SIGTERM): 130, as before the first iteration
}

namespace {

// `eval --mistakes N`: the agent's moves judged by the perfect player (core/train/mistakes).
int runMistakes(train::AlphaZeroTrainer& trainer, const EvalOptions& o) {
  train::MistakeOptions options;
  options.positions = o.mistakes;
  options.seed = o.seed;
  options.solverSeconds = o.solverSeconds;
  options.threads = o.solverThreads;
  train::MistakeReport r;
  try {
    // Progress on stderr about every 10%, since a thousand positions take minutes.
    r = train::measureMistakes(trainer, options, [&](int done, int total) {
      if (!o.json && (done * 10 / total != (done - 1) * 10 / total)) std::cerr << "judged " << done << " of " << total << " positions\n";
    });
  } catch (const std::exception& e) {
    std::cerr << "error: " << printable(e.what()) << "\n";
    return 2;
  }
  auto json = [](const train::MistakeCounts& c, const char* key) {
    char b[256];
    std::snprintf(b, sizeof b, "{\"%s\": %s, \"positions\": %d, \"judged\": %d, \"mistakes\": %d, \"mistake_rate\": %.5g, \"unsolved\": %d}", key,
                  jsonString(c.label).c_str(), c.positions, c.judged, c.mistakes, c.rate(), c.unsolved);
    return std::string(b);
  };
  if (o.json) {
    std::string sources, depths;
    for (const auto& c : r.sources) sources += (sources.empty() ? "" : ", ") + json(c, "source");
    for (const auto& c : r.depths) depths += (depths.empty() ? "" : ", ") + json(c, "moves_played");
    std::printf("{\"positions\": %d, \"judged\": %d, \"mistakes\": %d, \"mistake_rate\": %.5g, \"unsolved\": %d, \"solver_seconds\": %g, "
                "\"seconds\": %.3f, \"sources\": [%s], \"depths\": [%s]}\n",
                r.total.positions, r.total.judged, r.total.mistakes, r.total.rate(), r.total.unsolved, r.solverSeconds, r.seconds, sources.c_str(),
                depths.c_str());
    return 0;
  }
  auto line = [](const train::MistakeCounts& c) {
    char b[160];
    std::snprintf(b, sizeof b, "%5d positions, %5d judged, %5d mistakes (%s)", c.positions, c.judged, c.mistakes, percent(c.rate()).c_str());
    std::string text = b;
    if (c.unsolved) text += ", " + std::to_string(c.unsolved) + " unsolved";
    return text;
  };
  std::printf("%d of %d judged moves made the perfect player's verdict worse: mistake rate %s\n", r.total.mistakes, r.total.judged,
              percent(r.total.rate()).c_str());
  if (r.total.unsolved)
    std::printf("%d of %d positions skipped: the solver could not finish them within %g s each (raise --solver-seconds to judge them)\n",
                r.total.unsolved, r.total.positions, r.solverSeconds);
  for (const auto& c : r.sources) std::printf("  %-12s %s\n", (c.label + ":").c_str(), line(c).c_str());
  for (const auto& c : r.depths)
    if (c.positions) std::printf("  moves %-6s %s\n", (c.label + ":").c_str(), line(c).c_str());
  std::printf("in %s\n", duration(r.seconds).c_str());
  return 0;
}

}  // namespace

namespace {

// A trading run's held-out result, in words: the greedy policy's total profit over the part of
// the series training never drew from, beside buying and holding over the same bars.
void printHeldOut(const train::HeldOutResult& h) {
  auto change = [](double profit) {
    char b[32];
    std::snprintf(b, sizeof b, "%+.2f%%", 100 * (profit - 1));
    return std::string(b);
  };
  std::printf("(those episodes trade windows drawn from bars 0-%d, the training part)\n", h.firstBar - 1);
  std::printf("held out: bars %d-%d of %s (%d bars, the last %s of the series, never trained on), %d steps\n", h.firstBar, h.seriesBars - 1,
              printable(h.file).c_str(), h.seriesBars - h.firstBar, percent(double(h.seriesBars - h.firstBar) / h.seriesBars).c_str(), h.steps);
  std::printf("  greedy policy: total profit %.4f (%s), %d trades, long %d of %d steps, reward %.2f\n", h.policyProfit, change(h.policyProfit).c_str(),
              h.trades, h.longSteps, h.steps, h.policyReward);
  std::printf("  buy and hold:  total profit %.4f (%s), bought at %.2f, sold at %.2f, the same fees\n", h.buyAndHoldProfit, change(h.buyAndHoldProfit).c_str(),
              h.firstClose, h.lastClose);
  const double gap = h.policyProfit - h.buyAndHoldProfit;
  std::printf("  the policy %s buy and hold by %.2f percentage points\n", gap >= 0 ? "beat" : "lost to", 100 * std::abs(gap));
}

// A market-making run against the closed-form quotes, in words: a row each for the policy, the
// closed form and the closed form on the action grid, and the policy's utility as a share of the
// optimum's (utilities are negative: 1.05 is 5% worse).
void printOptimum(const train::OptimumComparison& c) {
  std::printf("against Avellaneda and Stoikov's closed-form quotes, on the same %d episodes (seed %llu: the same mid-price paths):\n", c.episodes,
              static_cast<unsigned long long>(c.seed));
  std::printf("  %-24s %14s %12s %12s %10s %10s\n", "", "mean utility", "certainty", "mean wealth", "std", "|q| at T");
  auto row = [](const char* name, const train::QuotingResult& r) {
    std::printf("  %-24s %14.6g %12.2f %12.2f %10.2f %10.2f\n", name, r.meanUtility, r.certaintyEquivalent, r.meanWealth, r.wealthStd, r.meanAbsInventory);
  };
  row("greedy policy", c.policy);
  row("closed form", c.optimum);
  row("closed form on the grid", c.optimumOnGrid);
  const double shortfall = c.policy.meanUtility / c.optimum.meanUtility - 1;
  std::printf("  the policy's mean utility is %.1f%% %s the closed form's (certainty equivalent %+.2f)\n", 100 * std::abs(shortfall),
              shortfall > 0 ? "below" : "above", c.policy.certaintyEquivalent - c.optimum.certaintyEquivalent);
}

// `eval RUN --episodes N`: a single-agent run's policy for N episodes, greedy or sampled.
int runEpisodes(const EvalOptions& o) {
  engine::OpenRunOptions options = readRun(o.useProject);
  options.singleAgent = true;  // a two-player game's run is refused before its checkpoint is read
  auto trainer = openRun(&engine::openAnyRun, o.run, o.device, options, nullptr);
  if (!trainer) return 1;
  train::EpisodicTrainer* episodic = trainer->episodic();
  if (!episodic) {  // a single-agent game trained by an algorithm without episodes: none is made so far
    std::cerr << "error: " << printable(o.run) << " plays no episodes; --episodes evaluates single-agent runs\n";
    return 1;
  }
  const auto start = std::chrono::steady_clock::now();
  const train::EpisodeEvaluation r = episodic->evaluate(o.episodes, o.stochastic, o.seed);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const std::optional<train::HeldOutResult> heldOut = episodic->heldOut();
  const std::optional<train::OptimumComparison> optimum = episodic->againstOptimum(o.episodes, o.seed);
  if (o.json) {
    std::string json = train::episodesJson(r, o.stochastic, o.seed, seconds);
    if (heldOut) json.insert(json.size() - 1, ", \"held_out\": " + train::heldOutJson(*heldOut));
    if (optimum) json.insert(json.size() - 1, ", \"against_optimum\": " + train::optimumJson(*optimum));
    std::printf("%s\n", json.c_str());
  } else {
    std::printf("%d episodes of %s with %s actions: mean return %.2f, median %.2f, std %.2f (min %.0f, max %.0f) in %s\n", o.episodes,
                trainer->project().environment.c_str(), o.stochastic ? "sampled" : "greedy (most probable)", r.mean(), r.median(), r.standardDeviation(),
                *std::min_element(r.returns.begin(), r.returns.end()), *std::max_element(r.returns.begin(), r.returns.end()), duration(seconds).c_str());
    if (heldOut) printHeldOut(*heldOut);
    if (optimum) printOptimum(*optimum);
  }
  return 0;
}

}  // namespace

int runEval(const EvalOptions& o) {
  if (o.episodes > 0) return runEpisodes(o);
  if (o.opponent == "run:") {  // named as such before anything is loaded, not as the run folder "" that is no run
    std::cerr << "error: --opponent run:DIR: expected a path after run:, got ''; give another trained run of the same game\n";
    return 2;
  }
  auto trainer = openAlphaZeroRun(o.run, o.device, readRun(o.useProject));
  if (!trainer) return 1;
  if (o.mistakes > 0) return runMistakes(*trainer, o);
  train::EvaluationResult r;
  try {
    if (o.opponent.starts_with("run:")) {  // another trained agent of the same game
      const std::string folder = o.opponent.substr(4);
      auto other = openAlphaZeroRun(folder, o.device, readRun(false));
      if (!other) return 1;
      if (other->project().environment != trainer->project().environment) {
        std::cerr << "error: " << printable(folder) << " plays " << other->project().environment << ", not " << trainer->project().environment << "\n";
        return 2;
      }
      auto opponent = other->asOpponent(trainer->evaluationRound(o.games), o.seed, "run:" + folder);
      r = trainer->evaluate(*opponent, o.games, o.seed);
    } else {
      r = trainer->evaluate(o.opponent, o.games, o.seed);
    }
  } catch (const train::UnsolvedMove& e) {  // the board on its lines: printable() alone wrote it as one line of "\n"
    std::cerr << "error: " << printable(e.sentence) << " The position:\n" << printable(e.board, Keep::TabsAndNewlines);
    if (!e.board.ends_with('\n')) std::cerr << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "error: " << printable(e.what()) << "\n";
    return 2;
  }
  if (o.json) {
    std::printf("{\"opponent\": %s, \"games\": %d, \"wins\": %d, \"draws\": %d, \"losses\": %d, "
                "\"first\": {\"wins\": %d, \"draws\": %d, \"losses\": %d}, \"second\": {\"wins\": %d, \"draws\": %d, \"losses\": %d}}\n",
                jsonString(r.opponent).c_str(), r.games, r.wins, r.draws, r.losses, r.winsFirst, r.drawsFirst, r.lossesFirst, r.winsSecond,
                r.drawsSecond, r.lossesSecond);
  } else {
    std::printf("%d games against %s: %d wins, %d draws, %d losses\n", r.games, r.opponent.c_str(), r.wins, r.draws, r.losses);
    std::printf("  moving first:  %d wins, %d draws, %d losses\n", r.winsFirst, r.drawsFirst, r.lossesFirst);
    std::printf("  moving second: %d wins, %d draws, %d losses\n", r.winsSecond, r.drawsSecond, r.lossesSecond);
  }
  return 0;
}

namespace {

// A position to analyse and where it was given: by --position, or on a line of --positions FILE.
struct GivenPosition {
  std::string moves;
  std::string where;    // "FILE:LINE: " for a line of a file
  std::string problem;  // why the line is no position, found before any analysis
};

// The most bytes of a line of a positions file that may hold a position (a game's moves are a few
// dozen), and the most errors analyze reports one by one.
constexpr size_t kMaxPositionLine = 1024;
constexpr int kMaxReportedPositionErrors = 20;

// Calls `each` with every position of a positions file, one at a time (a file of millions of
// lines is never held as positions): its lines without a byte order mark before the first, each
// without the CR of a CRLF; blank lines (empty, or only spaces and tabs) and lines starting with
// # skipped. Returns how many positions it gave.
int forEachPosition(const std::string& file, std::string_view text, const std::function<void(const GivenPosition&)>& each) {
  int given = 0;
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);
  for (int line = 1; !text.empty(); ++line) {
    const size_t end = std::min(text.find('\n'), text.size());
    std::string_view l = text.substr(0, end);
    text.remove_prefix(std::min(end + 1, text.size()));
    if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
    if (l.find_first_not_of(" \t") == std::string_view::npos || l[0] == '#') continue;  // blank, or only spaces and tabs
    GivenPosition p{std::string(l), printable(file) + ":" + std::to_string(line) + ": ", {}};
    if (l.size() > kMaxPositionLine) {
      p.moves.clear();
      p.problem = "a line of " + std::to_string(l.size()) + " bytes is not a position; a position is at most " + std::to_string(kMaxPositionLine) + " bytes";
    }
    each(p);
    ++given;
  }
  return given;
}

}  // namespace

int runAnalyze(const AnalyzeOptions& o) {
  auto trainer = openAlphaZeroRun(o.run, o.device, readRun(o.useProject));
  if (!trainer) return 1;
  std::optional<std::string> text;
  if (!o.positionsFile.empty()) {  // read before any position is analysed: an unreadable file analyses nothing
    std::string error;
    text = readFile(o.positionsFile, kPositionsFileLimit, &error);
    if (!text) {
      std::cerr << "error: " << printable(error) << "\n";
      return 1;
    }
  }
  int errors = 0;  // a file of a million bad lines reports the first few, then counts the rest
  auto analyse = [&](const GivenPosition& p) {
    std::string error;
    search::RootStats r;
    if (p.problem.empty()) r = trainer->analyse(p.moves, o.simulations, &error);
    if (!p.problem.empty() || !error.empty()) {
      if (++errors <= kMaxReportedPositionErrors)
        std::cerr << "error: " << p.where << (p.problem.empty() ? "position " + quoteValue(p.moves) + ": " + printable(error) : p.problem) << "\n";
      return;
    }
    const env::BoardGames& board = trainer->analysisBoard();
    if (o.json) {
      std::printf("%s\n", train::analysisJson(p.moves, board, r).c_str());
    } else {
      std::printf("position %s\n%s", p.moves.empty() ? "(start)" : printable(p.moves).c_str(), board.render(0).c_str());
      printRoot(board, r);
    }
  };
  for (const std::string& moves : o.positions) analyse({moves, {}, {}});
  if (text && forEachPosition(o.positionsFile, *text, analyse) == 0) {  // else nothing at all was printed, and the exit status was 0
    std::cerr << "error: " << printable(o.positionsFile) << " holds no positions; write one a line (blank lines and lines starting with # are skipped)\n";
    return 1;
  }
  if (errors > kMaxReportedPositionErrors)
    std::cerr << "error: ... and " << errors - kMaxReportedPositionErrors << " more positions that are not valid (the first "
              << kMaxReportedPositionErrors << " are shown)\n";
  return errors > 0 ? 1 : 0;
}

int runPlay(const PlayOptions& o) {
  auto trainer = openAlphaZeroRun(o.run, o.device, readRun(o.useProject));
  if (!trainer) return 1;
  auto boardGames = env::makeBoardGames(trainer->project().environment, 1);
  env::BoardGames& board = *boardGames;
  const char* moveNoun = board.info().board->moveNoun();
  std::string moves;
  const int human = o.humanSecond ? 1 : 0;
  std::printf("You play %s. Enter a move (%s), or q to quit.\n", human == 0 ? "first (X)" : "second (O)",
              ("a " + std::string(moveNoun) + " 1-" + std::to_string(board.actionCount())).c_str());
  for (;;) {
    std::string error;
    board.playMoves(0, moves, &error);
    std::printf("\n%s", board.render(0).c_str());
    if (board.terminal(0)) {
      const float v = board.terminalValue(0);
      const bool humanToMove = board.toMove(0) == human;
      std::printf("%s\n", v == 0 ? "Draw." : (humanToMove == (v > 0) ? "You win." : "The agent wins."));
      return 0;
    }
    if (board.toMove(0) == human) {
      std::printf("your move: ");
      std::fflush(stdout);
      std::string line;
      std::uint64_t length = 0;
      if (!readBoundedLine(std::cin, &line, &length)) {  // Ctrl-D, or the end of piped moves: said, on a line of its own
        std::printf("\nend of input; the game is left unfinished\n");
        return 0;
      }
      if (line == "q") {
        std::printf("the game is left unfinished\n");
        return 0;
      }
      if (length > kMaxInputLine) {
        std::printf("a move is one digit from 1 to %d; a line of %llu bytes is not read\n", board.actionCount(), static_cast<unsigned long long>(length));
        continue;
      }
      const int action = line.size() == 1 ? line[0] - '1' : -1;
      if (action < 0 || action >= board.actionCount()) {
        std::printf("enter one digit from 1 to %d, or q to quit\n", board.actionCount());
        continue;
      }
      if (!board.legal(0, action)) {
        std::printf("%s %d is not free\n", moveNoun, action + 1);
        continue;
      }
      moves += line;
    } else {
      search::RootStats r = trainer->analyse(moves, o.simulations, &error);
      std::printf("agent plays %s\n", board.actionName(r.chosen).c_str());
      printRoot(board, r);
      moves += board.actionName(r.chosen);
    }
  }
}

}  // namespace cas::cli
