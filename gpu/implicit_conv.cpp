#include "gpu/implicit_conv.hpp"

#include <algorithm>
#include <sstream>

namespace cas::gpu {
namespace {

constexpr int kRows = 128;              // tile rows per block
constexpr int kStep = 32;               // reduction per shared tile
constexpr int kPitch = kStep + 8;       // 16-bit elements per shared row of A and B
constexpr int kOutPitch = kRows + 4;    // floats per column of C
constexpr int kThreads = 256;
constexpr int kGathers = kRows * kStep / kThreads;  // A elements per thread per step (16)
constexpr std::int64_t kTargetBlocks = 512;  // weight gradient: slabs enough for ~4 blocks per SM

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
  for (const char* operand : {"a", "b"}) {
    const std::string layout = operand[0] == 'a' ? "row" : "col";
    s << "__device__ __forceinline__ void cas_wmma_load_" << operand << "_" << t << "(unsigned* v, const unsigned short* p, int stride) {\n"
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
    << "      :: \"r\"(unsigned(__cvta_generic_to_shared(p))), " << outputs("d", 8, "\"f\"") << ", \"r\"(stride) : \"memory\");\n}\n#endif\n";
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
  const std::string S = std::to_string(g.s), W = std::to_string(g.w), H = std::to_string(g.h), K = std::to_string(g.k);
  const std::string taps = "c = kc / " + std::to_string(RS) + ", r = (kc / " + S + ") % " + std::to_string(g.r) + ", s = kc % " + S;
  const std::string pixel = "n = m / " + std::to_string(HoWo) + ", oy = (m / " + std::to_string(g.wo) + ") % " + std::to_string(g.ho) +
                            ", ox = m % " + std::to_string(g.wo);
  const std::string iy0 = "oy * " + std::to_string(g.strideH) + " - " + std::to_string(g.padTop);
  const std::string ix0 = "ox * " + std::to_string(g.strideW) + " - " + std::to_string(g.padLeft);
  const std::string unpaddedBase = "n * " + std::to_string(CHW) + " + oy * " + std::to_string(g.strideH * g.w) + " + ox * " + std::to_string(g.strideW);
  const std::string kGuard = g.k % bn ? "k < " + K : "";

  std::ostringstream s;
  s << helpers(bf16);
  s << comment;
  if (forward)
    s << "// Launch: grid (" << kernel.gridX << ", " << kernel.gridY << ") of " << kRows << " x " << bn
      << " tiles (rows: output pixels m, columns: filters k), " << kThreads << " threads; Kc " << Kc << " in steps of " << kStep << ".\n";
  else
    s << "// Launch: grid (" << kernel.gridX << ", " << kernel.gridY << "): " << kRows << " x " << bn << " tiles (rows: taps kc, columns: filters k) x "
      << kernel.gridY / kTiles << " slabs of " << chunk << " pixels m, " << kThreads << " threads; m in steps of " << kStep << ".\n";
  s << "extern \"C\" __global__ void __launch_bounds__(" << kThreads << ", 2) " << name << "(" << params << ") {\n";
  s << "  __shared__ __align__(128) unsigned char smem[" << std::max(2 * kPitch * (kRows + bn), 4 * kOutPitch * bn) << "];\n";
  s << "  unsigned short* const As = reinterpret_cast<unsigned short*>(smem);\n";
  s << "  unsigned short* const Bs = As + " << kRows * kPitch << ";\n";
  s << "  float* const Cs = reinterpret_cast<float*>(smem);\n";
  s << "  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;\n";
  s << "  const int wr = (warp & 3) * 32, wn = (warp >> 2) * " << bn / 2 << ";\n";

  // This thread gathers A's rows warp + 8q at column `lane` of each step, and B's rows warp + 8q.
  std::string gather;
  if (forward) {
    s << "  const int m0 = blockIdx.x * " << kRows << ", n0 = blockIdx.y * " << bn << ";\n";
    s << "  // Rows warp + 8q of the tile are this thread's to gather: where their pixel's window starts in x"
      << (g.padded ? "" : M % kRows ? " (-1: past M)" : "") << ".\n";
    s << "  int rowBase[" << kGathers << "];\n";
    if (g.padded) s << "  int iy0[" << kGathers << "], ix0[" << kGathers << "];\n";
    s << "  #pragma unroll\n  for (int q = 0; q < " << kGathers << "; ++q) {\n";
    s << "    const int m = m0 + warp + 8 * q, " << pixel << ";\n";
    if (g.padded) {
      s << "    iy0[q] = m < " << M << " ? " << iy0 << " : -65536;  // past M: never inside the image\n";
      s << "    ix0[q] = " << ix0 << ";\n";
      s << "    rowBase[q] = n * " << CHW << " + iy0[q] * " << W << " + ix0[q];\n";
    } else {
      s << "    rowBase[q] = " << (M % kRows ? "m < " + std::to_string(M) + " ? " + unpaddedBase + " : -1" : unpaddedBase) << ";\n";
    }
    s << "  }\n";
    std::ostringstream l;
    l << "    const int kc = K0 + lane, " << taps << ";\n";
    l << "    const int colOff = (c * " << H << " + r) * " << W << " + s;\n";
    const std::string colIn = Kc % kStep ? "kc < " + std::to_string(Kc) : "";
    const std::string aGuard = g.padded ? both("unsigned(iy0[q] + r) < " + H + "u && unsigned(ix0[q] + s) < " + W + "u", colIn)
                                        : both(M % kRows ? "rowBase[q] >= 0" : "", colIn);
    l << "    #pragma unroll\n    for (int q = 0; q < " << kGathers << "; ++q) ra[q] = "
      << (aGuard.empty() ? "" : aGuard + " ? ") << x << "[rowBase[q] + colOff]" << (aGuard.empty() ? "" : " : 0.f") << ";\n";
    const std::string bGuard = both(kGuard, colIn);
    l << "    #pragma unroll\n    for (int q = 0; q < " << gathersB << "; ++q) {\n      const int k = n0 + warp + 8 * q;\n"
      << "      rb[q] = " << (bGuard.empty() ? "" : bGuard + " ? ") << other << "[k * " << Kc << " + kc]" << (bGuard.empty() ? "" : " : 0.f") << ";\n    }\n";
    gather = l.str();
  } else {
    s << "  const int kc0 = blockIdx.x * " << kRows << ", n0 = (blockIdx.y % " << kTiles << ") * " << bn << ";\n";
    s << "  const int mBegin = (blockIdx.y / " << kTiles << ") * " << chunk << ", mEnd = min(" << M << ", mBegin + " << chunk << ");\n";
    s << "  // Rows warp + 8q of the tile (taps kc) are this thread's to gather: their offset in a window"
      << (g.padded ? " and their filter row and column" : Kc % kRows ? " (-1: past Kc)" : "") << ".\n";
    s << "  int colOff[" << kGathers << "];\n";
    if (g.padded) s << "  int tapR[" << kGathers << "], tapS[" << kGathers << "];\n";
    s << "  #pragma unroll\n  for (int q = 0; q < " << kGathers << "; ++q) {\n";
    s << "    const int kc = kc0 + warp + 8 * q, " << taps << ";\n";
    if (g.padded) {
      s << "    colOff[q] = (c * " << H << " + r) * " << W << " + s;\n";
      s << "    tapR[q] = kc < " << Kc << " ? r : -65536;  // past Kc: never inside the image\n";
      s << "    tapS[q] = s;\n";
    } else {
      const std::string off = "(c * " + H + " + r) * " + W + " + s";
      s << "    colOff[q] = " << (Kc % kRows ? "kc < " + std::to_string(Kc) + " ? " + off + " : -1" : off) << ";\n";
    }
    s << "  }\n";
    std::ostringstream l;
    l << "    const int m = K0 + lane, " << pixel << ", pix = m % " << HoWo << ";\n";
    l << "    const bool rowIn = m < mEnd;\n";
    if (g.padded) l << "    const int iy0 = " << iy0 << ", ix0 = " << ix0 << ", rowBase = n * " << CHW << " + iy0 * " << W << " + ix0;\n";
    else l << "    const int rowBase = " << unpaddedBase << ";\n";
    const std::string aGuard = g.padded ? both("rowIn", "unsigned(iy0 + tapR[q]) < " + H + "u && unsigned(ix0 + tapS[q]) < " + W + "u")
                                        : both("rowIn", Kc % kRows ? "colOff[q] >= 0" : "");
    l << "    #pragma unroll\n    for (int q = 0; q < " << kGathers << "; ++q) ra[q] = " << aGuard << " ? " << x << "[rowBase + colOff[q]] : 0.f;\n";
    l << "    const int dyBase = n * " << g.k * HoWo << " + pix;\n";
    l << "    #pragma unroll\n    for (int q = 0; q < " << gathersB << "; ++q) {\n      const int k = n0 + warp + 8 * q;\n"
      << "      rb[q] = " << both("rowIn", kGuard) << " ? " << other << "[dyBase + k * " << HoWo << "] : 0.f;\n    }\n";
    gather = l.str();
  }
  // The gather for the step at reduction offset `at`, its lines indented by `indent` more.
  auto gatherAt = [&](const std::string& at, const std::string& indent) {
    std::string text = indent + gather;
    for (size_t k = text.find("K0"); k != std::string::npos; k = text.find("K0", k)) text.replace(k, 2, at);
    for (size_t k = text.find("\n"); k + 1 < text.size(); k = text.find("\n", k + 1)) text.insert(k + 1, indent);
    return indent + "  {\n" + text + indent + "  }\n";
  };

  s << "  float ra[" << kGathers << "], rb[" << gathersB << "];\n";
  s << "  float sum[2][" << fragsN << "][8];\n";
  s << "  #pragma unroll\n  for (int i = 0; i < 2; ++i)\n    #pragma unroll\n    for (int j = 0; j < " << fragsN
    << "; ++j)\n      #pragma unroll\n      for (int e = 0; e < 8; ++e) sum[i][j][e] = 0.f;\n";
  const std::string first = forward ? "0" : "mBegin", end = forward ? std::to_string(Kc) : "mEnd";
  s << gatherAt(first, "");
  s << "  for (int at = " << first << "; at < " << end << "; at += " << kStep << ") {\n";
  s << "    #pragma unroll\n    for (int q = 0; q < " << kGathers << "; ++q) As[(warp + 8 * q) * " << kPitch << " + lane] = cas_round_" << t << "(ra[q]);\n";
  s << "    #pragma unroll\n    for (int q = 0; q < " << gathersB << "; ++q) Bs[(warp + 8 * q) * " << kPitch << " + lane] = cas_round_" << t << "(rb[q]);\n";
  s << "    __syncthreads();\n";
  s << "    if (at + " << kStep << " < " << end << ") {\n      const int next = at + " << kStep << ";\n" << gatherAt("next", "    ") << "    }\n";
  s << "    #pragma unroll\n    for (int kk = 0; kk < " << kStep << "; kk += 16) {\n";
  s << "      unsigned a[2][" << f << "], b[" << fragsN << "][" << f << "];\n";
  s << "      #pragma unroll\n      for (int i = 0; i < 2; ++i) cas_wmma_load_a_" << t << "(a[i], As + (wr + 16 * i) * " << kPitch << " + kk, " << kPitch << ");\n";
  s << "      #pragma unroll\n      for (int j = 0; j < " << fragsN << "; ++j) cas_wmma_load_b_" << t << "(b[j], Bs + (wn + 16 * j) * " << kPitch
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
