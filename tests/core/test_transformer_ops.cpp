// The fused Transformer ops on the CPU backend (core/exec/cpu_transformer.cpp) against the
// compositions they replace (core/ir/decompose.cpp), forward and through autodiff: attention
// with one and several heads, causal, masked by per-sequence lengths (including a length of 0,
// which counts as 1, and lengths past the keys), queries and keys of different lengths; layer
// normalisation with its affine parameters. The PyTorch golden cases (test_golden,
// test_gradcheck) cover the unmasked shapes; these cover the masks PyTorch's cases lack.
#include <QTest>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "core/exec/backend.hpp"
#include "core/ir/autodiff.hpp"
#include "core/ir/decompose.hpp"
#include "support/random_values.hpp"

using namespace cas;

namespace {

using test::randomValues;

struct AttentionCase {
  std::int64_t batch, queries, keys, width, heads;
  bool causal;
  std::vector<float> lengths;  // empty: unmasked
};

// Runs out = attention(q, k, v) (fused or composed) and the gradients of sum(out * w) with
// respect to q, k and v; returns the four outputs in that order.
std::vector<std::vector<float>> runAttention(const AttentionCase& c, bool fused) {
  ir::Graph g;
  ir::Builder b(g);
  const ir::NodeId q = b.input("q", {c.batch, c.queries, c.width}), k = b.input("k", {c.batch, c.keys, c.width});
  const ir::NodeId v = b.input("v", {c.batch, c.keys, c.width}), w = b.input("w", {c.batch, c.queries, c.width});
  const ir::NodeId lengths = c.lengths.empty() ? ir::kNoNode : b.input("lengths", {c.batch, 1});
  const ir::NodeId out = fused ? b.attention(q, k, v, c.heads, c.causal, lengths) : ir::composedAttention(b, q, k, v, c.heads, c.causal, lengths);
  const ir::NodeId loss = b.reduceSum(b.mul(out, w), {0, 1, 2}, false);
  const std::vector<ir::NodeId> grads = ir::appendGradients(b, loss, {q, k, v});
  g.outputs = {{"out", out}, {"dq", grads[0]}, {"dk", grads[1]}, {"dv", grads[2]}};
  auto exe = exec::BackendRegistry::instance().find("cpu")->backend->compile(g);
  unsigned seed = 1;
  for (const char* name : {"q", "k", "v", "w"}) {
    const auto values = randomValues(std::size_t(ir::numel(g.node(g.findInput(name)).shape)), seed++);
    exe->setInput(name, values.data(), values.size());
  }
  if (!c.lengths.empty()) exe->setInput("lengths", c.lengths.data(), c.lengths.size());
  exe->run();
  std::vector<std::vector<float>> results;
  for (const ir::Output& o : g.outputs) {
    results.emplace_back(std::size_t(ir::numel(g.node(o.node).shape)));
    exe->readOutput(o.name, results.back().data(), results.back().size());
  }
  return results;
}

void compareAll(const std::vector<std::vector<float>>& fused, const std::vector<std::vector<float>>& composed,
                const std::vector<std::string>& names) {
  for (std::size_t r = 0; r < names.size(); ++r)
    for (std::size_t i = 0; i < fused[r].size(); ++i)
      QVERIFY2(std::abs(fused[r][i] - composed[r][i]) <= 1e-5f + 1e-4f * std::abs(composed[r][i]),
               qPrintable(QStringLiteral("%1[%2]: fused %3, composed %4").arg(QString::fromStdString(names[r])).arg(i).arg(fused[r][i]).arg(composed[r][i])));
}

}  // namespace

class TestTransformerOps : public QObject {
  Q_OBJECT
 private slots:
  void attentionMatchesItsComposition_data() {
    QTest::addColumn<int>("index");
    QTest::newRow("one head") << 0;
    QTest::newRow("four heads, causal") << 1;
    QTest::newRow("lengths 0, 3, 9 (past the keys)") << 2;
    QTest::newRow("causal with lengths, odd head width") << 3;
    QTest::newRow("more keys than queries, two heads, lengths") << 4;
  }
  void attentionMatchesItsComposition() {
    QFETCH(int, index);
    const AttentionCase cases[] = {
        {2, 5, 5, 8, 1, false, {}},
        {2, 7, 7, 16, 4, true, {}},
        {3, 6, 6, 12, 2, false, {0.f, 3.f, 9.f}},
        {2, 6, 6, 10, 2, true, {4.f, 6.f}},
        {2, 3, 40, 8, 2, false, {37.f, 5.f}},
    };
    compareAll(runAttention(cases[index], true), runAttention(cases[index], false), {"out", "dq", "dk", "dv"});
  }

  void layerNormMatchesItsComposition() {
    std::vector<std::vector<float>> results[2];
    for (bool fused : {true, false}) {
      ir::Graph g;
      ir::Builder b(g);
      const ir::NodeId x = b.input("x", {3, 4, 37}), gamma = b.input("gamma", {37}), beta = b.input("beta", {37}), w = b.input("w", {3, 4, 37});
      const ir::NodeId out = fused ? b.layerNorm(x, gamma, beta, 1e-5f) : ir::composedLayerNorm(b, x, gamma, beta, 1e-5f);
      const std::vector<ir::NodeId> grads = ir::appendGradients(b, b.reduceSum(b.mul(out, w), {0, 1, 2}, false), {x, gamma, beta});
      g.outputs = {{"out", out}, {"dx", grads[0]}, {"dgamma", grads[1]}, {"dbeta", grads[2]}};
      auto exe = exec::BackendRegistry::instance().find("cpu")->backend->compile(g);
      unsigned seed = 11;
      for (const char* name : {"x", "gamma", "beta", "w"}) {
        auto values = randomValues(std::size_t(ir::numel(g.node(g.findInput(name)).shape)), seed++);
        if (std::string(name) == "x")
          for (float& e : values) e = e * 3.0f + 100.0f;  // a large mean: the variance must not cancel
        exe->setInput(name, values.data(), values.size());
      }
      exe->run();
      for (const ir::Output& o : g.outputs) {
        results[fused ? 0 : 1].emplace_back(std::size_t(ir::numel(g.node(o.node).shape)));
        exe->readOutput(o.name, results[fused ? 0 : 1].back().data(), results[fused ? 0 : 1].back().size());
      }
    }
    compareAll(results[0], results[1], {"out", "dx", "dgamma", "dbeta"});
  }

  // The exports see only primitive ops.
  void decompositionLeavesNoFusedOp() {
    ir::Graph g;
    ir::Builder b(g);
    const ir::NodeId x = b.input("x", {2, 5, 8}), gamma = b.input("gamma", {8}), beta = b.input("beta", {8});
    const ir::NodeId y = b.layerNorm(x, gamma, beta, 1e-5f);
    g.outputs = {{"y", b.attention(y, y, y, 2, true)}};
    const ir::Graph plain = ir::decomposeFusedOps(g);
    for (const ir::Node& n : plain.nodes) QVERIFY2(!ir::isAttention(n.op) && n.op != ir::Op::LayerNorm, ir::opName(n.op).data());
    QCOMPARE(plain.node(plain.outputs[0].node).shape, (ir::Shape{2, 5, 8}));
  }
};

QTEST_GUILESS_MAIN(TestTransformerOps)
#include "test_transformer_ops.moc"
