#include "core/exec/backend.hpp"


namespace cas::exec {

BackendRegistry& BackendRegistry::instance() {
  static BackendRegistry registry;  // C++ guarantees one thread-safe initialisation
  return registry;
}

BackendRegistry::BackendRegistry() {
  entries_.push_back({"cpu", "CPU reference backend", makeCpuBackend(), {}});
  std::string reason;
  std::shared_ptr<Backend> cuda = loadCudaPlugin(&reason);
  entries_.push_back({"cuda", "CUDA backend", cuda, cuda ? std::string() : reason});
}

const BackendEntry* BackendRegistry::find(std::string_view id) const {
  for (const BackendEntry& e : entries_)
    if (e.id == id) return &e;
  return nullptr;
}

std::shared_ptr<Backend> BackendRegistry::select(std::string_view device, std::string* error) const {
  if (device == "auto") {
    const BackendEntry* cuda = find("cuda");
    return cuda && cuda->available() ? cuda->backend : find("cpu")->backend;
  }
  const BackendEntry* e = find(device);
  if (!e) {
    if (error) *error = "unknown device '" + std::string(device) + "'; expected auto, cpu or cuda";
    return nullptr;
  }
  if (!e->available()) {
    if (error) *error = e->title + " is unavailable: " + e->unavailableReason;
    return nullptr;
  }
  return e->backend;
}

BackendStatus BackendRegistry::status(std::string_view device) const {
  BackendStatus s;
  s.backend = select(device, &s.refusal);
  const BackendEntry* cuda = find("cuda");
  if (!cuda->available()) s.cudaUnavailable = cuda->unavailableReason;
  return s;
}

std::string BackendRegistry::statusLine(std::string_view device) const {
  const BackendStatus s = status(device);
  if (!s.backend) return "No backend: " + s.refusal;
  std::string line = s.backend->statusText();
  if (s.backend->id() == "cpu" && !s.cudaUnavailable.empty()) line += " (CUDA unavailable: " + s.cudaUnavailable + ")";
  return line;
}

namespace {

// The checks every backend's copies share: the name resolves to a node of the right kind, and
// the count is its element count.
ir::NodeId checkedNode(const ir::Graph& g, ir::NodeId id, const char* kind, const std::string& name, std::size_t count) {
  if (id == ir::kNoNode) throw std::invalid_argument("the graph has no " + std::string(kind) + " named '" + name + "'");
  const std::int64_t n = ir::numel(g.node(id).shape);
  if (std::int64_t(count) != n)
    throw std::invalid_argument(std::string(kind) + " '" + name + "' has " + std::to_string(n) + " elements, not " + std::to_string(count));
  return id;
}

}  // namespace

void Executable::setInput(const std::string& name, const float* data, std::size_t count) {
  doSetInput(checkedNode(graph(), graph().findInput(name), "input", name, count), data, count);
}

void Executable::readInput(const std::string& name, float* data, std::size_t count) const {
  doReadInput(checkedNode(graph(), graph().findInput(name), "input", name, count), data, count);
}

void Executable::readOutput(const std::string& name, float* data, std::size_t count) const {
  const ir::NodeId id = checkedNode(graph(), graph().output(name), "output", name, count);
  if (!hasRun()) throw std::logic_error("output '" + name + "' read before the first run");
  doReadOutput(id, data, count);
}

void Executable::runHandingOver(const std::vector<std::string>& outputs, const HandOver& ready) {
  std::vector<ir::NodeId> nodes;
  for (const std::string& name : outputs) {
    const ir::NodeId id = graph().output(name);
    nodes.push_back(checkedNode(graph(), id, "output", name, id == ir::kNoNode ? 0 : std::size_t(ir::numel(graph().node(id).shape))));
  }
  doRunHandingOver(nodes, ready);
}

void Executable::doRunHandingOver(const std::vector<ir::NodeId>& outputs, const HandOver& ready) {
  run();
  std::vector<float> values;
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    values.resize(std::size_t(ir::numel(graph().node(outputs[i]).shape)));
    doReadOutput(outputs[i], values.data(), values.size());
    ready(i, values.data(), values.size());
  }
}

void Executable::copyInputFrom(const std::string& name, const Executable& source, const std::string& sourceInput) {
  const ir::NodeId from = source.graph().findInput(sourceInput);
  if (from == ir::kNoNode) throw std::invalid_argument("the source program has no input named '" + sourceInput + "'");
  const auto count = std::size_t(ir::numel(source.graph().node(from).shape));
  doCopyInputFrom(checkedNode(graph(), graph().findInput(name), "input", name, count), source, from, count);
}

void Executable::doCopyInputFrom(ir::NodeId input, const Executable& source, ir::NodeId sourceInput, std::size_t count) {
  std::vector<float> v(count);
  source.doReadInput(sourceInput, v.data(), count);
  doSetInput(input, v.data(), count);
}

}  // namespace cas::exec
