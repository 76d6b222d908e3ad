// The CPU reference backend: the executable spec every GPU kernel is tested against.
#include <mutex>
#include <thread>

#include "core/exec/backend.hpp"
#include "core/exec/cpu_program.hpp"

namespace cas::exec {
namespace {

class CpuBackend final : public Backend {
 public:
  std::string id() const override { return "cpu"; }
  std::string statusText() const override { return "CPU backend"; }
  std::vector<std::pair<std::string, std::string>> properties() const override {
    return {{"threads", std::to_string(std::max(1u, std::thread::hardware_concurrency()))},
            {"role", "reference implementation of every operation"}};
  }
  std::unique_ptr<Executable> compile(const ir::Graph& graph) override {
    std::call_once(poolOnce_, [this] { pool_ = std::make_shared<ThreadPool>(); });
    return compileForCpu(graph, pool_);
  }

 private:
  std::once_flag poolOnce_;
  std::shared_ptr<ThreadPool> pool_;
};

}  // namespace

std::shared_ptr<Backend> makeCpuBackend() { return std::make_shared<CpuBackend>(); }

}  // namespace cas::exec
