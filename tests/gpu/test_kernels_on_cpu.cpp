// The generated kernels' templates run on the CPU (support/cuda_on_cpu.hpp) against the CPU
// backend, the executable spec: here the fp32 convolutions over small images, forward
// (core/cuda_render/kernels/conv_forward_images.cuh) and weight gradient (conv_wgrad_images.cuh), with fewer
// blocks than images (a block takes several), a partial last group of filters and threads that
// own no work, for padded, odd-width and strided convolutions. The template arguments are the
// ones the renderer writes for the same shape.
#include <QTest>

#include <atomic>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "core/exec/backend.hpp"
#include "core/ir/builder.hpp"
#include "core/cuda_render/implicit_conv.hpp"
#include "support/cuda_on_cpu.hpp"
#include "support/random_values.hpp"

// Their #pragma unroll is nvcc's (-Wno-unknown-pragmas here).
#include "core/cuda_render/kernels/conv_forward_images.cuh"
#include "core/cuda_render/kernels/conv_wgrad_images.cuh"

using namespace cas;

namespace {

struct Shape4 {
  int n, c, h, w;
};

// dw of conv2d(x, w) by the CPU backend: x [N,C,H,W], dy [N,K,HO,WO] -> dw [K,C,R,S].
std::vector<float> cpuWeightGradient(const Shape4& x, int k, int r, int s, const ir::Window2d& win, const std::vector<float>& xs,
                                     const std::vector<float>& dy) {
  ir::Graph g;
  ir::Builder b(g);
  const ir::NodeId xi = b.input("x", {x.n, x.c, x.h, x.w});
  const ir::NodeId wi = b.input("w", {k, x.c, r, s});
  const ir::Shape ys = g.node(b.conv2d(xi, wi, win)).shape;
  const ir::NodeId gi = b.input("dy", ys);
  g.outputs.push_back({"dw", b.conv2dGradWeight(xi, gi, win, {k, x.c, r, s})});
  auto exe = exec::BackendRegistry::instance().find("cpu")->backend->compile(g);
  exe->setInput("x", xs.data(), xs.size());
  exe->setInput("w", std::vector<float>(std::size_t(k * x.c * r * s)).data(), std::size_t(k * x.c * r * s));
  exe->setInput("dy", dy.data(), dy.size());
  exe->run();
  std::vector<float> dw(std::size_t(k * x.c * r * s));
  exe->readOutput("dw", dw.data(), dw.size());
  return dw;
}

// conv2d(x, w) by the CPU backend: x [N,C,H,W], w [K,C,R,S] -> y [N,K,HO,WO].
std::vector<float> cpuForward(const Shape4& x, int k, int r, int s, const ir::Window2d& win, const std::vector<float>& xs, const std::vector<float>& ws) {
  ir::Graph g;
  ir::Builder b(g);
  const ir::NodeId xi = b.input("x", {x.n, x.c, x.h, x.w});
  const ir::NodeId wi = b.input("w", {k, x.c, r, s});
  const ir::NodeId y = b.conv2d(xi, wi, win);
  g.outputs.push_back({"y", y});
  auto exe = exec::BackendRegistry::instance().find("cpu")->backend->compile(g);
  exe->setInput("x", xs.data(), xs.size());
  exe->setInput("w", ws.data(), ws.size());
  exe->run();
  std::vector<float> out(std::size_t(ir::numel(g.node(y).shape)));
  exe->readOutput("y", out.data(), out.size());
  return out;
}

using test::randomValues;

// The kernel on the CPU for one geometry (its template arguments), compared with the backend.
template <int N, int C, int H, int W, int K, int R, int S, int HO, int WO, int SH, int SW, int PT, int PL, int TK>
void checkAgainstCpu(unsigned grid, const ir::Window2d& win) {
  const std::vector<float> x = randomValues(std::size_t(N * C * H * W), 1), dy = randomValues(std::size_t(N * K * HO * WO), 2);
  const std::vector<float> expected = cpuWeightGradient({N, C, H, W}, K, R, S, win, x, dy);
  // What the renderer writes for this geometry: the same arguments and block.
  const gpu::ConvGeometry geometry{N, C, H, W, K, R, S, HO, WO, SH, SW, PT, PL, PT || PL};
  const gpu::ImplicitConvKernel rendered = gpu::imageWeightGradient(geometry, "x", "dy", "dw");
  const std::string arguments = std::to_string(N) + ", " + std::to_string(C) + ", " + std::to_string(H) + ", " + std::to_string(W) + ", " +
                                std::to_string(K) + ", " + std::to_string(R) + ", " + std::to_string(S) + ", " + std::to_string(HO) + ", " +
                                std::to_string(WO) + ", " + std::to_string(SH) + ", " + std::to_string(SW) + ", " + std::to_string(PT) + ", " +
                                std::to_string(PL) + ", " + std::to_string(TK) + ">";
  QVERIFY2(rendered.call.find("cas_conv_wgrad_images<" + arguments) != std::string::npos, rendered.call.c_str());
  std::vector<float> dw(expected.size(), 0.f);  // the schedule's fill
  test::runOnCpu(grid, unsigned(rendered.blockSize), [&] { cas_conv_wgrad_images<N, C, H, W, K, R, S, HO, WO, SH, SW, PT, PL, TK>(x.data(), dy.data(), dw.data()); });
  for (std::size_t i = 0; i < dw.size(); ++i)
    QVERIFY2(std::abs(dw[i] - expected[i]) <= 1e-4f + 1e-5f * std::abs(expected[i]),
             qPrintable(QStringLiteral("dw[%1]: kernel %2, CPU backend %3").arg(i).arg(dw[i]).arg(expected[i])));
}

// The same for the forward, its epilogue storing each output at the index it is given.
template <int N, int C, int H, int W, int K, int R, int S, int HO, int WO, int SH, int SW, int PT, int PL, int TK, int P>
void checkForwardAgainstCpu(unsigned grid, const ir::Window2d& win) {
  const std::vector<float> x = randomValues(std::size_t(N * C * H * W), 3), w = randomValues(std::size_t(K * C * R * S), 4);
  const std::vector<float> expected = cpuForward({N, C, H, W}, K, R, S, win, x, w);
  QCOMPARE(expected.size(), std::size_t(N * K * HO * WO));
  const gpu::ConvGeometry geometry{N, C, H, W, K, R, S, HO, WO, SH, SW, PT, PL, PT || PL};
  const gpu::ImplicitConvKernel rendered = gpu::imageForward(geometry, "x", "w", "epi");
  const std::string arguments = std::to_string(N) + ", " + std::to_string(C) + ", " + std::to_string(H) + ", " + std::to_string(W) + ", " +
                                std::to_string(K) + ", " + std::to_string(R) + ", " + std::to_string(S) + ", " + std::to_string(HO) + ", " +
                                std::to_string(WO) + ", " + std::to_string(SH) + ", " + std::to_string(SW) + ", " + std::to_string(PT) + ", " +
                                std::to_string(PL) + ", " + std::to_string(TK) + ", " + std::to_string(P) + ">";
  QVERIFY2(rendered.call.find("cas_conv_forward_images<" + arguments) != std::string::npos, rendered.call.c_str());
  std::vector<float> y(expected.size(), std::nanf(""));  // every output must be written once
  std::vector<std::atomic<int>> writes(expected.size());
  test::runOnCpu(grid, unsigned(rendered.blockSize), [&] {
    cas_conv_forward_images<N, C, H, W, K, R, S, HO, WO, SH, SW, PT, PL, TK, P>(x.data(), w.data(), [&](int i, float acc) {
      y[std::size_t(i)] = acc;
      ++writes[std::size_t(i)];
    });
  });
  for (std::size_t i = 0; i < y.size(); ++i) {
    QVERIFY2(writes[i] == 1, qPrintable(QStringLiteral("y[%1] written %2 times").arg(i).arg(writes[i].load())));
    QVERIFY2(std::abs(y[i] - expected[i]) <= 1e-5f + 1e-5f * std::abs(expected[i]),
             qPrintable(QStringLiteral("y[%1]: kernel %2, CPU backend %3").arg(i).arg(y[i]).arg(expected[i])));
  }
}

}  // namespace

class TestKernelsOnCpu : public QObject {
  Q_OBJECT
 private slots:
  // Forward, MinAtar Breakout's shape: 50 pairs of pixels x 2 groups of 8 filters = 100 owners
  // in 128 threads; 2 blocks for 5 images.
  void imageForwardBreakout() {
    ir::Window2d win{3, 3, 1, 1, 1, 1, 1, 1};
    checkForwardAgainstCpu<5, 4, 10, 10, 16, 3, 3, 10, 10, 1, 1, 1, 1, 8, 2>(2, win);
  }
  // Forward, 3x3 'same' over 5 x 7 images (odd: a pixel a thread), 10 filters (groups of 8 and
  // of 2): 70 owners in 96 threads; 3 blocks for 7 images.
  void imageForwardOddWidth() {
    ir::Window2d win{3, 3, 1, 1, 1, 1, 1, 1};
    checkForwardAgainstCpu<7, 3, 5, 7, 10, 3, 3, 5, 7, 1, 1, 1, 1, 8, 1>(3, win);
  }
  // Forward, 3x3 stride 2 'valid' over 9 x 9 images, 3 filters: one block for all 4 images.
  void imageForwardStrided() {
    ir::Window2d win{3, 3, 2, 2, 0, 0, 0, 0};
    checkForwardAgainstCpu<4, 2, 9, 9, 3, 3, 3, 4, 4, 2, 2, 0, 0, 3, 2>(1, win);
  }
  // 3x3 'same' over 5 x 6 images, 10 filters: groups of 8 and of 2, 54 taps x 2 = 108 owners in
  // 128 threads; 3 blocks for 7 images.
  void imageWeightGradientPadded() {
    ir::Window2d win{3, 3, 1, 1, 1, 1, 1, 1};
    checkAgainstCpu<7, 6, 5, 6, 10, 3, 3, 5, 6, 1, 1, 1, 1, 8>(3, win);
  }
  // 3x3 stride 2 'valid' over 9 x 9 images, 3 filters (one group), one block for all 4 images.
  void imageWeightGradientStrided() {
    ir::Window2d win{3, 3, 2, 2, 0, 0, 0, 0};
    checkAgainstCpu<4, 2, 9, 9, 3, 3, 3, 4, 4, 2, 2, 0, 0, 3>(1, win);
  }
  // MinAtar Breakout's shape (4 channels, 16 filters, 3x3 'same' on 10 x 10), as many blocks as images.
  void imageWeightGradientBreakout() {
    ir::Window2d win{3, 3, 1, 1, 1, 1, 1, 1};
    checkAgainstCpu<5, 4, 10, 10, 16, 3, 3, 10, 10, 1, 1, 1, 1, 8>(5, win);
  }
};

QTEST_GUILESS_MAIN(TestKernelsOnCpu)
#include "test_kernels_on_cpu.moc"
