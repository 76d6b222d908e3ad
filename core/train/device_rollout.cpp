#include "core/train/device_rollout.hpp"

namespace cas::exec {

std::unique_ptr<train::DeviceRollout> Backend::createRollout(const train::RolloutSetup&, std::string* reason) {
  if (reason) *reason = "the " + id() + " backend steps the environments' CPU twins and keeps the rollout in host memory";
  return nullptr;
}

}  // namespace cas::exec
