#pragma once
// Reading the PyTorch golden data in tests/golden/data (format: tests/golden/README.md), the
// shared parameter formula, and building "outputs + gradients" graphs for a PDL case.
#include <QString>

#include <cstdint>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/exec/backend.hpp"
#include "core/ir/autodiff.hpp"
#include "core/ir/passes.hpp"
#include "core/pdl/compiler.hpp"
#include "support/source_dir.hpp"

namespace golden {

inline std::string dataDir() { return cas::test::sourceFile("tests/golden/data"); }

struct Case {
  nlohmann::json meta;
  std::vector<float> data;

  bool has(const std::string& key) const { return meta["tensors"].contains(key); }
  std::vector<float> tensor(const std::string& key) const {
    const auto& t = meta["tensors"].at(key);
    const auto offset = t["offset"].get<size_t>(), size = t["size"].get<size_t>();
    return {data.begin() + std::ptrdiff_t(offset), data.begin() + std::ptrdiff_t(offset + size)};
  }
  std::vector<std::int64_t> shape(const std::string& key) const { return meta["tensors"].at(key)["shape"].get<std::vector<std::int64_t>>(); }
  cas::pdl::CompileOptions options() const {
    cas::pdl::CompileOptions o;
    o.fileName = meta["name"].get<std::string>() + ".pdl";
    o.observationShape = meta["obs_shape"].get<std::vector<std::int64_t>>();
    o.actionCount = meta["action_dim"].get<std::int64_t>();
    o.batch = meta["batch"].get<std::int64_t>();
    return o;
  }
};

inline Case load(const std::string& name) {
  Case c;
  std::ifstream meta(dataDir() + "/" + name + ".json");
  c.meta = nlohmann::json::parse(meta);
  std::ifstream bin(dataDir() + "/" + name + ".bin", std::ios::binary | std::ios::ate);
  const auto bytes = size_t(bin.tellg());
  c.data.resize(bytes / sizeof(float));
  bin.seekg(0);
  bin.read(reinterpret_cast<char*>(c.data.data()), std::streamsize(bytes));
  return c;
}

// The parameter formula of tests/golden/README.md.
inline std::vector<float> formulaParameter(const std::string& name, std::int64_t count, std::int64_t fanIn) {
  std::uint64_t h = 14695981039346656037ull;
  for (unsigned char c : name) h = (h ^ c) * 1099511628211ull;
  std::vector<float> v(static_cast<size_t>(count));
  const bool gamma = name.ends_with("/gamma"), beta = name.ends_with("/beta"), table = name.ends_with("/table");
  for (std::int64_t i = 0; i < count; ++i) {
    std::uint64_t z = h + std::uint64_t(i) + 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    const double u = double(z >> 11) * 0x1.0p-53, s = 2 * u - 1;
    v[size_t(i)] = float(gamma ? 1 + 0.1 * s : beta ? 0.1 * s : table ? s : s / std::sqrt(double(fanIn)));
  }
  return v;
}

// The policy graph extended with L = sum_i sum(output_i * cotangent_i) and its gradients
// ("grad:obs", "grad:<param>"), passes run.
inline cas::ir::Graph gradientGraph(const cas::pdl::CompiledPolicy& policy) {
  using namespace cas::ir;
  Graph g = policy.graph;
  Builder b(g);
  NodeId loss = b.scalar(0);
  for (size_t i = 0; i < policy.outputNames.size(); ++i) {
    NodeId out = g.output(policy.outputNames[i]);
    NodeId cot = b.input("cotangent:" + std::to_string(i), b.shape(out));
    std::vector<std::int64_t> axes;
    for (size_t d = 0; d < b.shape(out).size(); ++d) axes.push_back(std::int64_t(d));
    loss = b.add(loss, b.reduceSum(b.mul(out, cot), axes, false));
  }
  std::vector<NodeId> wrt = {g.findInput("obs")};
  for (NodeId p : g.inputsWithRole(InputRole::Parameter)) wrt.push_back(p);
  std::vector<NodeId> grads = appendGradients(b, loss, wrt);
  for (size_t i = 0; i < wrt.size(); ++i) g.outputs.push_back({"grad:" + g.node(wrt[i]).attrs.name, grads[i]});
  g.outputs.push_back({"L", loss});
  runPasses(g, defaultPipeline());
  return g;
}

inline void setFormulaParameters(cas::exec::Executable& exe) {
  for (const cas::ir::Node& n : exe.graph().nodes)
    if (n.op == cas::ir::Op::Input && n.attrs.role == cas::ir::InputRole::Parameter) {
      auto v = formulaParameter(n.attrs.name, cas::ir::numel(n.shape), n.attrs.fanIn);
      exe.setInput(n.attrs.name, v.data(), v.size());
    }
}

// The gradient graph of a case compiled on the CPU backend, with the case's parameters (by the
// formula), observation and cotangents set.
inline std::unique_ptr<cas::exec::Executable> gradientRun(const Case& c, const cas::pdl::CompiledPolicy& policy) {
  auto exe = cas::exec::BackendRegistry::instance().find("cpu")->backend->compile(gradientGraph(policy));
  setFormulaParameters(*exe);
  auto obs = c.tensor("obs");
  exe->setInput("obs", obs.data(), obs.size());
  for (size_t i = 0; i < policy.outputNames.size(); ++i) {
    auto cot = c.tensor("cotangent:" + std::to_string(i));
    exe->setInput("cotangent:" + std::to_string(i), cot.data(), cot.size());
  }
  return exe;
}

inline std::vector<float> output(const cas::exec::Executable& exe, const std::string& name) {
  std::vector<float> v(size_t(cas::ir::numel(exe.graph().node(exe.graph().output(name)).shape)));
  exe.readOutput(name, v.data(), v.size());
  return v;
}

// The index of the first element outside atol + rtol*|ref|, or -1.
inline std::int64_t firstMismatch(const std::vector<float>& got, const std::vector<float>& ref, double atol, double rtol,
                                  double* worst = nullptr) {
  std::int64_t first = -1;
  double w = 0;
  for (size_t i = 0; i < ref.size() && i < got.size(); ++i) {
    const double err = std::abs(double(got[i]) - double(ref[i]));
    const double allowed = atol + rtol * std::abs(double(ref[i]));
    w = std::max(w, err / allowed);
    if (!(err <= allowed) && first < 0) first = std::int64_t(i);
  }
  if (worst) *worst = w;
  if (got.size() != ref.size()) return 0;
  return first;
}

}  // namespace golden
