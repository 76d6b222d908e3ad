// The CPU backend's thread pool (core/exec/thread_pool.hpp): a chunk that throws, on a worker or
// on the calling thread, is rethrown to the caller after every chunk has ended, and the pool runs
// the next loop as before. (A std::bad_alloc in a worker's chunk under a memory limit ended the
// process: test_run_safety's ranksThatDoNotFitSayFewerRanks failed now and then under load.)
#include <QTest>

#include <atomic>
#include <chrono>
#include <thread>
#include <new>
#include <stdexcept>

#include "core/exec/thread_pool.hpp"

using cas::exec::ThreadPool;

class TestThreadPool : public QObject {
  Q_OBJECT

 private slots:
  void aThrowingChunkIsRethrownToTheCaller() {
    ThreadPool pool(4);
    const std::thread::id caller = std::this_thread::get_id();
    for (int round = 0; round < 20; ++round) {
      std::atomic<int> ran{0};
      std::atomic<bool> thrown{false};
      bool caught = false;
      try {
        // Chunks long enough for the workers to take some; the first a worker runs throws.
        pool.parallelFor(64, 1, [&](std::int64_t b, std::int64_t e) {
          std::this_thread::sleep_for(std::chrono::microseconds(300));
          ran += int(e - b);
          if (std::this_thread::get_id() != caller && !thrown.exchange(true)) throw std::bad_alloc();
        });
      } catch (const std::bad_alloc&) {
        caught = true;
      }
      QVERIFY(thrown.load());
      QVERIFY(caught);
      QCOMPARE(ran.load(), 64);  // every chunk ended before the rethrow
      std::atomic<int> after{0};
      pool.parallelFor(64, 1, [&](std::int64_t b, std::int64_t e) { after += int(e - b); });
      QCOMPARE(after.load(), 64);
    }
  }
};

QTEST_GUILESS_MAIN(TestThreadPool)
#include "test_thread_pool.moc"
