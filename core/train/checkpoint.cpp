#include "core/train/checkpoint.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>

#include "core/support/binary_io.hpp"
#include "core/support/printable.hpp"
#include "core/train/checkpoint_header.hpp"

namespace cas::train {
namespace {

constexpr std::uint32_t kMaxRank = 16;
constexpr std::uint32_t kMaxTensors = 100000;
constexpr std::uint32_t kMaxTensorName = 4096;
constexpr std::uint32_t kMaxRngState = 1 << 16;  // Reader::string's default limit

// The inputs a checkpoint holds: parameters and optimizer state, not the data of one batch.
std::vector<const ir::Node*> storedTensors(const exec::Executable& training) {
  std::vector<const ir::Node*> tensors;
  for (const ir::Node& n : training.graph().nodes)
    if (n.op == ir::Op::Input && n.attrs.role != ir::InputRole::Data && !n.shape.empty()) tensors.push_back(&n);
  return tensors;
}

// The stored tensors of `training` that `held` lacks, parameters first (they are what the user
// named in PDL; optimizer state follows from them).
std::vector<std::string> missingTensors(const exec::Executable& training, const std::set<std::string>& held) {
  std::vector<std::string> parameters, state;
  for (const ir::Node* n : storedTensors(training))
    if (!held.contains(n->attrs.name)) (n->attrs.role == ir::InputRole::Parameter ? parameters : state).push_back(n->attrs.name);
  parameters.insert(parameters.end(), state.begin(), state.end());
  return parameters;
}

std::int64_t countNotFinite(const std::vector<float>& values) {
  return std::count_if(values.begin(), values.end(), [](float v) { return !std::isfinite(v); });
}

}  // namespace

std::string writeCheckpoint(const CheckpointCounters& counters, const exec::Executable& training, const search::ReplayRing& ring,
                            std::string_view section) {
  Writer w;
  w.pod(kCheckpointMagic);
  w.pod(kCheckpointVersion);
  w.pod(counters.iteration);
  w.pod(counters.gamesPlayed);
  w.pod(counters.optimizerSteps);
  std::ostringstream rng;
  rng << counters.rng;
  w.string(rng.str());
  const std::vector<const ir::Node*> tensors = storedTensors(training);
  w.pod(std::uint32_t(tensors.size()));
  for (const ir::Node* n : tensors) {
    std::vector<float> v(size_t(ir::numel(n->shape)));
    training.readInput(n->attrs.name, v.data(), v.size());
    w.string(n->attrs.name);
    w.pod(std::uint32_t(n->shape.size()));
    for (std::int64_t d : n->shape) w.pod(d);
    w.floats(v);
  }
  ring.write(w);
  w.pod(std::uint64_t(section.size()));
  w.raw(section.data(), section.size());
  return w.bytes();
}

std::uint64_t checkpointSizeLimit(const exec::Executable& training, const search::ReplaySetup& replay, std::uint64_t sectionLimit) {
  std::uint64_t bytes = 4 + 4 + 3 * 8 + 4 + kMaxRngState + 4;
  for (const ir::Node* n : storedTensors(training))
    bytes += 4 + kMaxTensorName + 4 + 8 * n->shape.size() + 8 + std::uint64_t(ir::numel(n->shape)) * sizeof(float);
  return bytes + search::ReplayRing::serialisedBytes(replay) + 8 + sectionLimit;
}

std::optional<Checkpoint> readCheckpoint(const std::string& bytes, const exec::Executable& training, const search::ReplaySetup& replay,
                                         std::string* error, std::uint64_t sectionLimit) {
  auto fail = [&](const std::string& why) {
    if (error) *error = why;
    return std::nullopt;
  };
  Reader r(bytes);
  const std::optional<CheckpointHeader> header = readCheckpointHeader(r, error);
  if (!header) return std::nullopt;
  CheckpointCounters counters;
  counters.iteration = header->iteration;
  counters.gamesPlayed = header->gamesPlayed;
  counters.optimizerSteps = header->optimizerSteps;
  const std::string rngState = r.string(kMaxRngState);
  const auto count = r.pod<std::uint32_t>();
  if (!r.ok() || count > kMaxTensors) return fail("the checkpoint is truncated");
  const ir::Graph& g = training.graph();
  std::vector<std::pair<std::string, std::vector<float>>> tensors;
  std::set<std::string> held;
  for (std::uint32_t i = 0; i < count && r.ok(); ++i) {
    const std::string name = r.string(kMaxTensorName);
    if (!r.ok()) break;
    const ir::NodeId id = g.findInput(name);
    if (id == ir::kNoNode) return fail("the checkpoint holds '" + name + "', which this project's network does not have");
    if (!held.insert(name).second) return fail("the checkpoint holds '" + name + "' twice");
    const ir::Shape& needed = g.node(id).shape;
    if (header->version >= 2) {
      const auto rank = r.pod<std::uint32_t>();
      if (!r.ok()) break;
      if (rank > kMaxRank)
        return fail(name + ": the checkpoint gives it " + std::to_string(rank) + " dimensions; a tensor has at most " + std::to_string(kMaxRank));
      ir::Shape held(rank);
      for (std::int64_t& d : held) d = r.pod<std::int64_t>();
      if (!r.ok()) break;
      if (held != needed)
        return fail(name + ": the checkpoint holds shape " + quoteShape(held) + ", this project's network needs " +
                    quoteShape(needed) + "; the checkpoint was written for another network (a layer's size changed)");
    }
    const auto neededValues = std::uint64_t(ir::numel(needed));
    std::uint64_t heldValues = neededValues;
    tensors.emplace_back(name, r.floats(neededValues, &heldValues));
    if (r.ok()) {
      if (auto bad = countNotFinite(tensors.back().second); bad > 0)
        return fail(name + ": the checkpoint holds " + std::to_string(bad) + " value(s) that are not finite numbers (NaN or infinite); " +
                    "training never writes such a checkpoint, so the file was altered after it was written");
      continue;
    }
    if (heldValues == neededValues) break;  // the right size, but the file ends inside it
    if (header->version >= 2)  // the shape matched: the count beside it is not the one a run writes
      return fail(name + ": the checkpoint gives it shape " + quoteShape(needed) + " but " + std::to_string(heldValues) +
                  " values; it was altered after it was written");
    // Only version 1 gets here with a tensor of another size (version 2 compared the shapes):
    // it records each tensor's size, not its shape, so the checkpoint's side is a count.
    return fail(name + ": the checkpoint holds " + std::to_string(heldValues) + " values, this project's network needs " +
                quoteShape(needed) + " (" + std::to_string(neededValues) +
                " values); the checkpoint was written for another network (a layer's size changed)");
  }
  if (!r.ok()) return fail("the checkpoint is truncated");
  if (auto missing = missingTensors(training, held); !missing.empty()) {
    std::string what = "the checkpoint lacks " + missing.front();
    if (missing.size() > 1) what += " and " + std::to_string(missing.size() - 1) + " more tensor(s)";
    return fail(what + ", which this project's network needs; it was written for another network (a layer added or renamed)");
  }
  std::optional<search::ReplayRing> restored = search::ReplayRing::read(r, replay, error);
  if (!restored) return std::nullopt;
  std::string section;
  if (header->version >= 3) {
    const auto length = r.pod<std::uint64_t>();
    if (r.ok() && length > sectionLimit)
      return fail("the checkpoint's algorithm section holds " + std::to_string(length) + " bytes, more than this run's " + std::to_string(sectionLimit) +
                  " can be; it was written for another configuration or altered after it was written");
    section = std::string(r.raw(length));
    if (!r.ok()) return fail("the checkpoint is truncated");
  }
  if (!r.atEnd()) return fail("the checkpoint has bytes after its end; it was altered after it was written");
  std::istringstream rs(rngState);
  if (!(rs >> counters.rng) || !(rs >> std::ws).eof())
    return fail("the checkpoint's random generator state does not read as the one a run writes; it was altered after it was written");
  return Checkpoint{std::move(counters), std::move(tensors), std::move(*restored), std::move(section)};
}

}  // namespace cas::train
