#include "widgets/tree/imgui_overlay.hpp"

#include <QCoreApplication>
#include <QFile>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QOpenGLContext>
#include <QStandardPaths>
#include <QWheelEvent>

#include <algorithm>
#include <cfloat>
#include <type_traits>

#include <fontconfig/fontconfig.h>

#include "backends/imgui_impl_opengl3.h"
#include "imgui.h"

namespace cas::widgets {

namespace {

static_assert(std::is_same_v<ImWchar, unsigned short>, "glyphRanges_ holds 16-bit ImWchar");

// Qt keys ImGui needs for navigation and text editing. ImGui 1.86 reads keys from
// io.KeysDown[512] through io.KeyMap, so each gets a small index: its position here, plus one.
struct KeyBinding {
  int qtKey;
  ImGuiKey imguiKey;
};
constexpr KeyBinding kKeys[] = {
    {Qt::Key_Tab, ImGuiKey_Tab},           {Qt::Key_Left, ImGuiKey_LeftArrow},   {Qt::Key_Right, ImGuiKey_RightArrow},
    {Qt::Key_Up, ImGuiKey_UpArrow},        {Qt::Key_Down, ImGuiKey_DownArrow},   {Qt::Key_PageUp, ImGuiKey_PageUp},
    {Qt::Key_PageDown, ImGuiKey_PageDown}, {Qt::Key_Home, ImGuiKey_Home},        {Qt::Key_End, ImGuiKey_End},
    {Qt::Key_Insert, ImGuiKey_Insert},     {Qt::Key_Delete, ImGuiKey_Delete},    {Qt::Key_Backspace, ImGuiKey_Backspace},
    {Qt::Key_Space, ImGuiKey_Space},       {Qt::Key_Return, ImGuiKey_Enter},     {Qt::Key_Enter, ImGuiKey_KeyPadEnter},
    {Qt::Key_Escape, ImGuiKey_Escape},     {Qt::Key_A, ImGuiKey_A},              {Qt::Key_C, ImGuiKey_C},
    {Qt::Key_V, ImGuiKey_V},               {Qt::Key_X, ImGuiKey_X},              {Qt::Key_Y, ImGuiKey_Y},
    {Qt::Key_Z, ImGuiKey_Z},
};

int keyIndex(int qtKey) {
  for (size_t i = 0; i < std::size(kKeys); ++i)
    if (kKeys[i].qtKey == qtKey) return int(i) + 1;
  return -1;
}

int mouseButton(Qt::MouseButton b) {
  switch (b) {
    case Qt::LeftButton: return 0;
    case Qt::RightButton: return 1;
    case Qt::MiddleButton: return 2;
    default: return -1;
  }
}

// A system font with CJK glyphs, and the face to use in a collection: smaller files first.
// `needed`: the characters it is wanted for.
std::pair<QString, int> cjkFont(const QString& needed) {
  const std::pair<const char*, int> candidates[] = {{"fonts/truetype/wqy/wqy-microhei.ttc", 0},
                                                    {"fonts/truetype/droid/DroidSansFallbackFull.ttf", 0},
                                                    {"fonts/opentype/noto/NotoSansCJK-Regular.ttc", 2}};  // face 2: SC
  for (const auto& [path, face] : candidates) {
    const QString found = QStandardPaths::locate(QStandardPaths::GenericDataLocation, QString::fromLatin1(path));
    if (!found.isEmpty()) return {found, face};
  }
  // Else, of the fonts fontconfig ranks for Simplified Chinese, the first that has the most of
  // the needed characters: a relocated install's fonts.conf names its own fonts, and a font cut
  // down to the translation's characters covers too little of the language for fontconfig to
  // list it as zh-cn, so the request also names the characters and the ranking, not the best
  // match, is searched.
  std::pair<QString, int> picked;
  FcPattern* pattern = FcNameParse(reinterpret_cast<const FcChar8*>(":lang=zh-cn"));
  FcCharSet* wanted = FcCharSetCreate();
  bool added = wanted != nullptr;
  for (char32_t c : needed.toUcs4())
    if (added) added = FcCharSetAddChar(wanted, FcChar32(c));
  if (!pattern || !added || !FcPatternAddCharSet(pattern, FC_CHARSET, wanted)) {
    if (wanted) FcCharSetDestroy(wanted);
    if (pattern) FcPatternDestroy(pattern);
    return picked;
  }
  FcConfigSubstitute(nullptr, pattern, FcMatchPattern);
  FcDefaultSubstitute(pattern);
  FcResult result = FcResultNoMatch;
  if (FcFontSet* ranked = FcFontSort(nullptr, pattern, FcFalse, nullptr, &result)) {
    const FcChar32 all = FcCharSetCount(wanted);
    FcChar32 best = 0;
    for (int i = 0; i < ranked->nfont && best < all; ++i) {
      FcChar8* file = nullptr;
      FcCharSet* characters = nullptr;
      int index = 0;
      if (FcPatternGetString(ranked->fonts[i], FC_FILE, 0, &file) != FcResultMatch ||
          FcPatternGetCharSet(ranked->fonts[i], FC_CHARSET, 0, &characters) != FcResultMatch)
        continue;
      const FcChar32 covered = FcCharSetIntersectCount(wanted, characters);
      if (covered <= best) continue;
      best = covered;
      picked = {QFile::decodeName(reinterpret_cast<const char*>(file)), FcPatternGetInteger(ranked->fonts[i], FC_INDEX, 0, &index) == FcResultMatch ? index : 0};
    }
    FcFontSetDestroy(ranked);
  }
  FcCharSetDestroy(wanted);  // the pattern holds its own reference
  FcPatternDestroy(pattern);
  return picked;
}

// ImGui's state lives in a current-context global: make this overlay's current for a scope.
class ContextScope {
 public:
  explicit ContextScope(ImGuiContext* c) : previous_(ImGui::GetCurrentContext()) { ImGui::SetCurrentContext(c); }
  ~ContextScope() { ImGui::SetCurrentContext(previous_); }
  ContextScope(const ContextScope&) = delete;
  ContextScope& operator=(const ContextScope&) = delete;

 private:
  ImGuiContext* previous_;
};

}  // namespace

ImGuiOverlay::ImGuiOverlay() : context_(ImGui::CreateContext()) {
  ContextScope scope(context_);
  ImGuiIO& io = ImGui::GetIO();
  io.IniFilename = nullptr;  // no imgui.ini next to the studio
  io.LogFilename = nullptr;
  for (size_t i = 0; i < std::size(kKeys); ++i) io.KeyMap[kKeys[i].imguiKey] = int(i) + 1;
  ImGui::StyleColorsDark();
  ImGuiStyle& style = ImGui::GetStyle();
  style.WindowRounding = 6;
  style.FrameRounding = 3;
  style.WindowBorderSize = 0;
  clock_.start();
}

ImGuiOverlay::~ImGuiOverlay() { ImGui::DestroyContext(context_); }

bool ImGuiOverlay::initialize(QString* error) {
  ContextScope scope(context_);
  const bool es = QOpenGLContext::currentContext()->isOpenGLES();
  if (!ImGui_ImplOpenGL3_Init(es ? "#version 300 es" : "#version 330 core")) {
    *error = QCoreApplication::translate("cas::widgets::ImGuiOverlay", "Dear ImGui's OpenGL 3 renderer could not start in this context.");
    return false;
  }
  initialized_ = true;
  return true;
}

void ImGuiOverlay::release() {
  if (!initialized_) return;
  ContextScope scope(context_);
  ImGui_ImplOpenGL3_Shutdown();
  initialized_ = false;
}

bool ImGuiOverlay::handleEvent(QEvent* event) {
  ContextScope scope(context_);
  ImGuiIO& io = ImGui::GetIO();
  switch (event->type()) {
    case QEvent::MouseMove: {
      const QPointF p = static_cast<QMouseEvent*>(event)->position();
      io.MousePos = ImVec2(float(p.x()), float(p.y()));
      return io.WantCaptureMouse;
    }
    case QEvent::MouseButtonPress:
    case QEvent::MouseButtonDblClick:
    case QEvent::MouseButtonRelease: {
      auto* e = static_cast<QMouseEvent*>(event);
      io.MousePos = ImVec2(float(e->position().x()), float(e->position().y()));
      const int b = mouseButton(e->button());
      if (b >= 0) io.MouseDown[b] = event->type() != QEvent::MouseButtonRelease;
      return io.WantCaptureMouse;
    }
    case QEvent::Wheel: {
      const QPoint delta = static_cast<QWheelEvent*>(event)->angleDelta();
      io.MouseWheel += float(delta.y()) / 120;
      io.MouseWheelH += float(delta.x()) / 120;
      return io.WantCaptureMouse;
    }
    case QEvent::KeyPress:
    case QEvent::KeyRelease: {
      auto* e = static_cast<QKeyEvent*>(event);
      const bool down = event->type() == QEvent::KeyPress;
      const Qt::KeyboardModifiers m = e->modifiers();
      io.KeyCtrl = m & Qt::ControlModifier;
      io.KeyShift = m & Qt::ShiftModifier;
      io.KeyAlt = m & Qt::AltModifier;
      io.KeySuper = m & Qt::MetaModifier;
      if (const int k = keyIndex(e->key()); k > 0) io.KeysDown[k] = down;
      if (down && !e->text().isEmpty() && e->text().at(0).isPrint()) io.AddInputCharactersUTF8(e->text().toUtf8().constData());
      return io.WantCaptureKeyboard;
    }
    case QEvent::FocusIn:
    case QEvent::FocusOut:
      io.AddFocusEvent(event->type() == QEvent::FocusIn);
      return false;
    case QEvent::Leave:
      io.MousePos = ImVec2(-FLT_MAX, -FLT_MAX);
      return false;
    default:
      return false;
  }
}

// Merges the glyphs of `text` that ImGui's built-in font lacks from a system CJK font, rebuilding
// the atlas only when new characters appear (the labels are fixed, so in practice once).
void ImGuiOverlay::loadGlyphsFor(const QString& text) {
  QString missing;
  for (QChar c : text)
    if (c.unicode() > 0xFF && !glyphsLoaded_.contains(c) && !missing.contains(c)) missing += c;
  if (missing.isEmpty()) return;
  const auto [path, face] = cjkFont(missing);
  glyphsLoaded_ += missing;  // also when no font has them: ImGui then draws '?', and we stop looking
  if (path.isEmpty()) return;
  ImGuiIO& io = ImGui::GetIO();
  ImFontGlyphRangesBuilder builder;
  builder.AddRanges(io.Fonts->GetGlyphRangesDefault());
  builder.AddText(glyphsLoaded_.toUtf8().constData());
  ImVector<ImWchar> ranges;
  builder.BuildRanges(&ranges);
  glyphRanges_.assign(ranges.begin(), ranges.end());
  io.Fonts->Clear();
  io.Fonts->AddFontDefault();
  ImFontConfig merged;
  merged.MergeMode = true;
  merged.FontNo = face;
  merged.OversampleH = 1;
  io.Fonts->AddFontFromFileTTF(QFile::encodeName(path).constData(), 14.0f, &merged, glyphRanges_.data());
  ImGui_ImplOpenGL3_DestroyFontsTexture();
  ImGui_ImplOpenGL3_CreateFontsTexture();
}

void ImGuiOverlay::render(QSize logicalSize, qreal devicePixelRatio, const std::vector<Section>& sections, const std::vector<float>& frameTimesMs) {
  if (!initialized_) return;
  ContextScope scope(context_);
  const QString title = QCoreApplication::translate("cas::widgets::ImGuiOverlay", "Debug overlay (F12)");
  const QString frameLabel = QCoreApplication::translate("cas::widgets::ImGuiOverlay", "Frame time, last %1 frames (ms)").arg(frameTimesMs.size());
  QString allText = title + frameLabel;
  for (const Section& s : sections) {
    allText += s.title;
    for (const auto& [label, value] : s.rows) allText += label + value;
  }
  loadGlyphsFor(allText);

  ImGuiIO& io = ImGui::GetIO();
  io.DisplaySize = ImVec2(float(logicalSize.width()), float(logicalSize.height()));
  io.DisplayFramebufferScale = ImVec2(float(devicePixelRatio), float(devicePixelRatio));
  io.DeltaTime = std::max(1e-4f, float(clock_.nsecsElapsed()) / 1e9f);
  clock_.restart();
  ImGui_ImplOpenGL3_NewFrame();
  ImGui::NewFrame();
  ImGui::SetNextWindowPos(ImVec2(float(logicalSize.width()) - 10, 10), ImGuiCond_FirstUseEver, ImVec2(1, 0));
  ImGui::SetNextWindowBgAlpha(0.88f);
  ImGui::SetNextWindowSizeConstraints(ImVec2(0, 0), ImVec2(float(logicalSize.width()) - 20, float(logicalSize.height()) - 20));
  ImGui::Begin(title.toUtf8().constData(), nullptr, ImGuiWindowFlags_AlwaysAutoResize | ImGuiWindowFlags_NoFocusOnAppearing);
  {
    // The window grows to the right as its lines lengthen (a larger tree, a later iteration):
    // kept inside the view, 10 pixels from its edges, wherever it was placed or dragged.
    const ImVec2 pos = ImGui::GetWindowPos(), size = ImGui::GetWindowSize();
    const ImVec2 inside(std::max(10.0f, std::min(pos.x, io.DisplaySize.x - 10 - size.x)), std::max(10.0f, std::min(pos.y, io.DisplaySize.y - 10 - size.y)));
    if (inside.x != pos.x || inside.y != pos.y) ImGui::SetWindowPos(inside);
  }
  if (!frameTimesMs.empty()) {
    const float worst = *std::max_element(frameTimesMs.begin(), frameTimesMs.end());
    ImGui::TextUnformatted(frameLabel.toUtf8().constData());
    ImGui::PlotLines("##frameTimes", frameTimesMs.data(), int(frameTimesMs.size()), 0, nullptr, 0.0f, std::max(worst * 1.1f, 1.0f),
                     ImVec2(320, 40));
  }
  for (size_t i = 0; i < sections.size(); ++i) {
    const Section& s = sections[i];
    ImGui::Spacing();
    ImGui::TextColored(ImVec4(0.55f, 0.8f, 1.0f, 1.0f), "%s", s.title.toUtf8().constData());
    ImGui::Separator();
    if (ImGui::BeginTable(QByteArray::number(qulonglong(i)).constData(), 2, ImGuiTableFlags_SizingFixedFit)) {
      for (const auto& [label, value] : s.rows) {
        ImGui::TableNextRow();
        ImGui::TableSetColumnIndex(0);
        ImGui::TextDisabled("%s", label.toUtf8().constData());
        ImGui::TableSetColumnIndex(1);
        ImGui::TextUnformatted(value.toUtf8().constData());
      }
      ImGui::EndTable();
    }
  }
  ImGui::End();
  ImGui::Render();
  ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
}

}  // namespace cas::widgets
