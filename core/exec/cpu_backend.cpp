// The CPU reference backend: the executable spec every GPU kernel is tested against.
#include <thread>

#include "core/exec/backend.hpp"

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
};

}  // namespace

std::shared_ptr<Backend> makeCpuBackend() { return std::make_shared<CpuBackend>(); }

}  // namespace cas::exec
