// cuda-agent: the headless command-line interface. Each subcommand's options are declared by one
// function here (addCheck, addTrain, ...), which also says what runs when it is named; their work
// is in the other files of app/cli and in core/.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <iostream>
#include <limits>
#include <memory>
#include <new>
#include <optional>
#include <sstream>
#include <string_view>

#include "app/cli/commands.hpp"
#include "core/train/benchmark_nets.hpp"
#include "cas/version.hpp"
#include "core/env/environments.hpp"
#include "core/export/onnx_export.hpp"
#include "core/export/policy_loader.hpp"
#include "core/pdl/compiler.hpp"
#include "core/support/numbers.hpp"
#include "core/support/printable.hpp"

namespace {

// "[0.01, 1000000]": whole bounds without an exponent.
std::string range(double lo, double hi) {
  std::ostringstream s;
  s.precision(15);
  s << "[" << lo << ", " << hi << "]";
  return s.str();
}

// Numbers on the command line are read whole (core/support/numbers.hpp): "5abc", "1e3" for a
// count, "-1" for a seed are refused with the form they must take.
CLI::Validator integerIn(std::int64_t lo, std::int64_t hi) {
  return CLI::Validator(
      [lo, hi](std::string& text) -> std::string {
        if (cas::parseInteger(text, lo, hi)) return {};
        return "expected a whole number in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " + cas::quoteValue(text);
      },
      "INT in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
}

CLI::Validator numberIn(double lo, double hi) {
  return CLI::Validator(
      [lo, hi](std::string& text) -> std::string {
        if (cas::parseNumber(text, lo, hi)) return {};
        return "expected a number in " + range(lo, hi) + ", got " + cas::quoteValue(text);
      },
      "NUMBER in " + range(lo, hi));
}

// A path the user gives, such as --out: an empty one is refused (not taken for the default, and
// not left for CLI11's existence checks, which name it as nothing at all), and one longer than
// any path can be is refused with its quote cut.
CLI::Validator nonEmptyPath(const char* defaultWhenLeftOut = nullptr) {
  return CLI::Validator(
      [defaultWhenLeftOut](std::string& text) -> std::string {
        if (text.empty() && !defaultWhenLeftOut) return "expected a path, got ''";
        if (text.empty()) return std::string("expected a path, got ''; leave the option out for the default (") + defaultWhenLeftOut + ")";
        if (text.size() > 4096) return "expected a path of at most 4096 bytes (Linux's PATH_MAX), got " + cas::quoteValue(text);
        return {};
      },
      "PATH");
}

// An observation shape as `check` and `export` take it for a .pdl file ("4,84,84"); nullopt,
// with the reason printed, when it is not a list of positive integers or holds more elements
// than a policy's observation may (counted in checked 64-bit arithmetic: 65536^4 is no 0).
std::optional<std::vector<std::int64_t>> parseShape(const std::string& text) {
  std::vector<std::string_view> parts;  // every part, the empty ones too ('4,' is two parts)
  for (size_t start = 0;;) {
    const size_t comma = text.find(',', start);
    parts.push_back(std::string_view(text).substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (std::any_of(parts.begin(), parts.end(), [](std::string_view p) { return p.empty(); })) {
    std::cerr << "--obs-shape: " << cas::quoteValue(text) << " has an empty part; a shape is positive integers separated by commas, such as 4,84,84\n";
    return std::nullopt;
  }
  if (parts.size() > size_t(cas::pdl::kMaxInputDimensions)) {
    std::cerr << "--obs-shape: " << cas::quoteValue(text) << " has " << parts.size() << " dimensions; an observation has at most "
              << cas::pdl::kMaxInputDimensions << " (the most a checkpoint's tensor has)\n";
    return std::nullopt;
  }
  std::vector<std::int64_t> shape;
  std::int64_t elements = 1;
  bool tooMany = false;
  for (std::string_view part : parts) {
    const auto d = cas::parseInteger(part, 1, std::numeric_limits<std::int64_t>::max());
    if (!d) {
      std::cerr << "--obs-shape: " << cas::quoteValue(text) << " is not a list of positive integers such as 4,84,84\n";
      return std::nullopt;
    }
    tooMany = tooMany || __builtin_mul_overflow(elements, *d, &elements) || elements > cas::pdl::kMaxElementsPerSample;
    shape.push_back(*d);
  }
  if (tooMany) {
    std::cerr << "--obs-shape: " << cas::quoteValue(text) << " has more than " << cas::pdl::kMaxElementsPerSample
              << " elements, the most an observation may have\n";
    return std::nullopt;
  }
  return shape;
}

// CLI11's refusal with every long argument it quotes cut as quoteValue cuts a value ("Path does
// not exist: 'xxxx... (100000 bytes)'"), and the whole of it at most 4 KiB: thousands of stray
// arguments are listed in one line.
std::string boundedRefusal(std::string text, int argc, char** argv) {
  constexpr size_t kLongest = 64, kMost = 4096;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    const size_t equals = arg.starts_with("--") ? arg.find('=') : std::string_view::npos;
    for (std::string_view quoted : {arg, equals == std::string_view::npos ? std::string_view() : arg.substr(equals + 1)}) {
      if (quoted.size() <= kLongest) continue;
      const std::string cut = cas::quoteValue(quoted, kLongest);
      for (size_t at = text.find(quoted); at != std::string::npos; at = text.find(quoted, at + cut.size())) text.replace(at, quoted.size(), cut);
    }
  }
  if (text.size() <= kMost) return text;
  size_t end = kMost;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;  // not inside a UTF-8 sequence
  return text.substr(0, end) + "... (" + std::to_string(text.size()) + " bytes of refusal in all)\n";
}

// The catalogue's environments with a property, for an option's choices.
template <typename P>
std::vector<std::string> gamesWhere(P property) {
  std::vector<std::string> names;
  for (const cas::env::EnvironmentInfo& e : cas::env::environments())
    if (property(e)) names.push_back(e.name);
  return names;
}


// The backends a command may ask for.
CLI::Validator deviceChoices() { return CLI::IsMember({"auto", "cpu", "cuda"}); }

// One subcommand: its options declared on the parser (held by the subcommand's state), and what
// runs when the command line names it, after parsing.
struct Subcommand {
  CLI::App* app;
  std::function<int()> run;
};

// Runs a command; what it throws and did not catch itself (out of memory, out of threads) ends it
// with a sentence and status 1, not with the abort of an uncaught exception.
int runGuarded(const Subcommand& command) {
  try {
    return command.run();
  } catch (const std::bad_alloc&) {
    std::cerr << "error: out of memory; ask for less (fewer threads, environments or games, a smaller table or batch)\n";
  } catch (const std::exception& e) {
    std::cerr << "error: " << cas::printable(e.what()) << "\n";
  }
  return 1;
}

// `devices`: the backends, whether each is usable and why not.
Subcommand addDevices(CLI::App& parent) {
  return {parent.add_subcommand("devices", "List the backends, whether each is usable and why not; probe the GPU"), [] { return cas::cli::runDevices(); }};
}

// `check`: projects or standalone .pdl files validated, their layers, parameters and FLOPs.
Subcommand addCheck(CLI::App& parent) {
  struct State {
    std::vector<std::string> checkPaths;
    cas::cli::CheckOptions checkOptions;
    std::string obsShape;
  };
  auto state = std::make_shared<State>();
  auto& checkPaths = state->checkPaths;
  auto& checkOptions = state->checkOptions;
  auto& obsShape = state->obsShape;
  auto* check = parent.add_subcommand("check",
      "Validate projects (folders with project.toml) or standalone .pdl files; print each policy's layers,\n"
      "parameters and FLOPs, and run one forward pass on the CPU backend");
  check->add_option("paths", checkPaths, "Project folders or .pdl files")->required()->check(nonEmptyPath())->check(CLI::ExistingPath);
  check->add_flag("--ir", checkOptions.printIr,
                  "Print the IR after the passes (fold, dce, fuse, plan-memory), the CUDA backend's schedule and its cost floor");
  check->add_flag("--update", checkOptions.update,
                  "With --ir, for a project: the training step's graph (loss, gradients, optimizer) instead of the forward pass")
      ->needs("--ir");
  check->add_option("--batch", checkOptions.batch, "Batch size to compile and run with")->check(integerIn(1, 65536))->capture_default_str();
  auto* obsOption = check->add_option("--obs-shape", obsShape, "Observation shape for a .pdl file, e.g. 4,84,84");
  check->add_option("--action-dim", checkOptions.actionCount, "Number of actions for a .pdl file")->check(integerIn(1, 1 << 20));
  check->add_option("--entry", checkOptions.entry, "Entry function of a .pdl file")->capture_default_str();
  check->add_option("--algorithm", checkOptions.algorithm,
                    "Check the entry's signature for an algorithm; muzero: the file is a learned model (represent, dynamics, predict: docs/pdl.md)")
      ->check(CLI::IsMember({"alphazero", "muzero"}));
  check->add_flag("--allow-outside-project", checkOptions.allowOutsideProject, "Let a project's policy lie outside its folder");
  return {check, [state, obsOption] {
    auto& checkPaths = state->checkPaths;
    auto& checkOptions = state->checkOptions;
    if (obsOption->count() > 0) {  // given, even as ''
      const auto shape = parseShape(state->obsShape);
      if (!shape) return 2;
      checkOptions.observationShape = *shape;
    }
    return cas::cli::runCheck(checkPaths, checkOptions);
  }};
}

// `params`: the tuning parameters.
Subcommand addParams(CLI::App& parent) {
  struct State {
    bool markdown = false;
  };
  auto state = std::make_shared<State>();
  auto& markdown = state->markdown;
  auto* params = parent.add_subcommand("params", "List the tuning parameters: type, range, default, live or restart");
  params->add_flag("--markdown", markdown, "Print a Markdown table (as in docs/project-format.md)");
  return {params, [state] {
    return cas::cli::runParams(state->markdown);
  }};
}

// `bench update`: one update and one forward pass, timed.
Subcommand addBenchUpdate(CLI::App& parent) {
  struct State {
    cas::cli::BenchOptions bench;
  };
  auto state = std::make_shared<State>();
  auto& bench = state->bench;
  auto* benchUpdate = parent.add_subcommand("update", "Time one update (forward, loss, backward, clip, Adam) and one forward pass");
  std::vector<std::string> nets;
  for (const cas::train::BenchmarkNet& n : cas::train::benchmarkNets()) nets.push_back(n.name);
  benchUpdate->add_option("--net", bench.net, "cartpole_mlp64, connect4_mlp256, atari_nature_cnn, reward_model_6l or connect4_transformer")
      ->required()
      ->check(CLI::IsMember(nets));
  benchUpdate->add_option("--batch", bench.batch, "Batch size")->check(integerIn(1, 65536))->capture_default_str();
  benchUpdate->add_option("--device", bench.device, "auto, cpu or cuda")->check(CLI::IsMember({"auto", "cpu", "cuda"}))->capture_default_str();
  benchUpdate->add_option("--precision", bench.precision, "fp32 or bf16")->check(CLI::IsMember({"fp32", "bf16"}))->capture_default_str();
  benchUpdate->add_option("--seconds", bench.seconds, "Timing budget per measurement")->check(numberIn(0.01, 600.0))->capture_default_str();
  benchUpdate->add_flag("--json", bench.json, "Print one JSON object");
  return {benchUpdate, [state] {
    return cas::cli::runBenchUpdate(state->bench);
  }};
}

// `bench search`: one search call, timed.
Subcommand addBenchSearch(CLI::App& parent) {
  struct State {
    cas::cli::SearchBenchOptions searchBench;
  };
  auto state = std::make_shared<State>();
  auto& searchBench = state->searchBench;
  auto* benchSearch = parent.add_subcommand("search",
      "Time one search call (root + simulations in every game, root statistics back) on the device search or the CPU's");
  const std::vector<std::string> boardGames = gamesWhere([](const cas::env::EnvironmentInfo& e) { return e.board.has_value(); });
  const std::vector<std::string> singleAgent = gamesWhere([](const cas::env::EnvironmentInfo& e) { return !e.twoPlayer; });
  std::vector<std::string> environments = boardGames;
  environments.insert(environments.end(), singleAgent.begin(), singleAgent.end());
  benchSearch->add_option("--model", searchBench.model, "rules: plan with a board game's rules; learned: with a learned model (MuZero) over a single-agent environment")
      ->check(CLI::IsMember({"rules", "learned"}))
      ->capture_default_str();
  benchSearch->add_option("--env", searchBench.env,
                          "With --model rules a board game: " + CLI::detail::join(boardGames, ", ") + " (default connect4); with --model learned a single-agent environment: " +
                              CLI::detail::join(singleAgent, ", ") + " (default minatar-breakout)")
      ->check(CLI::IsMember(environments));
  benchSearch->add_option("--net", searchBench.net,
                          "With --model rules connect4_mlp256 (default), or none (uniform priors, value 0); with --model learned muzero_mlp256 (default), "
                          "muzero_mlp256_tf32 (its products at TF32, JAX's default precision), or none (the hashed test model)")
      ->check(CLI::IsMember({"connect4_mlp256", "muzero_mlp256", "muzero_mlp256_tf32", "none"}));
  benchSearch->add_option("--games", searchBench.games, "Games searched at once")->check(integerIn(1, 65536))->capture_default_str();
  benchSearch->add_option("--sims", searchBench.simulations, "Simulations per game per call")->check(integerIn(1, 100000))->capture_default_str();
  benchSearch->add_option("--policy", searchBench.policy, "puct (Dirichlet noise) or gumbel")->check(CLI::IsMember({"puct", "gumbel"}))->capture_default_str();
  benchSearch->add_option("--leaves", searchBench.leaves, "Leaves per game per step (virtual loss)")->check(integerIn(1, 64))->capture_default_str();
  benchSearch->add_option("--node-budget", searchBench.nodeBudget, "Tree nodes per game")->check(integerIn(64, 1 << 24))->capture_default_str();
  benchSearch->add_option("--selection", searchBench.selection, "Device selection kernel: masked or branchy")->check(CLI::IsMember({"masked", "branchy"}))->capture_default_str();
  benchSearch->add_flag("--instrument", searchBench.instrument, "Time the instrumented kernels (SIMT counters, SM timeline)");
  benchSearch->add_flag("--kernels", searchBench.kernels, "Then profile one search kernel by kernel (SIMT efficiency, SM timeline)");
  benchSearch->add_flag("--breakdown", searchBench.breakdown,
                        "With --model learned on the device: then time one decision phase by phase (data exchange, the roots' model, the "
                        "recurrent steps, the search kernels)");
  benchSearch->add_option("--device", searchBench.device, "auto, cpu or cuda")->check(CLI::IsMember({"auto", "cpu", "cuda"}))->capture_default_str();
  benchSearch->add_option("--seconds", searchBench.seconds, "Timing budget")->check(numberIn(0.01, 600.0))->capture_default_str();
  benchSearch->add_flag("--json", searchBench.json, "Print one JSON object");
  return {benchSearch, [state] {
    return cas::cli::runBenchSearch(state->searchBench);
  }};
}

// `bench solver`: the perfect player per position.
Subcommand addBenchSolver(CLI::App& parent) {
  struct State {
    cas::cli::SolverBenchOptions solverBench;
  };
  auto state = std::make_shared<State>();
  auto& solverBench = state->solverBench;
  auto* benchSolver = parent.add_subcommand("solver",
      "Time the perfect player per position of random play at given depths (moves played), weak and strong,\n"
      "each position from an empty transposition table");
  const std::vector<std::string> solvedGames = gamesWhere([](const cas::env::EnvironmentInfo& e) { return e.perfectPlayer != nullptr; });
  benchSolver->add_option("--env", solverBench.env, "A game with a perfect player: " + CLI::detail::join(solvedGames, ", "))
      ->check(CLI::IsMember(solvedGames))->capture_default_str();
  benchSolver->add_option("--depths", solverBench.depths, "Moves played before the position is solved")->delimiter(',')->check(integerIn(0, 41))->capture_default_str();
  benchSolver->add_option("--positions", solverBench.positions, "Positions per depth")->check(integerIn(1, 100000))->capture_default_str();
  benchSolver->add_option("--mode", solverBench.mode, "weak (win/draw/loss), strong (exact score) or both")->check(CLI::IsMember({"weak", "strong", "both"}))->capture_default_str();
  benchSolver->add_option("--limit", solverBench.limitSeconds, "Seconds per position; past them it counts as unsolved")->check(numberIn(0.001, 86400))->capture_default_str();
  benchSolver->add_option("--table-mib", solverBench.tableMib, "Transposition table size in MiB")->check(integerIn(1, 65536))->capture_default_str();
  benchSolver->add_option("--seed", solverBench.seed, "Seed of the random play")->check(integerIn(0, INT64_MAX))->capture_default_str();
  benchSolver->add_flag("--json", solverBench.json, "Print one JSON object");
  return {benchSolver, [state] {
    return cas::cli::runBenchSolver(state->solverBench);
  }};
}

// `bench env`: environment steps alone.
Subcommand addBenchEnv(CLI::App& parent) {
  struct State {
    cas::cli::EnvBenchOptions envBench;
  };
  auto state = std::make_shared<State>();
  auto& envBench = state->envBench;
  auto* benchEnv = parent.add_subcommand("env",
      "Time environment steps alone: N environments side by side, random actions, resets where episodes end,\n"
      "observations written as the policy's batch; on the CPU twins (--device cpu) or the CUDA backend's\n"
      "device twins (--device cuda), which step the same copies with the same actions");
  std::vector<std::string> steppedEnvironments;
  for (const cas::env::EnvironmentInfo& e : cas::env::environments())
    if (e.singleAgent) steppedEnvironments.push_back(e.name);
  benchEnv->add_option("--env", envBench.env, CLI::detail::join(steppedEnvironments, ", "))->check(CLI::IsMember(steppedEnvironments))->capture_default_str();
  benchEnv->add_option("--series", envBench.series, "A trading environment's price series (a CSV file, docs/trading.md)");
  benchEnv->add_option("--train-fraction", envBench.trainFraction, "The part of the series the copies trade (trading.train_fraction)")
      ->check(numberIn(0.05, 0.95))->capture_default_str();
  benchEnv->add_option("--envs", envBench.envs, "Environments side by side")->check(integerIn(1, 1 << 20))->capture_default_str();
  benchEnv->add_option("--steps", envBench.steps, "Steps of every environment")->check(integerIn(1, 1000000))->capture_default_str();
  benchEnv->add_option("--device", envBench.device, "cpu or cuda")->check(CLI::IsMember({"cpu", "cuda"}))->capture_default_str();
  benchEnv->add_option("--threads", envBench.threads, "CPU threads with --device cpu (0: one per hardware thread)")->check(integerIn(0, 1024))->capture_default_str();
  benchEnv->add_option("--seed", envBench.seed, "Seed of the environments and the random actions")->check(integerIn(0, INT64_MAX))->capture_default_str();
  benchEnv->add_flag("--json", envBench.json, "Print one JSON object");
  return {benchEnv, [state] {
    return cas::cli::runBenchEnv(state->envBench);
  }};
}

// `bench ppo`: the whole PPO loop.
Subcommand addBenchPpo(CLI::App& parent) {
  struct State {
    cas::cli::PpoBenchOptions ppoBench;
  };
  auto state = std::make_shared<State>();
  auto& ppoBench = state->ppoBench;
  auto* benchPpo = parent.add_subcommand("ppo",
      "Time the whole PPO loop of a project: environment steps per second with the policy's rollouts and the updates\n"
      "included, after one iteration to warm up");
  benchPpo->add_option("project", ppoBench.project, "Project folder (algorithm ppo)")->required()->check(nonEmptyPath());
  benchPpo->add_option("--device", ppoBench.device, "auto, cpu or cuda")->check(CLI::IsMember({"auto", "cpu", "cuda"}))->capture_default_str();
  benchPpo->add_option("--set", ppoBench.sets, "Override a parameter, name=value (e.g. ppo.envs=4096); repeatable");
  benchPpo->add_option("--iterations", ppoBench.iterations, "Iterations timed")->check(integerIn(1, 100000))->capture_default_str();
  benchPpo->add_flag("--json", ppoBench.json, "Print one JSON object");
  return {benchPpo, [state] {
    return cas::cli::runBenchPpo(state->ppoBench);
  }};
}

// `bench decision`: one self-play decision of a searching project, split into its stages.
Subcommand addBenchDecision(CLI::App& parent) {
  struct State {
    cas::cli::DecisionBenchOptions decisionBench;
  };
  auto state = std::make_shared<State>();
  auto& decisionBench = state->decisionBench;
  auto* benchDecision = parent.add_subcommand("decision",
      "Time one self-play decision of an AlphaZero project (a move's search in every game, its statistics, the moves)\n"
      "split into network inference, search and data exchange, with the project's evaluator and search");
  benchDecision->add_option("project", decisionBench.project, "Project folder (algorithm alphazero)")->required()->check(nonEmptyPath());
  benchDecision->add_option("--device", decisionBench.device, "auto, cpu or cuda")->check(CLI::IsMember({"auto", "cpu", "cuda"}))->capture_default_str();
  benchDecision->add_option("--set", decisionBench.sets, "Override a parameter, name=value (e.g. search.device=cpu); repeatable");
  benchDecision->add_option("--decisions", decisionBench.decisions, "Decisions timed")->check(integerIn(1, 100000))->capture_default_str();
  benchDecision->add_flag("--json", decisionBench.json, "Print one JSON object");
  return {benchDecision, [state] {
    return cas::cli::runBenchDecision(state->decisionBench);
  }};
}

// `bench policy`: a deployed policy's decision latency on each backend and as exported C.
Subcommand addBenchPolicy(CLI::App& parent) {
  struct State {
    cas::cli::PolicyBenchOptions policyBench;
  };
  auto state = std::make_shared<State>();
  auto& o = state->policyBench;
  auto* bench = parent.add_subcommand("policy",
      "Time a trained policy's decisions, observation in to action out, one at a time: on the CPU backend, the CUDA\n"
      "backend (a replayed graph, pinned buffers) and as exported C (compiled with cc); median, 99th, 99.9th percentiles");
  bench->add_option("target", o.target, "Run folder (its newest valid checkpoint) or project folder (its initial weights)")->required()->check(nonEmptyPath());
  bench->add_option("--device", o.device, "all, cpu, cuda or c (the exported C file)")->check(CLI::IsMember({"all", "cpu", "cuda", "c"}))->capture_default_str();
  bench->add_option("--batch", o.batch, "Observations a decision")->check(integerIn(1, 4096))->capture_default_str();
  bench->add_option("--decisions", o.decisions, "Decisions timed")->check(integerIn(1, 1000000))->capture_default_str();
  bench->add_option("--warmup", o.warmup, "Decisions run first, untimed")->check(integerIn(0, 100000))->capture_default_str();
  bench->add_flag("--json", o.json, "Print one JSON object");
  return {bench, [state] {
    return cas::cli::runBenchPolicy(state->policyBench);
  }};
}

// `bench allreduce`: the all-reduce of data-parallel training.
Subcommand addBenchAllReduce(CLI::App& parent) {
  struct State {
    cas::cli::AllReduceBenchOptions allReduceBench;
  };
  auto state = std::make_shared<State>();
  auto& allReduceBench = state->allReduceBench;
  auto* benchAllReduce = parent.add_subcommand("allreduce",
      "Time the all-reduce of data-parallel training (a sum of floats) over sizes from --min-bytes to --max-bytes,\n"
      "with nccl-tests' bandwidths (algbw = bytes/time, busbw = algbw * 2(n-1)/n): --ranks N CPU threads, --gpus N\n"
      "GPUs of this machine (NCCL, a thread each), or under mpirun -np N the processes (MPI on the CPU, NCCL on GPUs)");
  auto* allReduceRanks = benchAllReduce->add_option("--ranks", allReduceBench.ranks, "Ranks on CPU threads (default 2)")->check(integerIn(1, 64));
  benchAllReduce->add_option("--gpus", allReduceBench.gpus, "Ranks on this many GPUs (the CUDA backend's NCCL communicator)")->check(integerIn(1, 64))->excludes(allReduceRanks);
  benchAllReduce->add_option("--device", allReduceBench.device, "Under mpirun: auto, cpu or cuda")->check(CLI::IsMember({"auto", "cpu", "cuda"}))->capture_default_str();
  benchAllReduce->add_option("--min-bytes", allReduceBench.minBytes, "Smallest size")->check(integerIn(4, std::int64_t(1) << 31))->capture_default_str();
  benchAllReduce->add_option("--max-bytes", allReduceBench.maxBytes, "Largest size")->check(integerIn(4, std::int64_t(1) << 31))->capture_default_str();
  benchAllReduce->add_option("--factor", allReduceBench.factor, "Each size this many times the one before")->check(integerIn(2, 1024))->capture_default_str();
  benchAllReduce->add_option("--warmup", allReduceBench.warmup, "Untimed all-reduces per size")->check(integerIn(0, 10000))->capture_default_str();
  benchAllReduce->add_option("--iterations", allReduceBench.iterations, "Timed all-reduces per size")->check(integerIn(1, 100000))->capture_default_str();
  benchAllReduce->add_flag("--json", allReduceBench.json, "Print one JSON object");
  return {benchAllReduce, [state] {
    return cas::cli::runBenchAllReduce(state->allReduceBench);
  }};
}

// `kernels`: the generated CUDA kernels, timed.
Subcommand addKernels(CLI::App& parent) {
  struct State {
    cas::cli::KernelsOptions kernels;
  };
  auto state = std::make_shared<State>();
  auto& kernels = state->kernels;
  auto* kernelsCmd = parent.add_subcommand("kernels", "Show the CUDA kernels generated for a project or benchmark network, timed, with their source");
  kernelsCmd->add_option("target", kernels.target, "Project folder, or cartpole_mlp64, connect4_mlp256, atari_nature_cnn, reward_model_6l, connect4_transformer")->required();
  kernelsCmd->add_option("--graph", kernels.graph, "forward, update, or search (the device search's kernels over the network, --batch games)")
      ->check(CLI::IsMember({"forward", "update", "search"}))->capture_default_str();
  kernelsCmd->add_option("--batch", kernels.batch, "Batch size")->check(integerIn(1, 65536))->capture_default_str();
  kernelsCmd->add_option("--precision", kernels.precision, "fp32 or bf16 (benchmark networks)")->check(CLI::IsMember({"fp32", "bf16"}))->capture_default_str();
  kernelsCmd->add_option("--runs", kernels.runs, "Timed runs")->check(integerIn(1, 100000))->capture_default_str();
  kernelsCmd->add_flag("!--no-source", kernels.source, "Leave out the generated CUDA source");
  return {kernelsCmd, [state] {
    return cas::cli::runKernels(state->kernels);
  }};
}

// `train`: a project trained into a run folder, or a run resumed or restarted.
Subcommand addTrain(CLI::App& parent) {
  struct State {
    cas::cli::TrainOptions train;
  };
  auto state = std::make_shared<State>();
  auto& train = state->train;
  auto* trainCmd = parent.add_subcommand("train", "Train a project's policy (AlphaZero self-play) into a run folder");
  trainCmd->add_option("project", train.project, "Project folder")->check(nonEmptyPath())->check(CLI::ExistingDirectory);
  trainCmd->add_option("--device", train.device, "auto, cpu or cuda")->check(deviceChoices())->capture_default_str();
  trainCmd->add_option("--minutes", train.minutes, "Stop after this many minutes (default: no limit)")->check(numberIn(0.01, 1e6));
  trainCmd->add_option("--iterations", train.iterations, "Stop after this many iterations (default: no limit)")
      ->check(integerIn(1, std::int64_t(1) << 40));
  auto* ranksOption = trainCmd->add_option("--ranks", train.ranks,
                       "Data-parallel AlphaZero on this many CPU ranks (threads), each with its own self-play and replay shard, their "
                       "gradients averaged before every step; works with --resume and --restart whatever the run had. Needs the CPU "
                       "backend (on GPUs: --gpus). CAS_DIST_FAIL=RANK:STEP makes that rank fail before that optimizer step (for "
                       "testing the failure path)")
      ->check(integerIn(1, 64))->capture_default_str();
  trainCmd->add_option("--gpus", train.gpus,
                       "Data-parallel AlphaZero on this many GPUs of this machine: one process per GPU (CUDA_VISIBLE_DEVICES' first N), "
                       "their gradients summed with NCCL before every step; rank 0 writes the run folder as a plain run does. Works "
                       "with --resume and --restart whatever the run had, and with CAS_DIST_FAIL. Needs the CUDA backend. Across "
                       "machines: mpirun -np N cuda-agent train ... (without --gpus or --ranks) makes each process a rank")
      ->check(integerIn(1, 64))->excludes(ranksOption);
  trainCmd->add_option("--set", train.sets, "Override a parameter: --set search.c_puct=2.0 (repeatable; `cuda-agent params` lists them)");
  trainCmd->add_option("--out", train.out, "Run folder to create (default: runs/NAME-DATE-TIME)")->check(nonEmptyPath("runs/NAME-DATE-TIME"));
  trainCmd->add_option("--resume", train.resume, "Continue the run in this folder from its newest valid checkpoint")->check(nonEmptyPath())->check(CLI::ExistingDirectory);
  trainCmd->add_option("--restart", train.restart, "Train the run in this folder again from iteration 1, discarding its metrics, changes and checkpoints")
      ->check(nonEmptyPath())->check(CLI::ExistingDirectory);
  trainCmd->add_flag("--use-project", train.useProject, "With --resume or --restart: use the project's current project.toml and policy instead of the run's copies");
  trainCmd->add_flag("--allow-outside-project", train.allowOutsideProject, "Let the project's policy lie outside its folder");
  trainCmd->footer(
      "Ctrl-C or SIGTERM stops the run after the current iteration, with its checkpoint. Exit status: 0 when the run trained all it "
      "was asked, 130 when it was stopped so (or before its first iteration), 1 or 2 when it failed or was refused.");
  return {trainCmd, [state] {
    auto& train = state->train;
    if (int(!train.project.empty()) + int(!train.resume.empty()) + int(!train.restart.empty()) != 1) {
      std::cerr << "train: give a project folder, or --resume RUN_DIR, or --restart RUN_DIR\n";
      return 2;
    }
    // Refused here, before any launcher or rank opens the run: --resume and --restart train the
    // run in its own folder, so an --out beside them would be ignored (and --restart would
    // discard the run's progress while the user meant a copy elsewhere).
    if (!train.out.empty() && train.project.empty()) {
      std::cerr << "error: --out cannot be combined with --resume or --restart: the run is trained on in its own folder, "
                << cas::printable(train.resume.empty() ? train.restart : train.resume)
                << "; to train the project into a new folder, give the project folder and --out instead\n";
      return 2;
    }
    if (train.useProject && !train.project.empty()) {
      std::cerr << "train: --use-project goes with --resume or --restart (a new run always uses the project's files)\n";
      return 2;
    }
    return cas::cli::runTrain(train);
  }};
}

// `eval`: a trained run against a baseline, judged by the perfect player, or over episodes.
Subcommand addEval(CLI::App& parent) {
  struct State {
    cas::cli::EvalOptions eval;
  };
  auto state = std::make_shared<State>();
  auto& eval = state->eval;
  auto* evalCmd = parent.add_subcommand("eval",
      "Play a trained run against a baseline, or with --mistakes judge its moves by the perfect player; a single-agent run: --episodes N");
  evalCmd->add_option("run", eval.run, "Run folder")->required()->check(nonEmptyPath())->check(CLI::ExistingDirectory);
  auto* opponentOption = evalCmd->add_option("--opponent", eval.opponent, "random, mcts:ROLLOUTS, perfect (tictactoe, connect4) or run:DIR (another trained run of the same game)")->capture_default_str();
  auto* gamesOption = evalCmd->add_option("--games", eval.games, "Games (half with the agent moving first)")->check(integerIn(1, 100000))->capture_default_str();
  auto* mistakesOption = evalCmd->add_option("--mistakes", eval.mistakes,
                      "Instead of games: the share of the agent's moves that make the perfect player's verdict worse, over N\n"
                      "positions from its own games and from random play (tictactoe, connect4)")
      ->check(integerIn(1, 1000000))->excludes(opponentOption)->excludes(gamesOption);
  auto* episodesOption = evalCmd->add_option("--episodes", eval.episodes,
                      "Single-agent runs (ppo): play N episodes with the policy and report the mean, median and standard deviation of the return")
      ->check(integerIn(1, 1000000))->excludes(opponentOption)->excludes(gamesOption)->excludes(mistakesOption);
  evalCmd->add_flag("--stochastic", eval.stochastic, "With --episodes: sample each action from the policy instead of taking the most probable")
      ->needs(episodesOption);
  evalCmd->add_option("--solver-seconds", eval.solverSeconds,
                      "With --mistakes: the solver's time per position; the positions it cannot finish are skipped and counted")
      ->check(numberIn(0.001, 3600))->capture_default_str()->needs(mistakesOption);
  evalCmd->add_option("--solver-threads", eval.solverThreads,
                      "With --mistakes: solvers judging side by side, each with its own table (0: one per core)")
      ->check(integerIn(0, 1024))->capture_default_str()->needs(mistakesOption);
  evalCmd->add_option("--seed", eval.seed, "Seed of the opponent's choices, of the positions --mistakes draws, or of the environments and action draws of --episodes")->check(integerIn(0, INT64_MAX))->capture_default_str();
  evalCmd->add_option("--device", eval.device, "auto, cpu or cuda")->check(deviceChoices())->capture_default_str();
  evalCmd->add_flag("--json", eval.json, "Print one JSON object");
  evalCmd->add_flag("--use-project", eval.useProject, "Use the project's current project.toml and policy instead of the run's copies");
  return {evalCmd, [state] {
    return cas::cli::runEval(state->eval);
  }};
}

// `analyze`: positions searched with a trained run.
Subcommand addAnalyze(CLI::App& parent) {
  struct State {
    cas::cli::AnalyzeOptions analyze;
  };
  auto state = std::make_shared<State>();
  auto& analyze = state->analyze;
  auto* analyzeCmd = parent.add_subcommand("analyze", "Search positions with a trained run and show the root's statistics");
  analyzeCmd->add_option("run", analyze.run, "Run folder")->required()->check(nonEmptyPath())->check(CLI::ExistingDirectory);
  analyzeCmd->add_option("--position", analyze.positions, "Moves from the start (connect4: columns 1-7; tictactoe: cells 1-9); repeatable");
  analyzeCmd->add_option("--positions", analyze.positionsFile, "File with one position per line")->check(nonEmptyPath())->check(CLI::ExistingFile);
  analyzeCmd->add_option("--sims", analyze.simulations, "Simulations (default: the run's search.simulations)")->check(integerIn(1, 1000000));
  analyzeCmd->add_option("--device", analyze.device, "auto, cpu or cuda")->check(deviceChoices())->capture_default_str();
  analyzeCmd->add_flag("--json", analyze.json, "One JSON object per position per line");
  analyzeCmd->add_flag("--use-project", analyze.useProject, "Use the project's current project.toml and policy instead of the run's copies");
  return {analyzeCmd, [state] {
    auto& analyze = state->analyze;
    if (analyze.positions.empty() && analyze.positionsFile.empty()) {
      std::cerr << "analyze: give --position MOVES or --positions FILE\n";
      return 2;
    }
    return cas::cli::runAnalyze(analyze);
    return cas::cli::runAnalyze(analyze);
  }};
}

// `play`: a game against a trained run in the terminal.
Subcommand addPlay(CLI::App& parent) {
  struct State {
    cas::cli::PlayOptions play;
  };
  auto state = std::make_shared<State>();
  auto& play = state->play;
  auto* playCmd = parent.add_subcommand("play", "Play against a trained run in the terminal");
  playCmd->add_option("run", play.run, "Run folder")->required()->check(nonEmptyPath())->check(CLI::ExistingDirectory);
  playCmd->add_flag("--second", play.humanSecond, "Let the agent move first");
  playCmd->add_option("--sims", play.simulations, "The agent's simulations per move")->check(integerIn(1, 1000000));
  playCmd->add_flag("--use-project", play.useProject, "Use the project's current project.toml and policy instead of the run's copies");
  playCmd->add_option("--device", play.device, "auto, cpu or cuda")->check(deviceChoices())->capture_default_str();
  return {playCmd, [state] {
    return cas::cli::runPlay(state->play);
  }};
}

// `export`: a run's or a project's policy as ONNX, standalone C or standalone CUDA.
Subcommand addExport(CLI::App& parent) {
  struct State {
    cas::cli::ExportOptions exportOptions;
    std::string exportBatch = "dynamic";
    std::string exportObsShape;
  };
  auto state = std::make_shared<State>();
  auto& exportOptions = state->exportOptions;
  auto& exportBatch = state->exportBatch;
  auto& exportObsShape = state->exportObsShape;
  auto* exportCmd = parent.add_subcommand("export",
      "Export a run's policy (its newest valid checkpoint) or a project's initial policy as an ONNX model, as\n"
      "standalone C source or as standalone CUDA source (docs/export.md)");
  exportCmd->add_option("dir", exportOptions.dir, "Run folder, project folder (its initial weights) or a .pdl file (seeded initial weights)")
      ->required()->check(nonEmptyPath())->check(CLI::ExistingPath);
  auto* exportObsOption = exportCmd->add_option("--obs-shape", exportObsShape, "A .pdl file's observation shape, e.g. 32 or 2,6,7");
  auto* exportActionOption = exportCmd->add_option("--action-dim", exportOptions.standalone.actionCount, "A .pdl file's number of actions")
      ->check(integerIn(1, 1 << 20));
  auto* exportSeedOption = exportCmd->add_option("--seed", exportOptions.standalone.seed, "A .pdl file's initial-weight seed")
      ->check(integerIn(0, std::numeric_limits<std::int64_t>::max()))->capture_default_str();
  exportCmd->add_option("--format", exportOptions.format, "onnx, c (a .c and a .h: C99, libm only) or cuda (a .cu and a .h: the CUDA runtime only)")
      ->check(CLI::IsMember({"onnx", "c", "cuda"}))->capture_default_str();
  exportCmd->add_option("--checkpoint", exportOptions.checkpoint, "The checkpoint of this iteration instead of the newest valid one")
      ->check(integerIn(1, std::int64_t(1) << 40));
  auto* batchOption = exportCmd->add_option("--batch", exportBatch, "ONNX: the batch size, or dynamic; CUDA: the most observations per call (default 1)")
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            if (text == "dynamic" || cas::parseInteger(text, 1, cas::exports::kMaxOnnxBatch)) return {};
            return "expected dynamic or a whole number in [1, 1048576], got " + cas::quoteValue(text);
          },
          "dynamic or INT in [1, 1048576]"))
      ->capture_default_str();
  auto* opsetOption = exportCmd->add_option("--opset", exportOptions.opset, "ONNX: the opset version")
      ->check(integerIn(cas::exports::kMinOnnxOpset, cas::exports::kMaxOnnxOpset))->capture_default_str();
  exportCmd->add_option("--out", exportOptions.out, "The file to write (default: DIR/exports/policy.onnx, policy.c and policy.h, or policy_cuda.cu and policy_cuda.h)")
      ->check(nonEmptyPath("a file in DIR/exports/"));
  return {exportCmd, [state, batchOption, opsetOption, exportObsOption, exportActionOption, exportSeedOption] {
    auto& exportOptions = state->exportOptions;
    const std::string& exportBatch = state->exportBatch;
    if (exportOptions.format == "c" && batchOption->count() > 0) {
      std::cerr << "export: --batch goes with --format onnx or cuda (the C export runs any number of samples)\n";
      return 2;
    }
    if (exportOptions.format != "onnx" && opsetOption->count() > 0) {
      std::cerr << "export: --opset goes with --format onnx\n";
      return 2;
    }
    if (exportOptions.format == "cuda" && exportBatch == "dynamic" && batchOption->count() > 0) {
      std::cerr << "export: the CUDA export is compiled for a batch size: give --batch N (the most observations per call)\n";
      return 2;
    }
    const bool pdlFile = cas::exports::policySourceOf(exportOptions.dir) == cas::exports::PolicySource::PdlFile;
    if (!pdlFile && (exportObsOption->count() > 0 || exportActionOption->count() > 0 || exportSeedOption->count() > 0)) {
      std::cerr << "export: --obs-shape, --action-dim and --seed go with a .pdl file (a run or a project knows its environment)\n";
      return 2;
    }
    if (exportObsOption->count() > 0) {
      const auto shape = parseShape(state->exportObsShape);
      if (!shape) return 2;
      exportOptions.standalone.observationShape = *shape;
    }
    if (exportBatch != "dynamic") exportOptions.batch = *cas::parseInteger(exportBatch, 1, cas::exports::kMaxOnnxBatch);
    return cas::cli::runExport(exportOptions);
  }};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::string_view(argv[1]) == "train") cas::cli::answerIgnoredInterrupts();
  // Whole lines on stderr: each message reaches the terminal in one write, so the lines of
  // several ranks (mpirun, the --gpus launcher) or threads do not break into each other.
  // (std::cerr's unitbuf would flush stdio's stderr after every <<, breaking lines again.)
  std::setvbuf(stderr, nullptr, _IOLBF, 1 << 12);
  std::cerr.unsetf(std::ios_base::unitbuf);
  CLI::App app{"cuda-agent: design, train, search-debug and export reinforcement-learning policies.\n"
               "Runs on the CUDA backend when an NVIDIA GPU is usable, else on the CPU reference backend."};
  app.set_version_flag("--version", std::string("cuda-agent ") + cas::kVersion);
  app.require_subcommand(1);
  app.footer("Run `cuda-agent SUBCOMMAND --help` for a subcommand's options.");
  std::vector<Subcommand> commands;
  for (auto add : {addDevices, addCheck, addParams}) commands.push_back(add(app));
  CLI::App* bench = app.add_subcommand("bench", "Measure performance");
  bench->require_subcommand(1);
  for (auto add : {addBenchUpdate, addBenchSearch, addBenchSolver, addBenchEnv, addBenchPpo, addBenchDecision, addBenchPolicy, addBenchAllReduce}) commands.push_back(add(*bench));
  for (auto add : {addKernels, addTrain, addEval, addAnalyze, addPlay, addExport}) commands.push_back(add(app));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // CLI11 quotes the arguments it refuses: escaped and cut like everything else printed.
    std::ostringstream refusal;
    const int status = app.exit(e, std::cout, refusal);
    std::cerr << cas::printable(boundedRefusal(refusal.str(), argc, argv), cas::Keep::TabsAndNewlines);
    return status == 0 ? 0 : 2;
  }
  for (const Subcommand& command : commands)
    if (*command.app) return runGuarded(command);
  return 2;
}
