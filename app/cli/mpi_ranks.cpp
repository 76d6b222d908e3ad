#include "app/cli/mpi_ranks.hpp"

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <thread>
#include <vector>

#include "app/cli/gpu_ranks.hpp"
#include "core/support/printable.hpp"

namespace cas::cli {

namespace {

// Sets CUDA_VISIBLE_DEVICES to the GPU of the process `place` names; what is wrong, if anything.
std::optional<std::string> takeLocalGpu(const dist::HostPlace& place, const std::string& device) {
  if (place.localSize == 1) return std::nullopt;
  std::string mine = std::to_string(place.localRank);
  if (const char* v = std::getenv("CUDA_VISIBLE_DEVICES"); v && *v) {
    std::vector<std::string> visible;
    std::stringstream list(v);
    for (std::string entry; std::getline(list, entry, ',');)
      if (!entry.empty()) visible.push_back(entry);
    if (place.localRank < int(visible.size())) {
      mine = visible[size_t(place.localRank)];
    } else if (device == "cuda") {
      return "this rank is process " + std::to_string(place.localRank + 1) + " of " + std::to_string(place.localSize) +
             " on its host, whose CUDA_VISIBLE_DEVICES lists " + std::to_string(visible.size()) + (visible.size() == 1 ? " GPU" : " GPUs") +
             ": start at most one rank per GPU on each host";
    } else {
      mine.clear();  // no GPU of its own: --device auto takes the CPU, and the backend check says so
    }
  }
  ::setenv("CUDA_VISIBLE_DEVICES", mine.c_str(), 1);
  return std::nullopt;
}

}  // namespace

std::unique_ptr<dist::MpiWorld> startMpiRank(const std::string& device, const std::string& rankOption, int* status) {
  *status = 0;
  if (!rankOption.empty()) {
    std::cerr << "error: under mpirun each process is one rank, and mpirun -np N chooses how many: leave out " << rankOption << "\n";
    *status = 2;
    return nullptr;
  }
  const std::optional<dist::HostPlace> place = dist::mpiHostPlaceFromEnvironment();
  std::optional<std::string> problem;
  if (device != "cpu" && place) problem = takeLocalGpu(*place, device);
  if (problem) {
    std::cerr << "error: " << *problem << "\n";
    *status = 2;
    return nullptr;  // mpirun ends the other ranks when a process exits with an error
  }
  std::string reason;
  std::unique_ptr<dist::MpiWorld> world = dist::loadMpiWorld(&reason);
  if (!world) {
    std::cerr << "error: this process was started by mpirun, but " << reason  // printable, the plugin path quoted and cut
              << "; without mpirun, cuda-agent trains in one process (--ranks N: data-parallel on CPU threads, --gpus N: on this machine's GPUs)\n";
    *status = 1;
    return nullptr;
  }
  if (device != "cpu" && !place) problem = takeLocalGpu({world->localRank(), world->localSize()}, device);
  if (problem) {
    std::cerr << "error: " << *problem << "\n";
    *status = 2;
  }
  return world;
}

int trainUnderMpi(const TrainOptions& o) {
  int status = 0;
  const std::unique_ptr<dist::MpiWorld> world = startMpiRank(o.device, o.gpus > 0 ? "--gpus" : (o.ranks > 1 ? "--ranks" : ""), &status);
  if (!world) return status;
  const GroupMember member{world->rank(), world->size(), {}, world.get()};
  if (status == 0) {
    // Every rank loads the same project; rank 0 alone says what is wrong with it.
    const std::optional<project::Project> project = loadRunProject(o, member.rank == 0);
    if (!project) {
      status = 2;
    } else if (project->algorithm != "alphazero") {
      if (member.rank == 0)
        std::cerr << "error: data-parallel training (mpirun) is built for AlphaZero; a " << project->algorithm << " run trains in one process: start it without mpirun\n";
      status = 2;
    }
  }
  if (status == 0) status = member.rank == 0 ? trainAsMember(o, member) : followAsRank(o, member);
  if (status != 0) {
    // A moment for the other ranks to read this one's failure notice and say so; then every rank ends.
    std::this_thread::sleep_for(std::chrono::seconds(1));
    world->abort(status);
  }
  return 0;  // the world's destructor finalises MPI, with every rank
}

}  // namespace cas::cli
