#include "gpu/implicit_conv.hpp"

#include <algorithm>
#include <cstdlib>
#include <sstream>

namespace cas::gpu {
namespace {

constexpr int kRows = 128;              // tile rows per block
constexpr int kStep = 32;               // reduction per shared tile
constexpr int kPitch = kStep + 8;       // 16-bit elements per shared row of a [rows][32] tile
constexpr int kWidePitch = kRows + 8;   // ... of the forward's [32][128] tile of col
constexpr int kOutPitch = kRows + 4;    // floats per column of C
constexpr int kThreads = 256;
constexpr int kGathers = kRows * kStep / kThreads;  // col elements per thread per step (16)
constexpr std::int64_t kTargetBlocks = 512;  // weight gradient: slabs enough for ~4 blocks per SM

// Blocks per SM the kernels ask the compiler to fit (it caps registers to allow them);
// CAS_CONV_BLOCKS_PER_SM overrides it (for tuning by hand).
int blocksPerSm() {
  const char* env = std::getenv("CAS_CONV_BLOCKS_PER_SM");
  return env && *env ? std::clamp(std::atoi(env), 1, 8) : 2;
}

std::int64_t ceilDiv(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// Rounding to 16 bits and the wmma operations, through PTX (the fragments' register layout is
// the hardware's, so only addresses and strides appear in the kernels). Guarded: a module holds
// them once whatever number of convolutions it has.
std::string helpers(bool bf16) {
  const std::string t = bf16 ? "bf16" : "f16";
  const int f = bf16 ? 4 : 8;  // 32-bit registers in an A or B fragment of m16n16k16
  auto list = [](int first, int count) {
    std::string s;
    for (int k = 0; k < count; ++k) s += (k ? "," : "") + std::string("%") + std::to_string(first + k);
    return "{" + s + "}";
  };
  auto outputs = [](const std::string& array, int count, const char* constraint) {
    std::string s;
    for (int k = 0; k < count; ++k) s += (k ? ", " : "") + std::string(constraint) + "(" + array + "[" + std::to_string(k) + "])";
    return s;
  };
  std::ostringstream s;
  s << "#ifndef CAS_WMMA_" << t << "\n#define CAS_WMMA_" << t << "\n";
  s << "__device__ __forceinline__ unsigned short cas_round_" << t << "(float v) {\n"
    << "  unsigned short h;\n  asm(\"cvt.rn." << t << ".f32 %0, %1;\" : \"=h\"(h) : \"f\"(v));\n  return h;\n}\n";
  for (const auto& [operand, layout] : {std::pair{"a", "row"}, std::pair{"a", "col"}, std::pair{"b", "col"}}) {
    s << "__device__ __forceinline__ void cas_wmma_load_" << operand << "_" << layout << "_" << t
      << "(unsigned* v, const unsigned short* p, int stride) {\n"
      << "  asm volatile(\"wmma.load." << operand << ".sync.aligned." << layout << ".m16n16k16.shared." << t << " " << list(0, f) << ", [%"
      << f << "], %" << f + 1 << ";\"\n      : " << outputs("v", f, "\"=r\"")
      << "\n      : \"r\"(unsigned(__cvta_generic_to_shared(p))), \"r\"(stride) : \"memory\");\n}\n";
  }
  s << "__device__ __forceinline__ void cas_wmma_mma_" << t << "(float* d, const unsigned* a, const unsigned* b) {\n"
    << "  asm volatile(\"wmma.mma.sync.aligned.row.col.m16n16k16." << (bf16 ? "f32.bf16.bf16.f32" : "f32.f32") << " " << list(0, 8) << ", "
    << list(8, f) << ", " << list(8 + f, f) << ", " << list(0, 8) << ";\"\n      : " << outputs("d", 8, "\"+f\"") << "\n      : "
    << outputs("a", f, "\"r\"") << ", " << outputs("b", f, "\"r\"") << ");\n}\n";
  s << "#endif\n#ifndef CAS_WMMA_STORE\n#define CAS_WMMA_STORE\n"
    << "__device__ __forceinline__ void cas_wmma_store_col(float* p, const float* d, int stride) {\n"
    << "  asm volatile(\"wmma.store.d.sync.aligned.col.m16n16k16.shared.f32 [%0], " << list(1, 8) << ", %9;\"\n"
    << "      :: \"r\"(unsigned(__cvta_generic_to_shared(p))), " << outputs("d", 8, "\"f\"") << ", \"r\"(stride) : \"memory\");\n}\n";
  // v consecutive floats of x (one 16- or 8-byte load where v allows), or zeros.
  s << "__device__ __forceinline__ void cas_gather1(float* d, const float* p, bool in) { d[0] = in ? *p : 0.f; }\n"
    << "__device__ __forceinline__ void cas_gather2(float* d, const float* p, bool in) {\n"
    << "  const float2 q = in ? *reinterpret_cast<const float2*>(p) : make_float2(0.f, 0.f);\n  d[0] = q.x; d[1] = q.y;\n}\n"
    << "__device__ __forceinline__ void cas_gather4(float* d, const float* p, bool in) {\n"
    << "  const float4 q = in ? *reinterpret_cast<const float4*>(p) : make_float4(0.f, 0.f, 0.f, 0.f);\n"
    << "  d[0] = q.x; d[1] = q.y; d[2] = q.z; d[3] = q.w;\n}\n#endif\n";
  return s.str();
}

std::string both(const std::string& a, const std::string& b) { return a.empty() ? b : b.empty() ? a : a + " && " + b; }

}  // namespace

ImplicitConvKernel implicitConv(ConvPass pass, const std::string& name, const std::string& comment, const ConvGeometry& g, bool bf16,
                                const std::string& params, const std::string& x, const std::string& other, const std::string& out,
                                const std::string& epilogue) {
  const bool forward = pass == ConvPass::Forward;
  const std::string t = bf16 ? "bf16" : "f16";
  const int f = bf16 ? 4 : 8;
  const std::int64_t M = g.n * g.ho * g.wo, Kc = g.c * g.r * g.s, HoWo = g.ho * g.wo, CHW = g.c * g.h * g.w, RS = g.r * g.s;
  const int bn = g.k <= 32 ? 32 : 64, fragsN = bn / 32, gathersB = bn * kStep / kThreads;
  const std::int64_t kTiles = ceilDiv(g.k, bn);
  // Taps are gathered v at a time (consecutive s: one vector load) where stride, padding and
  // widths keep every group of v aligned, and wholly inside or outside the image.
  auto fits = [&](int v) { return g.s % v == 0 && g.strideW % v == 0 && g.padLeft % v == 0 && g.w % v == 0; };
  const int v = fits(4) ? 4 : fits(2) ? 2 : 1, tasks = kGathers / v;
  ImplicitConvKernel kernel;
  std::int64_t chunk = 0;
  if (forward) {
    kernel.gridX = ceilDiv(M, kRows);
    kernel.gridY = kTiles;
  } else {
    kernel.gridX = ceilDiv(Kc, kRows);
    const std::int64_t slabs = std::clamp<std::int64_t>(ceilDiv(kTargetBlocks, kernel.gridX * kTiles), 1, ceilDiv(M, kStep));
    chunk = ceilDiv(ceilDiv(M, slabs), kStep) * kStep;
    kernel.gridY = kTiles * ceilDiv(M, chunk);
  }
  const std::string S = std::to_string(g.s), W = std::to_string(g.w), H = std::to_string(g.h), K = std::to_string(g.k), V = std::to_string(v);
  const std::string taps = "c = kc / " + std::to_string(RS) + ", r = (kc / " + S + ") % " + std::to_string(g.r) + ", s = kc % " + S;
  const std::string pixel = "n = m / " + std::to_string(HoWo) + ", oy = (m / " + std::to_string(g.wo) + ") % " + std::to_string(g.ho) +
                            ", ox = m % " + std::to_string(g.wo);
  const std::string iy0 = "oy * " + std::to_string(g.strideH) + " - " + std::to_string(g.padTop);
  const std::string ix0 = "ox * " + std::to_string(g.strideW) + " - " + std::to_string(g.padLeft);
  const std::string window = "n * " + std::to_string(CHW) + " + oy * " + std::to_string(g.strideH * g.w) + " + ox * " + std::to_string(g.strideW);
  const std::string tapOffset = "(c * " + H + " + r) * " + W + " + s";
  auto inImage = [&](const std::string& iy, const std::string& ix) {
    return "unsigned(" + iy + ") < " + H + "u && unsigned(" + ix + ") < " + W + "u";
  };
  const std::string kGuard = g.k % bn ? "k < " + K : "";
  auto guarded = [](const std::string& guard) { return guard.empty() ? std::string("true") : guard; };

  std::ostringstream s;
  s << helpers(bf16);
  s << comment;
  if (forward)
    s << "// Launch: grid (" << kernel.gridX << ", " << kernel.gridY << ") of " << kRows << " x " << bn
      << " tiles (rows: output pixels m, columns: filters k), " << kThreads << " threads; Kc " << Kc << " in steps of " << kStep
      << "; a lane gathers one pixel's taps, " << v << " at a time.\n";
  else
    s << "// Launch: grid (" << kernel.gridX << ", " << kernel.gridY << "): " << kRows << " x " << bn << " tiles (rows: taps kc, columns: filters k) x "
      << kernel.gridY / kTiles << " slabs of " << chunk << " pixels m, " << kThreads << " threads; m in steps of " << kStep
      << "; a lane gathers its pixel's taps, " << v << " at a time.\n";
  const int aElements = forward ? kStep * kWidePitch : kRows * kPitch;
  s << "extern \"C\" __global__ void __launch_bounds__(" << kThreads << ", " << blocksPerSm() << ") " << name << "(" << params << ") {\n";
  s << "  cas_wait_for_previous_kernel();\n";
  s << "  __shared__ __align__(128) unsigned char smem[" << std::max(2 * (aElements + kPitch * bn), 4 * kOutPitch * bn) << "];\n";
  s << "  unsigned short* const As = reinterpret_cast<unsigned short*>(smem);  // col, " << (forward ? "[32 taps][128 pixels]" : "[128 taps][32 pixels]") << "\n";
  s << "  unsigned short* const Bs = As + " << aElements << ";  // " << (forward ? "w, [" + std::to_string(bn) + " filters][32 taps]" : "dy, [" + std::to_string(bn) + " filters][32 pixels]") << "\n";
  s << "  float* const Cs = reinterpret_cast<float*>(smem);\n";
  s << "  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;\n";
  s << "  const int wr = (warp & 3) * 32, wn = (warp >> 2) * " << bn / 2 << ";\n";

  // gather: the loads of the step at reduction offset AT into ra and rb; store: ra and rb into
  // the shared tiles.
  std::ostringstream gather, store;
  if (forward) {
    // This thread's pixel is row (warp & 3) * 32 + lane; its tap groups are (warp >> 2) + 2j.
    s << "  const int m0 = blockIdx.x * " << kRows << ", n0 = blockIdx.y * " << bn << ";\n";
    s << "  const int m = m0 + wr + lane, " << pixel << ";\n";
    std::string aGuard;
    if (g.padded) {
      s << "  const int iy0 = m < " << M << " ? " << iy0 << " : -65536, ix0 = " << ix0 << ";  // past M: never inside the image\n";
      s << "  const int window = n * " << CHW << " + iy0 * " << W << " + ix0;  // where the pixel's window starts in x\n";
      aGuard = inImage("iy0 + r", "ix0 + s");
    } else {
      s << "  const int window = " << window << ";  // where the pixel's window starts in x\n";
      aGuard = M % kRows ? "m < " + std::to_string(M) : "";
    }
    if (Kc % kStep) aGuard = both(aGuard, "kc < " + std::to_string(Kc));
    gather << "  #pragma unroll\n  for (int j = 0; j < " << tasks << "; ++j) {\n"
           << "    const int kc = AT + ((warp >> 2) + 2 * j) * " << V << ", " << taps << ";\n"
           << "    cas_gather" << V << "(ra + " << V << " * j, " << x << " + window + " << tapOffset << ", " << guarded(aGuard) << ");\n  }\n";
    const std::string bGuard = both(kGuard, Kc % kStep ? "kc < " + std::to_string(Kc) : "");
    gather << "  #pragma unroll\n  for (int q = 0; q < " << gathersB << "; ++q) {\n"
           << "    const int k = n0 + warp + 8 * q, kc = AT + lane;\n"
           << "    rb[q] = " << (bGuard.empty() ? "" : bGuard + " ? ") << other << "[k * " << Kc << " + kc]" << (bGuard.empty() ? "" : " : 0.f") << ";\n  }\n";
    store << "  #pragma unroll\n  for (int j = 0; j < " << tasks << "; ++j)\n    #pragma unroll\n    for (int e = 0; e < " << V << "; ++e)\n"
          << "      As[(((warp >> 2) + 2 * j) * " << V << " + e) * " << kWidePitch << " + wr + lane] = cas_round_" << t << "(ra[" << V << " * j + e]);\n";
  } else {
    // This thread's tap groups are rows (warp + 8q) * v of the tile; its pixel is lane.
    s << "  const int kc0 = blockIdx.x * " << kRows << ", n0 = (blockIdx.y % " << kTiles << ") * " << bn << ";\n";
    s << "  const int mBegin = (blockIdx.y / " << kTiles << ") * " << chunk << ", mEnd = min(" << M << ", mBegin + " << chunk << ");\n";
    s << "  int tap[" << tasks << "];  // the offset of each of this thread's tap groups in a window" << (g.padded || Kc % kRows == 0 ? "" : " (-1: past Kc)") << "\n";
    if (g.padded) s << "  int tapR[" << tasks << "], tapS[" << tasks << "];  // and its filter row (past Kc: never inside the image) and column\n";
    s << "  #pragma unroll\n  for (int q = 0; q < " << tasks << "; ++q) {\n";
    s << "    const int kc = kc0 + (warp + 8 * q) * " << V << ", " << taps << ";\n";
    if (g.padded) {
      s << "    tap[q] = " << tapOffset << ";\n    tapR[q] = kc < " << Kc << " ? r : -65536;\n    tapS[q] = s;\n";
    } else {
      s << "    tap[q] = " << (Kc % kRows ? "kc < " + std::to_string(Kc) + " ? " + tapOffset + " : -1" : tapOffset) << ";\n";
    }
    s << "  }\n";
    gather << "  const int m = AT + lane, " << pixel << ", pix = m % " << HoWo << ";\n";
    gather << "  const bool rowIn = m < mEnd;\n";
    std::string aGuard = "rowIn";
    if (g.padded) {
      gather << "  const int iy0 = " << iy0 << ", ix0 = " << ix0 << ", window = n * " << CHW << " + iy0 * " << W << " + ix0;\n";
      aGuard = both(aGuard, inImage("iy0 + tapR[q]", "ix0 + tapS[q]"));
    } else {
      gather << "  const int window = " << window << ";\n";
      if (Kc % kRows) aGuard = both(aGuard, "tap[q] >= 0");
    }
    gather << "  #pragma unroll\n  for (int q = 0; q < " << tasks << "; ++q) cas_gather" << V << "(ra + " << V << " * q, " << x << " + window + tap[q], "
           << aGuard << ");\n";
    gather << "  #pragma unroll\n  for (int q = 0; q < " << gathersB << "; ++q) {\n    const int k = n0 + warp + 8 * q;\n"
           << "    rb[q] = " << both("rowIn", kGuard) << " ? " << other << "[n * " << g.k * HoWo << " + k * " << HoWo << " + pix] : 0.f;\n  }\n";
    store << "  #pragma unroll\n  for (int q = 0; q < " << tasks << "; ++q)\n    #pragma unroll\n    for (int e = 0; e < " << V << "; ++e)\n"
          << "      As[((warp + 8 * q) * " << V << " + e) * " << kPitch << " + lane] = cas_round_" << t << "(ra[" << V << " * q + e]);\n";
  }
  store << "  #pragma unroll\n  for (int q = 0; q < " << gathersB << "; ++q) Bs[(warp + 8 * q) * " << kPitch << " + lane] = cas_round_" << t << "(rb[q]);\n";
  // A piece of code at reduction offset `at`, in its own block, indented by `indent`.
  auto at = [](std::string text, const std::string& offset, const std::string& indent) {
    for (size_t k = text.find("AT"); k != std::string::npos; k = text.find("AT", k)) text.replace(k, 2, offset);
    text = indent + text;
    for (size_t k = text.find('\n'); k + 1 < text.size(); k = text.find('\n', k + 1)) text.insert(k + 1, indent);
    return indent + "{\n" + text + indent + "}\n";
  };

  s << "  float ra[" << kGathers << "], rb[" << gathersB << "];\n";
  s << "  float sum[2][" << fragsN << "][8];\n";
  s << "  #pragma unroll\n  for (int i = 0; i < 2; ++i)\n    #pragma unroll\n    for (int j = 0; j < " << fragsN
    << "; ++j)\n      #pragma unroll\n      for (int e = 0; e < 8; ++e) sum[i][j][e] = 0.f;\n";
  const std::string first = forward ? "0" : "mBegin", end = forward ? std::to_string(Kc) : "mEnd";
  s << at(gather.str(), first, "  ");
  s << "  for (int step = " << first << "; step < " << end << "; step += " << kStep << ") {\n";
  s << at(store.str(), "step", "    ");
  s << "    __syncthreads();\n";
  s << "    if (step + " << kStep << " < " << end << ") " << at(gather.str(), "(step + " + std::to_string(kStep) + ")", "    ").substr(4);
  s << "    #pragma unroll\n    for (int kk = 0; kk < " << kStep << "; kk += 16) {\n";
  s << "      unsigned a[2][" << f << "], b[" << fragsN << "][" << f << "];\n";
  if (forward)  // col is [tap][pixel]: A (pixels x taps) column-major
    s << "      #pragma unroll\n      for (int i = 0; i < 2; ++i) cas_wmma_load_a_col_" << t << "(a[i], As + kk * " << kWidePitch << " + wr + 16 * i, "
      << kWidePitch << ");\n";
  else  // col is [tap][pixel]: A (taps x pixels) row-major
    s << "      #pragma unroll\n      for (int i = 0; i < 2; ++i) cas_wmma_load_a_row_" << t << "(a[i], As + (wr + 16 * i) * " << kPitch << " + kk, "
      << kPitch << ");\n";
  s << "      #pragma unroll\n      for (int j = 0; j < " << fragsN << "; ++j) cas_wmma_load_b_col_" << t << "(b[j], Bs + (wn + 16 * j) * " << kPitch
    << " + kk, " << kPitch << ");\n";
  s << "      #pragma unroll\n      for (int i = 0; i < 2; ++i)\n        #pragma unroll\n        for (int j = 0; j < " << fragsN
    << "; ++j) cas_wmma_mma_" << t << "(sum[i][j], a[i], b[j]);\n";
  s << "    }\n    __syncthreads();\n  }\n";
  // The tile to shared memory, column-major (C[k][row]), then out by consecutive rows.
  s << "  #pragma unroll\n  for (int i = 0; i < 2; ++i)\n    #pragma unroll\n    for (int j = 0; j < " << fragsN
    << "; ++j) cas_wmma_store_col(Cs + (wn + 16 * j) * " << kOutPitch << " + wr + 16 * i, sum[i][j], " << kOutPitch << ");\n";
  s << "  __syncthreads();\n";
  s << "  for (int e = threadIdx.x; e < " << kRows * bn << "; e += " << kThreads << ") {\n";
  s << "    const int row = e % " << kRows << ", col = e / " << kRows << ", k = n0 + col;\n";
  s << "    const float acc = Cs[col * " << kOutPitch << " + row];\n";
  if (forward) {
    s << "    const int m = m0 + row;\n";
    const std::string guard = both(M % kRows ? "m < " + std::to_string(M) : "", kGuard);
    if (!guard.empty()) s << "    if (!(" << guard << ")) continue;\n";
    s << "    const int i = ((m / " << HoWo << ") * " << K << " + k) * " << HoWo << " + m % " << HoWo << ";\n";
    s << epilogue;
  } else {
    s << "    const int kc = kc0 + row;\n";
    const std::string guard = both(Kc % kRows ? "kc < " + std::to_string(Kc) : "", kGuard);
    if (!guard.empty()) s << "    if (!(" << guard << ")) continue;\n";
    s << "    atomicAdd(&" << out << "[k * " << Kc << " + kc], acc);\n";
  }
  s << "  }\n}\n";
  kernel.source = s.str();
  kernel.blockSize = kThreads;
  return kernel;
}

}  // namespace cas::gpu
