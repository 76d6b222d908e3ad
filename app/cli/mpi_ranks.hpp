#pragma once
// `mpirun -np N cuda-agent train PROJECT ...`: data-parallel AlphaZero with one process per rank,
// started by mpirun on one host or several (core/collective/mpi_world.hpp). Each process loads the MPI
// plugin, learns its rank from MPI, and trains as a `--gpus` rank does (process_group.hpp):
// rank 0 is the run (run folder, metrics, checkpoints), the others follow it and write nothing.
// On the CUDA backend each rank takes the GPU of its place on its host (CUDA_VISIBLE_DEVICES'
// entry, or device number, of its local rank) and the ranks' gradients meet through NCCL, whose
// group id rank 0 makes and MPI broadcasts; on the CPU backend they meet through MPI itself.
// A rank that fails says why and ends every rank (MPI_Abort); rank 0's newest checkpoint stays
// valid, and --resume continues it with any number of ranks, under mpirun or not.
// Thread-safety: called once, from the main thread.
#include <optional>
#include <string>

#include "app/cli/commands.hpp"
#include "core/collective/mpi_world.hpp"

namespace cas::cli {

// The whole of a process's `train` under mpirun. Returns the exit status (after a failure the
// process does not return: MPI_Abort ends every rank with it).
int trainUnderMpi(const TrainOptions& options);

// A process mpirun started: takes its GPU (unless `device` is "cpu": ranks that share a host take
// one each, by their place on it: the local rank's entry of CUDA_VISIBLE_DEVICES, or the device of
// that number; set before MPI starts where the launcher says the place, since a CUDA-aware MPI
// may start CUDA inside MPI_Init, which reads the variable once), then loads MPI. Null with the
// error printed and `status` set when it cannot; after a non-zero status with a world, the caller
// ends every rank through world->abort(status).
// `rankOption` names a rank-count option the user gave (--gpus, --ranks), which mpirun replaces:
// refused with status 2 before anything starts; empty when none was given.
std::unique_ptr<dist::MpiWorld> startMpiRank(const std::string& device, const std::string& rankOption, int* status);

}  // namespace cas::cli
