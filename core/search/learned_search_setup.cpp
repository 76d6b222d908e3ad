// The learned-model search's setup: the model's programs as host callbacks (chunked, zero-padded
// batches; actions as one-hot rows) and the choice between the device search and the CPU reference.
#include <algorithm>
#include <memory>
#include <stdexcept>

#include "core/exec/backend.hpp"
#include "core/exec/device_services.hpp"
#include "core/search/learned_search.hpp"

namespace cas::search {
namespace {

// The batch of `program`, after checking that it has `inputs` and `outputs` of the given
// per-sample widths.
std::int64_t programBatch(const exec::Executable& program, const char* title, const std::vector<std::pair<std::string, int>>& inputs,
                          const std::vector<std::pair<std::string, int>>& outputs) {
  const ir::Graph& g = program.graph();
  std::int64_t batch = -1;
  auto check = [&](const std::string& name, int width, bool input) {
    const ir::NodeId id = input ? g.findInput(name) : g.output(name);
    if (id == ir::kNoNode)
      throw std::invalid_argument(std::string("the learned model's ") + title + " program has no " + (input ? "input" : "output") + " '" + name + "'");
    const ir::Shape& shape = g.node(id).shape;
    if (ir::numel(shape) / shape.at(0) != width || (batch >= 0 && shape[0] != batch))
      throw std::invalid_argument(std::string("the learned model's ") + title + " program's '" + name + "' has shape " + ir::shapeText(shape, ", ") +
                                  "; the search expects " + std::to_string(width) + " values per row");
    batch = shape[0];
  };
  for (const auto& [name, width] : inputs) check(name, width, true);
  for (const auto& [name, width] : outputs) check(name, width, false);
  return batch;
}

// Runs `program` over n rows in chunks of its batch: `fill(first, count)` sets its inputs for rows
// [first, first + count), `take(first, count)` reads its outputs.
template <typename Fill, typename Take>
void inChunks(exec::Executable& program, std::int64_t batch, int n, Fill fill, Take take) {
  for (int done = 0; done < n;) {
    const int chunk = std::min<int>(n - done, int(batch));
    fill(done, chunk);
    program.run();
    take(done, chunk);
    done += chunk;
  }
}

// One program's rows: input `name` zero-padded to the batch, outputs read whole.
struct Rows {
  std::vector<float> data;
  void set(exec::Executable& p, const std::string& name, const float* from, int count, int width) {
    std::fill(data.begin(), data.end(), 0.0f);
    std::copy(from, from + std::size_t(count) * std::size_t(width), data.begin());
    p.setInput(name, data.data(), data.size());
  }
};

void readRows(const exec::Executable& p, const std::string& name, std::vector<float>& scratch, float* to, int count, int width) {
  p.readOutput(name, scratch.data(), scratch.size());
  std::copy(scratch.begin(), scratch.begin() + std::ptrdiff_t(count) * width, to);
}

LearnedModel programModel(const LearnedSearchSetup& s) {
  const LearnedModelEvaluator& e = s.evaluator;
  if (!e.represent || !e.recurrent || !e.predict) throw std::invalid_argument("a learned model needs its represent, recurrent and predict programs");
  const int obs = s.observationSize, state = s.stateSize, actions = s.actions;
  const std::int64_t rb = programBatch(*e.represent, "represent", {{"obs", obs}}, {{"state", state}});
  const std::int64_t cb = programBatch(*e.recurrent, "recurrent", {{"state", state}, {"action", actions}},
                                       {{"state", state}, {"reward", 1}, {"logits", actions}, {"value", 1}});
  const std::int64_t pb = programBatch(*e.predict, "predict", {{"state", state}}, {{"logits", actions}, {"value", 1}});
  LearnedModel m;
  m.observationSize = obs, m.stateSize = state, m.actions = actions;
  auto scratch = [](std::int64_t batch, int width) { return std::make_shared<std::vector<float>>(std::size_t(batch) * std::size_t(width)); };
  m.represent = [p = e.represent, rb, obs, state, in = std::make_shared<Rows>(Rows{*scratch(rb, obs)}), out = scratch(rb, state)](
                    const float* o, int n, float* states) {
    inChunks(*p, rb, n, [&](int first, int count) { in->set(*p, "obs", o + std::size_t(first) * obs, count, obs); },
             [&](int first, int count) { readRows(*p, "state", *out, states + std::size_t(first) * state, count, state); });
  };
  m.recurrent = [p = e.recurrent, cb, state, actions, in = std::make_shared<Rows>(Rows{*scratch(cb, state)}),
                 oneHot = std::make_shared<Rows>(Rows{*scratch(cb, actions)}), s1 = scratch(cb, state), r1 = scratch(cb, 1), l1 = scratch(cb, actions),
                 v1 = scratch(cb, 1)](const float* states, const std::int32_t* act, int n, float* next, float* rewards, float* logits, float* values) {
    std::vector<float> hot(std::size_t(cb) * std::size_t(actions));
    inChunks(
        *p, cb, n,
        [&](int first, int count) {
          in->set(*p, "state", states + std::size_t(first) * state, count, state);
          std::fill(hot.begin(), hot.end(), 0.0f);
          for (int i = 0; i < count; ++i) hot[std::size_t(i) * actions + std::size_t(act[first + i])] = 1.0f;
          oneHot->set(*p, "action", hot.data(), count, actions);
        },
        [&](int first, int count) {
          readRows(*p, "state", *s1, next + std::size_t(first) * state, count, state);
          readRows(*p, "reward", *r1, rewards + first, count, 1);
          readRows(*p, "logits", *l1, logits + std::size_t(first) * actions, count, actions);
          readRows(*p, "value", *v1, values + first, count, 1);
        });
  };
  m.predict = [p = e.predict, pb, state, actions, in = std::make_shared<Rows>(Rows{*scratch(pb, state)}), l1 = scratch(pb, actions),
               v1 = scratch(pb, 1)](const float* states, int n, float* logits, float* values) {
    inChunks(*p, pb, n, [&](int first, int count) { in->set(*p, "state", states + std::size_t(first) * state, count, state); },
             [&](int first, int count) {
               readRows(*p, "logits", *l1, logits + std::size_t(first) * actions, count, actions);
               readRows(*p, "value", *v1, values + first, count, 1);
             });
  };
  return m;
}

}  // namespace

LearnedModel makeCpuLearnedModel(const LearnedSearchSetup& setup) {
  if (setup.evaluator.kind == LearnedModelEvaluator::Kind::Hashed) return hashedLearnedModel(setup.observationSize, setup.stateSize, setup.actions);
  return programModel(setup);
}

std::unique_ptr<LearnedSearch> makeLearnedSearch(exec::Backend& backend, const LearnedSearchSetup& setup, const std::string& device,
                                                 std::string* note) {
  if (device != "cpu" && device != "gpu" && device != "auto")
    throw std::invalid_argument("unknown search device '" + device + "'; expected cpu, gpu or auto");
  std::string why = "the " + backend.id() + " backend has no search of its own";
  exec::DeviceServices* services = backend.deviceServices();
  if (device != "cpu" && services) {
    if (auto search = services->createLearnedSearch(setup, &why)) {
      if (note) *note = "the search runs on the device (" + backend.statusText() + ")";
      return search;
    }
  }
  if (device == "gpu") throw std::runtime_error("search.device = gpu, but " + why);
  if (note) *note = device == "cpu" ? "the search runs on the CPU (as asked)" : "the search runs on the CPU: " + why;
  return std::make_unique<BatchedLearnedSearch>(makeCpuLearnedModel(setup), setup.games, setup.config, setup.seed);
}

}  // namespace cas::search
