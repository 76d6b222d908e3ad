// The MPI plugin's entry points and MpiWorld on MPI_COMM_WORLD (core/collective/mpi_world.hpp says
// what a run uses them for). The bootstrap calls block without a timeout: a rank that cannot
// reach one leaves through abort(), which ends the others.
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "core/collective/mpi_world.hpp"
#include "plugins/mpi/mpi_communicator.hpp"

namespace cas::dist {
namespace {

class OpenMpiWorld final : public MpiWorld {
 public:
  OpenMpiWorld() {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    MPI_Comm host;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &host);
    MPI_Comm_rank(host, &localRank_);
    MPI_Comm_size(host, &localSize_);
    MPI_Comm_free(&host);
    char name[MPI_MAX_PROCESSOR_NAME] = {0};
    int length = 0;
    MPI_Get_processor_name(name, &length);
    hostName_.assign(name, std::size_t(length));
    char version[MPI_MAX_LIBRARY_VERSION_STRING] = {0};
    MPI_Get_library_version(version, &length);
    library_.assign(version, std::strcspn(version, "\n,"));
  }
  ~OpenMpiWorld() override { MPI_Finalize(); }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int localRank() const override { return localRank_; }
  int localSize() const override { return localSize_; }
  std::string hostName() const override { return hostName_; }
  std::string library() const override { return library_; }

  void broadcast(std::string& bytes, int root) override {
    std::uint64_t length = bytes.size();
    MPI_Bcast(&length, 1, MPI_UINT64_T, root, MPI_COMM_WORLD);
    bytes.resize(length);
    for (std::uint64_t at = 0; at < length; at += kPiece)
      MPI_Bcast(bytes.data() + at, int(std::min<std::uint64_t>(kPiece, length - at)), MPI_BYTE, root, MPI_COMM_WORLD);
  }

  std::vector<std::string> allGatherText(const std::string& text) override {
    const int length = int(std::min<std::size_t>(text.size(), 4096));
    std::vector<int> lengths(static_cast<std::size_t>(size_)), offsets(static_cast<std::size_t>(size_));
    MPI_Allgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, MPI_COMM_WORLD);
    int total = 0;
    for (int r = 0; r < size_; ++r) {
      offsets[std::size_t(r)] = total;
      total += lengths[std::size_t(r)];
    }
    std::string all(std::size_t(total), '\0');
    MPI_Allgatherv(text.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR, MPI_COMM_WORLD);
    std::vector<std::string> texts;
    for (int r = 0; r < size_; ++r) texts.push_back(all.substr(std::size_t(offsets[std::size_t(r)]), std::size_t(lengths[std::size_t(r)])));
    return texts;
  }

  std::unique_ptr<Communicator> createCommunicator(double timeoutSeconds) override {
    return std::make_unique<MpiCommunicator>(MPI_COMM_WORLD, timeoutSeconds);
  }

  [[noreturn]] void abort(int status) override {
    std::fflush(stdout);
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, status);
    std::_Exit(status);  // MPI_Abort does not return; should it, the process ends all the same
  }

 private:
  static constexpr std::uint64_t kPiece = std::uint64_t(1) << 30;
  int rank_ = 0, size_ = 1, localRank_ = 0, localSize_ = 1;
  std::string hostName_, library_;
};

void say(char* message, unsigned long size, const std::string& text) {
  if (size) std::snprintf(message, size, "%s", text.c_str());
}

}  // namespace
}  // namespace cas::dist

extern "C" __attribute__((visibility("default"))) int cas_mpi_plugin_abi() { return cas::dist::kMpiPluginAbi; }

extern "C" __attribute__((visibility("default"))) cas::dist::MpiWorld* cas_create_mpi_world(char* message, unsigned long size) {
  int initialised = 0;
  MPI_Initialized(&initialised);
  if (initialised) {
    cas::dist::say(message, size, "MPI was initialised twice in one process");
    return nullptr;
  }
  int provided = 0;
  if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS) {
    cas::dist::say(message, size, "MPI_Init_thread failed");
    return nullptr;
  }
  if (provided < MPI_THREAD_MULTIPLE) {
    // Training calls MPI from the engine thread, and fail() from any thread.
    cas::dist::say(message, size, "this MPI library does not support MPI_THREAD_MULTIPLE (threads calling MPI at once), which training needs; "
                                  "use an MPI built with thread support (Open MPI 4 and later are)");
    MPI_Finalize();
    return nullptr;
  }
  return new cas::dist::OpenMpiWorld();
}
