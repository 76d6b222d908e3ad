#pragma once
// Host side of the generated convolutions: the launch shape and template arguments of the 16-bit
// implicit-GEMM kernels (core/cuda_render/kernels/implicit_conv.cuh, whose header draws the tiles) and of the
// fp32 forward and weight gradient over small images (core/cuda_render/kernels/conv_forward_images.cuh,
// conv_wgrad_images.cuh), and the layout kernels around cuDNN's NHWC input gradients
// (core/cuda_render/kernels/relayout.cuh).
// Thread-safety: pure functions.
#include <cstdint>
#include <string>

#include "core/ir/graph.hpp"

namespace cas::gpu {

struct ConvGeometry {
  std::int64_t n, c, h, w;   // input
  std::int64_t k, r, s;      // filters
  std::int64_t ho, wo;       // output
  std::int64_t strideH, strideW, padTop, padLeft;
  bool padded;               // any padding (else every tap lies inside the image)
};

// The geometry of a Conv2d (x, w) or Conv2dGradWeight (x, dy) node.
ConvGeometry convGeometry(const ir::Graph& g, const ir::Node& conv);

enum class ConvPass { Forward, WeightGradient };

struct ImplicitConvKernel {
  std::string call;     // the template call, e.g. "cas_conv_forward<true, 1024, 4, ...>(p0, p1, [&](int i, float acc) {...});"
  std::string comment;  // "// Launch: ..." lines
  std::int64_t gridX = 0, gridY = 0;
  int blockSize = 256;
  int blocksPerSm = 2;  // what __launch_bounds__ asks the compiler to fit
};

// `x` and `other` (w forward, dy weight gradient) name the kernel's buffers; `tail` is the
// forward's epilogue functor (run for every output with acc and its NCHW index i), or the
// weight gradient's output buffer.
ImplicitConvKernel implicitConv(ConvPass pass, const ConvGeometry& g, bool bf16, const std::string& x, const std::string& other,
                                const std::string& tail);

// An fp32 (or tf32) forward convolution over small images, staged one image at a time in shared
// memory (core/cuda_render/kernels/conv_forward_images.cuh; ir::ScheduleTarget::imageConvMaxBytes says which):
// x and w name its inputs, `epilogue` is the functor run for every output (as implicitConv's).
ImplicitConvKernel imageForward(const ConvGeometry& g, const std::string& x, const std::string& w, const std::string& epilogue);

// An fp32 (or tf32) weight gradient over small images, staged one image at a time in shared
// memory (core/cuda_render/kernels/conv_wgrad_images.cuh; ir::ScheduleTarget::imageConvMaxBytes says which):
// x and dy name its inputs, dw its zero-filled output.
ImplicitConvKernel imageWeightGradient(const ConvGeometry& g, const std::string& x, const std::string& dy, const std::string& dw);

// A Conv2dGradInput's space-to-depth factor: its stride when it is unpadded and its kernel a
// multiple of it, else 1.
int relayoutFold(const ir::Graph& g, const ir::Node& conv);

// The layout kernels <prefix>_in0 (dy to NHWC), _in1 (w, folded) and _out (back to NCHW fp32).
std::string relayoutSource(const std::string& prefix, const std::string& stepName, const std::string& label, const ir::Graph& g,
                           const ir::Node& conv, int fold);

}  // namespace cas::gpu
