// The CPU backend's matrix product (core/exec/cpu_gemm.cpp): a product of fewer than 8 rows,
// which skips packing B, gives the bits the packed path gives those rows (each row's sum is
// formed in the same order either way), for every transposition, widths that are not multiples
// of the panel, K past one K-block, accumulation into C, and on a pool; and both agree with a
// float64 reference within float32 rounding.
#include <QTest>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "core/exec/cpu_gemm.hpp"
#include "core/exec/thread_pool.hpp"

using cas::exec::gemm;

namespace {

std::vector<float> randomValues(std::size_t count, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> draw(-1.f, 1.f);
  std::vector<float> v(count);
  for (float& x : v) x = draw(rng);
  return v;
}

}  // namespace

class TestCpuGemm : public QObject {
  Q_OBJECT
 private slots:
  void fewRowsGiveThePackedBits_data() {
    QTest::addColumn<bool>("transposeA");
    QTest::addColumn<bool>("transposeB");
    QTest::addColumn<int>("n");
    QTest::addColumn<int>("k");
    QTest::addColumn<bool>("accumulate");
    for (bool ta : {false, true})
      for (bool tb : {false, true})
        for (auto [n, k] : {std::pair{81, 64}, {64, 2}, {300, 600}, {16, 257}})
          for (bool acc : {false, true})
            QTest::addRow("tA%d tB%d n%d k%d acc%d", ta, tb, n, k, acc) << ta << tb << n << k << acc;
  }
  void fewRowsGiveThePackedBits() {
    QFETCH(bool, transposeA);
    QFETCH(bool, transposeB);
    QFETCH(int, n);
    QFETCH(int, k);
    QFETCH(bool, accumulate);
    constexpr int kAll = 8;  // the packed path's smallest product
    cas::exec::ThreadPool pool(2);
    // A: [8, k] or, transposed, [k, 8]; B: [k, n] or [n, k].
    const std::vector<float> a = randomValues(size_t(kAll * k), 1), b = randomValues(size_t(k * n), 2), start = randomValues(size_t(kAll * n), 3);
    const int lda = transposeA ? kAll : k, ldb = transposeB ? k : n;
    std::vector<float> all = start;
    gemm(&pool, transposeA, transposeB, kAll, n, k, a.data(), lda, b.data(), ldb, all.data(), n, accumulate);
    for (int rows : {1, 3, 7}) {
      std::vector<float> few(start.begin(), start.begin() + rows * n);
      if (transposeA) {  // the first `rows` columns of A^T's storage: A^T is [k, 8], its first rows columns
        gemm(&pool, true, transposeB, rows, n, k, a.data(), lda, b.data(), ldb, few.data(), n, accumulate);
      } else {
        gemm(nullptr, false, transposeB, rows, n, k, a.data(), lda, b.data(), ldb, few.data(), n, accumulate);
      }
      QVERIFY2(std::memcmp(few.data(), all.data(), few.size() * sizeof(float)) == 0, qPrintable(QStringLiteral("%1 rows differ from the packed path's").arg(rows)));
    }
    for (int i = 0; i < kAll; ++i)
      for (int j = 0; j < n; ++j) {
        double want = accumulate ? start[size_t(i * n + j)] : 0.0;
        for (int p = 0; p < k; ++p)
          want += double(transposeA ? a[size_t(p * kAll + i)] : a[size_t(i * k + p)]) * double(transposeB ? b[size_t(j * k + p)] : b[size_t(p * n + j)]);
        QVERIFY(std::abs(all[size_t(i * n + j)] - want) <= 1e-5 * k + 1e-6 * std::abs(want));
      }
  }
};

QTEST_GUILESS_MAIN(TestCpuGemm)
#include "test_cpu_gemm.moc"
