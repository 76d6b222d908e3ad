#pragma once
// The CLI's subcommands. Each returns the process exit status: 0 success, 1 the input was
// rejected (diagnostics printed), 2 a usage error; `export` returns 2 for any refusal (nothing
// is written then).
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/exec/backend.hpp"
#include "core/export/onnx_export.hpp"
#include "core/export/policy_loader.hpp"
#include "core/project/project.hpp"

namespace cas::cli {

struct CheckOptions {
  bool printIr = false;
  bool update = false;               // with printIr: the training step's graph, not the forward pass
  bool allowOutsideProject = false;  // a project's policy may lie outside its folder
  std::int64_t batch = 1;
  // Standalone .pdl files:
  std::vector<std::int64_t> observationShape;
  std::int64_t actionCount = 0;
  std::string entry = "policy";
  std::string algorithm;
};

struct BenchOptions {
  std::string net;
  std::int64_t batch = 1024;
  std::string device = "auto";
  std::string precision = "fp32";
  double seconds = 2.0;  // timing budget per measurement
  bool json = false;
};

struct SearchBenchOptions {
  std::string model = "rules";  // rules: a board game's own rules; learned: a learned model (bench_learned_search.cpp)
  // Empty: the model's default (rules: connect4 and connect4_mlp256; learned: minatar-breakout and muzero_mlp256).
  std::string env, net;
  std::string policy = "puct", device = "auto", selection = "masked";
  int games = 1024, simulations = 64, leaves = 1, nodeBudget = 2048;
  bool instrument = false, kernels = false, json = false;
  bool breakdown = false;  // learned: one decision timed phase by phase (LearnedSearchBreakdown)
  double seconds = 2.0;    // timing budget
  int minCalls = 10;
};

struct EnvBenchOptions {
  std::string env = "minatar-breakout";  // a single-agent environment of the catalogue
  std::string series;                    // a trading environment's CSV price series
  double trainFraction = 0.8;            // the part of it the copies trade
  int envs = 4096, steps = 1000;
  std::string device = "cpu";  // cpu: the CPU twins on a thread pool; cuda: the device twins (gpu/env)
  int threads = 0;  // 0: one per hardware thread
  std::uint64_t seed = 1;
  bool json = false;
};

struct PpoBenchOptions {
  std::string project, device = "auto";
  std::vector<std::string> sets;  // name=value, as train --set (ppo.envs=4096, ...)
  int iterations = 10;            // timed, after one to warm up
  bool json = false;
};

struct DecisionBenchOptions {
  std::string project, device = "auto";
  std::vector<std::string> sets;  // name=value, as train --set (search.device=cpu, ...)
  int decisions = 20;             // timed, after two to warm up
  bool json = false;
};

struct PolicyBenchOptions {
  std::string target;            // a run (its newest valid checkpoint) or a project (initial weights)
  std::string device = "all";    // all, cpu, cuda or c (the exported C file)
  std::int64_t batch = 1;        // observations a decision
  int decisions = 10000, warmup = 200;
  bool json = false;
};

struct AllReduceBenchOptions {
  int ranks = 0;   // CPU threads (dist::ThreadedGroup; 0: two), unless --gpus or mpirun
  int gpus = 0;    // threads with a GPU each (NCCL)
  std::string device = "auto";  // under mpirun: the backend whose communicator is timed
  std::uint64_t minBytes = 4096, maxBytes = 64 << 20;
  int factor = 4;
  int warmup = 5, iterations = 20;
  bool json = false;
};

struct SolverBenchOptions {
  std::string env = "connect4", mode = "both";
  std::vector<int> depths = {8, 14, 20};
  int positions = 20;          // per depth
  double limitSeconds = 60;    // per position; past it the position counts as unsolved
  std::int64_t tableMib = 64;  // the transposition table
  std::uint64_t seed = 1;
  bool json = false;
};

struct KernelsOptions {
  std::string target;          // a project folder or a benchmark network's name
  std::string graph = "update";  // "forward" or "update"
  std::string precision = "fp32";
  std::int64_t batch = 1024;
  int runs = 20;
  bool source = true;
};

struct TrainOptions {
  std::string project, device = "auto", out, resume, restart;
  double minutes = 0;
  std::int64_t iterations = 0;  // 0: no limit
  int ranks = 1;                // > 1: data-parallel CPU ranks on threads (core/train/data_parallel.hpp)
  int gpus = 0;                 // > 0: data-parallel ranks, one process per GPU (gpu_ranks.cpp, core/train/process_group.hpp)
  std::vector<std::string> sets;
  bool useProject = false;           // --resume/--restart with the project's current files
  bool allowOutsideProject = false;  // the policy may lie outside the project folder
};

// eval, analyze and play use the run's copies of its project file and policy unless useProject.
struct EvalOptions {
  std::string run, device = "auto", opponent = "random";
  int games = 20;
  int mistakes = 0;            // > 0: judge the agent's moves in this many positions instead of playing games
  int episodes = 0;            // > 0: a single-agent run's policy for this many episodes instead of games
  bool stochastic = false;     // with episodes: actions sampled from the policy, not its most probable
  double solverSeconds = 2.0;  // with mistakes: the solver's time per position
  int solverThreads = 0;       // with mistakes: solvers side by side (0: one per core)
  std::uint64_t seed = 1;
  bool json = false;
  bool useProject = false;
};

struct AnalyzeOptions {
  std::string run, device = "auto", positionsFile;
  std::vector<std::string> positions;
  int simulations = 0;  // 0: the run's search.simulations
  bool json = false;
  bool useProject = false;
};

struct PlayOptions {
  std::string run, device = "auto";
  bool humanSecond = false;
  int simulations = 0;
  bool useProject = false;
};

// export: a run folder or a project folder to ONNX or standalone C.
struct ExportOptions {
  std::string dir, format = "onnx", out;  // out: default DIR/exports/policy.onnx or policy.c
  std::int64_t checkpoint = 0;            // 0: the newest valid checkpoint
  std::int64_t batch = 0;                 // ONNX: 0 for a dynamic batch
  int opset = exports::kDefaultOnnxOpset;  // ONNX
  exports::StandaloneShape standalone;     // a .pdl file's observation shape, action count and seed
};

int runTrain(const TrainOptions& options);
// `train` started with SIGINT ignored (a job started with & from a script) answers it from here
// on, as it answers it from its run's start otherwise: called first thing, so a SIGINT during the
// start-up is not lost (runTrain installs the same handler later, for SIGTERM too).
void answerIgnoredInterrupts();
int runExport(const ExportOptions& options);
int runBenchEnv(const EnvBenchOptions& options);
int runBenchPpo(const PpoBenchOptions& options);
int runBenchDecision(const DecisionBenchOptions& options);
int runBenchPolicy(const PolicyBenchOptions& options);

// A project for a `bench` that runs its trainer: loaded (its diagnostics printed), of
// `algorithm` (else `needs`, "bench ppo needs a project whose algorithm is ppo", and status 2),
// with the --set assignments applied, and the backend `device` names. `status` is 0 when both
// are there, else what the command returns (the error printed).
struct BenchProject {
  std::optional<project::Project> project;
  std::shared_ptr<exec::Backend> backend;
  int status = 0;
};
BenchProject openBenchProject(const std::string& path, const std::vector<std::string>& sets, const std::string& device, const std::string& algorithm,
                              const std::string& needs);
int runBenchAllReduce(const AllReduceBenchOptions& options);
int runEval(const EvalOptions& options);
int runAnalyze(const AnalyzeOptions& options);
int runPlay(const PlayOptions& options);
int runDevices();
int runBenchUpdate(const BenchOptions& options);
int runBenchSearch(const SearchBenchOptions& options);
int timeLearnedSearch(const SearchBenchOptions& options);  // bench_learned_search.cpp
int runBenchSolver(const SolverBenchOptions& options);
int runKernels(const KernelsOptions& options);
int runCheck(const std::vector<std::string>& paths, const CheckOptions& options);
int runParams(bool markdown);

}  // namespace cas::cli
