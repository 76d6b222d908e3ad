#pragma once
// The generated tensor-core convolutions of bf16/fp16 layers: implicit GEMMs over the IR's fp32
// NCHW tensors, so no im2col matrix and no layout copy is ever stored.
//
//   col[m][kc] = x[n][c][oy*sh - ph + r][ox*sw - pw + s]   (0 outside the image)
//     m  = (n*Ho + oy)*Wo + ox    M  = N*Ho*Wo rows, the output pixels
//     kc = (c*R + r)*S + s        Kc = C*R*S columns, the filter taps in KCRS order
//
//   forward          y[m][k]   = sum_kc col[m][kc] * w[k][kc]   then the fused epilogue, at the
//                                                                NCHW index of y
//   weight gradient  dw[k][kc] = sum_m  dy[m][k]  * col[m][kc]  m split into slabs, one block
//                                                                each, added atomically (dw is
//                                                                filled with 0 first)
//
// A block of 256 threads owns a 128 x BN tile of the result (rows m forward, rows kc for the
// weight gradient; BN = 32 or 64 columns k). Per reduction step of 32 it gathers its tiles of
// col and of w or dy from global memory (a lane owns one pixel m and loads up to 4 taps at
// once), rounds them to 16 bits into shared memory, and its 8 warps (4 x 2, each 32 x BN/2)
// multiply them with wmma m16n16k16 at fp32; the next step's loads are in flight meanwhile.
// Shared memory, reused for the epilogue:
//
//   +----------------------------------------+------------------------+
//   | A: col, 16-bit, [taps][pixels]         | B: w [BN][32 taps] or  |
//   |   forward:         [32][128 + 8]       |    dy [BN][32 pixels], |
//   |   weight gradient: [128][32 + 8]       |    16-bit, rows + 8    |
//   +----------------------------------------+------------------------+
//   | C: fp32 [BN][128 + 4], column-major (C[k][row]): consecutive    |
//   |    threads read consecutive rows, so NCHW writes coalesce       |
//   +-----------------------------------------------------------------+
//   Rows are padded so that wmma's 16-byte row reads fall on distinct banks.
//
// Thread-safety: pure functions.
#include <cstdint>
#include <string>

namespace cas::gpu {

struct ConvGeometry {
  std::int64_t n, c, h, w;   // input
  std::int64_t k, r, s;      // filters
  std::int64_t ho, wo;       // output
  std::int64_t strideH, strideW, padTop, padLeft;
  bool padded;               // any padding (else every tap lies inside the image)
};

struct ImplicitConvKernel {
  std::string source;  // CUDA C++: device helpers (guarded, once per module) and the kernel
  std::int64_t gridX = 0, gridY = 0;
  int blockSize = 256;
};

enum class ConvPass { Forward, WeightGradient };

// `params` is the kernel's parameter list; `x`, `other` (w forward, dy weight gradient) and
// `out` (dw; unused forward) name its buffers. `epilogue` (forward only) is run for every output
// with `acc` (the sum) and `i` (its flat NCHW index) in scope. `comment` opens the source.
ImplicitConvKernel implicitConv(ConvPass pass, const std::string& name, const std::string& comment, const ConvGeometry& g, bool bf16,
                                const std::string& params, const std::string& x, const std::string& other, const std::string& out,
                                const std::string& epilogue);

}  // namespace cas::gpu
