#include "core/cuda_render/implicit_conv.hpp"

#include <algorithm>
#include <cstdlib>
#include <sstream>

namespace cas::gpu {
namespace {

constexpr int kRows = 128;                   // tile rows per block (implicit_conv.cuh, kConvRows)
constexpr int kStep = 32;                    // reduction per shared tile (kConvStep)
constexpr int kThreads = 256;                // kConvThreads
constexpr std::int64_t kTargetBlocks = 512;  // weight gradient: slabs enough for ~4 blocks per SM
constexpr std::int64_t kImageBlocks = 2048;  // fp32 convolutions over small images: ~16 blocks per SM

// Blocks per SM the kernels ask the compiler to fit (it caps registers to allow them);
// CAS_CONV_BLOCKS_PER_SM overrides it (for tuning by hand).
int blocksPerSm() {
  const char* env = std::getenv("CAS_CONV_BLOCKS_PER_SM");
  return env && *env ? std::clamp(std::atoi(env), 1, 8) : 2;
}

std::int64_t ceilDiv(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }
std::string str(std::int64_t v) { return std::to_string(v); }

std::string shapeArguments(const ir::Shape& s) { return str(s[0]) + ", " + str(s[1]) + ", " + str(s[2]) + ", " + str(s[3]); }

}  // namespace

ConvGeometry convGeometry(const ir::Graph& g, const ir::Node& n) {
  const bool forward = n.op == ir::Op::Conv2d;
  const ir::Shape& xs = g.node(n.inputs[0]).shape;
  const ir::Shape& ws = forward ? g.node(n.inputs[1]).shape : n.shape;
  const ir::Shape& ys = forward ? n.shape : g.node(n.inputs[1]).shape;
  const auto& a = n.attrs;
  return {xs[0], xs[1], xs[2], xs[3], ws[0], ws[2], ws[3], ys[2], ys[3], a.strideH, a.strideW, a.padTop, a.padLeft,
          a.padTop || a.padLeft || a.padBottom || a.padRight};
}

ImplicitConvKernel implicitConv(ConvPass pass, const ConvGeometry& g, bool bf16, const std::string& x, const std::string& other,
                                const std::string& tail) {
  const bool forward = pass == ConvPass::Forward;
  const std::int64_t M = g.n * g.ho * g.wo, Kc = g.c * g.r * g.s;
  const int bn = g.k <= 32 ? 32 : 64;
  const std::int64_t kTiles = ceilDiv(g.k, bn);
  // Taps are gathered v at a time (consecutive s: one vector load) where stride, padding and
  // widths keep every group of v aligned, and wholly inside or outside the image.
  auto fits = [&](int v) { return g.s % v == 0 && g.strideW % v == 0 && g.padLeft % v == 0 && g.w % v == 0; };
  const int v = fits(4) ? 4 : fits(2) ? 2 : 1;
  ImplicitConvKernel k;
  k.blockSize = kThreads;
  k.blocksPerSm = blocksPerSm();
  std::int64_t chunk = 0;
  if (forward) {
    k.gridX = ceilDiv(M, kRows);
    k.gridY = kTiles;
  } else {
    k.gridX = ceilDiv(Kc, kRows);
    const std::int64_t slabs = std::clamp<std::int64_t>(ceilDiv(kTargetBlocks, k.gridX * kTiles), 1, ceilDiv(M, kStep));
    chunk = ceilDiv(ceilDiv(M, slabs), kStep) * kStep;
    k.gridY = kTiles * ceilDiv(M, chunk);
  }
  std::ostringstream args;
  args << (bf16 ? "true" : "false") << ", " << g.n << ", " << g.c << ", " << g.h << ", " << g.w << ", " << g.k << ", " << g.r << ", " << g.s << ", "
       << g.ho << ", " << g.wo << ", " << g.strideH << ", " << g.strideW << ", " << g.padTop << ", " << g.padLeft << ", " << (g.padded ? "true" : "false")
       << ", " << bn << ", " << v;
  std::ostringstream c;
  c << "// x " << ir::shapeText({g.n, g.c, g.h, g.w}, ", ") << ", filters " << ir::shapeText({g.k, g.c, g.r, g.s}, ", ") << ", stride " << g.strideH
    << "x" << g.strideW << ", padding " << g.padTop << "," << g.padLeft << " -> " << ir::shapeText({g.n, g.k, g.ho, g.wo}, ", ") << "\n";
  if (forward) {
    c << "// Launch: grid (" << k.gridX << ", " << k.gridY << ") of " << kRows << " x " << bn << " tiles (rows: output pixels m, columns: filters k), "
      << kThreads << " threads; Kc " << Kc << " in steps of " << kStep << "; a lane gathers one pixel's taps, " << v << " at a time.\n";
    k.call = "cas_conv_forward<" + args.str() + ">(" + x + ", " + other + ", " + tail + ");\n";
  } else {
    c << "// Launch: grid (" << k.gridX << ", " << k.gridY << "): " << kRows << " x " << bn << " tiles (rows: taps kc, columns: filters k) x "
      << k.gridY / kTiles << " slabs of " << chunk << " pixels m, " << kThreads << " threads; m in steps of " << kStep
      << "; a lane gathers its pixel's taps, " << v << " at a time.\n";
    k.call = "cas_conv_wgrad<" + args.str() + ", " + str(chunk) + ">(" + x + ", " + other + ", " + tail + ");\n";
  }
  k.comment = c.str();
  return k;
}

ImplicitConvKernel imageForward(const ConvGeometry& g, const std::string& x, const std::string& w, const std::string& epilogue) {
  // Two adjacent pixels a thread where the rows have an even width (each tap's filters then
  // serve two products), 8 filters a thread, 16 where the threads would pass 1024 (the schedule
  // keeps it within that).
  const std::int64_t pixelsPerThread = g.wo % 2 == 0 ? 2 : 1;
  const std::int64_t slots = g.ho * ceilDiv(g.wo, pixelsPerThread);
  std::int64_t perThread = std::min<std::int64_t>(g.k, 8);
  while (slots * ceilDiv(g.k, perThread) > 1024) perThread *= 2;
  const std::int64_t owners = slots * ceilDiv(g.k, perThread);
  ImplicitConvKernel k;
  k.blockSize = int(ceilDiv(owners, 32) * 32);
  k.blocksPerSm = int(std::clamp<std::int64_t>(1024 / k.blockSize, 1, 8));  // half an SM's threads: up to 64 registers each
  k.gridX = std::min(g.n, kImageBlocks);
  k.gridY = 1;
  std::ostringstream c;
  c << "// x " << ir::shapeText({g.n, g.c, g.h, g.w}, ", ") << ", filters " << ir::shapeText({g.k, g.c, g.r, g.s}, ", ") << ", stride " << g.strideH
    << "x" << g.strideW << ", padding " << g.padTop << "," << g.padLeft << " -> " << ir::shapeText({g.n, g.k, g.ho, g.wo}, ", ") << "\n"
    << "// Launch: grid " << k.gridX << " (images n = block, + " << k.gridX << ", ...), " << k.blockSize << " threads: " << owners << " own "
    << pixelsPerThread << " pixel(s) and " << perThread << " filter(s) each.\n";
  k.comment = c.str();
  k.call = "cas_conv_forward_images<" + str(g.n) + ", " + str(g.c) + ", " + str(g.h) + ", " + str(g.w) + ", " + str(g.k) + ", " + str(g.r) + ", " +
           str(g.s) + ", " + str(g.ho) + ", " + str(g.wo) + ", " + str(g.strideH) + ", " + str(g.strideW) + ", " + str(g.padTop) + ", " +
           str(g.padLeft) + ", " + str(perThread) + ", " + str(pixelsPerThread) + ">(" + x + ", " + w + ", " + epilogue + ");\n";
  return k;
}

ImplicitConvKernel imageWeightGradient(const ConvGeometry& g, const std::string& x, const std::string& dy, const std::string& dw) {
  const std::int64_t taps = g.c * g.r * g.s;
  // Filters per thread: 8 (a dy value read for each tap and pixel serves 8 products), more where
  // the threads would pass 1024; the schedule keeps that to at most 16 (taps at most 512).
  std::int64_t perThread = std::min<std::int64_t>(g.k, 8);
  while (taps * ceilDiv(g.k, perThread) > 1024) perThread *= 2;
  const std::int64_t owners = taps * ceilDiv(g.k, perThread);
  ImplicitConvKernel k;
  k.blockSize = int(ceilDiv(owners, 32) * 32);
  k.blocksPerSm = int(std::clamp<std::int64_t>(2048 / k.blockSize, 1, 4));  // what an SM's 2048 threads allow
  k.gridX = std::min(g.n, kImageBlocks);
  k.gridY = 1;
  std::ostringstream c;
  c << "// x " << ir::shapeText({g.n, g.c, g.h, g.w}, ", ") << ", dy " << ir::shapeText({g.n, g.k, g.ho, g.wo}, ", ") << " -> filters "
    << ir::shapeText({g.k, g.c, g.r, g.s}, ", ") << ", stride " << g.strideH << "x" << g.strideW << ", padding " << g.padTop << "," << g.padLeft << "\n"
    << "// Launch: grid " << k.gridX << " (images n = block, + " << k.gridX << ", ...), " << k.blockSize << " threads: " << owners << " own a tap and "
    << perThread << " filter(s) each.\n";
  k.comment = c.str();
  k.call = "cas_conv_wgrad_images<" + str(g.n) + ", " + str(g.c) + ", " + str(g.h) + ", " + str(g.w) + ", " + str(g.k) + ", " + str(g.r) + ", " +
           str(g.s) + ", " + str(g.ho) + ", " + str(g.wo) + ", " + str(g.strideH) + ", " + str(g.strideW) + ", " + str(g.padTop) + ", " +
           str(g.padLeft) + ", " + str(perThread) + ">(" + x + ", " + dy + ", " + dw + ");\n";
  return k;
}

int relayoutFold(const ir::Graph& g, const ir::Node& n) {
  const auto& a = n.attrs;
  const ir::Shape& ws = g.node(n.inputs[1]).shape;
  const bool unpadded = a.padTop == 0 && a.padLeft == 0 && a.padBottom == 0 && a.padRight == 0;
  const bool folds = unpadded && a.strideH == a.strideW && a.strideH > 1 && ws[2] % a.strideH == 0 && ws[3] % a.strideH == 0;
  return folds ? int(a.strideH) : 1;
}

std::string relayoutSource(const std::string& prefix, const std::string& stepName, const std::string& label, const ir::Graph& g,
                           const ir::Node& n, int fold) {
  const ir::Shape& xs = n.attrs.refShape;
  const ir::Shape& ws = g.node(n.inputs[1]).shape;
  const ir::Shape& ys = g.node(n.inputs[0]).shape;
  const bool bf16 = n.precision == ir::Precision::BF16;
  const std::string type = bf16 ? "true" : "false";
  auto kernel = [](const std::string& name, const char* src, const char* dst, const std::string& call) {
    return "extern \"C\" __global__ void __launch_bounds__(256) " + name + "(const " + src + "* __restrict__ src, " + dst +
           "* __restrict__ dst) {\n  " + call + "(src, dst);\n}\n";
  };
  std::ostringstream s;
  s << "// " << prefix << ": layouts for " << stepName << (label.empty() ? "" : " in " + label) << " in " << (bf16 ? "bf16" : "fp16")
    << " (NHWC for cuDNN" << (fold > 1 ? ", space-to-depth by " + str(fold) : "") << ").\n"
    << "// Launch: blocks stride over 32 x 32 tiles (the filter's fold: over elements), 256 threads a block.\n";
  s << kernel(prefix + "_in0", "float", "unsigned short", "cas_to_nhwc<" + type + ", " + shapeArguments(ys) + ">");
  s << kernel(prefix + "_in1", "float", "unsigned short",
              fold == 1 ? "cas_to_nhwc<" + type + ", " + shapeArguments(ws) + ">" : "cas_to_nhwc_fold<" + type + ", " + shapeArguments(ws) + ", " + str(fold) + ">");
  s << kernel(prefix + "_out", "unsigned short", "float", "cas_from_nhwc<" + type + ", " + shapeArguments(xs) + ", " + str(fold) + ">");
  return s.str();
}

}  // namespace cas::gpu
