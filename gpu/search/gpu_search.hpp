#pragma once
// The device implementation of search::SelfPlaySearch, which exec::DeviceServices::createSearch hands
// out on the CUDA backend. Trees, root positions and leaf evaluations stay in device memory:
//
//   search():  upload the call's games and parameters (a few hundred bytes)
//              root graph   = encode roots -> evaluator -> expand roots -> select step 1's leaves
//              step graph   = evaluator -> expand and back up, select the next step's leaves
//                             (one kernel), replayed ceil(S / k) times with no host
//                             synchronisation
//              finish roots
//   rootStats: one kernel, one copy back of the games' RootOut records
//   play/resetGames: the moves go down, one kernel; a host copy of the positions follows along
//
// The evaluator is the trainer's compiled inference program (its input and output buffers are
// the search's rows: nothing is copied), or the hashed or uniform evaluator of search_math.hpp.
// Every buffer comes from the runtime's pool when the search is made; the graphs are captured
// on first use (one per k, selection kernel and instrumentation).
// Thread-safety: one thread drives a search, as SelfPlaySearch says.
#include <memory>
#include <string>

#include "core/search/self_play_search.hpp"
#include "gpu/device_runtime.hpp"

namespace cas::gpu {

// Null with `reason` when the setup cannot run on the device (an environment without device
// rules, a network that is not this backend's or too small a batch, not enough memory).
std::unique_ptr<cas::search::SelfPlaySearch> makeDeviceSearch(const cas::search::SearchSetup& setup, std::shared_ptr<DeviceRuntime> runtime,
                                                         std::string* reason);

}  // namespace cas::gpu
