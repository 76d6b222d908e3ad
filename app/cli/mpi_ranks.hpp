#pragma once
// `mpirun -np N cuda-agent train PROJECT ...`: data-parallel AlphaZero with one process per rank,
// started by mpirun on one host or several (core/dist/mpi_world.hpp). Each process loads the MPI
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
#include "core/dist/mpi_world.hpp"

namespace cas::cli {

// The whole of a process's `train` under mpirun. Returns the exit status (after a failure the
// process does not return: MPI_Abort ends every rank with it).
int trainUnderMpi(const TrainOptions& options);

// Ranks that share a host take one GPU each, by their place on it: the local rank's entry of
// CUDA_VISIBLE_DEVICES, or the device of that number. Call it before the CUDA backend starts (it
// reads the variable once); `device` is --device. Returns what is wrong, if anything.
std::optional<std::string> takeLocalGpu(const dist::MpiWorld& world, const std::string& device);

}  // namespace cas::cli
