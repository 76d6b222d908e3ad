#pragma once
// Processes started by mpirun (`mpirun -np N cuda-agent train ...`, on one host or several): each
// process is one rank of MPI_COMM_WORLD. MPI is reached through a run-time plugin
// (libcas_mpi.so, built from plugins/mpi/ when the MPI development files are found), so that
// cuda-agent itself needs no MPI library and starts on machines without one; a process that
// mpirun did not start never loads it.
//
// What a run uses MPI for:
// - its place: rank, size, and its rank among the processes on its host (which GPU it takes);
// - bootstrap: rank 0's bytes to every rank (the NCCL group id the CUDA backend makes), and
//   every rank's text to every rank (to check that all ranks chose the same backend);
// - a Communicator over MPI (createCommunicator), for a backend without one of its own (the
//   CPU's): the gradients, weights and checksums of data-parallel training then travel through
//   MPI itself.
// - abort: a rank that cannot go on ends every rank (MPI_Abort), so that none waits forever in a
//   bootstrap call for a rank that has already given up.
//
// Thread-safety: the bootstrap calls (broadcast, allGatherText, createCommunicator, abort) are
// made by the main thread, every rank in the same order. A Communicator it makes keeps
// communicator.hpp's rules (the plugin asks MPI for MPI_THREAD_MULTIPLE, so that fail() may come
// from any thread).
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/collective/communicator.hpp"

namespace cas::dist {

// The plugin's entry points (extern "C"), checked by loadMpiWorld:
//   int cas_mpi_plugin_abi();                                   -> kMpiPluginAbi
//   MpiWorld* cas_create_mpi_world(char* message, unsigned long size);  null with the reason in message
// Bumped whenever MpiWorld or Communicator changes shape.
inline constexpr int kMpiPluginAbi = 1;

class MpiWorld {
 public:
  virtual ~MpiWorld() = default;  // MPI_Finalize: every rank destroys its world after a clean run
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // This rank's index among the ranks on its host, and how many share the host.
  virtual int localRank() const = 0;
  virtual int localSize() const = 0;
  virtual std::string hostName() const = 0;
  // The MPI library's own version line (MPI_Get_library_version's first line).
  virtual std::string library() const = 0;

  // `bytes` at `root` replaces `bytes` on every other rank.
  virtual void broadcast(std::string& bytes, int root) = 0;
  // Every rank's `text`, in rank order.
  virtual std::vector<std::string> allGatherText(const std::string& text) = 0;
  // A communicator over the world's ranks, its own copy of MPI_COMM_WORLD; every rank calls it.
  virtual std::unique_ptr<Communicator> createCommunicator(double timeoutSeconds) = 0;
  // Ends every rank of the world with `status` (MPI_Abort); does not return.
  [[noreturn]] virtual void abort(int status) = 0;
};

// Whether mpirun (Open MPI's, or a PMI launcher such as MPICH's Hydra or Slurm's srun) started
// this process, read from the variables it sets: the world's size, or nullopt.
std::optional<int> mpiWorldSizeFromEnvironment();

// This process's place among the ranks on its host (local rank, local size), from the launcher's
// variables (Open MPI's, MPICH Hydra's), known before MPI starts; nullopt where it does not say.
struct HostPlace {
  int localRank = 0, localSize = 1;
};
std::optional<HostPlace> mpiHostPlaceFromEnvironment();

// Loads the plugin (the file next to the executable, or CAS_MPI_PLUGIN) and initialises MPI. Null
// with `reason` when it cannot: this build has no MPI plugin, the MPI library is missing, or MPI
// cannot give threads what training needs. Call it once per process.
std::unique_ptr<MpiWorld> loadMpiWorld(std::string* reason);

}  // namespace cas::dist
