#include "gpu/search/device_replay.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <vector>

#include "core/env/games.hpp"
#include "gpu/cuda_check.hpp"
#include "gpu/cuda_program.hpp"

namespace cas::gpu {
namespace {

// Each symmetry of `game` as gathers: applied to entries holding their own index, the result's
// entry y holds the index it came from. Empty when a symmetry moves values in another way.
bool probeSymmetries(const env::BoardGames& game, int obsSize, int actions, std::vector<std::int32_t>& obsFrom, std::vector<std::int32_t>& policyFrom) {
  const int count = game.symmetryCount();
  for (int s = 0; s < count; ++s) {
    std::vector<float> o(static_cast<size_t>(obsSize)), p(static_cast<size_t>(actions));
    std::iota(o.begin(), o.end(), 0.0f);
    std::iota(p.begin(), p.end(), 0.0f);
    game.applySymmetry(s, o.data(), p.data());
    auto isPermutation = [](std::vector<float> v) {
      std::sort(v.begin(), v.end());
      for (size_t i = 0; i < v.size(); ++i)
        if (v[i] != float(i)) return false;
      return true;
    };
    if (!isPermutation(o) || !isPermutation(p)) return false;
    for (float v : o) obsFrom.push_back(std::int32_t(v));
    for (float v : p) policyFrom.push_back(std::int32_t(v));
  }
  return true;
}

std::uint64_t rowFloats(const cas::search::ReplaySetup& s) { return std::uint64_t(s.observationSize) + std::uint64_t(s.actions) + 1; }

}  // namespace

DeviceReplay::DeviceReplay(const cas::search::ReplaySetup& setup, std::shared_ptr<DeviceRuntime> runtime) : setup_(setup), rt_(std::move(runtime)) {
  auto game = env::makeBoardGames(setup_.environment, 1);
  if (!game) throw std::invalid_argument("'" + setup_.environment + "' is not a board game with a replay buffer");
  std::vector<std::int32_t> obsFrom, policyFrom;
  if (!probeSymmetries(*game, setup_.observationSize, setup_.actions, obsFrom, policyFrom))
    throw std::invalid_argument("the symmetries of '" + setup_.environment + "' do not only move entries, which the device replay buffer needs");
  symmetries_ = game->symmetryCount();
  ContextScope scope(rt_->context);
  try {
    const std::uint64_t row = rowFloats(setup_) * sizeof(float);
    ring_ = take(std::uint64_t(setup_.capacity) * row, "the replay buffer (reduce train.replay_capacity)");
    for (CUdeviceptr& f : freshRegions_)
      f = take(std::uint64_t(setup_.freshCapacity) * row, "the replay buffer's fresh positions (reduce train.games_per_iteration or train.parallel_games)");
    obsFrom_ = take(obsFrom.size() * 4, "the replay buffer's symmetry tables");
    policyFrom_ = take(policyFrom.size() * 4, "the replay buffer's symmetry tables");
    CAS_CU(cuMemsetD8Async(ring_, 0, std::uint64_t(setup_.capacity) * row, rt_->compute));
    CAS_CU(cuMemcpyHtoDAsync(obsFrom_, obsFrom.data(), obsFrom.size() * 4, rt_->compute));
    CAS_CU(cuMemcpyHtoDAsync(policyFrom_, policyFrom.data(), policyFrom.size() * 4, rt_->compute));
    CAS_CU(cuStreamSynchronize(rt_->compute));
    CAS_CU(cuEventCreate(&written_, CU_EVENT_DISABLE_TIMING));
    for (CUevent& e : committed_) CAS_CU(cuEventCreate(&e, CU_EVENT_DISABLE_TIMING));
  } catch (...) {
    release();
    throw;
  }
}

DeviceReplay::~DeviceReplay() {
  if (cuCtxPushCurrent(rt_->context) != CUDA_SUCCESS) return;
  cuStreamSynchronize(rt_->sync);
  cuStreamSynchronize(rt_->training);
  cuStreamSynchronize(rt_->compute);
  release();
  CUcontext c;
  cuCtxPopCurrent(&c);
}

void DeviceReplay::release() {
  for (CUevent e : {written_, committed_[0], committed_[1]})
    if (e) cuEventDestroy(e);
  written_ = committed_[0] = committed_[1] = nullptr;
  for (CUdeviceptr p : owned_) rt_->pool.release(p);
  owned_.clear();
}

CUdeviceptr DeviceReplay::take(std::uint64_t bytes, const std::string& what) {
  const CUdeviceptr p = rt_->pool.allocate(std::max<std::uint64_t>(bytes, 4), what);
  owned_.push_back(p);
  return p;
}

search::SampleArrays DeviceReplay::arrays(CUdeviceptr base, std::int64_t rows) const {
  const auto r = std::uint64_t(rows);
  auto* obs = reinterpret_cast<float*>(base);
  float* policy = obs + r * std::uint64_t(setup_.observationSize);
  float* value = policy + r * std::uint64_t(setup_.actions);
  return {obs, policy, value};
}

search::FreshRegion DeviceReplay::freshRegion() const { return {arrays(freshRegions_[half_], setup_.freshCapacity), fresh_, setup_.freshCapacity}; }

void DeviceReplay::addedOnDevice(std::int64_t rows) {
  if (rows < 0 || fresh_ + rows > setup_.freshCapacity) throw std::logic_error("the replay buffer's fresh positions overflowed");
  fresh_ += rows;
}

void DeviceReplay::add(const float* observation, const float* policy, float value) {
  if (fresh_ >= setup_.freshCapacity) throw std::length_error("the replay buffer's fresh positions are full; commit them first");
  ContextScope scope(rt_->context);
  const search::SampleArrays f = arrays(freshRegions_[half_], setup_.freshCapacity);
  const auto row = std::uint64_t(fresh_);
  const auto o = std::uint64_t(setup_.observationSize), a = std::uint64_t(setup_.actions);
  timer_.begin(rt_->compute);
  CAS_CU(cuMemcpyHtoDAsync(reinterpret_cast<CUdeviceptr>(f.obs + row * o), observation, o * sizeof(float), rt_->compute));
  CAS_CU(cuMemcpyHtoDAsync(reinterpret_cast<CUdeviceptr>(f.policy + row * a), policy, a * sizeof(float), rt_->compute));
  CAS_CU(cuMemcpyHtoDAsync(reinterpret_cast<CUdeviceptr>(f.value + row), &value, sizeof(float), rt_->compute));
  timer_.end(rt_->compute);
  CAS_CU(cuStreamSynchronize(rt_->compute));  // the host values go away
  ++fresh_;
}

void DeviceReplay::commit() {
  if (fresh_ == 0) return;
  ContextScope scope(rt_->context);
  const std::int64_t capacity = setup_.capacity;
  const std::int64_t from = std::max<std::int64_t>(0, fresh_ - capacity), count = fresh_ - from;
  CAS_CU(cuEventRecord(written_, rt_->compute));  // after self-play's writes
  CAS_CU(cuStreamWaitEvent(rt_->sync, written_, 0));
  timer_.begin(rt_->sync);
  search::launchCommit(arrays(freshRegions_[half_], setup_.freshCapacity), arrays(ring_, capacity), from, count, (next_ + from) % capacity, capacity,
                       setup_.observationSize, setup_.actions, rt_->sync);
  timer_.end(rt_->sync);
  CAS_CU(cuEventRecord(committed_[half_], rt_->sync));
  lastCommitted_ = half_;
  next_ = (next_ + fresh_) % capacity;  // as if added one by one (replay_buffer.cpp)
  size_ = std::min(capacity, size_ + fresh_);
  fresh_ = 0;
  half_ ^= 1;
  // The region self-play writes next was committed two commits ago: its copy must be done.
  CAS_CU(cuStreamWaitEvent(rt_->compute, committed_[half_], 0));
}

void DeviceReplay::sample(std::int64_t batch, std::uint64_t seed, exec::Executable& training) {
  if (size_ <= 0) throw std::logic_error("sampling an empty replay buffer");
  auto* program = dynamic_cast<DeviceProgram*>(&training);
  if (!program || program->runtime() != rt_) throw std::invalid_argument("the device replay buffer feeds only programs compiled for its own device");
  ContextScope scope(rt_->context);
  if (program->stream() == rt_->compute) program->moveToStream(rt_->training);  // beside self-play, when it can
  CUstream s = program->stream();
  if (lastCommitted_ >= 0) CAS_CU(cuStreamWaitEvent(s, committed_[lastCommitted_], 0));
  const search::SampleArrays out{reinterpret_cast<float*>(program->inputAddress("obs")), reinterpret_cast<float*>(program->inputAddress("policy_targets")),
                                 reinterpret_cast<float*>(program->inputAddress("value_targets"))};
  const search::SymmetryTables tables{reinterpret_cast<const std::int32_t*>(obsFrom_), reinterpret_cast<const std::int32_t*>(policyFrom_), symmetries_};
  timer_.begin(s);
  search::launchSample(arrays(ring_, setup_.capacity), size_, tables, seed, batch, out, setup_.observationSize, setup_.actions, s);
  timer_.end(s);
  for (const char* input : {"obs", "policy_targets", "value_targets"}) program->markWrittenOnDevice(input);
}

cas::search::ReplayRing DeviceReplay::ring() const {
  ContextScope scope(rt_->context);
  CAS_CU(cuStreamSynchronize(rt_->sync));
  cas::search::ReplayRing r(setup_.capacity, setup_.observationSize, setup_.actions);
  r.size = size_;
  r.next = next_;
  const search::SampleArrays a = arrays(ring_, setup_.capacity);
  CAS_CU(cuMemcpyDtoH(r.obs.data(), reinterpret_cast<CUdeviceptr>(a.obs), r.obs.size() * sizeof(float)));
  CAS_CU(cuMemcpyDtoH(r.policy.data(), reinterpret_cast<CUdeviceptr>(a.policy), r.policy.size() * sizeof(float)));
  CAS_CU(cuMemcpyDtoH(r.value.data(), reinterpret_cast<CUdeviceptr>(a.value), r.value.size() * sizeof(float)));
  return r;
}

void DeviceReplay::load(cas::search::ReplayRing r) {
  const auto capacity = std::uint64_t(setup_.capacity);
  if (r.obs.size() != capacity * std::uint64_t(setup_.observationSize) || r.policy.size() != capacity * std::uint64_t(setup_.actions) ||
      r.value.size() != capacity || r.size < 0 || r.size > setup_.capacity || r.next < 0 || (capacity > 0 && std::uint64_t(r.next) >= capacity))
    throw std::invalid_argument("a replay ring of another shape");
  ContextScope scope(rt_->context);
  CAS_CU(cuStreamSynchronize(rt_->sync));
  CAS_CU(cuStreamSynchronize(rt_->training));
  const search::SampleArrays a = arrays(ring_, setup_.capacity);
  CAS_CU(cuMemcpyHtoD(reinterpret_cast<CUdeviceptr>(a.obs), r.obs.data(), r.obs.size() * sizeof(float)));
  CAS_CU(cuMemcpyHtoD(reinterpret_cast<CUdeviceptr>(a.policy), r.policy.data(), r.policy.size() * sizeof(float)));
  CAS_CU(cuMemcpyHtoD(reinterpret_cast<CUdeviceptr>(a.value), r.value.data(), r.value.size() * sizeof(float)));
  size_ = r.size;
  next_ = r.next;
  fresh_ = 0;
}

double DeviceReplay::dataSeconds() const {
  ContextScope scope(rt_->context);
  return timer_.seconds();
}

std::unique_ptr<cas::search::ReplayStore> makeDeviceReplay(const cas::search::ReplaySetup& setup, std::shared_ptr<DeviceRuntime> runtime, std::string* reason) {
  try {
    return std::make_unique<DeviceReplay>(setup, std::move(runtime));
  } catch (const std::invalid_argument& e) {
    if (reason) *reason = e.what();
    return nullptr;
  }
}

}  // namespace cas::gpu
