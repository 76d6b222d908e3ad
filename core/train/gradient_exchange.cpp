#include "core/train/gradient_exchange.hpp"

#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "core/support/numbers.hpp"

namespace cas::train {
namespace {

std::string hex(std::uint64_t v) {
  char b[24];
  std::snprintf(b, sizeof b, "%016llx", static_cast<unsigned long long>(v));
  return b;
}

// The stored tensors of a program: what a checkpoint holds (checkpoint.cpp's rule).
std::vector<const ir::Node*> storedInputs(const exec::Executable& program) {
  std::vector<const ir::Node*> inputs;
  for (const ir::Node& n : program.graph().nodes)
    if (n.op == ir::Op::Input && n.attrs.role != ir::InputRole::Data && !n.shape.empty()) inputs.push_back(&n);
  return inputs;
}

}  // namespace

std::optional<FaultInjection> FaultInjection::parse(std::string_view text, std::string* error) {
  const size_t colon = text.find(':');
  std::optional<std::int64_t> rank, step;
  if (colon != std::string_view::npos) {
    rank = parseInteger(text.substr(0, colon), 0, 1 << 20);
    step = parseInteger(text.substr(colon + 1), 1, std::int64_t(1) << 62);
  }
  if (!rank || !step) {
    if (error) *error = "'" + std::string(text) + "' is not RANK:STEP (a rank from 0 and an optimizer step from 1, such as 1:5)";
    return std::nullopt;
  }
  return FaultInjection{int(*rank), *step};
}

GradientExchange::GradientExchange(dist::Communicator& communicator, const params::DistParams& params, std::optional<FaultInjection> fault)
    : communicator_(communicator), bucketBytes_(params.bucketKib * 1024), checksumEvery_(params.checksumEvery), fault_(fault) {}

void GradientExchange::setLayout(const std::vector<pdl::ParameterSummary>& parameters) {
  parameters_ = parameters;
  buckets_.clear();
  bucketData_.clear();
  std::int64_t bytes = 0;
  for (size_t i = parameters_.size(); i-- > 0;) {
    if (buckets_.empty() || bytes >= bucketBytes_) {
      buckets_.emplace_back();
      bytes = 0;
    }
    buckets_.back().push_back(i);
    bytes += ir::numel(parameters_[i].shape) * std::int64_t(sizeof(float));
  }
  gradientNames_.clear();
  placeInBucket_.assign(parameters_.size(), {0, 0});
  for (const pdl::ParameterSummary& p : parameters_) gradientNames_.push_back(kGradientPrefix + p.name);
  for (size_t b = 0; b < buckets_.size(); ++b) {
    size_t floats = 0;
    for (size_t i : buckets_[b]) {
      placeInBucket_[i] = {b, floats};
      floats += size_t(ir::numel(parameters_[i].shape));
    }
    bucketData_.emplace_back(floats);
  }
}

void GradientExchange::runAndAverageGradients(exec::Executable& gradients, exec::Executable& optimizer) {
  std::vector<size_t> missing;  // by bucket: gradients not yet handed over
  for (const auto& bucket : buckets_) missing.push_back(bucket.size());
  size_t started = 0, handedOver = 0;
  startedEarly_ = 0;
  gradients.runHandingOver(gradientNames_, [&](size_t i, const float* values, size_t count) {
    const auto [b, offset] = placeInBucket_[i];
    std::copy(values, values + count, bucketData_[b].data() + offset);
    --missing[b];
    ++handedOver;
    for (; started < buckets_.size() && missing[started] == 0; ++started) {
      communicator_.startAllReduceSum(int(started), bucketData_[started].data(), bucketData_[started].size());
      if (handedOver < gradientNames_.size()) ++startedEarly_;
    }
  });
  const float inverse = 1.0f / float(ranks());
  for (size_t b = 0; b < buckets_.size(); ++b) {
    communicator_.waitAllReduce(int(b));
    float* at = bucketData_[b].data();
    for (float& g : bucketData_[b]) g *= inverse;
    for (size_t i : buckets_[b]) {
      const size_t count = size_t(ir::numel(parameters_[i].shape));
      optimizer.setInput(gradientNames_[i], at, count);
      at += count;
    }
  }
}

std::uint64_t storedStateChecksum(const exec::Executable& program) {
  std::uint64_t h = 14695981039346656037ull;
  std::vector<float> values;
  for (const ir::Node* n : storedInputs(program)) {
    values.resize(size_t(ir::numel(n->shape)));
    program.readInput(n->attrs.name, values.data(), values.size());
    const auto* bytes = reinterpret_cast<const unsigned char*>(values.data());
    for (size_t i = 0; i < values.size() * sizeof(float); ++i) h = (h ^ bytes[i]) * 1099511628211ull;
  }
  return h;
}

void GradientExchange::checkEqualState(const exec::Executable& state, std::int64_t step) {
  if (step % checksumEvery_ != 0) return;
  const std::uint64_t mine = storedStateChecksum(state);
  std::vector<std::uint64_t> all(static_cast<size_t>(ranks()));
  communicator_.allGather(&mine, all.data(), sizeof mine);
  std::string differing;
  for (size_t r = 1; r < all.size(); ++r)
    if (all[r] != all[0]) differing += " rank " + std::to_string(r) + " " + hex(all[r]) + ",";
  if (differing.empty()) return;
  differing.pop_back();
  throw std::runtime_error("the ranks' weights and optimizer state differ after optimizer step " + std::to_string(step) + " (checksums: rank 0 " +
                           hex(all[0]) + "," + differing + "); every rank must take the same step, so the run stops (the last checkpoint is kept)");
}

void GradientExchange::broadcastState(Updater& updater) {
  std::vector<float> values;
  for (const ir::Node* n : storedInputs(updater.stateProgram())) {
    values.resize(size_t(ir::numel(n->shape)));
    updater.stateProgram().readInput(n->attrs.name, values.data(), values.size());
    communicator_.broadcast(values.data(), values.size() * sizeof(float), 0);
    updater.setParameter(n->attrs.name, values);
  }
}

void GradientExchange::failIfInjected(std::int64_t step) const {
  if (fault_ && fault_->rank == rank() && fault_->step == step)
    throw std::runtime_error("fault injected (CAS_DIST_FAIL=" + std::to_string(fault_->rank) + ":" + std::to_string(fault_->step) + "): rank " +
                             std::to_string(rank()) + " stops before optimizer step " + std::to_string(step));
}

bool GradientExchange::everyRank(bool condition) {
  const std::uint8_t mine = condition ? 1 : 0;
  std::vector<std::uint8_t> all(static_cast<size_t>(ranks()));
  communicator_.allGather(&mine, all.data(), 1);
  for (std::uint8_t v : all)
    if (!v) return false;
  return true;
}

std::int64_t GradientExchange::sum(std::int64_t value) {
  std::vector<std::int64_t> all(static_cast<size_t>(ranks()));
  communicator_.allGather(&value, all.data(), sizeof value);
  std::int64_t total = 0;
  for (std::int64_t v : all) total += v;
  return total;
}

void GradientExchange::averageLossSums(LossSums& sums) {
  // Gathered and summed here in rank order, as doubles: one rank's figures come back unchanged,
  // so a one-rank run reports the losses a run without a communicator does.
  std::vector<double> mine = {sums.total};
  for (const auto& term : sums.terms) mine.push_back(term.second);
  std::vector<double> all(mine.size() * size_t(ranks()));
  communicator_.allGather(mine.data(), all.data(), mine.size() * sizeof(double));
  std::vector<double> total(mine.size(), 0.0);
  for (size_t r = 0; r < size_t(ranks()); ++r)
    for (size_t i = 0; i < mine.size(); ++i) total[i] += all[r * mine.size() + i];
  sums.total = total[0] / ranks();
  for (size_t i = 0; i < sums.terms.size(); ++i) sums.terms[i].second = total[i + 1] / ranks();
}

}  // namespace cas::train
