#pragma once
// The schedule: which nodes of a graph run as one kernel (units), how units share launches
// (steps), in what order, where every value is stored and which graph updates write in place.
// One pass decides all of it, as plain data: `cuda-agent check --ir`, `cuda-agent kernels` and
// the studio print it, and the CUDA backend renders each step into CUDA (core/cuda_render/render.hpp).
//
//   graph ──planSchedule──> units ──> steps:  fill %12 = 0
//                           (fusion)  (order,  k0_matmul_add_relu   level 0  [Gemm tiled 1024x256x256]
//                                      levels, k1_sub_mul_etc      level 1  [2 segments]
//                                      storage) cublas_matmul       level 2
//
// Fusion, in order:
//   1. vertical: elementwise nodes of one shape (or as many elements, read across a reshape)
//      join their producer's unit when no path leaves
//      and re-enters the unit; a unit may end in one reduction; a unit may start with a matmul
//      (a generated GEMM whose epilogue is the rest of the unit) when the target prefers that
//      to the vendor library (fp32, small M*N*K); likewise a bf16/fp16 convolution (a generated
//      implicit GEMM on tensor cores).
//   2. horizontal: units that are independent and sit at the same as-late-as-possible level
//      share one launch, each in its own range of blocks (Adam over every parameter, the sums of
//      squares of every gradient).
//   3. updates: a graph update (output -> input) writes in place when the output is computed by
//      an elementwise unit after every other reader of the input; otherwise a copy follows.
// A value computed inside a unit and read only there lives in registers (never stored).
//
// Thread-safety: a Schedule is a plain value; planSchedule is a pure function.
#include <cstdint>
#include <string>
#include <vector>

#include "core/ir/graph.hpp"

namespace cas::ir {

enum class StepKind : std::uint8_t {
  Kernel,        // generated: one or more segments (elementwise, reduction, special units)
  Gemm,          // generated: GEMM units with fused epilogues (and kernels of their level)
  Blas,          // matmul through the vendor library (cuBLAS)
  Conv,          // convolution through the vendor library (cuDNN)
  ImplicitConv,  // generated: a bf16/fp16 convolution as an implicit GEMM on tensor cores, or an
                 // fp32 forward or weight gradient over small images (ScheduleTarget::imageConvMaxBytes)
  Fill,          // set a node's buffer to a value (the accumulator of an atomic kernel)
  Copy,          // copy an update's output into its input (when it cannot be done in place)
};
const char* stepKindName(StepKind k);
inline bool isGenerated(StepKind k) { return k == StepKind::Kernel || k == StepKind::Gemm || k == StepKind::ImplicitConv; }

enum class UnitKind : std::uint8_t {
  Elementwise,   // members computed per element of `shape`
  Reduction,     // elementwise members, then `reduction` over them
  Special,       // one node with its own index space (transpose, softmax, pooling, gather, ...)
  Gemm,          // `head` (a matmul), then elementwise members as its epilogue
  ImplicitConv,  // `head` (a conv2d or its weight gradient), then (forward) an epilogue
  Blas,          // `head` through the vendor library
  Conv,          // `head` through the vendor library
};
const char* unitKindName(UnitKind k);

// How a GEMM unit is computed: few columns (policy and value heads): a warp per row; few rows
// (batch 1): lanes own columns; otherwise shared-memory tiles, split along K into chunks added
// atomically when K is long and there is no epilogue (weight gradients, K = the batch).
enum class GemmVariant : std::uint8_t { Narrow, Skinny, Tiled, SplitK };
const char* gemmVariantName(GemmVariant v);

struct GemmPlan {
  GemmVariant variant = GemmVariant::Tiled;
  std::int64_t m = 0, n = 0, k = 0;
  bool transposeA = false, transposeB = false;
  std::int64_t split = 1;  // SplitK: K chunks
};

// A reduction unit: `Rows` when the reduced positions are contiguous (a warp walks one output's
// row), `Columns` otherwise (lanes take neighbouring outputs). `chunks` threads share an output;
// with more than one they add atomically into a filled accumulator.
enum class ReductionLayout : std::uint8_t { Rows, Columns };
struct ReductionPlan {
  ReductionLayout layout = ReductionLayout::Columns;
  std::int64_t outputs = 0, length = 0, chunks = 1;
  bool atomic = false;
};

struct Unit {
  UnitKind kind = UnitKind::Elementwise;
  std::vector<NodeId> members;  // nodes it computes, in order
  NodeId head = kNoNode;        // Special/Gemm/ImplicitConv/Blas/Conv: the node
  NodeId reduction = kNoNode;   // Reduction: the closing reduction
  Shape shape;                  // Elementwise, Reduction: the element shape iterated
  std::int64_t threads = 0;     // Elementwise, Reduction, Special: threads it needs
  GemmPlan gemm;                // Gemm
  ReductionPlan reduce;         // Reduction
  int level = 0;                // as-late-as-possible level (independent units share one)
};

struct Step {
  StepKind kind = StepKind::Kernel;
  std::string name;          // kernel function name, e.g. "k7_tanh_add"; "fill", "copy"
  std::vector<int> units;    // Kernel, Gemm, ImplicitConv, Blas, Conv: indices into units
  NodeId node = kNoNode;     // Fill: the accumulator; Copy: the source output; others: the head
  NodeId target = kNoNode;   // Copy: the input written
  float fill = 0;            // Fill
  int level = 0;
  std::string label;         // the PDL layers it computes, for reports
};

// What the target's cost model needs (the CUDA backend sets it; defaults are its measured ones).
struct ScheduleTarget {
  bool fuseGemmEpilogues = true;            // generated GEMMs for small fp32 products
  bool horizontalFusion = true;
  std::int64_t gemmMaxK = 1024;             // with an epilogue: K at most this
  std::int64_t gemmMaxWork = 1ll << 28;     // M*N*K above which the vendor library wins
  std::int64_t splitChunk = 128;            // split-K: K rows per block
  std::int64_t skinnyRows = 8;              // up to this many rows: the Skinny variant
  std::int64_t narrowColumns = 16;          // up to this many columns: the Narrow variant
  std::int64_t maxElements = (1ll << 31) - 1;  // indices are 32-bit
  bool symmetricConvPadding = true;         // the vendor convolutions need it
  // fp32 and tf32 convolutions over small images, for the small boards of MinAtar, where cuDNN's
  // algorithms are slow at large batches (an order of magnitude for the weight gradient): generated
  // kernels that stage one image at a time in static shared memory (48 KB at most), when what
  // they stage takes at most this many bytes (with their padding): for the forward
  // (core/cuda_render/kernels/conv_forward_images.cuh) the filters and an image, with at most 1024 threads
  // of 16 filters and 2 pixels each; for the weight gradient (conv_wgrad_images.cuh) an image
  // and its output gradient, with at most 512 taps (C*R*S) and 16 filters a thread. 0: the
  // vendor library.
  std::int64_t imageConvMaxBytes = 24 << 10;
  // false: no cuBLAS or cuDNN calls (the standalone CUDA export depends on the CUDA runtime
  // only); products the generated GEMMs do not cover and fp32 convolutions become Special
  // units (core/cuda_render/kernels/direct.cuh), and products of any size use the generated GEMMs.
  bool vendorLibraries = true;
  int maxUnitsPerStep = 32;
};

struct Schedule {
  std::vector<Unit> units;
  std::vector<Step> steps;  // fills, then the computing steps in order, then copies
  // storage[node]: the node whose buffer holds this node's value (itself, an aliased reshape
  // source, or the input an in-place update writes); kNoNode when the node is never stored.
  std::vector<NodeId> storage;
  std::vector<int> unitOf;       // node -> the unit computing it, -1 (leaves, reshapes, views)
  std::vector<bool> stored;      // node -> whether its value is written to memory
  std::vector<NodeId> root;      // node -> the node a reshape chain starts at (itself otherwise)
  std::vector<bool> view;        // node -> a slice its readers load through the index mapping
  int fusedNodes = 0;            // computed nodes that live inside a kernel without a buffer

  int launches() const;          // steps that launch work on the device
};

// The widest attention head the CUDA kernels take (core/cuda_render/kernels/attention.cuh holds a
// head's query row in registers).
inline constexpr std::int64_t kMaxAttentionHeadWidth = 256;
// The widest head the tensor-core kernels (attention_mma.cuh) take: their output tiles stay in
// registers.
inline constexpr std::int64_t kMaxTensorCoreHeadWidth = 128;
// Whether the CUDA backend runs attention node `n` of `g` (Attention, AttentionStats,
// AttentionGradQ, AttentionGradKV) on tensor cores (attention_mma.cuh): bf16 or fp16, with heads
// a multiple of 16 values wide, up to kMaxTensorCoreHeadWidth. Every other attention runs in fp32.
bool attentionOnTensorCores(const Graph& g, const Node& n);
// The rows (queries; keys for AttentionGradKV) one warp of the tensor-core kernels owns.
inline constexpr std::int64_t kTensorCoreAttentionRows = 16;

// The rows (queries or keys) of one head, padded to a multiple of this, so that a block of up to
// this many warps works on one head and shares its tiles (attention.cuh's kCasAttentionRowGroup).
inline constexpr std::int64_t kAttentionRowGroup = 8;

// Threads per output of a product or convolution planned without vendor libraries
// (core/cuda_render/kernels/direct.cuh), which sums `terms` products per output: a warp shares each sum when
// the outputs alone are too few to fill the GPU (a batch-1 policy), one thread otherwise.
int directLanes(std::int64_t outputs, std::int64_t terms);

// Throws std::runtime_error naming the node (describeNode) when the graph has something the
// target cannot run.
Schedule planSchedule(const Graph& g, const ScheduleTarget& target = {});

// The schedule as text, one step per line with its units:
//   step 3  Gemm  k3_matmul_add_relu  level 1  [policy/dense_0]
//     unit 4  Gemm tiled 1024x256 K 256: %12 matmul, %14 add, %15 relu (stored: %15)
std::string toText(const Schedule& s, const Graph& g);

}  // namespace cas::ir
