// `cuda-agent bench allreduce`: the time of one all-reduce (a sum of floats) through the
// communicator that data-parallel training uses, over sizes from --min-bytes to --max-bytes, and
// its bandwidth as nccl-tests defines it: algbw = bytes / time, busbw = algbw * 2 (n - 1) / n, the
// traffic of each rank's link for n ranks, comparable across rank counts. The group is
// --ranks N CPU threads (dist::ThreadedGroup), --gpus N threads with a GPU each (the CUDA
// backend's NCCL communicator), or the processes mpirun started (MPI on the CPU backend, NCCL on
// the CUDA backend). A size's time is the median over --iterations of the slowest rank's time,
// each iteration started together after a barrier; the sums are checked after timing.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <iomanip>
#include <iostream>
#include <memory>
#include <new>
#include <sstream>
#include <thread>
#include <vector>

#include "app/cli/commands.hpp"
#include "app/cli/gpu_ranks.hpp"
#include "app/cli/mpi_ranks.hpp"
#include "core/collective/mpi_world.hpp"
#include "core/collective/threaded_communicator.hpp"
#include "core/exec/backend.hpp"
#include "core/support/atomic_file.hpp"
#include "core/support/printable.hpp"

namespace cas::cli {
namespace {

constexpr double kTimeoutSeconds = 300;

struct SizeResult {
  std::uint64_t bytes = 0;
  double seconds = 0;  // median over the iterations of the slowest rank
};

// Rank `c.rank()`'s part: every size, warm-up and timed iterations. Every rank returns the same
// results (the times are gathered); throws on a wrong sum or a communicator error.
std::vector<SizeResult> measure(dist::Communicator& c, const AllReduceBenchOptions& o) {
  std::vector<SizeResult> results;
  const int n = c.size();
  for (std::uint64_t bytes = o.minBytes; bytes <= o.maxBytes; bytes *= std::uint64_t(o.factor)) {
    const std::size_t count = bytes / sizeof(float);
    std::vector<float> data(count);
    std::vector<double> slowest;
    for (int i = 0; i < o.warmup + o.iterations; ++i) {
      std::fill(data.begin(), data.end(), float(c.rank() + 1));
      c.barrier();
      const auto start = std::chrono::steady_clock::now();
      c.allReduceSum(data.data(), count);
      const double mine = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      std::vector<double> all(static_cast<std::size_t>(n));
      c.allGather(&mine, all.data(), sizeof(double));
      if (i >= o.warmup) slowest.push_back(*std::max_element(all.begin(), all.end()));
    }
    const float expected = float(n) * float(n + 1) / 2;
    for (std::size_t k = 0; k < count; ++k)
      if (data[k] != expected)
        throw std::runtime_error("rank " + std::to_string(c.rank()) + ": the sum of " + formatBytes(bytes) + " at element " + std::to_string(k) + " is " +
                                 std::to_string(data[k]) + ", not " + std::to_string(expected));
    std::nth_element(slowest.begin(), slowest.begin() + std::ptrdiff_t(slowest.size() / 2), slowest.end());
    results.push_back({count * sizeof(float), slowest[slowest.size() / 2]});
    if (bytes > o.maxBytes / std::uint64_t(o.factor)) break;  // the next size would pass the largest
  }
  return results;
}

// Runs measure() on `ranks` threads, rank r with communicator(r). Returns rank 0's results;
// throws the first rank's error.
std::vector<SizeResult> onThreads(int ranks, const std::function<std::unique_ptr<dist::Communicator>(int)>& communicator,
                                  const std::function<dist::Communicator&(int)>& existing, const AllReduceBenchOptions& o) {
  std::vector<std::vector<SizeResult>> results(static_cast<std::size_t>(ranks));
  std::vector<std::string> errors(static_cast<std::size_t>(ranks));
  std::vector<std::thread> threads;
  for (int r = 0; r < ranks; ++r)
    threads.emplace_back([&, r] {
      std::unique_ptr<dist::Communicator> own;
      dist::Communicator* c = nullptr;
      try {
        if (communicator) {
          own = communicator(r);
          c = own.get();
        } else {
          c = &existing(r);
        }
        results[size_t(r)] = measure(*c, o);
      } catch (const std::bad_alloc&) {
        errors[size_t(r)] = "out of memory for buffers of up to " + formatBytes(o.maxBytes) + " on each of " + std::to_string(ranks) +
                            " ranks; give a smaller --max-bytes or fewer ranks";
        if (c) c->fail(errors[size_t(r)]);
      } catch (const std::exception& e) {
        errors[size_t(r)] = e.what();
        if (c) c->fail(e.what());
      }
    });
  for (auto& t : threads) t.join();
  for (const std::string& e : errors)
    if (!e.empty()) throw std::runtime_error(e);
  return results[0];
}

std::string perSecond(double bytesPerSecond) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g GB/s", bytesPerSecond / 1e9);
  return text;
}

std::string duration(double seconds) {
  char text[32];
  if (seconds < 1e-3) std::snprintf(text, sizeof text, "%.1f us", seconds * 1e6);
  else std::snprintf(text, sizeof text, "%.3g ms", seconds * 1e3);
  return text;
}

void print(const std::vector<SizeResult>& results, int ranks, const std::string& how, bool json) {
  const double busFactor = ranks > 1 ? 2.0 * double(ranks - 1) / double(ranks) : 0.0;
  if (json) {
    std::cout << std::setprecision(10) << "{\"ranks\": " << ranks << ", \"communicator\": \"" << how << "\", \"results\": [";
    for (std::size_t i = 0; i < results.size(); ++i) {
      const double alg = double(results[i].bytes) / results[i].seconds;
      std::cout << (i ? ", " : "") << "{\"bytes\": " << results[i].bytes << ", \"seconds\": " << results[i].seconds << ", \"algbw_gbps\": " << alg / 1e9
                << ", \"busbw_gbps\": " << alg * busFactor / 1e9 << "}";
    }
    std::cout << "]}\n";
    return;
  }
  std::cout << "all-reduce (sum of floats) over " << ranks << (ranks == 1 ? " rank" : " ranks") << ": " << how << "\n";
  std::printf("%12s %12s %14s %14s\n", "size", "time", "algbw", "busbw");
  for (const SizeResult& r : results) {
    const double alg = double(r.bytes) / r.seconds;
    std::printf("%12s %12s %14s %14s\n", formatBytes(r.bytes).c_str(), duration(r.seconds).c_str(), perSecond(alg).c_str(), perSecond(alg * busFactor).c_str());
  }
  std::cout << "time: per size, the median over the iterations of the slowest rank's time; busbw = algbw * 2(n-1)/n (nccl-tests' definition)\n";
}

int underMpi(const AllReduceBenchOptions& o) {
  int status = 0;
  const std::unique_ptr<dist::MpiWorld> world = startMpiRank(o.device, o.gpus > 0 ? "--gpus" : (o.ranks > 0 ? "--ranks" : ""), &status);
  if (!world) return status;
  std::string reason;
  std::shared_ptr<exec::Backend> backend;
  if (status == 0 && !(backend = exec::BackendRegistry::instance().select(o.device, &reason))) {
    std::cerr << "error: " << printable(reason) << "\n";
    status = 1;
  }
  if (status == 0) {
    const GroupMember member{world->rank(), world->size(), {}, world.get()};
    std::unique_ptr<dist::Communicator> communicator = joinGroup(*backend, member, kTimeoutSeconds);
    if (!communicator) {
      status = 1;
    } else {
      try {
        const std::vector<SizeResult> results = measure(*communicator, o);
        if (member.rank == 0)
          print(results, member.size, std::string(backend->deviceServices() ? "NCCL (host buffers staged through the GPU)" : "MPI") + " across processes started by mpirun", o.json);
      } catch (const std::exception& e) {
        communicator->fail(e.what());
        std::cerr << "error: " << printable(e.what()) << "\n";
        status = 1;
      }
    }
  }
  if (status != 0) {
    std::this_thread::sleep_for(std::chrono::seconds(1));  // the others read this rank's notice first
    world->abort(status);
  }
  return 0;
}

}  // namespace

int runBenchAllReduce(const AllReduceBenchOptions& o) {
  if (o.minBytes % sizeof(float) != 0) {
    std::cerr << "error: --min-bytes " << o.minBytes << " is not a whole number of floats: give a multiple of 4\n";
    return 2;
  }
  if (o.minBytes > o.maxBytes) {
    std::cerr << "error: --min-bytes " << o.minBytes << " is more than --max-bytes " << o.maxBytes << "\n";
    return 2;
  }
  if (dist::mpiWorldSizeFromEnvironment()) return underMpi(o);
  try {
    if (o.gpus > 0) {
      std::string error;
      const auto backend = exec::BackendRegistry::instance().select("cuda", &error);
      if (!backend) {
        std::cerr << "error: --gpus needs the CUDA backend: " << printable(error) << "; --ranks N times CPU threads instead\n";
        return 2;
      }
      exec::DeviceServices* services = backend->deviceServices();
      const int count = services ? services->deviceCount() : 0;
      if (count < o.gpus) {
        std::cerr << "error: --gpus " << o.gpus << " asks for " << o.gpus << " GPUs, but this process sees " << count << "\n";
        return 2;
      }
      const std::string id = services->makeCommunicatorId(&error);
      if (id.empty()) {
        std::cerr << "error: " << printable(error) << "\n";
        return 1;
      }
      const auto results = onThreads(
          o.gpus,
          [&](int r) {
            std::string reason;
            auto device = r == 0 ? backend : services->onDevice(r, &reason);
            auto c = device ? device->deviceServices()->createCommunicator(id, r, o.gpus, kTimeoutSeconds, &reason) : nullptr;
            if (!c) throw std::runtime_error("rank " + std::to_string(r) + " could not join: " + reason);
            return c;
          },
          {}, o);
      print(results, o.gpus, "NCCL (host buffers staged through the GPU), a thread per GPU", o.json);
      return 0;
    }
    const int ranks = o.ranks > 0 ? o.ranks : 2;
    dist::ThreadedGroup group(ranks, std::chrono::duration<double>(kTimeoutSeconds));
    const auto results = onThreads(ranks, {}, [&](int r) -> dist::Communicator& { return group.communicator(r); }, o);
    print(results, ranks, "CPU threads of one process (dist::ThreadedGroup)", o.json);
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "error: " << printable(e.what()) << "\n";
    return 1;
  }
}

}  // namespace cas::cli
