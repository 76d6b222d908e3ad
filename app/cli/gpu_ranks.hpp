#pragma once
// `cuda-agent train --gpus N`: data-parallel AlphaZero with one process per GPU on this machine.
// The process the user starts is the launcher: it checks what it can (the CUDA backend, N GPUs
// visible, the project), makes the NCCL group's id through the backend, and spawns N copies of
// itself with the same arguments, each told its place by the environment:
//   CAS_RANK, CAS_WORLD_SIZE   its rank and the group's size
//   CAS_NCCL_ID                the group's id, as hex
//   CUDA_VISIBLE_DEVICES       its one GPU (rank r gets the r-th GPU the launcher sees)
// Rank 0 trains as a plain run does (run folder, metrics, checkpoints; core/train/process_group.hpp
// keeps the others in step), the other ranks write nothing. The launcher relays their stderr
// (the other ranks' lines prefixed "rank R: "), reaps them, and exits non-zero naming the rank
// that failed first and its error; when one fails it tells the others (SIGUSR1), which stop at
// once, and kills what is left after a grace period, so no rank outlives it. The ranks run in
// process groups of their own, so the terminal's Ctrl-C reaches the launcher alone; SIGINT or
// SIGTERM to the launcher is passed to every rank: rank 0 stops after its iteration (its
// checkpoint written) and tells the others to stop.
// Thread-safety: each function is called once, from the main thread; GroupWatcher runs a thread
// of its own.
#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "app/cli/commands.hpp"
#include "core/collective/communicator.hpp"
#include "core/collective/mpi_world.hpp"
#include "core/exec/backend.hpp"
#include "core/project/project.hpp"

namespace cas::cli {

// This process's place in a group: one the launcher spawned, or one mpirun started.
struct GroupMember {
  int rank = 0, size = 1;
  std::string id;                 // spawned: the communicator's group id (bytes)
  dist::MpiWorld* mpi = nullptr;  // started by mpirun (app/cli/mpi_ranks.hpp): the group's bootstrap
};

// The membership CAS_RANK, CAS_WORLD_SIZE and CAS_NCCL_ID give a `--gpus N` process; nullopt
// for the launcher (or any run without --gpus). Malformed values: nullopt with `error`.
std::optional<GroupMember> groupMemberFromEnvironment(const TrainOptions& options, std::string* error);

// The project a run with these options trains, loaded as rank 0 loads it (a new run: the project
// folder with --set applied; --resume, --restart: the run's copies and recorded values), reading
// only. Prints what is wrong (unless `report` is false: one rank of many says it) and returns
// nullopt when it cannot be loaded.
std::optional<project::Project> loadRunProject(const TrainOptions& options, bool report = true);

// The launcher: spawns the ranks and waits for them. Returns the exit status.
int launchGpuRanks(const TrainOptions& options);

// This member's communicator on `backend` (null with the reason printed on stderr). Under mpirun
// every rank first checks that all chose the same backend; a backend with devices (CUDA) then
// forms its own group from rank 0's id, broadcast through MPI; the CPU backend's ranks talk
// through MPI itself.
std::unique_ptr<dist::Communicator> joinGroup(exec::Backend& backend, const GroupMember& member, double timeoutSeconds);

// The run itself: a plain run (no member), or rank 0 of a group, which leads the others. Returns
// the exit status. Defined in run_commands.cpp, beside runTrain, which calls it.
int trainAsMember(const TrainOptions& options, const std::optional<GroupMember>& member);

// A rank other than 0: builds its trainer and follows rank 0 until it says stop. Returns the exit status.
int followAsRank(const TrainOptions& options, const GroupMember& member);

// A rank's first step: from here SIGUSR1 (the launcher saw another rank end) and the launcher's
// death (delivered as SIGUSR1 too) are noted, so that they end the rank once it has joined.
void watchForAbandonment();

// Makes the communicator fail once either has happened, so that this rank stops at its next
// collective, not after dist.timeout_seconds.
class GroupWatcher {
 public:
  explicit GroupWatcher(dist::Communicator& communicator);
  ~GroupWatcher();
  GroupWatcher(const GroupWatcher&) = delete;
  GroupWatcher& operator=(const GroupWatcher&) = delete;

 private:
  std::atomic<bool> done_{false};
  std::thread thread_;
};

}  // namespace cas::cli
