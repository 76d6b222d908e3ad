#pragma once
// The IR's op set: one enum, one table of facts per op (name, arity, kind), and the scalar
// definitions of the elementwise ops, shared by constant folding and the CPU backend so that
// both compute exactly the same thing.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string_view>

namespace cas::ir {

enum class Op : std::uint8_t {
  // leaves
  Input,     // a named tensor bound at run time (data, parameter or optimizer state)
  Constant,  // a tensor stored in the node (scalars are shape [])
  // elementwise, unary
  Neg, Relu, Tanh, Sigmoid, Gelu, Exp, Log, Sqrt,
  // elementwise, binary (numpy broadcasting)
  Add, Sub, Mul, Div, Maximum, Minimum, GeluGrad,  // GeluGrad(x, g) = g * gelu'(x)
  Greater, GreaterEqual, Less, LessEqual, Equal, NotEqual,  // 1.0 or 0.0
  // elementwise, ternary
  Where,  // where(mask != 0, a, b)
  Dropout,  // x * keep(seed, index) / (1 - rate); its own gradient with the same seed
  // shape
  Reshape, Transpose, BroadcastTo, Concat, Slice,
  // reductions over axes
  ReduceSum, ReduceMax,
  // normalised exponentials over one axis
  Softmax, LogSoftmax,
  // linear algebra and layers
  MatMul,           // [..., M, K] x [..., K, N], optional transposes; leading dims broadcast
  Conv2d,           // x [N, C, H, W], w [O, C, KH, KW] -> [N, O, OH, OW]
  Conv2dGradInput,  // (g, w) -> dx
  Conv2dGradWeight, // (x, g) -> dw
  MaxPool2d, MaxPool2dGrad,  // MaxPool2dGrad(x, g)
  AvgPool2d, AvgPool2dGrad,  // AvgPool2dGrad(g)
  Gather,           // (table [V, D], ids [...]) -> [..., D]
  ScatterAddRows,   // (ids [...], g [..., D]) -> [V, D]
  kCount
};

enum class OpKind : std::uint8_t { Leaf, Unary, Binary, Ternary, Shape, Reduction, Layer };

struct OpInfo {
  std::string_view name;
  int arity;  // -1: one or more
  OpKind kind;
  bool differentiable;
};

const OpInfo& opInfo(Op op);
inline std::string_view opName(Op op) { return opInfo(op).name; }
inline bool isElementwise(Op op) {
  OpKind k = opInfo(op).kind;
  return k == OpKind::Unary || k == OpKind::Binary || k == OpKind::Ternary;
}

// --- scalar semantics -------------------------------------------------------------------

inline float geluScalar(float x) { return 0.5f * x * (1.0f + std::erf(x * 0.70710678118654752f)); }
inline float geluDerivative(float x) {
  const float cdf = 0.5f * (1.0f + std::erf(x * 0.70710678118654752f));
  const float pdf = 0.39894228040143268f * std::exp(-0.5f * x * x);
  return cdf + x * pdf;
}

// tanh as a rational function (the form Eigen uses), accurate to a few ulp and, unlike the
// library call, vectorisable: elementwise loops over it compile to SIMD code. The CUDA backend
// generates its device version from the same constants (gpu/codegen.cpp, kernelPrelude).
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

inline float applyUnary(Op op, float x) {
  switch (op) {
    case Op::Neg: return -x;
    case Op::Relu: return x > 0.0f ? x : 0.0f;
    case Op::Tanh: return fastTanh(x);
    case Op::Sigmoid: return 1.0f / (1.0f + std::exp(-x));
    case Op::Gelu: return geluScalar(x);
    case Op::Exp: return std::exp(x);
    case Op::Log: return std::log(x);
    case Op::Sqrt: return std::sqrt(x);
    default: return x;
  }
}

inline float applyBinary(Op op, float a, float b) {
  switch (op) {
    case Op::Add: return a + b;
    case Op::Sub: return a - b;
    case Op::Mul: return a * b;
    case Op::Div: return a / b;
    case Op::Maximum: return a > b ? a : b;
    case Op::Minimum: return a < b ? a : b;
    case Op::GeluGrad: return b * geluDerivative(a);
    case Op::Greater: return a > b ? 1.0f : 0.0f;
    case Op::GreaterEqual: return a >= b ? 1.0f : 0.0f;
    case Op::Less: return a < b ? 1.0f : 0.0f;
    case Op::LessEqual: return a <= b ? 1.0f : 0.0f;
    case Op::Equal: return a == b ? 1.0f : 0.0f;
    case Op::NotEqual: return a != b ? 1.0f : 0.0f;
    default: return a;
  }
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
