#pragma once
// The Episode dock: one recorded episode of a single-agent run's policy (PPO), replayed frame by
// frame. "Record Episode" opens the run's newest valid checkpoint on the CPU backend, on a
// worker thread (EpisodeRecorder), and plays one episode in a fresh environment (greedy, or with
// sampled actions); the view then draws each frame (CartPole as a cart and its pole, a MinAtar
// game as its coloured 10x10 grid, a trading episode as its price chart with the positions and
// the equity, the cursor at the frame: trading_chart.hpp) beside the policy's action
// probabilities and value there, the action taken and the return so far. A slider and Play step
// through the frames.
// Works the same whatever backend trained the run: the recording is the CPU backend's.
// Thread-safety: EpisodeView on the GUI thread; EpisodeRecorder on its own thread, reached by
// queued signals only.
#include <QObject>
#include <QString>
#include <QThread>
#include <QTimer>
#include <QWidget>

#include "core/train/ppo.hpp"

class QCheckBox;
class QLabel;
class QPushButton;
class QSlider;

Q_DECLARE_METATYPE(cas::train::RecordedEpisode)

namespace cas::widgets {

class EpisodeRecorder : public QObject {
  Q_OBJECT
 public:
  static constexpr int kMaxSteps = 1000;
 public slots:
  void recordEpisode(const QString& runFolder, bool stochastic, quint64 seed);
 signals:
  void episodeRecorded(const cas::train::RecordedEpisode& episode, const QString& checkpoint);
  void recordingFailed(const QString& why);
};

// The drawing of one frame: the environment on the left, the policy's numbers on the right.
class EpisodeCanvas : public QWidget {
  Q_OBJECT
 public:
  explicit EpisodeCanvas(QWidget* parent = nullptr);
  void showFrame(const cas::train::RecordedEpisode* episode, int frame);
  QSize sizeHint() const override { return {560, 300}; }

 protected:
  void paintEvent(QPaintEvent* event) override;

 private:
  void drawCartPole(QPainter& p, const QRectF& area, const std::vector<float>& observation) const;
  void drawGrid(QPainter& p, const QRectF& area, const std::vector<float>& observation, const std::vector<int>& shape) const;
  void drawPolicy(QPainter& p, const QRectF& area, const cas::train::EpisodeFrame& frame) const;

  const cas::train::RecordedEpisode* episode_ = nullptr;
  int frame_ = 0;
};

class EpisodeView : public QWidget {
  Q_OBJECT
 public:
  explicit EpisodeView(QWidget* parent = nullptr);
  ~EpisodeView() override;

  // The run whose policy Record Episode plays: a single-agent run's folder, or empty (none).
  void setRun(const QString& runFolder, bool singleAgent);
  const cas::train::RecordedEpisode& episode() const { return episode_; }
  int frame() const;
  bool busy() const { return busy_; }

 public slots:
  void record();
  void showFrame(int frame);
  void togglePlaying();

 signals:
  void recordRequested(const QString& runFolder, bool stochastic, quint64 seed);

 private:
  void showEpisode(const cas::train::RecordedEpisode& episode, const QString& checkpoint);
  void showFailure(const QString& why);
  void updateStatus();

  QThread thread_;
  EpisodeRecorder* recorder_;
  QPushButton *recordButton_, *playButton_;
  QCheckBox* sampled_;
  QSlider* slider_;
  QLabel *status_, *frameLabel_;
  EpisodeCanvas* canvas_;
  QTimer playTimer_;
  QString run_;
  bool singleAgent_ = false, busy_ = false;
  quint64 seed_ = 1;
  cas::train::RecordedEpisode episode_;
};

}  // namespace cas::widgets
