#include "app/cli/gpu_ranks.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <vector>

#include "core/engine/run_folder.hpp"
#include "core/support/numbers.hpp"
#include "core/support/printable.hpp"
#include "core/train/process_group.hpp"

extern char** environ;

namespace cas::cli {
namespace {

using Clock = std::chrono::steady_clock;

// How long the ranks left get, once one has failed and they were told, before they are killed.
constexpr auto kGraceAfterFailure = std::chrono::seconds(20);

std::atomic<bool> gInterrupted{false};  // SIGINT or SIGTERM
std::atomic<bool> gAbandoned{false};    // SIGUSR1: the launcher saw another rank end
extern "C" void onInterrupt(int) { gInterrupted = true; }
extern "C" void onAbandoned(int) { gAbandoned = true; }

// This process's own arguments, as it was started (the ranks are started with the same).
std::vector<std::string> ownArguments() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  const std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> args;
  for (size_t at = 0; at < all.size();) {
    const size_t end = all.find('\0', at);
    args.push_back(all.substr(at, end == std::string::npos ? std::string::npos : end - at));
    if (end == std::string::npos) break;
    at = end + 1;
  }
  return args;
}

// The GPUs this process sees, as CUDA_VISIBLE_DEVICES entries for the ranks: its own list when
// it has one, else 0 .. count-1.
std::vector<std::string> visibleDevices(int count) {
  std::vector<std::string> devices;
  if (const char* v = std::getenv("CUDA_VISIBLE_DEVICES"); v && *v) {
    std::stringstream list(v);
    for (std::string entry; std::getline(list, entry, ',');)
      if (!entry.empty()) devices.push_back(entry);
  } else {
    for (int d = 0; d < count; ++d) devices.push_back(std::to_string(d));
  }
  return devices;
}

struct Rank {
  int rank = 0;
  pid_t pid = -1;
  int stderrFd = -1;     // the read end of its stderr; -1 once drained
  std::string partial;   // a line not yet ended
  std::string lastError; // its last "error: " line, without the prefix
  bool running = false;
  int status = 0;
};

// Relays the complete lines in `rank.partial` to stderr (the other ranks' prefixed), keeping the
// last error line; with `flush`, the unfinished rest too.
void relay(Rank& rank, bool flush) {
  size_t start = 0;
  for (;;) {
    size_t end = rank.partial.find('\n', start);
    if (end == std::string::npos) {
      if (!flush || start >= rank.partial.size()) break;
      end = rank.partial.size();
    }
    const std::string line = rank.partial.substr(start, end - start);
    if (line.starts_with("error: ")) rank.lastError = line.substr(7);
    std::cerr << (rank.rank == 0 ? "" : "rank " + std::to_string(rank.rank) + ": ") << line << "\n";
    start = end + 1;
  }
  rank.partial.erase(0, std::min(start, rank.partial.size()));
}

// Reads what `rank`'s stderr holds now; at its end (or with `toEnd`, reading until then) closes it.
void drain(Rank& rank, bool toEnd) {
  char buffer[4096];
  while (rank.stderrFd >= 0) {
    if (!toEnd) {
      pollfd p{rank.stderrFd, POLLIN, 0};
      if (::poll(&p, 1, 0) <= 0) return;
    }
    const ssize_t n = ::read(rank.stderrFd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ::close(rank.stderrFd);
      rank.stderrFd = -1;
      relay(rank, true);
      return;
    }
    rank.partial.append(buffer, size_t(n));
    relay(rank, false);
  }
}

std::string exitCause(const Rank& rank) {
  if (!rank.lastError.empty()) return rank.lastError;
  if (WIFSIGNALED(rank.status)) return "it was killed by signal " + std::to_string(WTERMSIG(rank.status)) + " (" + strsignal(WTERMSIG(rank.status)) + ")";
  return "it exited with status " + std::to_string(WEXITSTATUS(rank.status)) + " without an error message";
}

bool succeeded(int status) { return WIFEXITED(status) && WEXITSTATUS(status) == 0; }

// Whether a rank's error may be the echo of another's failure: a collective that timed out or
// failed inside NCCL (a peer that ended closes its connections), or the launcher's stop; the
// communicator's messages for these say "another rank" or "failed in NCCL". The launcher reports
// a rank whose failure was its own when there is one, whichever process ended first.
bool echoesAnotherRank(const std::string& cause) {
  return cause.find("another rank") != std::string::npos || cause.find("failed in NCCL") != std::string::npos;
}

// Starts rank `r` of `size` with `arguments`, its stderr into a pipe. Returns false with `error`.
bool spawnRank(Rank& rank, int size, const std::vector<std::string>& arguments, const std::string& idHex, const std::string& device, std::string* error) {
  std::vector<std::string> environment;
  for (char** e = environ; *e; ++e) {
    const std::string_view entry(*e);
    if (entry.starts_with("CAS_RANK=") || entry.starts_with("CAS_WORLD_SIZE=") || entry.starts_with("CAS_NCCL_ID=") ||
        entry.starts_with("CUDA_VISIBLE_DEVICES="))
      continue;
    environment.emplace_back(entry);
  }
  environment.push_back("CAS_RANK=" + std::to_string(rank.rank));
  environment.push_back("CAS_WORLD_SIZE=" + std::to_string(size));
  environment.push_back("CAS_NCCL_ID=" + idHex);
  environment.push_back("CUDA_VISIBLE_DEVICES=" + device);
  std::vector<char*> argv, envp;
  for (const std::string& a : arguments) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (const std::string& e : environment) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);

  int pipeFds[2];
  if (::pipe2(pipeFds, O_CLOEXEC) != 0) {
    *error = std::string("no pipe for its messages: ") + std::strerror(errno);
    return false;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipeFds[1], STDERR_FILENO);
  // A process group of its own: the terminal's Ctrl-C reaches the launcher alone, which passes it on once.
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attributes, 0);
  const int r = ::posix_spawn(&rank.pid, "/proc/self/exe", &actions, &attributes, argv.data(), envp.data());
  posix_spawnattr_destroy(&attributes);
  posix_spawn_file_actions_destroy(&actions);
  ::close(pipeFds[1]);
  if (r != 0) {
    ::close(pipeFds[0]);
    *error = std::string("it could not be started: ") + std::strerror(r);
    return false;
  }
  rank.stderrFd = pipeFds[0];
  rank.running = true;
  return true;
}

}  // namespace

std::optional<project::Project> loadRunProject(const TrainOptions& o, bool report) {
  if (!o.resume.empty() || !o.restart.empty()) {
    project::Project project;
    Diagnostic error;
    if (!engine::RunFolder::open(o.resume.empty() ? o.restart : o.resume, engine::RunAccess::Read, o.useProject, &project, &error, nullptr)) {
      if (report) std::cerr << formatDiagnostic(error) << "\n";
      return std::nullopt;
    }
    return project;
  }
  project::LoadOptions options;
  options.allowOutsidePaths = o.allowOutsideProject;
  project::LoadResult loaded = project::loadProject(o.project, options);
  if (!loaded.project) {
    if (report)
      for (const Diagnostic& d : loaded.diagnostics.items()) std::cerr << formatDiagnostic(d, loaded.source) << "\n";
    return std::nullopt;
  }
  for (const std::string& assignment : o.sets)
    if (auto problem = loaded.project->parameters.assign(assignment)) {
      if (report) std::cerr << "error: --set " << printable(assignment) << ": " << printable(*problem) << "\n";
      return std::nullopt;
    }
  return loaded.project;
}

std::optional<GroupMember> groupMemberFromEnvironment(const TrainOptions& o, std::string* error) {
  const char* rank = std::getenv("CAS_RANK");
  if (o.gpus == 0 || !rank) return std::nullopt;
  const char* size = std::getenv("CAS_WORLD_SIZE");
  const char* id = std::getenv("CAS_NCCL_ID");
  const auto r = parseInteger(rank, 0, 63);
  const auto n = size ? parseInteger(size, 1, 64) : std::nullopt;
  const auto bytes = id ? train::fromHex(id) : std::nullopt;
  if (!r || !n || *n != o.gpus || *r >= *n || !bytes || bytes->empty()) {
    *error = "CAS_RANK, CAS_WORLD_SIZE and CAS_NCCL_ID are set by `cuda-agent train --gpus N` for the processes it starts, and these are not "
             "its (a rank below N, N, the group id in hex); unset them to start a run";
    return std::nullopt;
  }
  return GroupMember{int(*r), int(*n), *bytes};
}

std::unique_ptr<dist::Communicator> joinGroup(exec::Backend& backend, const GroupMember& member, double timeoutSeconds) {
  std::string reason;
  exec::DeviceServices* devices = backend.deviceServices();
  std::unique_ptr<dist::Communicator> communicator;
  if (member.mpi) {
    const std::vector<std::string> backends = member.mpi->allGatherText(backend.id());
    for (int r = 1; r < member.size; ++r)
      if (backends[size_t(r)] != backends[0]) {
        std::cerr << "error: rank 0 trains on the " << printable(backends[0]) << " backend and rank " << r << " on the " << printable(backends[size_t(r)])
                  << " backend: every rank must use the same one (--device cuda or --device cpu; with --device auto, a rank whose host has "
                     "no usable GPU for it takes the CPU)\n";
        return nullptr;
      }
    if (!devices) return member.mpi->createCommunicator(timeoutSeconds);  // the CPU's ranks: through MPI
    std::string id = member.rank == 0 ? devices->makeCommunicatorId(&reason) : std::string();
    member.mpi->broadcast(id, 0);
    if (id.empty()) {
      std::cerr << "error: rank " << member.rank << " could not join the group of " << member.size << " ranks: "
                << (member.rank == 0 ? printable(reason) : std::string("rank 0 could not make the group's id")) << "\n";
      return nullptr;
    }
    communicator = devices->createCommunicator(id, member.rank, member.size, timeoutSeconds, &reason);
  } else if (devices) {
    communicator = devices->createCommunicator(member.id, member.rank, member.size, timeoutSeconds, &reason);
  } else {
    reason = "the " + backend.id() + " backend has no communicator between processes; its data-parallel ranks are CPU threads (--ranks N)";
  }
  if (!communicator) std::cerr << "error: rank " << member.rank << " could not join the group of " << member.size << " ranks: " << printable(reason) << "\n";
  return communicator;
}

void watchForAbandonment() {
  // The launcher's signal that another rank ended, and the same when the launcher itself dies:
  // the rank fails its communicator and ends at its next collective (a SIGTERM would only
  // shorten its iteration). Installed before the rank joins, which can take a while.
  std::signal(SIGUSR1, onAbandoned);
  ::prctl(PR_SET_PDEATHSIG, SIGUSR1);
}

GroupWatcher::GroupWatcher(dist::Communicator& communicator) {
  thread_ = std::thread([this, &communicator] {
    while (!done_) {
      if (gAbandoned) {
        communicator.fail("the launcher saw another rank end, so this one stops too");
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  });
}

GroupWatcher::~GroupWatcher() {
  done_ = true;
  thread_.join();
}

int followAsRank(const TrainOptions& o, const GroupMember& member) {
  // SIGINT shortens this rank's self-play; rank 0 decides when the run ends.
  std::signal(SIGINT, onInterrupt);
  std::signal(SIGTERM, onInterrupt);
  if (!member.mpi) watchForAbandonment();  // mpirun ends its ranks itself
  const std::optional<project::Project> project = loadRunProject(o);
  if (!project) return 2;
  std::string error;
  auto backend = exec::BackendRegistry::instance().select(o.device, &error);
  if (!backend) {
    std::cerr << "error: " << printable(error) << "\n";
    return 1;
  }
  std::optional<train::FaultInjection> fault;
  if (const char* text = std::getenv("CAS_DIST_FAIL"); text && *text) fault = train::FaultInjection::parse(text, &error);  // checked by rank 0 or the launcher
  auto communicator = joinGroup(*backend, member, params::readDistParams(project->parameters).timeoutSeconds);
  if (!communicator) return 1;
  std::optional<GroupWatcher> watcher;
  if (!member.mpi) watcher.emplace(*communicator);
  try {
    train::AlphaZeroTrainer trainer(*project, backend, train::DataParallelRank{communicator.get(), fault});
    train::followLeadingRank(trainer, *communicator, [] { return gInterrupted.load(); });
  } catch (const std::exception& e) {
    std::cerr << "error: " << printable(e.what()) << "\n";
    return 1;
  }
  return 0;
}

int launchGpuRanks(const TrainOptions& o) {
  if (o.device == "cpu") {
    std::cerr << "error: --gpus runs one process per GPU on the CUDA backend, and --device cpu asks for the CPU: use --ranks " << o.gpus
              << " for data-parallel ranks on CPU threads, or --device cuda\n";
    return 2;
  }
  std::string error;
  auto backend = exec::BackendRegistry::instance().select("cuda", &error);
  if (!backend) {
    std::cerr << "error: --gpus needs the CUDA backend: " << printable(error) << "; --ranks " << o.gpus
              << " trains data-parallel ranks on CPU threads instead\n";
    return 2;
  }
  exec::DeviceServices* services = backend->deviceServices();
  const int count = services ? services->deviceCount() : 0;
  const std::vector<std::string> devices = visibleDevices(count);
  const int visible = std::min(count, int(devices.size()));
  if (visible < o.gpus) {
    std::cerr << "error: --gpus " << o.gpus << " asks for " << o.gpus << " GPUs, but this process sees " << visible
              << " (CUDA_VISIBLE_DEVICES chooses which): use --gpus " << visible << " or fewer\n";
    return 2;
  }
  if (const char* text = std::getenv("CAS_DIST_FAIL"); text && *text) {
    const auto fault = train::FaultInjection::parse(text, &error);
    if (!fault) {
      std::cerr << "error: CAS_DIST_FAIL: " << printable(error) << "; unset it to train without an injected failure\n";
      return 2;
    }
    if (fault->rank >= o.gpus) {
      std::cerr << "error: CAS_DIST_FAIL names rank " << fault->rank << ", but the run has ranks 0 to " << o.gpus - 1 << "\n";
      return 2;
    }
  }
  if ((!o.resume.empty() || !o.restart.empty()) && !o.sets.empty()) {
    std::cerr << "error: a resumed or restarted run keeps its configuration; --set cannot be combined with --resume or --restart\n";
    return 2;
  }
  const std::optional<project::Project> project = loadRunProject(o);
  if (!project) return 2;
  if (project->algorithm != "alphazero") {
    std::cerr << "error: data-parallel training (--gpus) is built for AlphaZero; a " << project->algorithm << " run trains on one GPU: leave out --gpus\n";
    return 2;
  }
  const std::string id = services->makeCommunicatorId(&error);
  if (id.empty()) {
    std::cerr << "error: " << printable(error) << "\n";
    return 1;
  }

  std::signal(SIGINT, onInterrupt);
  std::signal(SIGTERM, onInterrupt);
  const std::vector<std::string> arguments = ownArguments();
  std::vector<Rank> ranks(static_cast<size_t>(o.gpus));
  std::optional<size_t> failed;  // the rank that failed first
  std::string failure;
  Clock::time_point failedAt;
  auto stopOthers = [&](int signal) {
    for (Rank& r : ranks)
      if (r.running) ::kill(r.pid, signal);
  };
  for (int r = 0; r < o.gpus; ++r) {
    ranks[size_t(r)].rank = r;
    if (!spawnRank(ranks[size_t(r)], o.gpus, arguments, train::toHex(id), devices[size_t(r)], &error)) {
      failed = size_t(r);
      failure = error;
      failedAt = Clock::now();
      stopOthers(SIGUSR1);
      break;
    }
  }
  bool killed = false;
  for (;;) {
    std::vector<pollfd> fds;
    for (const Rank& r : ranks)
      if (r.stderrFd >= 0) fds.push_back({r.stderrFd, POLLIN, 0});
    bool anyRunning = false;
    for (const Rank& r : ranks) anyRunning = anyRunning || r.running;
    if (fds.empty() && !anyRunning) break;
    if (!fds.empty()) ::poll(fds.data(), fds.size(), 100);
    else std::this_thread::sleep_for(std::chrono::milliseconds(100));
    for (Rank& r : ranks) drain(r, false);
    if (gInterrupted.exchange(false)) stopOthers(SIGINT);  // rank 0 stops after its iteration and tells the others
    for (Rank& r : ranks) {
      if (!r.running || ::waitpid(r.pid, &r.status, WNOHANG) != r.pid) continue;
      r.running = false;
      drain(r, true);  // its last words, the error among them
      if (succeeded(r.status)) continue;
      const std::string cause = exitCause(r);
      if (failed && !(echoesAnotherRank(failure) && !echoesAnotherRank(cause))) continue;
      if (!failed) {
        failedAt = Clock::now();
        stopOthers(SIGUSR1);  // they stop at once, not after dist.timeout_seconds
      }
      failed = size_t(r.rank);
      failure = cause;
    }
    if (failed && !killed && Clock::now() - failedAt > kGraceAfterFailure) {
      stopOthers(SIGKILL);
      killed = true;
    }
  }
  if (!failed) return 0;
  std::cerr << "error: data-parallel training stopped: rank " << *failed << " failed: " << printable(failure)
            << " (rank 0's newest checkpoint is kept; --resume continues from it)\n";
  const Rank& first = ranks[*failed];
  return first.pid > 0 && WIFEXITED(first.status) && WEXITSTATUS(first.status) != 0 ? WEXITSTATUS(first.status) : 1;
}

}  // namespace cas::cli
