#pragma once
// What each step of a schedule costs at least: the bytes its kernels must move between memory and
// the chip (the stored values they read and write, each buffer counted once a step) and the
// arithmetic of its products and convolutions. A floor, not a timing: it says how far a measured
// step (`cuda-agent kernels`) is from the device's bandwidth and rate, and what a different
// schedule could save. Buffers are counted as fp32 (the IR's tensors are), uniform constants that
// kernels take as literals as nothing, and a value read through two names (an in-place update's
// input and output) twice; library calls' workspaces and a split-K's atomic traffic are not
// counted. Printed by `cuda-agent check --ir` (and `--update`).
// Thread-safety: pure functions of their arguments.
#include <cstdint>
#include <string>
#include <vector>

#include "core/ir/graph.hpp"
#include "core/ir/schedule.hpp"

namespace cas::ir {

struct StepCost {
  std::int64_t bytesRead = 0, bytesWritten = 0;
  double productFlops = 0;  // matmuls and convolutions (a multiply-add counts 2)
};

// One entry per step of `s` (fills write their accumulator; copies read and write).
std::vector<StepCost> estimateStepCosts(const Schedule& s, const Graph& g);

// The costs as text: the steps that move at least 1% of the bytes or do 1% of the arithmetic,
// one a line, then the totals.
std::string costText(const Schedule& s, const std::vector<StepCost>& costs);

}  // namespace cas::ir
