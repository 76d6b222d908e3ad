#pragma once
// What a backend's device adds to compiling graphs: a search whose trees live there, a replay
// store in its memory, copies of an environment stepped there, PPO's rollout kept there, and
// data-parallel training with a rank per device. A backend hands these out through
// Backend::deviceServices(); the CPU reference backend has none (null), and the callers that
// ask (core/search's makeSearch, the trainers, the CLI) fall back to the host's implementation
// and say why. The returned types are declared by the layers that define them (core/search,
// core/env, core/train, core/collective), which build on core/exec: only their names are needed here,
// so core/exec depends on none of them.
// Thread-safety: as the Backend that hands it out (one thread at a time).
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace cas::search {
class SelfPlaySearch;
struct SearchSetup;
class LearnedSearch;
struct LearnedSearchSetup;
class ReplayStore;
struct ReplaySetup;
}  // namespace cas::search
namespace cas::env {
class VectorEnvironments;
struct EnvironmentData;
}
namespace cas::train {
class Rollout;
struct RolloutSetup;
}  // namespace cas::train
namespace cas::dist {
class Communicator;
}

namespace cas::exec {

class Backend;

class DeviceServices {
 public:
  virtual ~DeviceServices() = default;

  // A search whose trees and games live on the device, evaluating leaves with setup.evaluator (a
  // network compiled by the same backend). Null with `reason` when it cannot hold this one.
  virtual std::unique_ptr<search::SelfPlaySearch> createSearch(const search::SearchSetup& setup, std::string* reason) = 0;
  // A search over a learned model (core/search/learned_search.hpp) whose trees and latent states
  // live on the device, evaluating leaves with setup.evaluator's programs (compiled by the same
  // backend). Null with `reason` when it cannot hold this one.
  virtual std::unique_ptr<search::LearnedSearch> createLearnedSearch(const search::LearnedSearchSetup& setup, std::string* reason) = 0;
  // A replay store in device memory, which training programs compiled by the same backend sample
  // from and its search writes into. Null with `reason` when it cannot be made.
  virtual std::unique_ptr<search::ReplayStore> createReplayStore(const search::ReplaySetup& setup, std::string* reason) = 0;
  // `count` copies of the single-agent environment `environment` (a catalogue name) seeded with
  // `seed` (core/env/vector_environments.hpp), with what the project gives it (`data`: a trading
  // environment's series). Null with `reason` when it has no device twin or `data` will not do.
  virtual std::unique_ptr<env::VectorEnvironments> createEnvironments(std::string_view environment, int count, std::uint64_t seed,
                                                                      const env::EnvironmentData& data, std::string* reason) = 0;
  // PPO's rollout on the device (core/train/rollout.hpp), its programs compiled by the
  // same backend. Null with `reason` when the environment has no device twin.
  virtual std::unique_ptr<train::Rollout> createRollout(const train::RolloutSetup& setup, std::string* reason) = 0;

  // Data-parallel training with a rank per device (core/collective/communicator.hpp).
  // The devices the backend could run on (its own is device 0 of them).
  virtual int deviceCount() const = 0;
  // The backend on its device `ordinal`, for ranks that are threads of one process. Null with
  // `reason` when there is no such device.
  virtual std::shared_ptr<Backend> onDevice(int ordinal, std::string* reason) = 0;
  // The identity of a new group of ranks: bytes that one process makes and hands to every rank
  // (cuda-agent passes them as hex in the environment), for createCommunicator. Empty with
  // `reason` when it cannot be made.
  virtual std::string makeCommunicatorId(std::string* reason) = 0;
  // Rank `rank` of the `size` ranks of the group `id` names, on this device. Every rank calls it
  // at about the same time; it waits at most `timeoutSeconds` for the others, as the
  // communicator's collectives do. Null with `reason` when the group cannot be formed.
  virtual std::unique_ptr<dist::Communicator> createCommunicator(const std::string& id, int rank, int size, double timeoutSeconds,
                                                                 std::string* reason) = 0;
};

}  // namespace cas::exec
