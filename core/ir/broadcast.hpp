#pragma once
// Index arithmetic for numpy broadcasting: maps a flat index of the result to the flat index of
// an operand. Shared by constant folding and the CPU backend.
#include <vector>

#include "core/ir/graph.hpp"

namespace cas::ir {

class BroadcastIndexer {
 public:
  BroadcastIndexer(const Shape& operand, const Shape& result) : resultShape_(result) {
    const size_t lead = result.size() - operand.size();
    strides_.assign(result.size(), 0);
    std::int64_t stride = 1;
    for (size_t d = result.size(); d-- > lead;) {
      const std::int64_t dim = operand[d - lead];
      strides_[d] = dim == 1 ? 0 : stride;
      stride *= dim;
    }
    identity_ = operand == result;
    scalar_ = numel(operand) == 1;
  }

  bool identity() const { return identity_; }
  bool scalar() const { return scalar_; }
  // How many consecutive flat indices, from a multiple of it, share one operand index: the
  // product of the trailing result dimensions the operand broadcasts over (a channel bias
  // [C, 1, 1] over [N, C, H, W]: H x W). 1 when the last dimension is the operand's own.
  std::int64_t constantRun() const {
    std::int64_t run = 1;
    for (size_t d = resultShape_.size(); d-- > 0 && strides_[d] == 0;) run *= resultShape_[d];
    return run;
  }

  std::int64_t operator()(std::int64_t flat) const {
    if (identity_) return flat;
    if (scalar_) return 0;
    std::int64_t src = 0;
    for (size_t d = resultShape_.size(); d-- > 0;) {
      const std::int64_t dim = resultShape_[d];
      src += (flat % dim) * strides_[d];
      flat /= dim;
    }
    return src;
  }

 private:
  Shape resultShape_;
  std::vector<std::int64_t> strides_;
  bool identity_ = false, scalar_ = false;
};

}  // namespace cas::ir
