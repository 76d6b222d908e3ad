// The tree view's CUDA-GL interop path on the GPU machine, headless: an OpenGL context on the
// NVIDIA device through EGL (EGL_EXT_platform_device), two GL buffers registered with CUDA and
// filled by the device sunburst's kernels from a device search's tree (search::DeviceSunburst),
// read back with glGetBufferSubData and compared with the same steps run on the host over the
// tree's snapshot (support/sunburst_host.hpp, which test_tree_geometry_port checks bit for bit
// against the studio's own mesh, widgets/tree/tree_geometry.cpp: the CPU reference). Then a tree of over a million nodes:
// the frame rate of drawing it from the interop buffers into a 1920x1080 framebuffer, and of
// laying it out, writing it and drawing it every frame, with the mapped-buffer time.
// Skips with the reason when there is no CUDA device or no EGL display on it.
#include <QTest>

#include <EGL/egl.h>
#include <EGL/eglext.h>
#define GL_GLEXT_PROTOTYPES 1
#include <GL/gl.h>
#include <GL/glext.h>

#include <chrono>
#include <cmath>
#include <cstring>

#include "core/exec/backend.hpp"
#include "core/search/self_play_search.hpp"
#include "support/sunburst_host.hpp"

using namespace cas;

namespace {

using search::mesh::TreeVertex;

// An OpenGL 4.3 core context on the first EGL device that gives one, current on this thread.
struct EglContext {
  EGLDisplay display = EGL_NO_DISPLAY;
  EGLContext context = EGL_NO_CONTEXT;
  EGLSurface surface = EGL_NO_SURFACE;
  QString error;

  bool open() {
    auto queryDevices = reinterpret_cast<PFNEGLQUERYDEVICESEXTPROC>(eglGetProcAddress("eglQueryDevicesEXT"));
    auto platformDisplay = reinterpret_cast<PFNEGLGETPLATFORMDISPLAYEXTPROC>(eglGetProcAddress("eglGetPlatformDisplayEXT"));
    auto deviceString = reinterpret_cast<PFNEGLQUERYDEVICESTRINGEXTPROC>(eglGetProcAddress("eglQueryDeviceStringEXT"));
    if (!queryDevices || !platformDisplay || !deviceString)
      return fail(QStringLiteral("EGL has no EGL_EXT_device_enumeration, EGL_EXT_device_query or EGL_EXT_platform_device"));
    EGLDeviceEXT devices[8];
    EGLint count = 0;
    if (!queryDevices(8, devices, &count) || count == 0) return fail(QStringLiteral("eglQueryDevicesEXT found no device"));
    for (EGLint d = 0; d < count; ++d) {
      // A CUDA device's only (Mesa's software device initialises too, and no CUDA buffer maps into it).
      const char* extensions = deviceString(devices[d], EGL_EXTENSIONS);
      if (!extensions || !std::strstr(extensions, "EGL_NV_device_cuda")) continue;
      display = platformDisplay(EGL_PLATFORM_DEVICE_EXT, devices[d], nullptr);
      EGLint major = 0, minor = 0;
      if (display != EGL_NO_DISPLAY && eglInitialize(display, &major, &minor)) break;
      display = EGL_NO_DISPLAY;
    }
    if (display == EGL_NO_DISPLAY) return fail(QStringLiteral("no EGL device of a CUDA GPU initialises (EGL_NV_device_cuda)"));
    const EGLint configAttributes[] = {EGL_SURFACE_TYPE, EGL_PBUFFER_BIT, EGL_RENDERABLE_TYPE, EGL_OPENGL_BIT, EGL_RED_SIZE, 8,
                                       EGL_GREEN_SIZE, 8, EGL_BLUE_SIZE, 8, EGL_NONE};
    EGLConfig config;
    EGLint configs = 0;
    if (!eglChooseConfig(display, configAttributes, &config, 1, &configs) || configs == 0) return fail(QStringLiteral("no EGL config for OpenGL"));
    const EGLint surfaceAttributes[] = {EGL_WIDTH, 16, EGL_HEIGHT, 16, EGL_NONE};
    surface = eglCreatePbufferSurface(display, config, surfaceAttributes);
    if (!eglBindAPI(EGL_OPENGL_API)) return fail(QStringLiteral("eglBindAPI(EGL_OPENGL_API) failed"));
    const EGLint contextAttributes[] = {EGL_CONTEXT_MAJOR_VERSION, 4, EGL_CONTEXT_MINOR_VERSION, 3, EGL_CONTEXT_OPENGL_PROFILE_MASK,
                                        EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT, EGL_NONE};
    context = eglCreateContext(display, config, EGL_NO_CONTEXT, contextAttributes);
    if (context == EGL_NO_CONTEXT) return fail(QStringLiteral("no OpenGL 4.3 core context"));
    if (!eglMakeCurrent(display, surface, surface, context)) return fail(QStringLiteral("eglMakeCurrent failed"));
    return true;
  }
  bool fail(const QString& why) {
    error = why + QStringLiteral(" (EGL error 0x%1)").arg(eglGetError(), 0, 16);
    return false;
  }
  ~EglContext() {
    if (display == EGL_NO_DISPLAY) return;
    eglMakeCurrent(display, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
    if (context != EGL_NO_CONTEXT) eglDestroyContext(display, context);
    if (surface != EGL_NO_SURFACE) eglDestroySurface(display, surface);
    eglTerminate(display);
  }
};

struct GlBuffers {
  GLuint vertices = 0, indices = 0;
  std::int64_t vertexBytes = 0, indexBytes = 0;
  GlBuffers() { glGenBuffers(1, &vertices), glGenBuffers(1, &indices); }
  ~GlBuffers() { glDeleteBuffers(1, &vertices), glDeleteBuffers(1, &indices); }
  void size(const search::DeviceSunburst::Counts& c) {
    vertexBytes = std::max<std::int64_t>(1, c.vertices) * std::int64_t(sizeof(TreeVertex));
    indexBytes = std::max<std::int64_t>(1, c.indices) * 4;
    glBindBuffer(GL_ARRAY_BUFFER, vertices);
    glBufferData(GL_ARRAY_BUFFER, vertexBytes, nullptr, GL_DYNAMIC_DRAW);
    glBindBuffer(GL_ELEMENT_ARRAY_BUFFER, indices);
    glBufferData(GL_ELEMENT_ARRAY_BUFFER, indexBytes, nullptr, GL_DYNAMIC_DRAW);
  }
  // Writes the layout `c` names; false when a later layOut replaced it.
  bool write(search::DeviceSunburst& s, const search::DeviceSunburst::Counts& c) {
    return s.writeGlBuffers(c.generation, vertices, vertexBytes, indices, indexBytes);
  }
};

search::SearchConfig searchConfig(int budget, int leaves) {
  search::SearchConfig c;
  c.nodeBudget = budget;
  c.leavesPerStep = leaves;
  c.dirichletFraction = 0;
  return c;
}

std::unique_ptr<search::SelfPlaySearch> deviceSearch(const search::SearchConfig& c, search::LeafEvaluator::Kind evaluator) {
  search::SearchSetup setup{"connect4", 1, c, 7, {evaluator, nullptr}};
  std::string reason;
  auto s = exec::BackendRegistry::instance().find("cuda")->backend->deviceServices()->createSearch(setup, &reason);
  if (!s) qFatal("no device search: %s", reason.c_str());
  return s;
}

// A program drawing the meshes' fill colours (the studio's outlines are not needed to time it).
GLuint fillProgram() {
  const char* vertex = "#version 430 core\n"
                       "layout(location = 0) in vec2 position;\n"
                       "layout(location = 1) in vec4 fill;\n"
                       "uniform float scale;\n"
                       "out vec4 colour;\n"
                       "void main() { gl_Position = vec4(position * scale * vec2(1.0, -1.0), 0.0, 1.0); colour = fill; }\n";
  const char* fragment = "#version 430 core\nin vec4 colour;\nout vec4 result;\nvoid main() { result = colour; }\n";
  GLuint program = glCreateProgram();
  for (auto [type, text] : {std::pair{GL_VERTEX_SHADER, vertex}, std::pair{GL_FRAGMENT_SHADER, fragment}}) {
    GLuint shader = glCreateShader(GLenum(type));
    glShaderSource(shader, 1, &text, nullptr);
    glCompileShader(shader);
    glAttachShader(program, shader);
  }
  glLinkProgram(program);
  return program;
}

}  // namespace

class TestTreeInterop : public QObject {
  Q_OBJECT
  EglContext egl_;

 private slots:
  void initTestCase() {
    const auto* entry = exec::BackendRegistry::instance().find("cuda");
    QVERIFY(entry);
    if (!entry->available()) QSKIP(qPrintable("no usable CUDA device: " + QString::fromStdString(entry->unavailableReason)));
    if (!egl_.open()) QSKIP(qPrintable(QStringLiteral("no OpenGL context on the device: ") + egl_.error));
    qInfo("OpenGL: %s, %s", reinterpret_cast<const char*>(glGetString(GL_RENDERER)), reinterpret_cast<const char*>(glGetString(GL_VERSION)));
  }

  void interopBuffersHoldTheStudiosMesh_data() {
    QTest::addColumn<int>("simulations");
    QTest::addColumn<int>("maxNodes");
    QTest::newRow("3000 simulations, whole tree") << 3000 << 100000;
    QTest::newRow("20000 simulations, cut at 5000 nodes") << 20000 << 5000;
  }
  void interopBuffersHoldTheStudiosMesh() {
    QFETCH(int, simulations);
    QFETCH(int, maxNodes);
    auto search = deviceSearch(searchConfig(200000, 8), search::LeafEvaluator::Kind::Hashed);
    search->search({0}, simulations);
    GlBuffers gl;  // before the sunburst, which unregisters them as it goes, while they exist
    auto sunburst = search->deviceSunburst();
    QVERIFY(sunburst);
    std::string why;
    QVERIFY2(sunburst->glContextOnDevice(&why), why.c_str());
    const search::DeviceSunburst::Counts counts = sunburst->layOut(0, maxNodes);
    gl.size(counts);
    QVERIFY(gl.write(*sunburst, counts));
    std::vector<TreeVertex> vertices(size_t(counts.vertices));
    std::vector<std::uint32_t> indices(size_t(counts.indices));
    glBindBuffer(GL_ARRAY_BUFFER, gl.vertices);
    glGetBufferSubData(GL_ARRAY_BUFFER, 0, GLsizeiptr(vertices.size() * sizeof(TreeVertex)), vertices.data());
    glBindBuffer(GL_ELEMENT_ARRAY_BUFFER, gl.indices);
    glGetBufferSubData(GL_ELEMENT_ARRAY_BUFFER, 0, GLsizeiptr(indices.size() * 4), indices.data());
    QCOMPARE(glGetError(), GLenum(GL_NO_ERROR));

    // The host's steps over the same tree (nothing ran in between).
    const test::HostMesh want = test::sunburstOnHost(search->treeSnapshot(0), maxNodes);
    QCOMPARE(counts.nodes, std::int64_t(want.nodes));
    QCOMPARE(vertices.size(), want.vertices.size());
    QVERIFY(indices == want.indices);
    double worst = 0;
    for (size_t i = 0; i < vertices.size(); ++i) {
      const TreeVertex &a = vertices[i], &b = want.vertices[i];
      QVERIFY2(std::memcmp(a.fill, b.fill, 4) == 0 && std::memcmp(a.outline, b.outline, 4) == 0 && a.outlineWidth == b.outlineWidth,
               qPrintable(QStringLiteral("vertex %1: colours differ").arg(i)));
      const float got[6] = {a.x, a.y, a.edge[0], a.edge[1], a.edge[2], a.edge[3]}, ref[6] = {b.x, b.y, b.edge[0], b.edge[1], b.edge[2], b.edge[3]};
      for (int k = 0; k < 6; ++k) worst = std::max(worst, std::abs(double(got[k]) - ref[k]) / (1.0 + std::abs(double(ref[k]))));
    }
    qInfo("%lld nodes, %lld vertices: largest difference %.2g (sinf/cosf of the device against the host's)", (long long)counts.nodes,
          (long long)counts.vertices, worst);
    QVERIFY2(worst <= 1e-5, qPrintable(QStringLiteral("positions differ by %1").arg(worst)));

    // The host copy (the path without interop) is the same mesh.
    std::vector<TreeVertex> hostVertices;
    std::vector<std::uint32_t> hostIndices;
    sunburst->readMesh(&hostVertices, &hostIndices);
    QVERIFY(hostIndices == indices);
    QVERIFY(std::memcmp(hostVertices.data(), vertices.data(), vertices.size() * sizeof(TreeVertex)) == 0);
  }

  // Over a million nodes: draws per second from the interop buffers (the view's frames between
  // snapshots), and layout + write + draw every frame (a new snapshot each frame).
  void aMillionNodesDrawAtSixtyFramesPerSecond() {
    auto search = deviceSearch(searchConfig(1 << 21, 16), search::LeafEvaluator::Kind::Uniform);
    search->search({0}, 200000);
    GlBuffers gl;  // before the sunburst, which unregisters them as it goes, while they exist
    auto sunburst = search->deviceSunburst();
    const search::DeviceSunburst::Counts counts = sunburst->layOut(0, 1 << 21);
    qInfo("tree: %lld nodes, %lld vertices, %lld indices; layout %.2f ms", (long long)counts.nodes, (long long)counts.vertices,
          (long long)counts.indices, sunburst->timing().layoutMs);
    QVERIFY2(counts.nodes >= 1000000, qPrintable(QStringLiteral("only %1 nodes").arg(counts.nodes)));
    gl.size(counts);
    QVERIFY(gl.write(*sunburst, counts));
    // A layout replaced by a later one is not written (the view keeps what it drew).
    const search::DeviceSunburst::Counts later = sunburst->layOut(0, 1 << 21);
    QCOMPARE(later.generation, counts.generation + 1);
    QVERIFY(!gl.write(*sunburst, counts));
    QVERIFY(gl.write(*sunburst, later));

    GLuint framebuffer = 0, colour = 0, vao = 0;
    glGenFramebuffers(1, &framebuffer);
    glGenRenderbuffers(1, &colour);
    glBindRenderbuffer(GL_RENDERBUFFER, colour);
    glRenderbufferStorage(GL_RENDERBUFFER, GL_RGBA8, 1920, 1080);
    glBindFramebuffer(GL_FRAMEBUFFER, framebuffer);
    glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_RENDERBUFFER, colour);
    QCOMPARE(glCheckFramebufferStatus(GL_FRAMEBUFFER), GLenum(GL_FRAMEBUFFER_COMPLETE));
    glViewport(0, 0, 1920, 1080);
    const GLuint program = fillProgram();
    glUseProgram(program);
    glGenVertexArrays(1, &vao);
    glBindVertexArray(vao);
    glBindBuffer(GL_ARRAY_BUFFER, gl.vertices);
    glBindBuffer(GL_ELEMENT_ARRAY_BUFFER, gl.indices);
    glEnableVertexAttribArray(0);
    glVertexAttribPointer(0, 2, GL_FLOAT, GL_FALSE, sizeof(TreeVertex), reinterpret_cast<void*>(offsetof(TreeVertex, x)));
    glEnableVertexAttribArray(1);
    glVertexAttribPointer(1, 4, GL_UNSIGNED_BYTE, GL_TRUE, sizeof(TreeVertex), reinterpret_cast<void*>(offsetof(TreeVertex, fill)));
    glUniform1f(glGetUniformLocation(program, "scale"), 1.0f / 40.0f);
    auto draw = [&] {
      glClear(GL_COLOR_BUFFER_BIT);
      glDrawElements(GL_TRIANGLES, GLsizei(counts.indices), GL_UNSIGNED_INT, nullptr);
    };
    draw();
    glFinish();
    QCOMPARE(glGetError(), GLenum(GL_NO_ERROR));

    constexpr int kFrames = 120;
    auto start = std::chrono::steady_clock::now();
    for (int f = 0; f < kFrames; ++f) {
      draw();
      glFinish();
    }
    const double drawFps = kFrames / std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    double mapMs = 0, writeMs = 0, layoutMs = 0;
    start = std::chrono::steady_clock::now();
    for (int f = 0; f < kFrames; ++f) {
      QVERIFY(gl.write(*sunburst, sunburst->layOut(0, 1 << 21)));
      draw();
      glFinish();
      layoutMs += sunburst->timing().layoutMs, mapMs += sunburst->timing().mapMs, writeMs += sunburst->timing().writeMs;
    }
    const double refreshFps = kFrames / std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    qInfo("draw from the interop buffers: %.0f frames/s; layout + write + draw every frame: %.0f frames/s "
          "(per frame: layout %.2f ms, map + unmap %.3f ms, write %.3f ms)",
          drawFps, refreshFps, layoutMs / kFrames, mapMs / kFrames, writeMs / kFrames);
    QVERIFY2(drawFps >= 60, qPrintable(QStringLiteral("%1 frames/s").arg(drawFps)));
    glDeleteVertexArrays(1, &vao);
    glDeleteProgram(program);
    glDeleteRenderbuffers(1, &colour);
    glDeleteFramebuffers(1, &framebuffer);
  }
};

QTEST_GUILESS_MAIN(TestTreeInterop)
#include "test_tree_interop.moc"
