#pragma once
// The IR's op set: one table (CAS_IR_OPS) with a row per op: its name, arity, kind, scalar
// function and CUDA expression. The enum, the facts the IR reads, the CPU backend's loops,
// constant folding and the CUDA backend's epilogues are all generated from it, so an op's
// meaning is written once.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string_view>

namespace cas::ir {

// The op table: one row per op, in enum order (the enum is generated from it).
//   name     the text name (IR printout, errors)
//   arity    inputs; -1: one or more
//   kind     what the op is for fusion and the backends
//   diff     whether autodiff has a rule for it
//   scalar   elementwise ops: the value from the operands a, b, c (the CPU backend's loops and
//            constant folding instantiate it per op); other ops: unused (0)
//   cuda     elementwise ops: the same function as a CUDA expression over $0, $1, $2 (the CUDA
//            backend's epilogues); empty for the others, whose kernels are templates
// Dropout is elementwise but needs its attributes: its mask is dropoutKeeps (below), applied by
// each backend around this table.
#define CAS_IR_OPS(X)                                                                                     \
  /* leaves */                                                                                            \
  X(Input, "input", 0, Leaf, false, 0.0f, "")                                                             \
  X(Constant, "constant", 0, Leaf, false, 0.0f, "")                                                       \
  /* elementwise, unary */                                                                                \
  X(Neg, "neg", 1, Unary, true, -a, "(-$0)")                                                              \
  X(Relu, "relu", 1, Unary, true, a > 0.0f ? a : 0.0f, "($0 > 0.f ? $0 : 0.f)")                           \
  X(Tanh, "tanh", 1, Unary, true, fastTanh(a), "cas_tanh($0)")                                            \
  X(Sigmoid, "sigmoid", 1, Unary, true, 1.0f / (1.0f + std::exp(-a)), "(1.f / (1.f + expf(-$0)))")       \
  X(Gelu, "gelu", 1, Unary, true, geluScalar(a), "cas_gelu($0)")                                          \
  X(Exp, "exp", 1, Unary, true, std::exp(a), "expf($0)")                                                  \
  X(Log, "log", 1, Unary, true, std::log(a), "logf($0)")                                                  \
  X(Sqrt, "sqrt", 1, Unary, true, std::sqrt(a), "sqrtf($0)")                                              \
  /* the value unchanged; no gradient flows back through it (MuZero's halved dynamics gradient) */        \
  X(StopGradient, "stop_gradient", 1, Unary, true, a, "($0)")                                            \
  /* elementwise, binary (numpy broadcasting); comparisons give 1.0 or 0.0 */                             \
  X(Add, "add", 2, Binary, true, a + b, "($0 + $1)")                                                      \
  X(Sub, "sub", 2, Binary, true, a - b, "($0 - $1)")                                                      \
  X(Mul, "mul", 2, Binary, true, a * b, "($0 * $1)")                                                      \
  X(Div, "div", 2, Binary, true, a / b, "($0 / $1)")                                                      \
  X(Maximum, "maximum", 2, Binary, true, a > b ? a : b, "($0 > $1 ? $0 : $1)")                            \
  X(Minimum, "minimum", 2, Binary, true, a < b ? a : b, "($0 < $1 ? $0 : $1)")                            \
  /* GeluGrad(x, g) = g * gelu'(x) */                                                                     \
  X(GeluGrad, "gelu_grad", 2, Binary, false, b * geluDerivative(a), "($1 * cas_gelu_derivative($0))")     \
  X(Greater, "greater", 2, Binary, false, a > b ? 1.0f : 0.0f, "($0 > $1 ? 1.f : 0.f)")                   \
  X(GreaterEqual, "greater_equal", 2, Binary, false, a >= b ? 1.0f : 0.0f, "($0 >= $1 ? 1.f : 0.f)")      \
  X(Less, "less", 2, Binary, false, a < b ? 1.0f : 0.0f, "($0 < $1 ? 1.f : 0.f)")                         \
  X(LessEqual, "less_equal", 2, Binary, false, a <= b ? 1.0f : 0.0f, "($0 <= $1 ? 1.f : 0.f)")            \
  X(Equal, "equal", 2, Binary, false, a == b ? 1.0f : 0.0f, "($0 == $1 ? 1.f : 0.f)")                     \
  X(NotEqual, "not_equal", 2, Binary, false, a != b ? 1.0f : 0.0f, "($0 != $1 ? 1.f : 0.f)")              \
  /* elementwise, ternary: where(mask != 0, a, b) */                                                      \
  X(Where, "where", 3, Ternary, true, a != 0.0f ? b : c, "($0 != 0.f ? $1 : $2)")                         \
  /* x * keep(seed, index) / (1 - rate); its own gradient with the same seed */                           \
  X(Dropout, "dropout", 1, Unary, true, 0.0f, "")                                                         \
  /* shape */                                                                                             \
  X(Reshape, "reshape", 1, Shape, true, 0.0f, "")                                                         \
  X(Transpose, "transpose", 1, Shape, true, 0.0f, "")                                                     \
  X(BroadcastTo, "broadcast_to", 1, Shape, true, 0.0f, "")                                                \
  X(Concat, "concat", -1, Shape, true, 0.0f, "")                                                          \
  X(Slice, "slice", 1, Shape, true, 0.0f, "")                                                             \
  /* reductions over axes; normalised exponentials over one axis */                                       \
  X(ReduceSum, "reduce_sum", 1, Reduction, true, 0.0f, "")                                                \
  X(ReduceMax, "reduce_max", 1, Reduction, true, 0.0f, "")                                                \
  X(Softmax, "softmax", 1, Reduction, true, 0.0f, "")                                                     \
  X(LogSoftmax, "log_softmax", 1, Reduction, true, 0.0f, "")                                              \
  /* linear algebra and layers */                                                                         \
  /* MatMul: [..., M, K] x [..., K, N], optional transposes; leading dims broadcast */                    \
  X(MatMul, "matmul", 2, Layer, true, 0.0f, "")                                                           \
  /* Conv2d: x [N, C, H, W], w [O, C, KH, KW] -> [N, O, OH, OW]; its gradients (g, w) -> dx, (x, g) -> dw */ \
  X(Conv2d, "conv2d", 2, Layer, true, 0.0f, "")                                                           \
  X(Conv2dGradInput, "conv2d_grad_input", 2, Layer, false, 0.0f, "")                                      \
  X(Conv2dGradWeight, "conv2d_grad_weight", 2, Layer, false, 0.0f, "")                                    \
  /* MaxPool2dGrad(x, g), AvgPool2dGrad(g) */                                                             \
  X(MaxPool2d, "max_pool2d", 1, Layer, true, 0.0f, "")                                                    \
  X(MaxPool2dGrad, "max_pool2d_grad", 2, Layer, false, 0.0f, "")                                          \
  X(AvgPool2d, "avg_pool2d", 1, Layer, true, 0.0f, "")                                                    \
  X(AvgPool2dGrad, "avg_pool2d_grad", 1, Layer, true, 0.0f, "")                                           \
  /* Gather: (table [V, D], ids [...]) -> [..., D]; ScatterAddRows: (ids [...], g [..., D]) -> [V, D] */    \
  X(Gather, "gather", 2, Layer, true, 0.0f, "")                                                           \
  X(ScatterAddRows, "scatter_add_rows", 2, Layer, true, 0.0f, "")                                         \
  /* Fused Transformer layers (core/cuda_render/kernels/attention.cuh, layer_norm.cuh; the             \
     composition they replace: core/ir/decompose.cpp). Attention: (q [B,T,D], k, v [B,S,D]             \
     [, lengths [B,1]]) -> [B,T,D], `heads` heads of D/heads, scaled by 1/sqrt(D/heads), `causal`      \
     masks key j > query i, lengths[b] keys are valid (the rest masked). Its gradient: statistics    \
     (q, k, v, g[, lengths]) -> [B,H,T,2] (each query's log-sum-exp of scaled scores and the          \
     dot product of g with the output), then dq (q, k, v, g, stats[, lengths]) -> [B,T,D] and          \
     [dk | dv] (same inputs) -> [B,S,2D]. LayerNorm: (x [...,D], gamma [D], beta [D]) -> the            \
     normalised x over the last axis, times gamma plus beta; LayerNormGrad (x, gamma, g) -> dx. */      \
  X(Attention, "attention", -1, Layer, true, 0.0f, "")                                                    \
  X(AttentionStats, "attention_stats", -1, Layer, false, 0.0f, "")                                        \
  X(AttentionGradQ, "attention_grad_q", -1, Layer, false, 0.0f, "")                                       \
  X(AttentionGradKV, "attention_grad_kv", -1, Layer, false, 0.0f, "")                                     \
  X(LayerNorm, "layer_norm", 3, Layer, true, 0.0f, "")                                                    \
  X(LayerNormGrad, "layer_norm_grad", 3, Layer, false, 0.0f, "")

enum class Op : std::uint8_t {
#define CAS_OP_ENUM(op, ...) op,
  CAS_IR_OPS(CAS_OP_ENUM)
#undef CAS_OP_ENUM
  kCount
};

enum class OpKind : std::uint8_t { Leaf, Unary, Binary, Ternary, Shape, Reduction, Layer };

struct OpInfo {
  Op op;
  std::string_view name;
  int arity;  // -1: one or more
  OpKind kind;
  bool differentiable;
  std::string_view cuda;  // elementwise: the CUDA expression over $0, $1, $2; else empty
};

inline constexpr OpInfo kOpTable[] = {
#define CAS_OP_INFO(op, name, arity, kind, diff, scalar, cuda) {Op::op, name, arity, OpKind::kind, diff, cuda},
    CAS_IR_OPS(CAS_OP_INFO)
#undef CAS_OP_INFO
};

constexpr bool opTableInEnumOrder() {
  for (size_t k = 0; k < std::size(kOpTable); ++k)
    if (kOpTable[k].op != Op(k)) return false;
  return std::size(kOpTable) == size_t(Op::kCount);
}
static_assert(opTableInEnumOrder(), "row k of kOpTable must describe Op k");

constexpr const OpInfo& opInfo(Op op) { return kOpTable[size_t(op)]; }
inline std::string_view opName(Op op) { return opInfo(op).name; }
constexpr bool isElementwise(Op op) {
  const OpKind k = opInfo(op).kind;
  return k == OpKind::Unary || k == OpKind::Binary || k == OpKind::Ternary;
}

constexpr bool isAttention(Op op) {
  return op == Op::Attention || op == Op::AttentionStats || op == Op::AttentionGradQ || op == Op::AttentionGradKV;
}
// The fused attention ops' inputs: q, k, v, then (gradients) g, then (dq, dkv) the statistics,
// then, when the keys are masked by length, the lengths last.
constexpr std::size_t attentionInputsBeforeLengths(Op op) { return op == Op::Attention ? 3 : op == Op::AttentionStats ? 4 : 5; }

// --- scalar semantics (the helpers the table's scalar functions call) -------------------

inline float geluScalar(float x) { return 0.5f * x * (1.0f + std::erf(x * 0.70710678118654752f)); }
inline float geluDerivative(float x) {
  const float cdf = 0.5f * (1.0f + std::erf(x * 0.70710678118654752f));
  const float pdf = 0.39894228040143268f * std::exp(-0.5f * x * x);
  return cdf + x * pdf;
}

// tanh as a rational function (the form Eigen uses), accurate to a few ulp and, unlike the
// library call, vectorisable: elementwise loops over it compile to SIMD code. The CUDA backend
// generates its device version from the same constants (core/cuda_render/render.cpp, kernelPrelude).
inline constexpr float kTanhClamp = 7.90531110763549805f;  // tanh is +-1 in float beyond this
// Horner coefficients in x^2, highest power first; the numerator is then multiplied by x.
inline constexpr float kTanhNumerator[] = {-2.76076847742355e-16f, 2.00018790482477e-13f, -8.60467152213735e-11f,
                                           5.12229709037114e-08f,  1.48572235717979e-05f, 6.37261928875436e-04f,
                                           4.89352455891786e-03f};
inline constexpr float kTanhDenominator[] = {1.19825839466702e-06f, 1.18534705686654e-04f, 2.26843463243900e-03f,
                                             4.89352518554385e-03f};

inline float fastTanh(float x) {
  x = x < -kTanhClamp ? -kTanhClamp : (x > kTanhClamp ? kTanhClamp : x);
  const float x2 = x * x;
  float p = kTanhNumerator[0];
  for (size_t k = 1; k < std::size(kTanhNumerator); ++k) p = p * x2 + kTanhNumerator[k];
  p = p * x;
  float q = kTanhDenominator[0];
  for (size_t k = 1; k < std::size(kTanhDenominator); ++k) q = q * x2 + kTanhDenominator[k];
  return p / q;
}

// The scalar function of op O, from its row of the table: Scalar<Op::Relu>::apply(a, b, c).
// Each op is its own type, so a loop over one op compiles (and vectorises) on its own.
template <Op O>
struct Scalar;
#define CAS_OP_SCALAR(op, name, arity, kind, diff, scalar, cuda)                                    \
  template <>                                                                                    \
  struct Scalar<Op::op> {                                                                        \
    static float apply([[maybe_unused]] float a, [[maybe_unused]] float b, [[maybe_unused]] float c) { \
      return scalar;                                                                             \
    }                                                                                            \
  };
CAS_IR_OPS(CAS_OP_SCALAR)
#undef CAS_OP_SCALAR

// Calls body(f), f being op's scalar function as its own type, for an op of `kind`; false when
// the op is of another kind (or Dropout, whose mask needs its attributes). Unary functions take one operand, binary two, ternary three.
template <OpKind kind, typename Body>
bool withScalar(Op op, Body&& body) {
  switch (op) {
#define CAS_OP_CASE(o, name, arity, k, diff, scalar, cuda)                                                    \
  case Op::o:                                                                                                 \
    if constexpr (OpKind::k == kind && kind == OpKind::Unary && Op::o != Op::Dropout) {                                             \
      body([](float x) { return Scalar<Op::o>::apply(x, 0.0f, 0.0f); });                                      \
      return true;                                                                                            \
    } else if constexpr (OpKind::k == kind && kind == OpKind::Binary) {                                       \
      body([](float x, float y) { return Scalar<Op::o>::apply(x, y, 0.0f); });                                \
      return true;                                                                                            \
    } else if constexpr (OpKind::k == kind && kind == OpKind::Ternary) {                                      \
      body([](float x, float y, float z) { return Scalar<Op::o>::apply(x, y, z); });                          \
      return true;                                                                                            \
    }                                                                                                         \
    return false;
    CAS_IR_OPS(CAS_OP_CASE)
#undef CAS_OP_CASE
    case Op::kCount: break;
  }
  return false;
}

// The value of elementwise op `op` (not Dropout) on its operands (unused ones ignored).
inline float applyElementwise(Op op, float a, float b = 0.0f, float c = 0.0f) {
  switch (op) {
#define CAS_OP_APPLY(o, ...) \
  case Op::o: return Scalar<Op::o>::apply(a, b, c);
    CAS_IR_OPS(CAS_OP_APPLY)
#undef CAS_OP_APPLY
    case Op::kCount: break;
  }
  return a;
}

// Dropout's keep decision for element `index` under `seed`: a counter-based hash, so that every
// backend (and the backward pass) draws the same mask without storing it.
inline bool dropoutKeeps(std::uint64_t seed, std::uint64_t index, float rate) {
  std::uint64_t z = seed + 0x9E3779B97F4A7C15ull * (index + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return double(z >> 11) * 0x1.0p-53 >= double(rate);
}

}  // namespace cas::ir
