#pragma once
// The device replay store's kernels (replay_kernels.cu) and the fresh region the device search's
// self-play writes into (search_kernels.cu), shared by the host code that launches them.
//
//   ring / fresh arrays   obs [rows][observationSize] | policy [rows][actions] | value [rows]
//   symmetry tables       obsFrom [symmetries][observationSize], policyFrom [symmetries][actions]:
//                         the symmetric sample's entry y is the stored sample's entry from[y]
// Thread-safety: launches go to the stream given.
#include <cuda.h>

#include <cstdint>

namespace cas::gpu::search {

struct SampleArrays {
  float* obs;
  float* policy;
  float* value;
};

// Where self-play's ending games go: rows [base, capacity) of one fresh region.
struct FreshRegion {
  SampleArrays rows;
  std::int64_t base, capacity;
};

struct SymmetryTables {
  const std::int32_t* obsFrom;
  const std::int32_t* policyFrom;
  int count;
};

// Fresh rows [from, from + count) to ring slots next, next + 1, ... (mod capacity).
void launchCommit(SampleArrays fresh, SampleArrays ring, std::int64_t from, std::int64_t count, std::int64_t next, std::int64_t capacity,
                  int observationSize, int actions, CUstream s);
// `batch` samples of the draw `seed` from a ring holding `size` positions (core/search/replay_store.hpp).
void launchSample(SampleArrays ring, std::int64_t size, SymmetryTables symmetries, std::uint64_t seed, std::int64_t batch, SampleArrays out,
                  int observationSize, int actions, CUstream s);

}  // namespace cas::gpu::search
