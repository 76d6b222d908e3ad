// The fused Transformer kernels' own code (core/cuda_render/kernels/attention.cuh, layer_norm.cuh)
// run on the CPU (support/cuda_on_cpu.hpp, warps and shuffles included) against the CPU backend's
// twins (core/exec/cpu_transformer.cpp): forward, statistics, dq and [dk | dv] for heads narrower
// than a warp and two warps wide, sequences longer than a warp (several key blocks, a partial
// last one), causal, masked by lengths (0, inside, past the keys), in blocks within one head
// (shared tiles) and blocks across heads (rows read directly); layer normalisation and its
// gradient over rows narrower and wider than a warp. The template arguments are the ones the
// renderer writes (checked against its text). The GPU suite runs the same kernels on the device.
#include <QTest>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "core/cuda_render/render.hpp"
#include "core/exec/cpu_transformer.hpp"
#include "core/ir/autodiff.hpp"
#include "core/ir/builder.hpp"
#include "support/cuda_on_cpu.hpp"
#include "support/random_values.hpp"

// Their #pragma unroll is nvcc's (-Wno-unknown-pragmas here).
#include "core/cuda_render/kernels/prelude.cuh"
#include "core/cuda_render/kernels/elementwise.cuh"
#include "core/cuda_render/kernels/attention.cuh"
#include "core/cuda_render/kernels/attention_mma.cuh"
#include "core/cuda_render/kernels/layer_norm.cuh"

using namespace cas;

namespace {

// 128 threads: blocks of four warps within one head (the tiled path); 96: some blocks span
// two heads (the direct path beside the tiled one).
unsigned blockSize = 128;

using test::randomValues;

void expectClose(const std::vector<float>& got, const std::vector<float>& want, const char* what) {
  QCOMPARE(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i)
    QVERIFY2(std::abs(got[i] - want[i]) <= 2e-5f + 2e-4f * std::abs(want[i]),
             qPrintable(QStringLiteral("%1[%2]: kernel %3, CPU backend %4").arg(QLatin1String(what)).arg(i).arg(got[i]).arg(want[i])));
}

// Runs a segment of `threads` threads the way a generated kernel does: block b calls the device
// function with its block counter.
template <typename Call>
void runSegment(std::int64_t threads, Call call) {
  test::runOnCpu(unsigned((threads + blockSize - 1) / blockSize), blockSize, [&] {
    int b = int(blockIdx.x);
    call(b);
  });
}

// The renderer's text of an attention graph's kernels holds `expected`.
void expectRendered(std::int64_t batch, std::int64_t t, std::int64_t s, std::int64_t d, std::int64_t heads, bool causal, const std::string& expected,
                    ir::Precision precision = ir::Precision::F32) {
  ir::Graph g;
  ir::Builder b(g);
  b.setPrecision(precision);
  const ir::NodeId q = b.input("q", {batch, t, d}), k = b.input("k", {batch, s, d});
  g.outputs = {{"out", b.attention(q, k, k, heads, causal, b.input("lengths", {batch, 1}))}};
  std::string source;
  for (const gpu::Step& step : gpu::renderSchedule(g).steps) source += step.source;
  QVERIFY2(source.find(expected) != std::string::npos, qPrintable(QString::fromStdString("missing " + expected + " in\n" + source)));
}

template <int B, int T, int S, int D, int H, bool Causal>
void checkAttention(std::vector<float> lengths) {
  exec::ThreadPool pool(2);
  exec::AttentionGeometry a{B, T, S, D, H, Causal, lengths.empty() ? nullptr : lengths.data()};
  const float* len = a.lengths;
  const auto q = randomValues(B * T * D, 1), k = randomValues(B * S * D, 2), v = randomValues(B * S * D, 3), g = randomValues(B * T * D, 4);
  std::vector<float> out(B * T * D), stats(B * H * T * 2), dq(B * T * D), dkv(B * S * 2 * D);
  std::vector<float> wantOut = out, wantStats = stats, wantDq = dq, wantDkv = dkv;
  exec::attentionForward(pool, a, q.data(), k.data(), v.data(), wantOut.data());
  exec::attentionStats(pool, a, q.data(), k.data(), v.data(), g.data(), wantStats.data());
  exec::attentionGradQ(pool, a, q.data(), k.data(), v.data(), g.data(), wantStats.data(), wantDq.data());
  exec::attentionGradKV(pool, a, q.data(), k.data(), v.data(), g.data(), wantStats.data(), wantDkv.data());
  constexpr int QueryRows = B * H * T, KeyRows = B * H * S;
  // The segments' threads: a warp per row, each head's rows padded to a multiple of 8.
  const std::int64_t queryThreads = B * H * ((T + 7) / 8 * 8) * 32, keyThreads = B * H * ((S + 7) / 8 * 8) * 32;
  runSegment(queryThreads, [&](int& b) { cas_attention_forward<QueryRows, T, S, D, H, Causal>(b, q.data(), k.data(), v.data(), len, out.data()); });
  runSegment(queryThreads, [&](int& b) { cas_attention_stats<QueryRows, T, S, D, H, Causal>(b, q.data(), k.data(), v.data(), g.data(), len, stats.data()); });
  runSegment(queryThreads, [&](int& b) {
    cas_attention_grad_q<QueryRows, T, S, D, H, Causal>(b, q.data(), k.data(), v.data(), g.data(), wantStats.data(), len, dq.data());
  });
  runSegment(keyThreads, [&](int& b) {
    cas_attention_grad_kv<KeyRows, T, S, D, H, Causal>(b, q.data(), k.data(), v.data(), g.data(), wantStats.data(), len, dkv.data());
  });
  expectClose(out, wantOut, "out");
  expectClose(stats, wantStats, "stats");
  expectClose(dq, wantDq, "dq");
  expectClose(dkv, wantDkv, "dkv");
  expectRendered(B, T, S, D, H, Causal, "cas_attention_forward<" + std::to_string(QueryRows) + ", " + std::to_string(T) + ", " + std::to_string(S) + ", " +
                                            std::to_string(D) + ", " + std::to_string(H) + ", " + (Causal ? "true" : "false") + ">(b, ");
}

// The tensor-core forward (attention_mma.cuh, its mma.sync emulated) against the CPU backend's
// fp32 attention: within `bound` of it everywhere, the bound docs/pdl.md gives for the precision
// (the operands rounded to 8 or 11 mantissa bits, the sums in fp32; values in [-1, 1]).
template <int B, int T, int S, int D, int H, bool Causal, bool BF16>
void checkTensorCoreAttention(std::vector<float> lengths) {
  const float bound = BF16 ? 1e-2f : 2e-3f;
  exec::ThreadPool pool(2);
  exec::AttentionGeometry a{B, T, S, D, H, Causal, lengths.empty() ? nullptr : lengths.data()};
  const auto q = randomValues(B * T * D, 11), k = randomValues(B * S * D, 12), v = randomValues(B * S * D, 13);
  std::vector<float> out(B * T * D, -99.f), want(B * T * D);
  exec::attentionForward(pool, a, q.data(), k.data(), v.data(), want.data());
  constexpr int QueryRows = B * H * T;
  runSegment(B * H * ((T + 15) / 16) * 32,
             [&](int& b) { cas_attention_forward_mma<QueryRows, T, S, D, H, Causal, BF16>(b, q.data(), k.data(), v.data(), a.lengths, out.data()); });
  float worst = 0.f;
  for (std::size_t i = 0; i < out.size(); ++i) {
    QVERIFY2(std::abs(out[i] - want[i]) <= bound, qPrintable(QStringLiteral("out[%1]: kernel %2, CPU backend %3").arg(i).arg(out[i]).arg(want[i])));
    worst = std::max(worst, std::abs(out[i] - want[i]));
  }
  QVERIFY2(worst > 0.f, "the 16-bit operands must show in the result: is the fp32 kernel running?");
  qInfo("largest |kernel - CPU backend|: %g (bound %g)", double(worst), double(bound));
  expectRendered(B, T, S, D, H, Causal,
                 "cas_attention_forward_mma<" + std::to_string(QueryRows) + ", " + std::to_string(T) + ", " + std::to_string(S) + ", " +
                     std::to_string(D) + ", " + std::to_string(H) + ", " + (Causal ? "true" : "false") + ", " + (BF16 ? "true" : "false") + ">(b, ",
                 BF16 ? ir::Precision::BF16 : ir::Precision::F16);
}

// |got - want| <= bound * (1 + max |want|) everywhere; the largest difference, relative to that
// scale, is returned.
float expectWithin(const std::vector<float>& got, const std::vector<float>& want, float bound, const char* what) {
  float largest = 0.f, worst = 0.f;
  for (float w : want) largest = std::max(largest, std::abs(w));
  const float scale = 1.f + largest;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const float d = std::abs(got[i] - want[i]);
    if (!(d <= bound * scale)) {
      QTest::qFail(qPrintable(QStringLiteral("%1[%2]: kernel %3, CPU backend %4 (bound %5)").arg(QLatin1String(what)).arg(i).arg(got[i]).arg(want[i]).arg(bound * scale)),
                   __FILE__, __LINE__);
      return d / scale;
    }
    worst = std::max(worst, d / scale);
  }
  return worst;
}

// The tensor-core statistics, dq and [dk | dv] (attention_mma.cuh) against the CPU backend's fp32
// twins, each kernel fed the tensor-core statistics as the update graph feeds it: within `bound`
// times (1 + the tensor's largest value), the bounds docs/pdl.md gives.
template <int B, int T, int S, int D, int H, bool Causal, bool BF16>
void checkTensorCoreGradients(std::vector<float> lengths) {
  const float bound = BF16 ? 1e-2f : 2e-3f;
  exec::ThreadPool pool(2);
  exec::AttentionGeometry a{B, T, S, D, H, Causal, lengths.empty() ? nullptr : lengths.data()};
  const auto q = randomValues(B * T * D, 21), k = randomValues(B * S * D, 22), v = randomValues(B * S * D, 23), g = randomValues(B * T * D, 24);
  std::vector<float> stats(B * H * T * 2, -99.f), dq(B * T * D, -99.f), dkv(B * S * 2 * D, -99.f);
  std::vector<float> wantStats = stats, wantDq = dq, wantDkv = dkv;
  exec::attentionStats(pool, a, q.data(), k.data(), v.data(), g.data(), wantStats.data());
  exec::attentionGradQ(pool, a, q.data(), k.data(), v.data(), g.data(), wantStats.data(), wantDq.data());
  exec::attentionGradKV(pool, a, q.data(), k.data(), v.data(), g.data(), wantStats.data(), wantDkv.data());
  constexpr int QueryRows = B * H * T, KeyRows = B * H * S;
  runSegment(B * H * ((T + 15) / 16) * 32, [&](int& b) {
    cas_attention_stats_mma<QueryRows, T, S, D, H, Causal, BF16>(b, q.data(), k.data(), v.data(), g.data(), a.lengths, stats.data());
  });
  runSegment(B * H * ((T + 15) / 16) * 32, [&](int& b) {
    cas_attention_grad_q_mma<QueryRows, T, S, D, H, Causal, BF16>(b, q.data(), k.data(), v.data(), g.data(), stats.data(), a.lengths, dq.data());
  });
  runSegment(B * H * ((S + 15) / 16) * 32, [&](int& b) {
    cas_attention_grad_kv_mma<KeyRows, T, S, D, H, Causal, BF16>(b, q.data(), k.data(), v.data(), g.data(), stats.data(), a.lengths, dkv.data());
  });
  const float worstStats = expectWithin(stats, wantStats, bound, "stats"), worstDq = expectWithin(dq, wantDq, bound, "dq"),
              worstDkv = expectWithin(dkv, wantDkv, bound, "dkv");
  QVERIFY2(worstDq > 0.f && worstDkv > 0.f, "the 16-bit operands must show in the result: is an fp32 kernel running?");
  qInfo("largest difference / (1 + largest value): stats %g, dq %g, [dk | dv] %g (bound %g)", double(worstStats), double(worstDq), double(worstDkv),
        double(bound));
}

// A sequence of length 0 sees only its first key, with all the weight: dS = P (dP - delta) must
// cancel (the CPU's is exactly 0), so dk of that key is 0 but for fp32 rounding. With delta taken
// from the fp32 g while dP multiplies g rounded to 16 bits, it was g's rounding (0.03 in bf16).
template <bool BF16>
void checkOneVisibleKeyCancels() {
  constexpr int B = 1, T = 70, S = 70, D = 128, H = 2;
  const std::vector<float> lengths = {0.f};
  const auto q = randomValues(B * T * D, 31), k = randomValues(B * S * D, 32), v = randomValues(B * S * D, 33), g = randomValues(B * T * D, 34);
  std::vector<float> stats(B * H * T * 2), dkv(B * S * 2 * D, -99.f);
  runSegment(B * H * ((T + 15) / 16) * 32, [&](int& b) {
    cas_attention_stats_mma<B * H * T, T, S, D, H, false, BF16>(b, q.data(), k.data(), v.data(), g.data(), lengths.data(), stats.data());
  });
  runSegment(B * H * ((S + 15) / 16) * 32, [&](int& b) {
    cas_attention_grad_kv_mma<B * H * S, T, S, D, H, false, BF16>(b, q.data(), k.data(), v.data(), g.data(), stats.data(), lengths.data(), dkv.data());
  });
  float largest = 0;
  for (int d = 0; d < D; ++d) largest = std::max(largest, std::abs(dkv[size_t(d)]));
  QVERIFY2(largest < 1e-3f, qPrintable(QString("dk of the one visible key: %1, not ~0").arg(double(largest))));
}

template <int Rows, int W>
void checkLayerNorm() {
  exec::ThreadPool pool(2);
  auto x = randomValues(Rows * W, 5);
  for (float& e : x) e = 50.f + 4.f * e;  // a large mean: the variance must not cancel
  const auto gamma = randomValues(W, 6), beta = randomValues(W, 7), g = randomValues(Rows * W, 8);
  std::vector<float> out(Rows * W), dx(Rows * W), wantOut(Rows * W), wantDx(Rows * W);
  exec::layerNormForward(pool, Rows, W, 1e-5f, x.data(), gamma.data(), beta.data(), wantOut.data());
  exec::layerNormGrad(pool, Rows, W, 1e-5f, x.data(), gamma.data(), g.data(), wantDx.data());
  runSegment(Rows * 32, [&](int& b) { cas_layer_norm<Rows, W>(b, x.data(), gamma.data(), beta.data(), 1e-5f, out.data()); });
  runSegment(Rows * 32, [&](int& b) { cas_layer_norm_grad<Rows, W>(b, x.data(), gamma.data(), g.data(), 1e-5f, dx.data()); });
  expectClose(out, wantOut, "out");
  expectClose(dx, wantDx, "dx");
}

}  // namespace

class TestTransformerKernelsOnCpu : public QObject {
  Q_OBJECT
 private slots:
  void init() { blockSize = 128; }
  void attentionNarrowHeads() { checkAttention<2, 37, 37, 40, 2, false>({}); }
  void attentionCausalWithLengths() { checkAttention<2, 37, 37, 40, 2, true>({0.f, 30.f}); }
  void attentionCausalBlocksAcrossHeads() {
    blockSize = 96;
    checkAttention<2, 37, 37, 40, 2, true>({0.f, 30.f});
  }
  void attentionHeadsOf64MoreKeys() { checkAttention<1, 5, 70, 128, 2, false>({66.5f}); }
  void attentionHeadsOf64AcrossHeads() {
    blockSize = 96;
    checkAttention<2, 70, 70, 128, 2, true>({50.f, 70.f});
  }
  void attentionHeadsOf80Direct() { checkAttention<1, 9, 40, 160, 2, false>({}); }
  void attentionLengthsPastTheKeys() { checkAttention<3, 9, 9, 16, 1, false>({12.f, 1.f, 9.f}); }
  // Tensor cores: Connect Four's shape (42 cells, heads of 32); causal with lengths (a sequence
  // of length 0 sees its first key); more keys than queries in heads of 64; heads of 128; fp16.
  void tensorCoreAttentionConnectFourShape() { checkTensorCoreAttention<2, 42, 42, 128, 4, false, true>({}); }
  void tensorCoreAttentionCausalWithLengths() { checkTensorCoreAttention<2, 37, 37, 64, 2, true, true>({0.f, 30.f}); }
  void tensorCoreAttentionHeadsOf64MoreKeys() { checkTensorCoreAttention<1, 5, 70, 128, 2, false, true>({66.5f}); }
  void tensorCoreAttentionHeadsOf128() { checkTensorCoreAttention<1, 20, 33, 256, 2, false, true>({}); }
  void tensorCoreAttentionHalfPrecision() { checkTensorCoreAttention<2, 37, 37, 64, 2, true, false>({0.f, 30.f}); }
  // The gradients on tensor cores: the same shapes and masks as the forward's.
  void tensorCoreGradientsConnectFourShape() { checkTensorCoreGradients<2, 42, 42, 128, 4, false, true>({}); }
  void tensorCoreGradientsCausalWithLengths() { checkTensorCoreGradients<2, 37, 37, 64, 2, true, true>({0.f, 30.f}); }
  void tensorCoreGradientsHeadsOf64MoreKeys() { checkTensorCoreGradients<1, 5, 70, 128, 2, false, true>({66.5f}); }
  void tensorCoreGradientsHeadsOf128() { checkTensorCoreGradients<1, 20, 33, 256, 2, false, true>({}); }
  void tensorCoreGradientsOfOneVisibleKeyCancel() {
    checkOneVisibleKeyCancels<true>();
    checkOneVisibleKeyCancels<false>();
  }
  void tensorCoreGradientsHalfPrecision() { checkTensorCoreGradients<2, 37, 37, 64, 2, true, false>({0.f, 30.f}); }
  // Heads not a multiple of 16 wide stay on the fp32 kernels; the gradient kernels of heads that
  // are go to tensor cores with the forward.
  void tensorCoresOnlyWhereTheyApply() {
    expectRendered(2, 37, 37, 40, 2, false, "cas_attention_forward<148, 37, 37, 40, 2, false>(b, ", ir::Precision::BF16);
    ir::Graph g;
    ir::Builder b(g);
    b.setPrecision(ir::Precision::BF16);
    const ir::NodeId q = b.input("q", {2, 16, 64}), k = b.input("k", {2, 16, 64}), v = b.input("v", {2, 16, 64});
    const ir::NodeId out = b.attention(q, k, v, 2, false, ir::kNoNode);
    const auto grads = ir::appendGradients(b, b.reduceSum(b.mul(out, b.input("w", {2, 16, 64})), {0, 1, 2}, false), {q, k, v});
    g.outputs = {{"out", out}, {"dq", grads[0]}, {"dk", grads[1]}, {"dv", grads[2]}};
    std::string source;
    for (const gpu::Step& step : gpu::renderSchedule(g).steps) source += step.source;
    QVERIFY(source.find("cas_attention_forward_mma<64, 16, 16, 64, 2, false, true>(b, ") != std::string::npos);
    QVERIFY(source.find("cas_attention_stats_mma<64, 16, 16, 64, 2, false, true>(b, ") != std::string::npos);
    QVERIFY(source.find("cas_attention_grad_q_mma<64, 16, 16, 64, 2, false, true>(b, ") != std::string::npos);
    QVERIFY(source.find("cas_attention_grad_kv_mma<64, 16, 16, 64, 2, false, true>(b, ") != std::string::npos);
    QVERIFY(source.find("cas_attention_grad_q<") == std::string::npos && source.find("cas_attention_stats<") == std::string::npos);
  }

  // Attention kernels keep a launch of their own (their shared tiles would add up past a
  // block's 48 KB: the forward's and [dk | dv]'s together need 50 KB for heads of 64).
  void attentionKernelsAreNeverMerged() {
    ir::Graph g;
    ir::Builder b(g);
    const ir::NodeId q = b.input("q", {3, 70, 128}), k = b.input("k", {3, 70, 128}), v = b.input("v", {3, 70, 128});
    const ir::NodeId out = b.attention(q, k, v, 2, true, b.input("lengths", {3, 1}));
    const auto grads = ir::appendGradients(b, b.reduceSum(b.mul(out, b.input("w", {3, 70, 128})), {0, 1, 2}, false), {q, k, v});
    g.outputs = {{"out", out}, {"dq", grads[0]}, {"dk", grads[1]}, {"dv", grads[2]}};
    int attentionSteps = 0;
    for (const gpu::Step& step : gpu::renderSchedule(g).steps)
      if (step.source.find("cas_attention_") != std::string::npos) {
        ++attentionSteps;
        QVERIFY2(step.segments.size() == 1, step.describe().c_str());
      }
    QCOMPARE(attentionSteps, 4);  // forward, statistics, dq, [dk | dv]
  }

  void layerNormNarrowRows() { checkLayerNorm<5, 20>(); }
  void layerNormWideRows() { checkLayerNorm<3, 130>(); }
};

QTEST_GUILESS_MAIN(TestTransformerKernelsOnCpu)
#include "test_transformer_kernels_on_cpu.moc"
