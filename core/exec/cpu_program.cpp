#include "core/exec/cpu_program.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>

#include "core/exec/cpu_gemm.hpp"
#include "core/exec/cpu_transformer.hpp"
#include "core/ir/broadcast.hpp"
#include "core/ir/passes.hpp"

namespace cas::exec {
namespace {

using ir::Node;
using ir::NodeId;
using ir::Op;
using ir::Shape;
using ir::numel;

constexpr std::int64_t kGrain = 1 << 14;  // elements per chunk for elementwise loops

std::int64_t product(const Shape& s, size_t from, size_t to) {
  std::int64_t p = 1;
  for (size_t i = from; i < to; ++i) p *= s[i];
  return p;
}

class CpuProgram final : public Executable {
 public:
  CpuProgram(ir::Graph graph, std::shared_ptr<ThreadPool> pool) : g_(std::move(graph)), pool_(std::move(pool)) {
    bool planned = true;
    for (const Node& n : g_.nodes)
      if (n.op != Op::Input && n.op != Op::Constant && n.buffer < 0) planned = false;
    if (!planned) ir::planMemory(g_);
    std::int64_t offset = 0;
    for (std::int64_t size : g_.plan.sizes) {
      slotOffset_.push_back(offset);
      offset += size;
    }
    arena_.assign(size_t(offset), 0.0f);
    for (size_t i = 0; i < g_.nodes.size(); ++i) {
      const Node& n = g_.nodes[i];
      if (n.op == Op::Input) {
        inputIndex_[n.attrs.name] = NodeId(i);
        inputs_[NodeId(i)].assign(size_t(numel(n.shape)), 0.0f);
      } else if (n.op == Op::Constant) {
        std::vector<float> v = n.attrs.values;
        if (v.size() == 1) v.assign(size_t(numel(n.shape)), v[0]);
        constants_[NodeId(i)] = std::move(v);
      }
    }
    for (const ir::Output& o : g_.outputs) outputIndex_[o.name] = o.node;
    for (const ir::Update& u : g_.updates) {
      auto out = outputIndex_.find(u.output);
      auto in = inputIndex_.find(u.input);
      if (out == outputIndex_.end() || in == inputIndex_.end())
        throw std::invalid_argument("update " + u.output + " -> " + u.input + " names a missing output or input");
      updates_.emplace_back(out->second, in->second);
    }
    pointers_.assign(g_.nodes.size(), nullptr);
  }

  const ir::Graph& graph() const override { return g_; }
  void setFiniteCheck(bool on) override { checkFinite_ = on; }

  void run() override { runNodes({}, nullptr); }

 protected:
  void doSetInput(NodeId input, const float* data, std::size_t count) override { std::copy(data, data + count, inputs_[input].begin()); }
  void doReadInput(NodeId input, float* data, std::size_t count) const override {
    const float* from = inputs_.at(input).data();
    std::copy(from, from + count, data);
  }
  void doReadOutput(NodeId output, float* data, std::size_t count) const override {
    std::copy(pointers_[size_t(output)], pointers_[size_t(output)] + count, data);
  }
  bool hasRun() const override { return ran_; }

  // An output's value is final once its node has run: outputs keep their slots to the end (the
  // memory plan), so each is handed over right after its node, while later nodes still run.
  void doRunHandingOver(const std::vector<NodeId>& outputs, const HandOver& ready) override {
    std::multimap<NodeId, std::size_t> byNode;
    for (std::size_t i = 0; i < outputs.size(); ++i) byNode.emplace(outputs[i], i);
    runNodes(byNode, &ready);
  }

 private:
  void runNodes(const std::multimap<NodeId, std::size_t>& handOver, const HandOver* ready) {
    for (size_t i = 0; i < g_.nodes.size(); ++i) {
      const Node& n = g_.nodes[i];
      switch (n.op) {
        case Op::Input: pointers_[i] = inputs_[NodeId(i)].data(); break;
        case Op::Constant: pointers_[i] = constants_[NodeId(i)].data(); break;
        case Op::Reshape: pointers_[i] = pointers_[size_t(n.inputs[0])]; break;
        default: {
          float* out = arena_.data() + slotOffset_[size_t(n.buffer)];
          pointers_[i] = out;
          std::vector<const float*>& in = inputPointers_;  // reused: no allocation per node
          in.clear();
          for (NodeId id : n.inputs) in.push_back(pointers_[size_t(id)]);
          execute(n, in, out);
          if (checkFinite_) checkFinite(NodeId(i), out);
        }
      }
      for (auto [at, end] = handOver.equal_range(NodeId(i)); at != end; ++at)
        (*ready)(at->second, pointers_[i], size_t(numel(n.shape)));
    }
    ran_ = true;
    // Updates read outputs before any input changes, so an update may read another's input.
    std::vector<std::vector<float>> values;
    for (auto [out, in] : updates_) values.emplace_back(pointers_[size_t(out)], pointers_[size_t(out)] + numel(g_.node(out).shape));
    for (size_t k = 0; k < updates_.size(); ++k) inputs_[updates_[k].second] = std::move(values[k]);
  }

  void checkFinite(NodeId id, const float* out) const {
    const Node& n = g_.node(id);
    const std::int64_t count = numel(n.shape);
    for (std::int64_t e = 0; e < count; ++e) {
      if (std::isfinite(out[e])) continue;
      throw NonFiniteError(std::string(std::isnan(out[e]) ? "NaN" : "Inf") + " first produced by " + ir::describeNode(g_, id));
    }
  }

  void parallel(std::int64_t n, std::int64_t grain, const std::function<void(std::int64_t, std::int64_t)>& body) {
    pool_->parallelFor(n, grain, body);
  }

  void execute(const Node& n, const std::vector<const float*>& in, float* out);
  void elementwise(const Node& n, const std::vector<const float*>& in, float* out);
  void reduce(const Node& n, const float* x, float* out);
  void softmax(const Node& n, const float* x, float* out);
  void matmul(const Node& n, const float* a, const float* b, float* out);
  void conv2d(const Node& n, const float* x, const float* w, float* out);
  void conv2dGradInput(const Node& n, const float* g, const float* w, float* out);
  void conv2dGradWeight(const Node& n, const float* x, const float* g, float* out);
  void pool2d(const Node& n, const float* x, float* out);
  void pool2dGrad(const Node& n, const std::vector<const float*>& in, float* out);
  void transformerOp(const Node& n, const std::vector<const float*>& in, float* out);
  void rows(const Node& n, const std::vector<const float*>& in, float* out);

  ir::Graph g_;
  std::shared_ptr<ThreadPool> pool_;
  std::vector<float> arena_;
  std::vector<std::int64_t> slotOffset_;
  std::map<NodeId, std::vector<float>> inputs_, constants_;
  std::map<std::string, NodeId> inputIndex_, outputIndex_;
  std::vector<std::pair<NodeId, NodeId>> updates_;
  std::vector<const float*> pointers_;
  std::vector<const float*> inputPointers_;  // the running node's inputs
  bool checkFinite_ = false, ran_ = false;
};

void CpuProgram::execute(const Node& n, const std::vector<const float*>& in, float* out) {
  const Shape& xs = n.inputs.empty() ? n.shape : g_.node(n.inputs[0]).shape;
  switch (n.op) {
    case Op::Transpose: {
      const size_t rank = xs.size();
      std::vector<std::int64_t> inStride(rank, 1);
      for (size_t d = rank - 1; d-- > 0;) inStride[d] = inStride[d + 1] * xs[d + 1];
      const Shape& os = n.shape;
      const std::int64_t count = numel(os);
      parallel(count, kGrain, [&](std::int64_t b, std::int64_t e) {
        for (std::int64_t i = b; i < e; ++i) {
          std::int64_t rest = i, src = 0;
          for (size_t d = rank; d-- > 0;) {
            src += (rest % os[d]) * inStride[size_t(n.attrs.ints[d])];
            rest /= os[d];
          }
          out[i] = in[0][src];
        }
      });
      return;
    }
    case Op::BroadcastTo: {
      ir::BroadcastIndexer index(xs, n.shape);
      parallel(numel(n.shape), kGrain, [&](std::int64_t b, std::int64_t e) {
        for (std::int64_t i = b; i < e; ++i) out[i] = in[0][index(i)];
      });
      return;
    }
    case Op::Concat: {
      const auto axis = size_t(n.attrs.axis);
      const std::int64_t outer = product(n.shape, 0, axis), inner = product(n.shape, axis + 1, n.shape.size());
      const std::int64_t rowOut = n.shape[axis] * inner;
      std::int64_t offset = 0;
      for (size_t k = 0; k < in.size(); ++k) {
        const std::int64_t rowIn = g_.node(n.inputs[k]).shape[axis] * inner;
        for (std::int64_t o = 0; o < outer; ++o) std::memcpy(out + o * rowOut + offset, in[k] + o * rowIn, size_t(rowIn) * sizeof(float));
        offset += rowIn;
      }
      return;
    }
    case Op::Slice: {
      const auto axis = size_t(n.attrs.axis);
      const std::int64_t outer = product(xs, 0, axis), inner = product(xs, axis + 1, xs.size());
      const std::int64_t rowIn = xs[axis] * inner, rowOut = n.attrs.length * inner;
      for (std::int64_t o = 0; o < outer; ++o)
        std::memcpy(out + o * rowOut, in[0] + o * rowIn + n.attrs.start * inner, size_t(rowOut) * sizeof(float));
      return;
    }
    case Op::ReduceSum:
    case Op::ReduceMax: reduce(n, in[0], out); return;
    case Op::Softmax:
    case Op::LogSoftmax: softmax(n, in[0], out); return;
    case Op::MatMul: matmul(n, in[0], in[1], out); return;
    case Op::Conv2d: conv2d(n, in[0], in[1], out); return;
    case Op::Conv2dGradInput: conv2dGradInput(n, in[0], in[1], out); return;
    case Op::Conv2dGradWeight: conv2dGradWeight(n, in[0], in[1], out); return;
    case Op::MaxPool2d:
    case Op::AvgPool2d: pool2d(n, in[0], out); return;
    case Op::MaxPool2dGrad:
    case Op::AvgPool2dGrad: pool2dGrad(n, in, out); return;
    case Op::Gather:
    case Op::ScatterAddRows: rows(n, in, out); return;
    default:
      if (ir::isAttention(n.op) || n.op == Op::LayerNorm || n.op == Op::LayerNormGrad) transformerOp(n, in, out);
      else elementwise(n, in, out);
      return;
  }
}

// Gather (embedding lookups) and its gradient ScatterAddRows.
void CpuProgram::rows(const Node& n, const std::vector<const float*>& in, float* out) {
  if (n.op == Op::Gather) {
    const Shape& table = g_.node(n.inputs[0]).shape;
    const std::int64_t rows = table[0], width = table[1], count = numel(g_.node(n.inputs[1]).shape);
    for (std::int64_t i = 0; i < count; ++i) {
      const float id = in[1][i];
      if (!(id >= 0 && id < float(rows)) || id != std::floor(id))
        throw std::out_of_range("embedding id " + std::to_string(id) + " is not an integer in [0, " + std::to_string(rows) + ") at " +
                                ir::describeNode(g_, NodeId(&n - g_.nodes.data())));
      std::memcpy(out + i * width, in[0] + std::int64_t(id) * width, size_t(width) * sizeof(float));
    }
    return;
  }
  const std::int64_t rows = n.shape[0], width = n.shape[1], count = numel(g_.node(n.inputs[0]).shape);
  std::fill(out, out + rows * width, 0.0f);
  for (std::int64_t i = 0; i < count; ++i) {
    const auto row = std::int64_t(in[0][i]);
    if (row < 0 || row >= rows) continue;  // the forward gather already refused such ids
    for (std::int64_t j = 0; j < width; ++j) out[row * width + j] += in[1][i * width + j];
  }
}

void CpuProgram::transformerOp(const Node& n, const std::vector<const float*>& in, float* out) {
  const Shape& xs = g_.node(n.inputs[0]).shape;
  if (n.op == Op::LayerNorm || n.op == Op::LayerNormGrad) {
    const std::int64_t width = xs.back(), rows = numel(xs) / width;
    if (n.op == Op::LayerNorm) layerNormForward(*pool_, rows, width, n.attrs.eps, in[0], in[1], in[2], out);
    else layerNormGrad(*pool_, rows, width, n.attrs.eps, in[0], in[1], in[2], out);
    return;
  }
  AttentionGeometry a;
  a.batch = xs[0];
  a.queries = xs[1];
  a.width = xs[2];
  a.keys = g_.node(n.inputs[1]).shape[1];
  a.heads = n.attrs.heads;
  a.causal = n.attrs.causal;
  if (n.inputs.size() > ir::attentionInputsBeforeLengths(n.op)) a.lengths = in.back();
  switch (n.op) {
    case Op::Attention: attentionForward(*pool_, a, in[0], in[1], in[2], out); return;
    case Op::AttentionStats: attentionStats(*pool_, a, in[0], in[1], in[2], in[3], out); return;
    case Op::AttentionGradQ: attentionGradQ(*pool_, a, in[0], in[1], in[2], in[3], in[4], out); return;
    default: attentionGradKV(*pool_, a, in[0], in[1], in[2], in[3], in[4], out); return;
  }
}

void CpuProgram::elementwise(const Node& n, const std::vector<const float*>& in, float* out) {
  const std::int64_t count = numel(n.shape);
  std::vector<ir::BroadcastIndexer> index;
  for (NodeId id : n.inputs) index.emplace_back(g_.node(id).shape, n.shape);
  const ir::OpKind kind = ir::opInfo(n.op).kind;
  if (n.op == Op::Dropout) {
    const float keepScale = 1.0f / (1.0f - n.attrs.rate);
    parallel(count, kGrain, [&](std::int64_t b, std::int64_t e) {
      for (std::int64_t i = b; i < e; ++i)
        out[i] = ir::dropoutKeeps(n.attrs.seed, std::uint64_t(i), n.attrs.rate) ? in[0][i] * keepScale : 0.0f;
    });
    return;
  }
  if (n.op == Op::Tanh) {  // the vector widths this machine has (cpu_gemm.hpp)
    parallel(count, kGrain, [&](std::int64_t b, std::int64_t e) { tanhRows(in[0] + b, out + b, e - b); });
    return;
  }
  if (kind == ir::OpKind::Unary) {
    const float* x = in[0];
    ir::withScalar<ir::OpKind::Unary>(n.op, [&](auto f) {
      parallel(count, kGrain, [&](std::int64_t b, std::int64_t e) {
        for (std::int64_t i = b; i < e; ++i) out[i] = f(x[i]);
      });
    });
    return;
  }
  if (kind == ir::OpKind::Binary) {
    const float *x = in[0], *y = in[1];
    ir::withScalar<ir::OpKind::Binary>(n.op, [&](auto f) {
      parallel(count, kGrain, [&](std::int64_t b, std::int64_t e) {
        if (index[0].identity() && index[1].identity()) {
          for (std::int64_t i = b; i < e; ++i) out[i] = f(x[i], y[i]);
        } else if (index[0].identity() && index[1].scalar()) {
          const float rhs = y[0];
          for (std::int64_t i = b; i < e; ++i) out[i] = f(x[i], rhs);
        } else if (index[0].scalar() && index[1].identity()) {
          const float lhs = x[0];
          for (std::int64_t i = b; i < e; ++i) out[i] = f(lhs, y[i]);
        } else if (index[0].identity() && n.shape.size() >= 1 && g_.node(n.inputs[1]).shape == Shape{n.shape.back()}) {
          // A bias row added to every row: the common case of dense layers.
          const std::int64_t width = n.shape.back();
          for (std::int64_t i = b; i < e;) {
            const std::int64_t col = i % width, run = std::min(e - i, width - col);
            for (std::int64_t j = 0; j < run; ++j) out[i + j] = f(x[i + j], y[col + j]);
            i += run;
          }
        } else if (index[0].identity() && index[1].constantRun() > 1) {
          // A value per run of the output (a channel bias over a plane): looked up once a run.
          const std::int64_t run = index[1].constantRun();
          for (std::int64_t i = b; i < e;) {
            const std::int64_t end = std::min(e, (i / run + 1) * run);
            const float rhs = y[index[1](i)];
            for (; i < end; ++i) out[i] = f(x[i], rhs);
          }
        } else if (index[1].identity() && index[0].constantRun() > 1) {
          const std::int64_t run = index[0].constantRun();
          for (std::int64_t i = b; i < e;) {
            const std::int64_t end = std::min(e, (i / run + 1) * run);
            const float lhs = x[index[0](i)];
            for (; i < end; ++i) out[i] = f(lhs, y[i]);
          }
        } else {
          for (std::int64_t i = b; i < e; ++i) out[i] = f(x[index[0](i)], y[index[1](i)]);
        }
      });
    });
    return;
  }
  ir::withScalar<ir::OpKind::Ternary>(n.op, [&](auto f) {
    parallel(count, kGrain, [&](std::int64_t b, std::int64_t e) {
      for (std::int64_t i = b; i < e; ++i) out[i] = f(in[0][index[0](i)], in[1][index[1](i)], in[2][index[2](i)]);
    });
  });
}

void CpuProgram::reduce(const Node& n, const float* x, float* out) {
  const Shape& xs = g_.node(n.inputs[0]).shape;
  const std::int64_t outCount = numel(n.shape), inCount = numel(xs);
  const std::vector<std::int64_t> outStride = ir::reductionOutputStrides(xs, n.attrs.ints);
  const bool isMax = n.op == Op::ReduceMax;
  std::fill(out, out + outCount, isMax ? -std::numeric_limits<float>::infinity() : 0.0f);
  // Reduced axes that are one run [first, last] (a bias gradient's batch axis, a row's sum):
  // x is [outer, reduced, inner] and out [outer, inner], each output taking its inputs in the
  // order the general walk below takes them, so the sums are the same to the bit.
  std::vector<std::int64_t> axes = n.attrs.ints;
  std::sort(axes.begin(), axes.end());
  if (!axes.empty() && axes.back() - axes.front() + 1 == std::int64_t(axes.size())) {
    const std::int64_t outer = product(xs, 0, size_t(axes.front())), reduced = product(xs, size_t(axes.front()), size_t(axes.back() + 1));
    const std::int64_t inner = product(xs, size_t(axes.back() + 1), xs.size());
    for (std::int64_t a = 0; a < outer; ++a)
      for (std::int64_t r = 0; r < reduced; ++r) {
        const float* row = x + (a * reduced + r) * inner;
        float* to = out + a * inner;
        if (isMax)
          for (std::int64_t i = 0; i < inner; ++i) to[i] = std::max(to[i], row[i]);
        else
          for (std::int64_t i = 0; i < inner; ++i) to[i] += row[i];
      }
    return;
  }
  // Trailing reduced axes (a channel bias's gradient sums each plane): a run of inputs that all
  // go to one output, summed in a register in the same order, then the odometer moves a run.
  size_t outerDims = xs.size();
  while (outerDims > 0 && outStride[outerDims - 1] == 0) --outerDims;
  const std::int64_t run = product(xs, outerDims, xs.size());
  std::vector<std::int64_t> coord(outerDims, 0);
  std::int64_t o = 0;
  for (std::int64_t i = 0; i < inCount; i += run) {
    float acc = out[o];
    for (std::int64_t r = 0; r < run; ++r) acc = isMax ? std::max(acc, x[i + r]) : acc + x[i + r];
    out[o] = acc;
    for (size_t d = outerDims; d-- > 0;) {  // advance the odometer, keeping o in step
      ++coord[d];
      o += outStride[d];
      if (coord[d] < xs[d]) break;
      o -= outStride[d] * coord[d];
      coord[d] = 0;
    }
  }
}

void CpuProgram::softmax(const Node& n, const float* x, float* out) {
  const auto axis = size_t(n.attrs.axis);
  const std::int64_t outer = product(n.shape, 0, axis), len = n.shape[axis], inner = product(n.shape, axis + 1, n.shape.size());
  const bool log = n.op == Op::LogSoftmax;
  parallel(outer * inner, 64, [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t r = b; r < e; ++r) {
      const std::int64_t base = (r / inner) * len * inner + r % inner;
      float m = -std::numeric_limits<float>::infinity();
      for (std::int64_t k = 0; k < len; ++k) m = std::max(m, x[base + k * inner]);
      float sum = 0;
      for (std::int64_t k = 0; k < len; ++k) sum += std::exp(x[base + k * inner] - m);
      const float logSum = std::log(sum);
      for (std::int64_t k = 0; k < len; ++k) {
        const float shifted = x[base + k * inner] - m;
        out[base + k * inner] = log ? shifted - logSum : std::exp(shifted) / sum;
      }
    }
  });
}

void CpuProgram::matmul(const Node& n, const float* a, const float* b, float* out) {
  const Shape &as = g_.node(n.inputs[0]).shape, &bs = g_.node(n.inputs[1]).shape;
  const bool ta = n.attrs.transposeA, tb = n.attrs.transposeB;
  const std::int64_t m = n.shape[n.shape.size() - 2], nn = n.shape.back();
  const std::int64_t k = ta ? as[as.size() - 2] : as.back();
  const Shape lead(n.shape.begin(), n.shape.end() - 2);
  const Shape aLead(as.begin(), as.end() - 2), bLead(bs.begin(), bs.end() - 2);
  const std::int64_t batches = numel(lead), aSize = as[as.size() - 2] * as.back(), bSize = bs[bs.size() - 2] * bs.back();
  ir::BroadcastIndexer ai(aLead, lead), bi(bLead, lead);
  // A 2-D right operand shared by every batch (a dense layer): one product over all rows.
  if (!ta && bLead.empty() && numel(aLead) == batches) {
    gemm(pool_.get(), false, tb, batches * m, nn, k, a, k, b, tb ? k : nn, out, nn, false);
    return;
  }
  auto one = [&](std::int64_t i) {
    gemm(nullptr, ta, tb, m, nn, k, a + ai(i) * aSize, as.back(), b + bi(i) * bSize, bs.back(), out + i * m * nn, nn, false);
  };
  if (batches == 1) {
    gemm(pool_.get(), ta, tb, m, nn, k, a, as.back(), b, bs.back(), out, nn, false);
    return;
  }
  parallel(batches, 1, [&](std::int64_t b0, std::int64_t b1) {
    for (std::int64_t i = b0; i < b1; ++i) one(i);
  });
}

// --- convolution through im2col ------------------------------------------------------------

struct ConvGeometry {
  std::int64_t n, c, h, w, o, oh, ow, kh, kw, sh, sw, pt, pl;
  std::int64_t patch() const { return c * kh * kw; }
  std::int64_t pixels() const { return oh * ow; }
};

ConvGeometry geometry(const Node& node, const Shape& x, const Shape& y) {
  const ir::Attrs& a = node.attrs;
  return {x[0], x[1], x[2], x[3], y[1], y[2], y[3], a.kernelH, a.kernelW, a.strideH, a.strideW, a.padTop, a.padLeft};
}

// col[(c*kh + i)*kw + j, oy*ow + ox] = x[c, oy*sh + i - pt, ox*sw + j - pl] (0 outside)
void im2col(const ConvGeometry& g, const float* x, float* col) {
  for (std::int64_t c = 0; c < g.c; ++c)
    for (std::int64_t i = 0; i < g.kh; ++i)
      for (std::int64_t j = 0; j < g.kw; ++j) {
        float* row = col + ((c * g.kh + i) * g.kw + j) * g.pixels();
        for (std::int64_t oy = 0; oy < g.oh; ++oy) {
          const std::int64_t y = oy * g.sh + i - g.pt;
          for (std::int64_t ox = 0; ox < g.ow; ++ox) {
            const std::int64_t xx = ox * g.sw + j - g.pl;
            row[oy * g.ow + ox] = (y >= 0 && y < g.h && xx >= 0 && xx < g.w) ? x[(c * g.h + y) * g.w + xx] : 0.0f;
          }
        }
      }
}

void col2imAdd(const ConvGeometry& g, const float* col, float* x) {
  for (std::int64_t c = 0; c < g.c; ++c)
    for (std::int64_t i = 0; i < g.kh; ++i)
      for (std::int64_t j = 0; j < g.kw; ++j) {
        const float* row = col + ((c * g.kh + i) * g.kw + j) * g.pixels();
        for (std::int64_t oy = 0; oy < g.oh; ++oy) {
          const std::int64_t y = oy * g.sh + i - g.pt;
          if (y < 0 || y >= g.h) continue;
          for (std::int64_t ox = 0; ox < g.ow; ++ox) {
            const std::int64_t xx = ox * g.sw + j - g.pl;
            if (xx >= 0 && xx < g.w) x[(c * g.h + y) * g.w + xx] += row[oy * g.ow + ox];
          }
        }
      }
}

void CpuProgram::conv2d(const Node& n, const float* x, const float* w, float* out) {
  const ConvGeometry cg = geometry(n, g_.node(n.inputs[0]).shape, n.shape);
  const bool perSample = cg.n >= pool_->size();
  parallel(cg.n, 1, [&](std::int64_t b0, std::int64_t b1) {
    std::vector<float> col(size_t(cg.patch() * cg.pixels()));
    for (std::int64_t s = b0; s < b1; ++s) {
      im2col(cg, x + s * cg.c * cg.h * cg.w, col.data());
      gemm(perSample ? nullptr : pool_.get(), false, false, cg.o, cg.pixels(), cg.patch(), w, cg.patch(), col.data(), cg.pixels(),
           out + s * cg.o * cg.pixels(), cg.pixels(), false);
    }
  });
}

void CpuProgram::conv2dGradInput(const Node& n, const float* gy, const float* w, float* out) {
  const ConvGeometry cg = geometry(n, n.attrs.refShape, g_.node(n.inputs[0]).shape);
  std::fill(out, out + numel(n.shape), 0.0f);
  parallel(cg.n, 1, [&](std::int64_t b0, std::int64_t b1) {
    std::vector<float> col(size_t(cg.patch() * cg.pixels()));
    for (std::int64_t s = b0; s < b1; ++s) {
      gemm(nullptr, true, false, cg.patch(), cg.pixels(), cg.o, w, cg.patch(), gy + s * cg.o * cg.pixels(), cg.pixels(), col.data(),
           cg.pixels(), false);
      col2imAdd(cg, col.data(), out + s * cg.c * cg.h * cg.w);
    }
  });
}

void CpuProgram::conv2dGradWeight(const Node& n, const float* x, const float* gy, float* out) {
  const ConvGeometry cg = geometry(n, g_.node(n.inputs[0]).shape, g_.node(n.inputs[1]).shape);
  const std::int64_t wSize = cg.o * cg.patch();
  const int parts = int(std::min<std::int64_t>(pool_->size(), cg.n));
  std::vector<std::vector<float>> partial(size_t(parts), std::vector<float>(size_t(wSize), 0.0f));
  parallel(parts, 1, [&](std::int64_t p0, std::int64_t p1) {
    std::vector<float> col(size_t(cg.patch() * cg.pixels()));
    for (std::int64_t p = p0; p < p1; ++p)
      for (std::int64_t s = p; s < cg.n; s += parts) {
        im2col(cg, x + s * cg.c * cg.h * cg.w, col.data());
        gemm(nullptr, false, true, cg.o, cg.patch(), cg.pixels(), gy + s * cg.o * cg.pixels(), cg.pixels(), col.data(), cg.pixels(),
             partial[size_t(p)].data(), cg.patch(), true);
      }
  });
  std::fill(out, out + wSize, 0.0f);
  for (const auto& part : partial)
    for (std::int64_t i = 0; i < wSize; ++i) out[i] += part[size_t(i)];
}

// --- pooling -------------------------------------------------------------------------------

void CpuProgram::pool2d(const Node& n, const float* x, float* out) {
  const ConvGeometry cg = geometry(n, g_.node(n.inputs[0]).shape, n.shape);
  const bool isMax = n.op == Op::MaxPool2d;
  const float area = float(cg.kh * cg.kw);  // average counts padding, as PyTorch's default does
  parallel(cg.n * cg.c, 1, [&](std::int64_t p0, std::int64_t p1) {
    for (std::int64_t plane = p0; plane < p1; ++plane) {
      const float* xp = x + plane * cg.h * cg.w;
      float* op = out + plane * cg.pixels();
      for (std::int64_t oy = 0; oy < cg.oh; ++oy)
        for (std::int64_t ox = 0; ox < cg.ow; ++ox) {
          float acc = isMax ? -std::numeric_limits<float>::infinity() : 0.0f;
          for (std::int64_t i = 0; i < cg.kh; ++i)
            for (std::int64_t j = 0; j < cg.kw; ++j) {
              const std::int64_t y = oy * cg.sh + i - cg.pt, xx = ox * cg.sw + j - cg.pl;
              if (y < 0 || y >= cg.h || xx < 0 || xx >= cg.w) continue;
              const float v = xp[y * cg.w + xx];
              acc = isMax ? std::max(acc, v) : acc + v;
            }
          op[oy * cg.ow + ox] = isMax ? acc : acc / area;
        }
    }
  });
}

void CpuProgram::pool2dGrad(const Node& n, const std::vector<const float*>& in, float* out) {
  const bool isMax = n.op == Op::MaxPool2dGrad;
  const Shape& inputShape = isMax ? g_.node(n.inputs[0]).shape : n.attrs.refShape;
  const Shape& gradShape = g_.node(n.inputs[isMax ? 1 : 0]).shape;
  const ConvGeometry cg = geometry(n, inputShape, gradShape);
  const float* x = isMax ? in[0] : nullptr;
  const float* gy = in[isMax ? 1 : 0];
  const float area = float(cg.kh * cg.kw);
  std::fill(out, out + numel(n.shape), 0.0f);
  parallel(cg.n * cg.c, 1, [&](std::int64_t p0, std::int64_t p1) {
    for (std::int64_t plane = p0; plane < p1; ++plane) {
      float* dx = out + plane * cg.h * cg.w;
      const float* gp = gy + plane * cg.pixels();
      for (std::int64_t oy = 0; oy < cg.oh; ++oy)
        for (std::int64_t ox = 0; ox < cg.ow; ++ox) {
          std::int64_t best = -1;
          float bestValue = -std::numeric_limits<float>::infinity();
          for (std::int64_t i = 0; i < cg.kh; ++i)
            for (std::int64_t j = 0; j < cg.kw; ++j) {
              const std::int64_t y = oy * cg.sh + i - cg.pt, xx = ox * cg.sw + j - cg.pl;
              if (y < 0 || y >= cg.h || xx < 0 || xx >= cg.w) continue;
              if (!isMax) {
                dx[y * cg.w + xx] += gp[oy * cg.ow + ox] / area;
              } else if (const float v = x[plane * cg.h * cg.w + y * cg.w + xx]; v > bestValue) {
                bestValue = v;  // the first maximum takes the gradient, as in PyTorch
                best = y * cg.w + xx;
              }
            }
          if (isMax && best >= 0) dx[best] += gp[oy * cg.ow + ox];
        }
    }
  });
}

}  // namespace

std::unique_ptr<Executable> compileForCpu(const ir::Graph& graph, std::shared_ptr<ThreadPool> pool) {
  return std::make_unique<CpuProgram>(graph, std::move(pool));
}

}  // namespace cas::exec
