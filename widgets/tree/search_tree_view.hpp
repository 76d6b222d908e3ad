#pragma once
// The Search tree dock: the Monte Carlo search tree of a self-play game, drawn with OpenGL.
//
// SearchTreeView (a QOpenGLWidget) draws a TreeLayout either as a sunburst (rings by depth,
// angle proportional to visits, colour by Q on a diverging map, the principal variation outlined
// in gold) or as a node-link diagram of the top levels. Wheel zooms about the pointer, a drag
// pans, a double-click fits the tree; hovering a node shows N, Q, P, U (PUCT's exploration
// term), Q + U, virtual loss and the move in a tooltip; a click selects the node and emits
// positionSelected with the moves from the game's start (those that led to the tree's root, then
// the path to the node). Geometry arrives through TreeGeometrySource and is uploaded once per
// snapshot (tree_renderer.hpp). When the run's search keeps its trees on a GPU, a live snapshot
// also brings the tree's top kDeviceNodes nodes laid out there, and the view has the device write
// that sunburst into its GL buffers (CUDA-GL interop, device_tree_geometry.hpp) if its GL context
// runs on that GPU; otherwise it draws the host snapshot's meshes. A line under the status says
// which path drew the tree. Labels, the root position, the legend and teaching captions are
// drawn with QPainter over the GL frame (a fitted tree keeps clear of the legend and captions),
// and F12 (or the panel's Debug button) shows a Dear ImGui overlay with frame time, snapshot
// latency, tree size, the tree allocator's use, the snapshot queue, the drawing path with the
// device layout and mapped-buffer times, and what the last kernel profile (the search kernels'
// instrumentation) cost the engine thread. The QPainter layers and the overlay's contents are in
// search_tree_painting.cpp.
// A step outside teaching mode (Run > Step) shows the new tree with the simulation's path marked
// (showSteppedTree). Teaching mode: playSimulation() animates what one simulation did between
// two snapshots: selection (the path lights up from the root), expansion (the leaf and its new
// children appear) and backup (the value climbs back to the root, each node's N and Q updating).
//
// SearchTreePanel (search_tree_panel.cpp) wraps the view with its toolbar and status line and
// talks to the run. The user picks the self-play game shown, or the Board's position (the game
// selector's first choice): then the tree is the Board's agent's search from the position the
// Board shows, following it as the user steps through the move list or sets up a position (a
// node clicked in the tree shows its position on the Board without replacing the tree), and
// Step adds one simulation to it, whether a run trains or not. While training, the view holds the
// tree still (a tree redrawn every second cannot be read) unless Follow is on or Refresh asked for
// the newest. While a run trains and the dock is visible it requests snapshots of that game, one
// at a time and at most kLiveRequestsPerSecond a second, builds their layout and meshes on a
// worker thread (keeping only the newest snapshot that arrives while a build is under way), and
// hands them to the view,
// so the GUI thread never waits for the engine or for a large tree's geometry. In teaching mode
// its Step button asks the paused run for a snapshot, one simulation, and another snapshot, and
// animates the difference; a step made elsewhere (Run > Step) is animated from the tree shown.
//
// Where the platform cannot show OpenGL widgets (Qt's offscreen platform) the panel
// says so in place of the view, which it keeps out of the window; everything else works the same.
//
// Thread-safety: GUI thread only. The panel's worker thread reads only the snapshot copies it is
// given and hands back immutable results through queued calls; the panel's destructor waits for
// it.
#include <QElapsedTimer>
#include <QOpenGLWidget>
#include <QPointer>
#include <QThreadPool>
#include <QTimer>
#include <QWidget>

#include <deque>
#include <memory>
#include <optional>
#include <vector>

#include "core/env/games.hpp"
#include "core/train/alphazero.hpp"
#include "widgets/board/agent_worker.hpp"
#include "widgets/tree/device_tree_geometry.hpp"
#include "widgets/tree/imgui_overlay.hpp"
#include "widgets/tree/tree_geometry.hpp"
#include "widgets/tree/tree_renderer.hpp"

class QCheckBox;
class QLabel;
class QPainter;
class QPushButton;
class QSpinBox;
class QToolButton;

namespace cas::widgets {

class PlayPanel;
class RunController;

// A snapshot made ready to draw: its layout and its geometry, all immutable. `device` is there
// when the snapshot brought its tree laid out on the device (the interop path's source);
// `geometry` (host meshes) is always there: the reference, and the fallback.
struct PreparedTree {
  std::shared_ptr<const TreeLayout> layout;
  std::shared_ptr<const TreeGeometrySource> geometry;
  std::shared_ptr<const DeviceTreeGeometry> device;
  double buildMs = 0;  // time the worker took to lay it out and build the meshes
};
PreparedTree prepareTree(train::TreeSnapshot snapshot);

// Why this platform cannot show a QOpenGLWidget, or an empty string when it can. Qt's offscreen,
// minimal, VNC and framebuffer platforms cannot (and a shown QOpenGLWidget crashes Qt 6.4's
// backing store there); on the others an OpenGL context must be creatable.
QString openGlWidgetUnavailableReason();

class SearchTreeView : public QOpenGLWidget {
  Q_OBJECT
 public:
  enum class TeachingPhase { None, Selection, Expansion, Backup };

  // Figures of the snapshot pipeline, kept by the panel, shown in the debug overlay.
  struct PipelineStats {
    double lastLatencyMs = -1, meanLatencyMs = -1;  // from request to arrival
    int requestsInFlight = 0;                       // snapshot requests the engine has not answered yet
    int buildsWaiting = 0;                          // arrived snapshots waiting for the worker
    qint64 received = 0, superseded = 0;            // superseded: replaced by a newer one before being built
    double lastBuildMs = 0;
  };

  explicit SearchTreeView(QWidget* parent = nullptr);
  ~SearchTreeView() override;

  void showTree(PreparedTree tree);
  // Animates one simulation: `before` is shown during selection, `after` from the expansion on.
  void playSimulation(PreparedTree before, PreparedTree after, SimulationTrace trace);
  // Shows the tree after a step outside teaching mode, marking at once (without the animation)
  // the path of the simulation that changed it.
  void showSteppedTree(PreparedTree after, const SimulationTrace& trace);
  const TreeLayout* layout() const { return shown_.layout.get(); }
  TeachingPhase teachingPhase() const;
  // The last animated simulation's path (node indices in the tree shown); empty until an
  // animation ends, and again once another tree is shown.
  const std::vector<int>& highlightedPath() const { return highlightedPath_; }

  TreeViewMode mode() const { return mode_; }
  void setMode(TreeViewMode mode);
  void fitToView();
  bool debugOverlayVisible() const { return debugOverlay_; }
  void setDebugOverlayVisible(bool visible);
  void setPipelineStats(const PipelineStats& stats);
  // The engine-thread time of the run's last kernel profile (the instrumentation's cost), for
  // the debug overlay; negative: none yet.
  void setInstrumentationCost(double profileMs, double searchProfileMs, int searchSteps);
  // Which path drew the tree shown (after its first frame), and how many nodes it drew.
  const TreeDrawingPath& drawingPath() const { return path_; }
  // Whether this view cannot take device layouts (its GL context is not on the tree's GPU, or a
  // write failed): the panel then stops asking for them. resetInterop() asks again (a new run).
  bool interopRefused() const { return !refusal_.isEmpty(); }
  void resetInterop();
  qint64 drawnNodes() const { return drawnNodes_; }
  void setEmptyMessage(const QString& message);  // shown while there is no tree

  // Widget (logical pixels) to tree coordinates and back, and the node under a widget point
  // (-1 for none) in the current mode.
  QPointF widgetToTree(QPointF p) const;
  QPointF treeToWidget(QPointF p) const;
  int nodeAt(QPointF widgetPoint) const;
  int selectedNode() const { return selected_; }
  QString nodeDescription(int node) const;  // the hover tooltip's text
  QString actionName(int action) const;     // in the game's notation: cells 1-9, columns 1-7

 signals:
  void positionSelected(const QString& environment, const std::vector<int>& moves);
  void nodeSelected(int node);
  void modeChanged(cas::widgets::TreeViewMode mode);
  void debugOverlayToggled(bool visible);
  void drawingPathChanged(const QString& sentence);

 protected:
  void initializeGL() override;
  void paintGL() override;
  void resizeGL(int w, int h) override;
  bool event(QEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mouseReleaseEvent(QMouseEvent* event) override;
  void mouseDoubleClickEvent(QMouseEvent* event) override;
  void wheelEvent(QWheelEvent* event) override;
  void leaveEvent(QEvent* event) override;

 private:
  struct Teaching {
    PreparedTree before, after;
    SimulationTrace trace;
    QElapsedTimer clock;
    double selectionS = 0, expansionS = 0, backupS = 0;
    bool showingAfter = false;
  };

  void releaseGl();
  void setShown(PreparedTree tree);
  void autoFit();
  float fitPixelsPerUnit() const;
  void hover(QPointF p, QPoint globalPos);
  void advanceTeaching();
  TreeMesh overlayMesh() const;
  void appendNodeShape(TreeMesh& mesh, const TreeLayout& layout, int node, Rgba fill, Rgba outline, float width) const;
  void appendTeachingGhosts(TreeMesh& mesh, double phaseProgress) const;
  void paintLabels(QPainter& p) const;
  void paintLegend(QPainter& p) const;
  QFont legendFont() const;
  QRectF legendRect() const;  // where paintLegend draws, in widget coordinates
  struct Reserve {
    double top = 0, bottom = 0;  // logical pixels
  };
  Reserve fitReserve() const;  // bands kept free of the tree when it is fitted
  QString teachingBody(TeachingPhase phase) const;
  double teachingCaptionWidth() const;
  // The caption's height in a phase; for None, the tallest of the three.
  double teachingCaptionHeight(TeachingPhase phase = TeachingPhase::None) const;
  void paintRootBoard(QPainter& p) const;
  void paintTeachingCaption(QPainter& p) const;
  std::vector<ImGuiOverlay::Section> debugSections() const;
  // Uploads the shown tree's meshes, through interop when its snapshot brought a device layout
  // and this GL context runs on that device, from the host snapshot otherwise.
  void uploadShown();
  void setDrawingPath(TreeDrawingPath path);

  TreeRenderer renderer_;
  ImGuiOverlay imgui_;
  QString glError_;
  PreparedTree shown_;
  bool uploadPending_ = false;
  TreeViewMode mode_ = TreeViewMode::Sunburst;
  QPointF centre_;            // tree point at the widget's centre
  double pixelsPerUnit_ = 40;  // logical pixels
  bool userMoved_ = false;    // zoomed or panned: new snapshots keep the view
  int hovered_ = -1, selected_ = -1;
  std::vector<int> highlightedPath_;  // the last animated simulation's path, in the shown tree
  std::optional<Teaching> teaching_;
  QTimer frameTimer_;  // drives animation and the debug overlay's live frame time
  QPoint pressPos_;
  QPointF pressCentre_;
  bool dragging_ = false, pressed_ = false;
  bool debugOverlay_ = false;
  QString emptyMessage_;
  PipelineStats pipeline_;
  std::vector<float> frameTimesMs_;  // a ring of the last kFrameHistory frames
  std::size_t nextFrameSlot_ = 0;
  double lastUploadMs_ = 0;
  InteropProbe interop_;
  TreeDrawingPath path_;
  qint64 drawnNodes_ = 0;
  QString refusal_;  // why device layouts cannot be drawn here (the path's sentence); empty: they can
  std::shared_ptr<search::DeviceSunburst> writtenBy_;       // holds registrations of our GL buffers
  search::DeviceSunburst::Timing deviceTiming_;  // of the last interop upload
  qint64 supersededLayouts_ = 0;
  double profileMs_ = -1, searchProfileMs_ = -1;
  int profiledSearchSteps_ = 0;
  mutable std::string gamesEnvironment_;
  mutable std::unique_ptr<env::BoardGames> games_;  // names actions in the game's notation
};

class SearchTreePanel : public QWidget {
  Q_OBJECT
 public:
  static constexpr int kLiveRequestsPerSecond = 10;
  static constexpr int kMaxNodes = 100000;  // per snapshot
  // Per snapshot, laid out on the device when the run's search keeps its trees there (drawn
  // through CUDA-GL interop; the host snapshot of kMaxNodes still serves hit testing and labels).
  static constexpr int kDeviceNodes = 1 << 20;
  static constexpr int kBoardPosition = -1;  // setGame's choice of the Board's position

  explicit SearchTreePanel(QWidget* parent = nullptr);
  ~SearchTreePanel() override;  // waits for a build in progress

  void setRunController(RunController* run);
  // The Board whose position the tree can follow (setGame(kBoardPosition)) and whose agent grows it.
  void setBoard(PlayPanel* board);
  // The open project's algorithm: one without a tree to show (PPO; MuZero's learned-model search,
  // not drawn yet) turns the controls off and says why in the status line.
  void showAlgorithm(const std::string& algorithm);
  SearchTreeView* view() const { return view_; }
  int requestsInFlight() const { return int(requests_.size()); }
  bool teachingMode() const;
  QString statusText() const;
  // The self-play game shown (0-based; the toolbar counts from 1), or kBoardPosition.
  int game() const { return game_; }
  bool followsBoard() const { return game_ == kBoardPosition; }
  bool followsLive() const;

 public slots:
  // Lays out and shows a snapshot (in the background; the newest wins).
  void showSnapshot(const cas::train::TreeSnapshot& snapshot);
  void setTeachingMode(bool on);
  // Teaching mode, run paused: snapshot, one simulation, snapshot; then the animation.
  void stepSimulation();
  // The self-play game to show and step (0-based; beyond the run's games the engine shows its
  // last), or kBoardPosition.
  void setGame(int game);
  // While training, replace the tree by each new snapshot (on), or hold it still (off, the
  // default) until refreshTree() or the game changes.
  void setFollowLive(bool on);
  void refreshTree();

 signals:
  void positionSelected(const QString& environment, const std::vector<int>& moves);

 private:
  enum class Purpose { Live, BeforeStep, AfterStep };
  struct Request {
    Purpose purpose;
    QElapsedTimer sent;
  };
  void createControls();
  void createLayout();
  void connectSignals();
  void tick();
  void request(Purpose purpose);
  void takeSnapshot(const train::TreeSnapshot& snapshot);
  void startBuild();
  // Lays out both trees, traces the simulation between them and shows it (teachingBuilt).
  void traceStep(train::TreeSnapshot before, train::TreeSnapshot after);
  void buildFinished(PreparedTree tree);
  void teachingBuilt(PreparedTree before, PreparedTree after, std::optional<SimulationTrace> trace);
  void updateControls();
  void resetRequests();
  void publishStats();
  void boardPositionShown(const QString& environment, const std::vector<int>& moves);
  void requestBoardTree(bool step);
  void takePositionTree(const PositionTree& tree);
  void reportBoardTreeFailure(const QString& reason);

  SearchTreeView* view_;
  QLabel* noOpenGl_ = nullptr;  // instead of the view where OpenGL widgets cannot work
  std::unique_ptr<SearchTreeView> unparentedView_;  // owns view_ there
  QToolButton *sunburstButton_, *nodeLinkButton_, *fitButton_, *debugButton_;
  QCheckBox* teaching_;
  QPushButton* step_;
  QSpinBox* gameBox_;
  QCheckBox* follow_;
  QToolButton* refreshButton_;
  int game_ = 0;
  bool refreshWanted_ = false;  // one live snapshot, asked for while the view holds still
  QLabel *hint_, *status_, *path_;
  QString noTree_;  // why the open project has no tree to show; empty when it has one
  QPointer<RunController> run_;
  QTimer ticker_;
  QElapsedTimer sinceLastRequest_;
  std::deque<Request> requests_;  // answered in order by the engine
  bool pausedSnapshotWanted_ = true;  // paused: one snapshot of the settled tree, then only after steps
  int ownStepsPending_ = 0;
  std::optional<train::TreeSnapshot> beforeStep_;
  // Background builds: one at a time; a live snapshot arriving meanwhile waits, replacing any
  // older waiting one.
  QThreadPool worker_;
  bool building_ = false;
  std::optional<train::TreeSnapshot> waiting_;
  SearchTreeView::PipelineStats stats_;
  double latencySumMs_ = 0;
  // Following the Board: the position it shows, the one whose tree is asked for or shown, and
  // the one a click on the tree sent to the Board (which leaves the tree as it is).
  QPointer<PlayPanel> board_;
  QString boardEnvironment_, treeEnvironment_;
  std::vector<int> boardMoves_, treeMoves_;
  std::optional<std::vector<int>> pickedInTree_;
  bool boardTreePending_ = false;  // one request to the Board's agent at a time
  QString boardTreeProblem_;       // why the Board's position has no tree
};

}  // namespace cas::widgets
