#pragma once
// The device implementation of search::LearnedSearch (the search over a learned model, MuZero),
// which exec::DeviceServices::createLearnedSearch hands out on the CUDA backend. Trees, latent
// states and the model's rows stay in device memory:
//
//   search():  upload the call's parameters, game list and observations (one copy each)
//              root graph  = represent -> predict -> expand roots, select step 1's leaves ->
//                            the roots' states into the pool, the rows' states out of it
//              step graph  = recurrent -> the new leaves' states into the pool -> expand and
//                            back up, select the next step's leaves (one kernel) -> the rows'
//                            states out of the pool; replayed ceil(S / k) times with no host
//                            synchronisation
//              finish roots
//   rootStats: one kernel, one copy back of the games' LearnedRootOut records
//
// The model is the PDL learned model's three compiled programs (core/pdl/learned_model.hpp),
// whose input and output buffers ARE the search's rows (nothing is copied but represent's states
// into predict's input), or the hashed test model as kernels. Every buffer comes from the
// runtime's pool when the search is made; the graphs are captured on first use (one pair per k).
// Thread-safety: one thread drives a search, as LearnedSearch says.
#include <memory>
#include <string>

#include "core/search/learned_search.hpp"
#include "gpu/device_runtime.hpp"

namespace cas::gpu {

// Null with `reason` when the setup cannot run on the device (more than 32 actions, programs that
// are not this backend's or this device's, a batch too small for games x leaves per step, shapes
// that disagree with the setup, kernels that do not load).
std::unique_ptr<cas::search::LearnedSearch> makeDeviceLearnedSearch(const cas::search::LearnedSearchSetup& setup,
                                                                    std::shared_ptr<DeviceRuntime> runtime, std::string* reason);

}  // namespace cas::gpu
