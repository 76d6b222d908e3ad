#include "core/ir/ops.hpp"

#include <array>

namespace cas::ir {

namespace {
using K = OpKind;
constexpr std::array<OpInfo, size_t(Op::kCount)> kOps = {{
    {"input", 0, K::Leaf, false},
    {"constant", 0, K::Leaf, false},
    {"neg", 1, K::Unary, true},
    {"relu", 1, K::Unary, true},
    {"tanh", 1, K::Unary, true},
    {"sigmoid", 1, K::Unary, true},
    {"gelu", 1, K::Unary, true},
    {"exp", 1, K::Unary, true},
    {"log", 1, K::Unary, true},
    {"sqrt", 1, K::Unary, true},
    {"add", 2, K::Binary, true},
    {"sub", 2, K::Binary, true},
    {"mul", 2, K::Binary, true},
    {"div", 2, K::Binary, true},
    {"maximum", 2, K::Binary, true},
    {"minimum", 2, K::Binary, true},
    {"gelu_grad", 2, K::Binary, false},
    {"greater", 2, K::Binary, false},
    {"greater_equal", 2, K::Binary, false},
    {"less", 2, K::Binary, false},
    {"less_equal", 2, K::Binary, false},
    {"equal", 2, K::Binary, false},
    {"not_equal", 2, K::Binary, false},
    {"where", 3, K::Ternary, true},
    {"dropout", 1, K::Unary, true},
    {"reshape", 1, K::Shape, true},
    {"transpose", 1, K::Shape, true},
    {"broadcast_to", 1, K::Shape, true},
    {"concat", -1, K::Shape, true},
    {"slice", 1, K::Shape, true},
    {"reduce_sum", 1, K::Reduction, true},
    {"reduce_max", 1, K::Reduction, true},
    {"softmax", 1, K::Reduction, true},
    {"log_softmax", 1, K::Reduction, true},
    {"matmul", 2, K::Layer, true},
    {"conv2d", 2, K::Layer, true},
    {"conv2d_grad_input", 2, K::Layer, false},
    {"conv2d_grad_weight", 2, K::Layer, false},
    {"max_pool2d", 1, K::Layer, true},
    {"max_pool2d_grad", 2, K::Layer, false},
    {"avg_pool2d", 1, K::Layer, true},
    {"avg_pool2d_grad", 1, K::Layer, true},
    {"gather", 2, K::Layer, true},
    {"scatter_add_rows", 2, K::Layer, true},
}};
}  // namespace

const OpInfo& opInfo(Op op) { return kOps[size_t(op)]; }

}  // namespace cas::ir
