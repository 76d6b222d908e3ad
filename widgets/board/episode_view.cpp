#include "widgets/board/episode_view.hpp"

#include <QCheckBox>
#include <QCoreApplication>
#include <QDir>
#include <QHBoxLayout>
#include <QLabel>
#include <QPainter>
#include <QPushButton>
#include <QSlider>
#include <QVBoxLayout>

#include <cmath>

#include "core/engine/trained_run.hpp"
#include "core/env/environments.hpp"
#include "core/exec/backend.hpp"
#include "widgets/board/trading_chart.hpp"

namespace cas::widgets {
namespace {

// The environment's name for action `a` (the catalogue's, translated), as the bars are labelled.
QString actionName(const std::string& environment, int a) {
  const env::EnvironmentInfo* info = env::findEnvironment(environment);
  if (info && a >= 0 && a < int(info->actionNames.size())) return QCoreApplication::translate(env::kActionContext, info->actionNames[size_t(a)]);
  return EpisodeView::tr("action %1").arg(a);
}

const QColor kBackground(24, 26, 31), kText(220, 222, 228), kDim(120, 124, 134), kChosen(255, 196, 56);

}  // namespace

// --- EpisodeRecorder ---------------------------------------------------------------------------

void EpisodeRecorder::recordEpisode(const QString& runFolder, bool stochastic, quint64 seed) {
  try {
    engine::OpenedRun<train::Trainer> run = engine::openAnyRun(runFolder.toStdString(), exec::makeCpuBackend(), {});
    if (!run.trainer) {
      emit recordingFailed(QString::fromStdString(run.error.message));
      return;
    }
    train::EpisodicTrainer* episodic = run.trainer->episodic();
    if (!episodic) {
      emit recordingFailed(EpisodeView::tr("%1 was trained with %2; episodes are recorded from single-agent (PPO) runs.")
                               .arg(runFolder, QString::fromStdString(run.trainer->project().algorithm)));
      return;
    }
    const train::RecordedEpisode episode = episodic->recordEpisode(stochastic, seed, kMaxSteps);
    emit episodeRecorded(episode, QString::fromStdString(run.checkpoint.filename().string()));
  } catch (const std::exception& e) {
    emit recordingFailed(QString::fromUtf8(e.what()));
  }
}

// --- EpisodeCanvas -----------------------------------------------------------------------------

EpisodeCanvas::EpisodeCanvas(QWidget* parent) : QWidget(parent) {
  setObjectName(QStringLiteral("episodeCanvas"));
  setMinimumSize(320, 200);
}

void EpisodeCanvas::showFrame(const train::RecordedEpisode* episode, int frame) {
  episode_ = episode;
  frame_ = frame;
  update();
}

void EpisodeCanvas::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.setRenderHint(QPainter::Antialiasing);
  p.fillRect(rect(), kBackground);
  if (!episode_ || episode_->frames.empty()) {
    p.setPen(kDim);
    p.drawText(rect().adjusted(12, 12, -12, -12), Qt::AlignCenter | Qt::TextWordWrap,
               EpisodeView::tr("No episode recorded yet: train a single-agent project (PPO), then press Record Episode."));
    return;
  }
  const train::EpisodeFrame& f = episode_->frames[size_t(std::clamp(frame_, 0, int(episode_->frames.size()) - 1))];
  const QRectF all = QRectF(rect()).adjusted(8, 8, -8, -8);
  const env::EnvironmentInfo* info = env::findEnvironment(episode_->environment);
  const bool priceChart = info && info->needsSeries;
  // Side by side when the dock is wide; in a narrow dock the policy's numbers go below the
  // picture. A price chart spreads its steps across, so it keeps the whole width for longer.
  const QFontMetricsF m(font());
  const double policyHeight = m.height() * (4.5 + 2.0 * double(f.probabilities.size()));
  const bool stacked = all.width() < (priceChart ? 900 : 480);
  const double policyWidth = std::min(240.0, all.width() * 0.4);
  const QRectF world = stacked ? QRectF(all.left(), all.top(), all.width(), std::max(80.0, all.height() - policyHeight))
                               : QRectF(all.left(), all.top(), all.width() - policyWidth - 12, all.height());
  const QRectF policy = stacked ? QRectF(all.left(), world.bottom() + 4, all.width(), all.bottom() - world.bottom() - 4)
                                : QRectF(world.right() + 12, all.top(), policyWidth, all.height());
  if (episode_->environment == "cartpole") drawCartPole(p, world, f.observation);
  else if (priceChart) TradingChart(*episode_).draw(p, world, frame_);
  else drawGrid(p, world, f.observation, episode_->observationShape);
  drawPolicy(p, policy, f);
}

void EpisodeCanvas::drawCartPole(QPainter& p, const QRectF& area, const std::vector<float>& o) const {
  if (o.size() < 4) return;
  // Gymnasium's picture: the track spans x in [-2.4, 2.4]; the cart is 0.5 by 0.3, the pole 1.0 long.
  const double scale = area.width() / 5.6, groundY = area.top() + area.height() * 0.72;
  const double cx = area.center().x() + double(o[0]) * scale;
  p.setPen(QPen(kDim, 2));
  p.drawLine(QPointF(area.center().x() - 2.4 * scale, groundY), QPointF(area.center().x() + 2.4 * scale, groundY));
  p.setPen(QPen(QColor(214, 39, 40), 1.5, Qt::DashLine));
  for (const double edge : {-2.4, 2.4}) p.drawLine(QPointF(area.center().x() + edge * scale, groundY - 8), QPointF(area.center().x() + edge * scale, groundY + 8));
  const QRectF cart(cx - 0.25 * scale, groundY - 0.3 * scale, 0.5 * scale, 0.3 * scale);
  p.setPen(Qt::NoPen);
  p.setBrush(QColor(67, 147, 195));
  p.drawRoundedRect(cart, 3, 3);
  const double theta = double(o[2]);
  const QPointF pivot(cx, cart.top());
  const QPointF tip(cx + std::sin(theta) * 1.0 * scale, cart.top() - std::cos(theta) * 1.0 * scale);
  p.setPen(QPen(QColor(244, 165, 130), std::max(4.0, 0.08 * scale), Qt::SolidLine, Qt::RoundCap));
  p.drawLine(pivot, tip);
  p.setPen(Qt::NoPen);
  p.setBrush(kText);
  p.drawEllipse(pivot, 4, 4);
  p.setPen(kDim);
  p.drawText(QRectF(area.left(), groundY + 12, area.width(), area.bottom() - groundY - 12), Qt::AlignHCenter | Qt::AlignTop | Qt::TextWordWrap,
             EpisodeView::tr("x %1   velocity %2   angle %3°   angular velocity %4")
                 .arg(double(o[0]), 0, 'f', 2)
                 .arg(double(o[1]), 0, 'f', 2)
                 .arg(theta * 180 / M_PI, 0, 'f', 1)
                 .arg(double(o[3]), 0, 'f', 2));
}

void EpisodeCanvas::drawGrid(QPainter& p, const QRectF& area, const std::vector<float>& o, const std::vector<int>& shape) const {
  if (shape.size() != 3) return;
  const int channels = shape[0], rows = shape[1], columns = shape[2];
  if (std::int64_t(o.size()) < std::int64_t(channels) * rows * columns) return;
  static const QColor palette[] = {{255, 196, 56}, {67, 147, 195}, {214, 39, 40}, {44, 160, 44}, {148, 103, 189},
                                   {23, 190, 207}, {227, 119, 194}, {255, 127, 14}, {140, 86, 75}, {188, 189, 34}};
  const double cell = std::min(area.width() / columns, area.height() / rows);
  const QPointF origin(area.center().x() - cell * columns / 2, area.center().y() - cell * rows / 2);
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < columns; ++c) {
      QColor colour(40, 43, 50);
      for (int ch = 0; ch < channels; ++ch)
        if (o[size_t((ch * rows + r) * columns + c)] > 0.5f) {
          colour = palette[ch % int(std::size(palette))];
          break;
        }
      p.fillRect(QRectF(origin.x() + c * cell + 1, origin.y() + r * cell + 1, cell - 2, cell - 2), colour);
    }
}

void EpisodeCanvas::drawPolicy(QPainter& p, const QRectF& area, const train::EpisodeFrame& f) const {
  const QFontMetricsF m(font());
  auto line = [&](double y, const QString& text) { p.drawText(QPointF(area.left(), y + m.ascent()), m.elidedText(text, Qt::ElideRight, area.width())); };
  double y = area.top();
  p.setPen(kText);
  line(y, f.action < 0 ? EpisodeView::tr("The episode's last observation") : EpisodeView::tr("Policy"));
  y += m.height() * 1.6;
  for (size_t a = 0; a < f.probabilities.size(); ++a) {
    const QString name = actionName(episode_->environment, int(a));
    const double probability = double(f.probabilities[a]);
    p.setPen(int(a) == f.action ? kChosen : kText);
    line(y, QStringLiteral("%1  %2%").arg(name).arg(probability * 100, 0, 'f', 1));
    y += m.height();
    p.fillRect(QRectF(area.left(), y + 2, area.width(), 6), QColor(50, 54, 62));
    p.fillRect(QRectF(area.left(), y + 2, area.width() * probability, 6), int(a) == f.action ? kChosen : QColor(67, 147, 195));
    y += 14;
  }
  if (f.action < 0) return;
  y += m.height() * 0.5;
  p.setPen(kText);
  line(y, EpisodeView::tr("value %1").arg(double(f.value), 0, 'f', 2));
  y += m.height();
  line(y, EpisodeView::tr("action: %1, reward %2")
              .arg(actionName(episode_->environment, f.action))
              .arg(double(f.reward), 0, 'g', 4));
}

// --- EpisodeView -------------------------------------------------------------------------------

EpisodeView::EpisodeView(QWidget* parent)
    : QWidget(parent),
      recorder_(new EpisodeRecorder),
      recordButton_(new QPushButton(tr("Record Episode"))),
      playButton_(new QPushButton(tr("Play"))),
      sampled_(new QCheckBox(tr("Sampled actions"))),
      slider_(new QSlider(Qt::Horizontal)),
      status_(new QLabel),
      frameLabel_(new QLabel),
      canvas_(new EpisodeCanvas) {
  qRegisterMetaType<train::RecordedEpisode>();
  recordButton_->setObjectName(QStringLiteral("recordEpisode"));
  playButton_->setObjectName(QStringLiteral("playEpisode"));
  sampled_->setObjectName(QStringLiteral("sampledActions"));
  slider_->setObjectName(QStringLiteral("episodeFrame"));
  status_->setObjectName(QStringLiteral("episodeStatus"));
  recordButton_->setToolTip(tr("Plays one episode of the run's newest valid checkpoint in a fresh environment, on the CPU backend."));
  sampled_->setToolTip(tr("Sample each action from the policy's probabilities instead of taking the most probable one."));
  status_->setWordWrap(true);
  slider_->setEnabled(false);
  playButton_->setEnabled(false);

  auto* controls = new QHBoxLayout;
  controls->addWidget(recordButton_);
  controls->addWidget(sampled_);
  controls->addStretch(1);
  auto* player = new QHBoxLayout;
  player->addWidget(playButton_);
  player->addWidget(slider_, 1);
  player->addWidget(frameLabel_);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(controls);
  layout->addWidget(status_);
  layout->addWidget(canvas_, 1);
  layout->addLayout(player);

  playTimer_.setInterval(33);  // about 30 frames a second, CartPole's 50 Hz slowed to be followed
  connect(&playTimer_, &QTimer::timeout, this, [this] {
    if (slider_->value() >= slider_->maximum()) togglePlaying();
    else slider_->setValue(slider_->value() + 1);
  });
  connect(recordButton_, &QPushButton::clicked, this, &EpisodeView::record);
  connect(playButton_, &QPushButton::clicked, this, &EpisodeView::togglePlaying);
  connect(slider_, &QSlider::valueChanged, this, &EpisodeView::showFrame);

  recorder_->moveToThread(&thread_);
  connect(&thread_, &QThread::finished, recorder_, &QObject::deleteLater);
  connect(this, &EpisodeView::recordRequested, recorder_, &EpisodeRecorder::recordEpisode);
  connect(recorder_, &EpisodeRecorder::episodeRecorded, this, &EpisodeView::showEpisode);
  connect(recorder_, &EpisodeRecorder::recordingFailed, this, &EpisodeView::showFailure);
  thread_.setObjectName(QStringLiteral("episode recorder"));
  thread_.start();
  updateStatus();
}

EpisodeView::~EpisodeView() {
  thread_.quit();
  thread_.wait();
}

void EpisodeView::setRun(const QString& runFolder, bool singleAgent) {
  run_ = runFolder;
  singleAgent_ = singleAgent;
  updateStatus();
}

int EpisodeView::frame() const { return slider_->value(); }

void EpisodeView::record() {
  if (busy_ || run_.isEmpty() || !singleAgent_) return;
  busy_ = true;
  playTimer_.stop();
  updateStatus();
  emit recordRequested(run_, sampled_->isChecked(), seed_++);  // a new environment seed each time
}

void EpisodeView::showEpisode(const train::RecordedEpisode& episode, const QString& checkpoint) {
  busy_ = false;
  episode_ = episode;
  const int last = std::max(0, int(episode_.frames.size()) - 1);
  slider_->setRange(0, last);
  slider_->setEnabled(last > 0);
  playButton_->setEnabled(last > 0);
  status_->setText(tr("%1 steps, return %2 (%3), from %4.")
                       .arg(last)
                       .arg(episode_.episodeReturn, 0, 'g', 6)
                       .arg(episode_.ended ? tr("the environment ended it") : tr("cut at %1 steps").arg(EpisodeRecorder::kMaxSteps))
                       .arg(checkpoint));
  recordButton_->setEnabled(true);
  slider_->setValue(0);
  showFrame(0);
}

void EpisodeView::showFailure(const QString& why) {
  busy_ = false;
  updateStatus();
  status_->setText(tr("No episode was recorded: %1").arg(why));
}

void EpisodeView::showFrame(int frame) {
  canvas_->showFrame(&episode_, frame);
  double sum = 0;
  for (int t = 0; t < frame && t < int(episode_.frames.size()); ++t) sum += double(episode_.frames[size_t(t)].reward);
  frameLabel_->setText(episode_.frames.empty() ? QString() : tr("step %1 of %2, return %3").arg(frame).arg(slider_->maximum()).arg(sum, 0, 'g', 6));
}

void EpisodeView::togglePlaying() {
  if (playTimer_.isActive()) {
    playTimer_.stop();
  } else {
    if (slider_->value() >= slider_->maximum()) slider_->setValue(0);
    playTimer_.start();
  }
  playButton_->setText(playTimer_.isActive() ? tr("Pause") : tr("Play"));
}

void EpisodeView::updateStatus() {
  recordButton_->setEnabled(!busy_ && singleAgent_ && !run_.isEmpty());
  if (busy_) status_->setText(tr("Recording an episode..."));
  else if (run_.isEmpty()) status_->setText(tr("No run yet: train a single-agent project (PPO), or pick its run in the Runs dock."));
  else if (!singleAgent_) status_->setText(tr("The run is not a single-agent one: the Board and the search tree show a two-player game's runs."));
  else if (episode_.frames.empty()) status_->setText(tr("Press Record Episode to play one episode of %1.").arg(QDir::toNativeSeparators(run_)));
}

}  // namespace cas::widgets
