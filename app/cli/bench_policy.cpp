// `cuda-agent bench policy RUN|PROJECT`: a deployed policy's decision latency, observation in to
// action out, one decision (a batch of --batch observations) at a time, each timed alone:
//
//   cpu    the policy's forward graph on the CPU backend
//   cuda   the same graph on the CUDA backend (its captured graph replayed; the observation in
//          and the outputs out through the backend's pinned staging buffers)
//   c      the policy exported as C (`cuda-agent export --format c`), compiled with the system's
//          C compiler (cc, or $CC) at -O2, timed by a small harness in the same way
//
// After --warmup decisions, --decisions are timed; the report gives the median, the 99th and
// 99.9th percentiles and the largest, in microseconds. The observations are 64 fixed draws in
// [-1, 1], cycled (the time of these networks does not depend on the values); the action is the
// argmax of the first output (the logits) of each observation.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>

#include "app/cli/commands.hpp"
#include "core/exec/backend.hpp"
#include "core/export/c_export.hpp"
#include "core/export/policy_loader.hpp"
#include "core/support/json_string.hpp"
#include "core/support/printable.hpp"

extern char** environ;

namespace cas::cli {
namespace {

constexpr int kObservations = 64;

struct Latency {
  std::string where;      // "cpu", "cuda", "c"
  std::string note;       // why it was not timed; empty when it was
  double median = 0, p99 = 0, p999 = 0, largest = 0;  // microseconds
};

// The percentiles of `us` (sorted here).
Latency summarise(std::string where, std::vector<double> us) {
  std::sort(us.begin(), us.end());
  auto at = [&](double q) { return us[std::min(us.size() - 1, size_t(q * double(us.size() - 1) + 0.5))]; };
  return {std::move(where), "", at(0.5), at(0.99), at(0.999), us.back()};
}

std::vector<float> observations(std::int64_t perDecision) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> draw(-1.f, 1.f);
  std::vector<float> obs(size_t(perDecision * kObservations));
  for (float& x : obs) x = draw(rng);
  return obs;
}

// The policy's forward graph on `backend`, timed decision by decision.
Latency timeOnBackend(exec::Backend& backend, const ir::Graph& graph, const exports::ExportablePolicy& policy, const PolicyBenchOptions& o) {
  std::unique_ptr<exec::Executable> exe = backend.compile(graph);
  for (const auto& [name, values] : policy.weights) exe->setInput(name, values.data(), values.size());
  const std::int64_t perDecision = ir::numel(graph.node(graph.findInput("obs")).shape);
  const std::string logitsName = graph.outputs.front().name;
  const std::int64_t logitsCount = ir::numel(graph.node(graph.outputs.front().node).shape), actions = logitsCount / o.batch;
  const std::vector<float> obs = observations(perDecision);
  std::vector<float> logits(static_cast<size_t>(logitsCount));
  std::vector<double> us;
  us.reserve(size_t(o.decisions));
  volatile std::int64_t sink = 0;
  for (int i = 0; i < o.warmup + o.decisions; ++i) {
    const auto start = std::chrono::steady_clock::now();
    exe->setInput("obs", obs.data() + (i % kObservations) * perDecision, size_t(perDecision));
    exe->run();
    exe->readOutput(logitsName, logits.data(), logits.size());
    for (std::int64_t b = 0; b < o.batch; ++b)
      sink = sink + (std::max_element(logits.begin() + b * actions, logits.begin() + (b + 1) * actions) - logits.begin());
    const double elapsed = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
    if (i >= o.warmup) us.push_back(elapsed);
  }
  return summarise(backend.id(), std::move(us));
}

// The C harness: each call of policy_forward (batch 1) timed alone with CLOCK_MONOTONIC.
constexpr const char* kHarness = R"(#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "policy.h"
static double now_us(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return (double)t.tv_sec * 1e6 + (double)t.tv_nsec * 1e-3; }
static int by_value(const void* a, const void* b) { const double x = *(const double*)a, y = *(const double*)b; return (x > y) - (x < y); }
int main(int argc, char** argv) {
  long warmup = atol(argv[1]), n = atol(argv[2]), i, k, best;
  static float obs[64][POLICY_OBS_SIZE], logits[POLICY_LOGITS_SIZE], value[POLICY_VALUE_SIZE];
  double* us = malloc(sizeof(double) * (size_t)n);
  unsigned state = 7u;
  volatile long sink = 0;
  if (argc != 3 || n < 1 || !us) return 2;
  for (i = 0; i < 64; ++i) for (k = 0; k < POLICY_OBS_SIZE; ++k) { state = state * 1664525u + 1013904223u; obs[i][k] = (float)(state >> 8) / 8388608.0f - 1.0f; }
  for (i = 0; i < warmup + n; ++i) {
    const double start = now_us();
    policy_forward(obs[i % 64], logits, value);
    for (best = 0, k = 1; k < POLICY_LOGITS_SIZE; ++k) if (logits[k] > logits[best]) best = k;
    sink += best;
    if (i >= warmup) us[i - warmup] = now_us() - start;
  }
  qsort(us, (size_t)n, sizeof(double), by_value);
  printf("%.4f %.4f %.4f %.4f\n", us[(long)(0.5 * (n - 1) + 0.5)], us[(long)(0.99 * (n - 1) + 0.5)], us[(long)(0.999 * (n - 1) + 0.5)], us[n - 1]);
  return 0;
}
)";

// SIGINT or SIGTERM while cc or the harness runs (they run in a process group of their own,
// which a Ctrl-C at the terminal does not reach): the child's group is killed at once, and once
// the temporary folder is removed the signal ends this process as it would have. A signal the
// process ignored when it started (SIGINT of a background job) stays ignored.
volatile std::sig_atomic_t gStopSignal = 0;
volatile std::sig_atomic_t gChildGroup = 0;

extern "C" void onStopSignal(int signal) {
  gStopSignal = signal;
  if (gChildGroup > 0) ::kill(-pid_t(gChildGroup), SIGKILL);
}

struct StopSignals {
  struct sigaction previous[2] {};
  StopSignals() {
    struct sigaction caught {};
    caught.sa_handler = onStopSignal;
    sigemptyset(&caught.sa_mask);
    const int signals[2] = {SIGINT, SIGTERM};
    for (int i = 0; i < 2; ++i) {
      ::sigaction(signals[i], nullptr, &previous[i]);
      if (previous[i].sa_handler != SIG_IGN) ::sigaction(signals[i], &caught, nullptr);
    }
  }
  ~StopSignals() {
    ::sigaction(SIGINT, &previous[0], nullptr);
    ::sigaction(SIGTERM, &previous[1], nullptr);
  }
};

// Runs argv (no shell, in a process group of its own) with its standard output into `out` and
// its errors into `errors`; the exit status, or -1 when it could not start or was killed.
int runProgram(const std::vector<std::string>& argv, const std::filesystem::path& out, const std::filesystem::path& errors) {
  if (gStopSignal) return -1;
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t files;
  posix_spawn_file_actions_init(&files);
  posix_spawn_file_actions_addopen(&files, STDOUT_FILENO, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_addopen(&files, STDERR_FILENO, errors.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attributes, 0);
  pid_t pid = 0;
  const int started = posix_spawnp(&pid, args[0], &files, &attributes, args.data(), environ);
  posix_spawn_file_actions_destroy(&files);
  posix_spawnattr_destroy(&attributes);
  if (started != 0) return -1;
  gChildGroup = pid;
  if (gStopSignal) ::kill(-pid, SIGKILL);  // a signal before the child's group was known
  int status = 0;
  pid_t waited = 0;
  while ((waited = ::waitpid(pid, &status, 0)) < 0 && errno == EINTR) {
  }
  gChildGroup = 0;
  if (waited < 0) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// The folder temporary files go in: $TMPDIR when it is a folder, else /tmp.
std::string temporaryFolder() {
  const char* tmp = std::getenv("TMPDIR");
  std::error_code ec;
  return tmp && *tmp == '/' && std::filesystem::is_directory(tmp, ec) ? std::string(tmp) : std::string("/tmp");
}

std::string firstLine(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::string line;
  std::getline(in, line);
  return printable(line.substr(0, 300));
}

// The exported C file compiled with cc -O2 in a temporary folder (removed after), timed there.
Latency timeExportedC(const exports::ExportablePolicy& policy, const PolicyBenchOptions& o) {
  Latency r{"c", "", 0, 0, 0, 0};
  if (o.batch != 1) return r.note = "the C export answers one observation a call; use --batch 1", r;
  StopSignals stop;
  std::string pattern = temporaryFolder() + "/cas-bench-policy.XXXXXX";
  if (!::mkdtemp(pattern.data())) return r.note = "cannot make a temporary folder", r;
  const std::filesystem::path dir = pattern;
  const exports::CSource c = exports::exportC(policy, "policy.h");
  std::ofstream(dir / "policy.h") << c.header;
  std::ofstream(dir / "policy.c") << c.source;
  std::ofstream(dir / "harness.c") << kHarness;
  const char* cc = std::getenv("CC");
  const std::string compiler = cc && *cc ? cc : "cc";
  const int built = runProgram({compiler, "-O2", "-o", (dir / "harness").string(), (dir / "harness.c").string(), (dir / "policy.c").string(), "-lm"},
                               dir / "cc.out", dir / "cc.err");
  if (built != 0) {
    r.note = built < 0 ? "no C compiler: " + quoteValue(compiler) + " could not be started (set CC)" : "cc failed: " + firstLine(dir / "cc.err");
  } else if (runProgram({(dir / "harness").string(), std::to_string(o.warmup), std::to_string(o.decisions)}, dir / "times", dir / "run.err") != 0) {
    r.note = "the compiled policy failed: " + firstLine(dir / "run.err");
  } else {
    std::ifstream in(dir / "times");
    if (!(in >> r.median >> r.p99 >> r.p999 >> r.largest)) r.note = "the harness printed no times";
  }
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  if (const int signal = gStopSignal) {  // stopped: ends as the signal would have ended it, the folder gone
    std::signal(signal, SIG_DFL);
    std::raise(signal);
  }
  return r;
}

void printReport(const std::vector<Latency>& rows, const exports::LoadedPolicy& loaded, const PolicyBenchOptions& o) {
  if (o.json) {
    std::cout << "{\"policy\": " << jsonString(loaded.origin) << ", \"batch\": " << o.batch << ", \"decisions\": " << o.decisions << ", \"rows\": [";
    for (size_t i = 0; i < rows.size(); ++i) {
      const Latency& r = rows[i];
      std::cout << (i ? ", " : "") << "{\"where\": \"" << r.where << "\"";
      if (!r.note.empty()) std::cout << ", \"not_timed\": " << jsonString(r.note) << "}";
      else std::cout << ", \"median_us\": " << r.median << ", \"p99_us\": " << r.p99 << ", \"p999_us\": " << r.p999 << ", \"max_us\": " << r.largest << "}";
    }
    std::cout << "]}\n";
    return;
  }
  std::cout << "policy: " << printable(loaded.origin) << "\n"
            << o.decisions << " decisions of batch " << o.batch << " after " << o.warmup << " to warm up; microseconds, observation in to action out\n";
  char line[160];
  std::snprintf(line, sizeof line, "%-6s %10s %10s %10s %10s\n", "where", "median", "p99", "p99.9", "largest");
  std::cout << line;
  for (const Latency& r : rows) {
    if (!r.note.empty()) {
      std::cout << r.where << ": not timed: " << r.note << "\n";
      continue;
    }
    std::snprintf(line, sizeof line, "%-6s %10.2f %10.2f %10.2f %10.2f\n", r.where.c_str(), r.median, r.p99, r.p999, r.largest);
    std::cout << line;
  }
}

}  // namespace

int runBenchPolicy(const PolicyBenchOptions& o) {
  exports::LoadedPolicy loaded = exports::loadPolicy(o.target, 0);
  for (const std::string& s : loaded.skipped) std::cerr << "warning: skipping checkpoint " << printable(s) << "\n";
  if (!loaded.policy) {
    std::cerr << "error: " << printable(loaded.error.message) << "\n";
    return 1;
  }
  std::vector<Latency> rows;
  try {
    const ir::Graph graph = exports::forwardGraph(*loaded.policy, o.batch);
    for (const char* id : {"cpu", "cuda"}) {
      if (o.device != "all" && o.device != id) continue;
      std::string why;
      std::shared_ptr<exec::Backend> backend = exec::BackendRegistry::instance().select(id, &why);
      if (backend) rows.push_back(timeOnBackend(*backend, graph, *loaded.policy, o));
      else rows.push_back({id, printable(why), 0, 0, 0, 0});
    }
    if (o.device == "all" || o.device == "c") rows.push_back(timeExportedC(*loaded.policy, o));
  } catch (const std::exception& e) {
    std::cerr << "error: " << printable(e.what()) << "\n";
    return 1;
  }
  printReport(rows, loaded, o);
  return 0;
}

}  // namespace cas::cli
