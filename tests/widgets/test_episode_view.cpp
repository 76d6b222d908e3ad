// The Episode dock: a short PPO run of cartpole-ppo (trained through the CLI), recorded on the
// recorder's thread and replayed: frames, the policy's probabilities, the slider and Play; a
// trading-ppo run's episode with its position and profits per frame, drawn as a chart that follows
// the slider; a two-player run is refused with a sentence, and the main window has the dock beside
// the Board.
#include <QCheckBox>
#include <QDockWidget>
#include <QLabel>
#include <QPushButton>
#include <QSlider>
#include <QTemporaryDir>
#include <QTest>

#include <numeric>

#include "support/cli_runs.hpp"
#include "support/price_fixture.hpp"
#include "widgets/board/episode_view.hpp"
#include "widgets/main_window.hpp"
#include "support/source_dir.hpp"

using cas::widgets::EpisodeView;

namespace {

template <class T>
T* child(QWidget& w, const char* name) {
  T* c = w.findChild<T*>(QLatin1String(name));
  if (!c) qFatal("no child %s", name);
  return c;
}

}  // namespace

class TestEpisodeView : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;
  QString ppoRun_, tradingRun_, alphaZeroRun_;

 private slots:
  void initTestCase() {
    ppoRun_ = dir_.filePath(QStringLiteral("cartpole"));
    const cas::test::Result ppo = cas::test::cli({QStringLiteral("train"), cas::test::sourcePath(QStringLiteral("projects/cartpole-ppo")), QStringLiteral("--set"),
                                                  QStringLiteral("ppo.total_steps=4096"), QStringLiteral("--out"), ppoRun_});
    QVERIFY2(ppo.status == 0, qPrintable(ppo.err));
    tradingRun_ = dir_.filePath(QStringLiteral("trading"));
    const QString trading = cas::test::loadableExample(cas::test::sourcePath(QStringLiteral("projects/trading-ppo")), dir_.path());
    const cas::test::Result tr = cas::test::cli({QStringLiteral("train"), trading, QStringLiteral("--iterations"), QStringLiteral("1"), QStringLiteral("--device"),
                                                 QStringLiteral("cpu"), QStringLiteral("--set"), QStringLiteral("ppo.envs=2"), QStringLiteral("--set"),
                                                 QStringLiteral("ppo.rollout_steps=64"), QStringLiteral("--out"), tradingRun_});
    QVERIFY2(tr.status == 0, qPrintable(tr.err));
    alphaZeroRun_ = dir_.filePath(QStringLiteral("ttt"));
    const cas::test::Result az = cas::test::cli(QStringList{QStringLiteral("train"), cas::test::kExample, QStringLiteral("--iterations"), QStringLiteral("1"),
                                                            QStringLiteral("--out"), alphaZeroRun_} + cas::test::kQuick);
    QVERIFY2(az.status == 0, qPrintable(az.err));
  }

  void recordsAndReplaysAnEpisode() {
    EpisodeView view;
    view.resize(700, 420);
    view.show();
    auto* record = child<QPushButton>(view, "recordEpisode");
    QVERIFY(!record->isEnabled());  // no run yet
    view.setRun(ppoRun_, true);
    QVERIFY(record->isEnabled());
    QTest::mouseClick(record, Qt::LeftButton);
    QVERIFY(view.busy());
    QTRY_VERIFY_WITH_TIMEOUT(!view.busy(), 60000);
    const auto& episode = view.episode();
    QVERIFY2(episode.frames.size() >= 9, qPrintable(child<QLabel>(view, "episodeStatus")->text()));  // CartPole lasts at least 8 steps
    QCOMPARE(episode.environment, std::string("cartpole"));
    QVERIFY(episode.scalarNames.empty());  // CartPole's observation is its whole state
    double sum = 0;
    for (size_t t = 0; t + 1 < episode.frames.size(); ++t) {
      const auto& f = episode.frames[t];
      QCOMPARE(f.observation.size(), size_t(4));
      QCOMPARE(f.probabilities.size(), size_t(2));
      QVERIFY(std::abs(f.probabilities[0] + f.probabilities[1] - 1.0f) < 1e-5f);
      QVERIFY(f.action == 0 || f.action == 1);
      QCOMPARE(f.action, f.probabilities[1] > f.probabilities[0] ? 1 : 0);  // greedy: the most probable
      sum += double(f.reward);
    }
    QCOMPARE(episode.frames.back().action, -1);  // the final observation
    QCOMPARE(episode.episodeReturn, sum);
    auto* slider = child<QSlider>(view, "episodeFrame");
    QCOMPARE(slider->maximum(), int(episode.frames.size()) - 1);
    QVERIFY(child<QLabel>(view, "episodeStatus")->text().contains(QStringLiteral("return %1").arg(episode.episodeReturn, 0, 'g', 6)));
    slider->setValue(5);
    QCOMPARE(view.frame(), 5);
    // Play runs to the end and stops there.
    QTest::mouseClick(child<QPushButton>(view, "playEpisode"), Qt::LeftButton);
    QTRY_COMPARE_WITH_TIMEOUT(view.frame(), slider->maximum(), 60000);
    QTRY_COMPARE(child<QPushButton>(view, "playEpisode")->text(), QStringLiteral("Play"));
    // Sampled actions: another episode, recorded the same way.
    child<QCheckBox>(view, "sampledActions")->setChecked(true);
    QTest::mouseClick(record, Qt::LeftButton);
    QTRY_VERIFY_WITH_TIMEOUT(!view.busy(), 60000);
    QVERIFY(view.episode().frames.size() >= 9);
  }

  void drawsATradingEpisodeAsAChart() {
    EpisodeView view;
    view.resize(900, 560);
    view.show();
    view.setRun(tradingRun_, true);
    view.record();
    QTRY_VERIFY_WITH_TIMEOUT(!view.busy(), 60000);
    const auto& episode = view.episode();
    QCOMPARE(episode.environment, std::string("trading-stocks"));
    QCOMPARE(episode.scalarNames, (std::vector<std::string>{"position", "total_profit", "equity", "buy_and_hold"}));
    QCOMPARE(episode.frames.size(), size_t(257));  // 256 steps and the last observation
    for (const auto& f : episode.frames) QCOMPARE(f.scalars.size(), size_t(4));
    // The position after a step is the action's: a buy goes or stays long, a sell short.
    for (size_t t = 0; t + 1 < episode.frames.size(); ++t) QCOMPARE(episode.frames[t + 1].scalars[0], float(episode.frames[t].action));
    QCOMPARE(episode.frames.front().scalars, (std::vector<float>{0, 1, 1, 1}));  // short, the starting money
    QCOMPARE(episode.frames.back().scalars[2], episode.frames.back().scalars[1]);  // at the end the equity is the total profit
    // The chart follows the slider: the cursor moves, and buy and hold's line (its own blue) is drawn.
    auto* canvas = child<QWidget>(view, "episodeCanvas");
    const QImage start = canvas->grab().toImage();
    child<QSlider>(view, "episodeFrame")->setValue(128);
    const QImage middle = canvas->grab().toImage();
    QVERIFY(start != middle);
    int buyAndHold = 0;
    for (int y = 0; y < middle.height(); ++y)
      for (int x = 0; x < middle.width(); ++x) {
        const QColor c = middle.pixelColor(x, y);
        buyAndHold += std::abs(c.red() - 110) + std::abs(c.green() - 175) + std::abs(c.blue() - 230) < 30;
      }
    QVERIFY2(buyAndHold > 50, qPrintable(QString::number(buyAndHold)));
  }

  void aTwoPlayerRunIsRefused() {
    EpisodeView view;
    view.setRun(alphaZeroRun_, false);
    QVERIFY(!child<QPushButton>(view, "recordEpisode")->isEnabled());
    QVERIFY(child<QLabel>(view, "episodeStatus")->text().contains(QStringLiteral("not a single-agent one")));
    // Even asked to, the recorder says what the run is.
    view.setRun(alphaZeroRun_, true);
    view.record();
    QTRY_VERIFY_WITH_TIMEOUT(!view.busy(), 60000);
    QVERIFY2(child<QLabel>(view, "episodeStatus")->text().contains(QStringLiteral("was trained with alphazero")), qPrintable(child<QLabel>(view, "episodeStatus")->text()));
    QVERIFY(view.episode().frames.empty());
  }

  void mainWindowHasTheDockBesideTheBoard() {
    cas::widgets::MainWindow w;
    auto* dock = w.findChild<QDockWidget*>(QStringLiteral("episodeDock"));
    QVERIFY(dock);
    QVERIFY(w.tabifiedDockWidgets(w.findChild<QDockWidget*>(QStringLiteral("boardDock"))).contains(dock));
  }
};

QTEST_MAIN(TestEpisodeView)
#include "test_episode_view.moc"
